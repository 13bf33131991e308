//go:build chaos

package chaos

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
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

// Reap is a task an executor judged INTERRUPTED because its owner was gone (the reaper's log
// line `task interrupted: its owner is gone`), with the heartbeat it judged.
type Reap struct {
	At          time.Time `json:"at"`
	By          string    `json:"by"` // the executor that reaped it
	TaskID      string    `json:"taskId"`
	PlanID      string    `json:"planId"`
	Tenant      string    `json:"tenant"`
	HeartbeatAt time.Time `json:"heartbeatAt"` // the lost run's last heartbeat
	Where       string    `json:"where"`       // file:line
}

// reapMsg is the reaper's log message (orchestrator/reap.go).
const reapMsg = "task interrupted: its owner is gone"

// ScanReaps returns every reaping logged in the executors' logs in dir (exec-*.log), by time.
func ScanReaps(dir string) []Reap {
	paths, _ := filepath.Glob(filepath.Join(dir, "exec-*.log"))
	var out []Reap
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Bytes()
			if !bytes.Contains(line, []byte(reapMsg)) {
				continue
			}
			var l struct {
				Time      time.Time `json:"time"`
				Msg       string    `json:"msg"`
				Executor  string    `json:"executor"`
				PlanID    string    `json:"plan_id"`
				TaskID    string    `json:"task_id"`
				TenantID  string    `json:"tenant_id"`
				Heartbeat time.Time `json:"heartbeat_at"`
			}
			if json.Unmarshal(line, &l) != nil || l.Msg != reapMsg {
				continue
			}
			out = append(out, Reap{At: l.Time, By: l.Executor, TaskID: l.TaskID, PlanID: l.PlanID, Tenant: l.TenantID,
				HeartbeatAt: l.Heartbeat, Where: fmt.Sprintf("%s:%d", filepath.Base(path), n)})
		}
		f.Close()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out
}
