#!/bin/sh
# release.sh: the per-tenant step of examples/exec-rollout/plan.yaml. A real one would run
# kubectl, helm or terraform for $EXECUTOR_TENANT_ID; this one only says what it would do.
# Whatever it prints goes to the attempt's transcript (API, `executor status --tenant`,
# console); its last line, a JSON object, is the stage's output, read by later stages.
set -eu
version="$1"
echo "rolling $version out to $EXECUTOR_TENANT_ID (task $EXECUTOR_TASK_ID, run attempt $EXECUTOR_ATTEMPT, fence $EXECUTOR_FENCE)"
echo "helm upgrade --install app ./chart --namespace $EXECUTOR_TENANT_ID --set image.tag=$version  # what a real rollout runs" >&2
printf '{"tenant":"%s","version":"%s","revision":%d}\n' "$EXECUTOR_TENANT_ID" "$version" 7
