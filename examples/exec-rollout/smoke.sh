#!/bin/sh
# smoke.sh: the smoke test of examples/exec-rollout/plan.yaml: checks the version the release
# step reported. Exit 0 passes; exit 2 (listed in permanentExitCodes) fails the stage at
# once; any other non-zero code is retried under the stage's retry policy.
set -eu
want="$1"
got="$2"
if [ "$want" != "$got" ]; then
  echo "tenant $EXECUTOR_TENANT_ID runs $got, not $want" >&2
  exit 2
fi
echo "{\"smoke\":\"ok\",\"version\":\"$got\"}"
