//go:build chaos

package chaos

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// EnvRaceBinary, set to "1", builds the executor with the race detector: a data race in an
// executor under chaos is then reported in its log (and fails the run).
const EnvRaceBinary = "CHAOS_RACE"

// BuildExecutor builds ./cmd/executor of the module whose root is moduleRoot into dir and
// returns the binary's path; the build's output goes to stderr.
func BuildExecutor(moduleRoot, dir string) (string, error) {
	bin := filepath.Join(dir, "executor")
	args := []string{"build", "-o", bin}
	if os.Getenv(EnvRaceBinary) == "1" {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, "./cmd/executor")...)
	build.Dir = moduleRoot
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("chaos: FAILED to build the executor binary (go %v in %s): %w", args, moduleRoot, err)
	}
	return bin, nil
}
