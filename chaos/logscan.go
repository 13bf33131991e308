//go:build chaos

package chaos

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// logAlarms are lines in an executor's output that are findings whatever the run did: a
// data race (with CHAOS_RACE=1), a panic, a fatal runtime error.
var logAlarms = []string{"WARNING: DATA RACE", "panic:", "fatal error:"}

// ScanLogs returns one line per alarm found in the executors' logs in dir (exec-*.log).
func ScanLogs(dir string) []string {
	paths, _ := filepath.Glob(filepath.Join(dir, "exec-*.log"))
	var out []string
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			out = append(out, err.Error())
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			for _, a := range logAlarms {
				if strings.HasPrefix(line, a) {
					out = append(out, fmt.Sprintf("%s:%d: %s", filepath.Base(path), n, line))
				}
			}
		}
		f.Close()
	}
	return out
}
