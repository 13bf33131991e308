package cli

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// stampedVersion is the version `make build` and `make release` stamp at link time:
//
//	go build -ldflags "-X github.com/executor-dev/executor/cli.stampedVersion=$(git describe --tags --always --dirty)"
//
// Empty in a binary built otherwise (go run, go build, go install, a test), whose version is
// its build info's ("(devel)" for go run and tests). Set once by the linker, never written.
var stampedVersion string

// develVersion is the main module's version in a binary built inside its own module (go run,
// go build without a stamp, tests): what the Go toolchain itself calls it.
const develVersion = "(devel)"

// shortCommit is how many hex digits of the commit the table shows (git's default).
const shortCommit = 7

// versionInfo is what `executor version` prints: -o json prints it as is.
type versionInfo struct {
	// Version is the stamped version (git describe, from make build or make release), else
	// the module version of the build info, else "(devel)".
	Version string `json:"version"`
	// Commit is the full commit hash the binary was built from (vcs.revision), "" when the
	// build recorded none (go run, a build outside a git checkout, -buildvcs=false).
	Commit string `json:"commit"`
	// Modified is whether the working tree had uncommitted changes (vcs.modified).
	Modified bool `json:"modified"`
	// BuildTime is the time of that commit, RFC 3339 (vcs.time): Go records no wall-clock
	// build time, so that a build is reproducible. "" when unknown.
	BuildTime string `json:"buildTime"`
	// GoVersion is the Go toolchain that built the binary ("go1.26.8").
	GoVersion string `json:"goVersion"`
	// Platform is GOOS/GOARCH ("linux/amd64").
	Platform string `json:"platform"`
}

// currentVersion describes the running binary.
func currentVersion() versionInfo {
	bi, _ := debug.ReadBuildInfo() // nil when the binary has no build info: newVersionInfo copes
	return newVersionInfo(bi, stampedVersion)
}

// newVersionInfo reads bi (nil: no build info) and the version stamped at link time, which
// wins over bi's module version when set.
func newVersionInfo(bi *debug.BuildInfo, stamped string) versionInfo {
	v := versionInfo{Version: develVersion, GoVersion: runtime.Version()}
	goos, goarch := runtime.GOOS, runtime.GOARCH
	if bi != nil {
		if bi.Main.Version != "" {
			v.Version = bi.Main.Version
		}
		if bi.GoVersion != "" {
			v.GoVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Commit = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			case "vcs.time":
				v.BuildTime = s.Value
			case "GOOS":
				goos = s.Value
			case "GOARCH":
				goarch = s.Value
			}
		}
	}
	if stamped != "" {
		v.Version = stamped
	}
	v.Platform = goos + "/" + goarch
	return v
}

// line is the first line of `executor version`, and all `executor --version` prints.
func (v versionInfo) line() string {
	return "executor " + v.Version
}

// table draws v for people: its line, then one line per field.
func (v versionInfo) table(w io.Writer) {
	fmt.Fprintln(w, v.line())
	commit, when := "unknown", "unknown"
	if v.Commit != "" {
		commit = v.Commit[:min(len(v.Commit), shortCommit)]
		if v.Modified {
			commit += " (modified)"
		}
	}
	if v.BuildTime != "" {
		when = v.BuildTime
	}
	fmt.Fprintf(w, "commit:\t%s\n", commit)
	fmt.Fprintf(w, "commit time:\t%s\n", when)
	fmt.Fprintf(w, "go:\t%s\n", v.GoVersion)
	fmt.Fprintf(w, "platform:\t%s\n", v.Platform)
}

// setVersionFlag gives root its --version flag (no -v shorthand: left free for the
// commands), printing v's line.
func setVersionFlag(root *cobra.Command, v versionInfo) {
	root.Version = v.line() // printed as is, never parsed as a template
	root.Flags().Bool("version", false, "print the executor's version and exit (executor version: the details)")
	root.SetVersionTemplate("{{.Version}}\n")
}

func (a *invocation) versionCmd(v versionInfo) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the executor's version, commit, Go version and platform",
		Long: `Print this binary's version: the one make build or make release stamped (git describe),
else its module version ("(devel)" for go run), the commit it was built from (vcs.revision;
"(modified)" when the tree had uncommitted changes), that commit's time, the Go version and
GOOS/GOARCH. It asks no server. -o json prints the commit in full.`,
		Example: `  executor version
  executor version -o json | jq -r .commit`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			return a.print(v, v.table)
		},
	}
}
