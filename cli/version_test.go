package cli

import (
	"encoding/json"
	"maps"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testCommit = "6b5d005e0c1f2a3b4c5d6e7f8091a2b3c4d5e6f7"

// buildInfo is the build info of a binary built at testCommit on linux/arm64 by go1.26.8,
// with module version mainVersion and the tree modified or not.
func buildInfo(mainVersion string, modified bool) *debug.BuildInfo {
	mod := "false"
	if modified {
		mod = "true"
	}
	return &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Path:      "github.com/executor-dev/executor/cmd/executor",
		Main:      debug.Module{Path: "github.com/executor-dev/executor", Version: mainVersion},
		Settings: []debug.BuildSetting{
			{Key: "-trimpath", Value: "true"},
			{Key: "CGO_ENABLED", Value: "0"},
			{Key: "GOARCH", Value: "arm64"},
			{Key: "GOOS", Value: "linux"},
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: testCommit},
			{Key: "vcs.time", Value: "2026-03-01T10:20:30Z"},
			{Key: "vcs.modified", Value: mod},
		},
	}
}

func TestVersionInfoFromBuildInfo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		bi      *debug.BuildInfo
		stamped string
		want    versionInfo
	}{
		{
			name: "go run: devel, commit and time from vcs",
			bi:   buildInfo(develVersion, false),
			want: versionInfo{Version: "(devel)", Commit: testCommit, BuildTime: "2026-03-01T10:20:30Z",
				GoVersion: "go1.26.8", Platform: "linux/arm64"},
		},
		{
			name: "go build: the module version of the build info",
			bi:   buildInfo("v0.0.0-20260301102030-6b5d005e0c1f+dirty", true),
			want: versionInfo{Version: "v0.0.0-20260301102030-6b5d005e0c1f+dirty", Commit: testCommit, Modified: true,
				BuildTime: "2026-03-01T10:20:30Z", GoVersion: "go1.26.8", Platform: "linux/arm64"},
		},
		{
			name:    "make build: the ldflags stamp wins over devel",
			bi:      buildInfo(develVersion, true),
			stamped: "v1.4.0-3-g6b5d005-dirty",
			want: versionInfo{Version: "v1.4.0-3-g6b5d005-dirty", Commit: testCommit, Modified: true,
				BuildTime: "2026-03-01T10:20:30Z", GoVersion: "go1.26.8", Platform: "linux/arm64"},
		},
		{
			name:    "make build: the ldflags stamp wins over a module version",
			bi:      buildInfo("v1.3.9", false),
			stamped: "v1.4.0",
			want: versionInfo{Version: "v1.4.0", Commit: testCommit, BuildTime: "2026-03-01T10:20:30Z",
				GoVersion: "go1.26.8", Platform: "linux/arm64"},
		},
		{
			name: "no vcs: commit and time unknown",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: develVersion}},
			want: versionInfo{Version: "(devel)", GoVersion: "go1.26.8", Platform: runtime.GOOS + "/" + runtime.GOARCH},
		},
		{
			name: "no build info: the runtime's",
			want: versionInfo{Version: "(devel)", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH},
		},
		{
			name:    "no build info, stamped",
			stamped: "v2.0.0",
			want:    versionInfo{Version: "v2.0.0", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, newVersionInfo(tt.bi, tt.stamped))
		})
	}
}

func TestVersionTable(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	newVersionInfo(buildInfo(develVersion, true), "v1.4.0-3-g6b5d005-dirty").table(&b)
	assert.Equal(t, `executor v1.4.0-3-g6b5d005-dirty
commit:	6b5d005 (modified)
commit time:	2026-03-01T10:20:30Z
go:	go1.26.8
platform:	linux/arm64
`, b.String())

	b.Reset()
	newVersionInfo(nil, "").table(&b)
	assert.True(t, strings.HasPrefix(b.String(), "executor (devel)\ncommit:\tunknown\ncommit time:\tunknown\n"), b.String())
}

// version and --version print the same first line; -o json prints the six fields, the commit
// in full.
func TestVersionCommand(t *testing.T) {
	t.Parallel()
	want := currentVersion()
	assert.Equal(t, "(devel)", want.Version, "a test binary is not stamped")

	long := runWith(t, "", nil, "version")
	require.Equal(t, ExitOK, long.code, long.stderr)
	lines := strings.Split(strings.TrimSuffix(long.stdout, "\n"), "\n")
	require.Len(t, lines, 5, long.stdout)
	assert.Equal(t, "executor (devel)", lines[0])
	assert.Regexp(t, `^platform: +`+runtime.GOOS+"/"+runtime.GOARCH+"$", lines[4])

	short := runWith(t, "", nil, "--version")
	require.Equal(t, ExitOK, short.code, short.stderr)
	assert.Equal(t, lines[0]+"\n", short.stdout, "--version prints version's first line")
	assert.Empty(t, short.stderr)

	js := runWith(t, "", map[string]string{EnvServer: "not a url"}, "version", "-o", "json")
	require.Equal(t, ExitOK, js.code, "version asks no server: %s", js.stderr)
	var fields map[string]any
	require.NoError(t, json.Unmarshal([]byte(js.stdout), &fields), js.stdout)
	assert.ElementsMatch(t, []string{"version", "commit", "modified", "buildTime", "goVersion", "platform"}, slices.Collect(maps.Keys(fields)))
	var got versionInfo
	require.NoError(t, json.Unmarshal([]byte(js.stdout), &got))
	assert.Equal(t, want, got)

	extra := runWith(t, "", nil, "version", "now")
	assert.Equal(t, ExitUsage, extra.code)
}

func TestVersionJSONShape(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(newVersionInfo(buildInfo(develVersion, true), "v1.4.0"))
	require.NoError(t, err)
	assert.JSONEq(t, `{"version":"v1.4.0","commit":"`+testCommit+`","modified":true,
		"buildTime":"2026-03-01T10:20:30Z","goVersion":"go1.26.8","platform":"linux/arm64"}`, string(b))
}

// The Makefile stamps this package's stampedVersion: -X of a name that does not exist is
// silently ignored, so a rename would leave every release "(devel)".
func TestMakefileStampsThisVariable(t *testing.T) {
	t.Parallel()
	mk, err := os.ReadFile("../Makefile")
	require.NoError(t, err)
	assert.Contains(t, string(mk), "-X github.com/executor-dev/executor/cli.stampedVersion=")
}
