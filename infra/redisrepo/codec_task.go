package redisrepo

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// The attempt ledger is stored as one hash field per attempt, so that a task hash keeps
// Redis's compact listpack encoding, which holds only while every value is at most
// hash-max-listpack-value (64) bytes: "ledger" is the number of attempts, and "l<n>"
// (n = 0 … ledger-1) is attempt n as one pipe-separated record (attemptFields). Callers HSET
// the fields over the stored hash: the ledger only grows, so writing every "l<n>" each time
// leaves no stale attempt behind, and decodeTask reads only the first "ledger" of them.

// ledgerField names the field of attempt n.
func ledgerField(n int) string { return "l" + strconv.Itoa(n) }

// attemptFields is the number of parts of an attempt record:
//
//	<stageIndex>|<run>|<attempt>|<start: µs after the task's createdAt>|<duration µs>|<outcome>|<class>|<code>|<backoff ms>|<error>
//
// An attempt of a stage's undo (a rollback's) has its stage index written "u<stageIndex>".
// The outcome is one letter (s succeeded, f failed, i interrupted; outcomeCodes). class, code, backoff and error are empty when zero, and when all four are (an attempt that
// succeeded) the record ends after the outcome: it has attemptFieldsShort parts. The error
// comes last, so it may hold '|'. The stage name is not stored: it is the name of stage
// stageIndex of the plan.
const (
	attemptFields      = 10
	attemptFieldsShort = 6
)

// outcomeCodes are the one-letter forms of the outcomes in attempt records (an outcome not
// listed is stored as it is).
var outcomeCodes = map[task.Outcome]string{task.OutcomeSucceeded: "s", task.OutcomeFailed: "f", task.OutcomeInterrupted: "i"}

func outcomeOf(code string) task.Outcome {
	for o, c := range outcomeCodes {
		if c == code {
			return o
		}
	}
	return task.Outcome(code)
}

// encAttempt encodes a; base is the task's createdAt in unix µs: the start is stored as µs
// after it (a handful of digits instead of sixteen).
func encAttempt(a task.Attempt, base int64) string {
	start := a.StartedAt.UnixMicro()
	var b strings.Builder
	b.Grow(48 + len(a.Error))
	if a.Undo {
		b.WriteByte('u')
	}
	for _, n := range []int64{int64(a.StageIndex), int64(a.Run), int64(a.Attempt), start - base, a.EndedAt.UnixMicro() - start} {
		b.WriteString(strconv.FormatInt(n, 10))
		b.WriteByte('|')
	}
	if c, ok := outcomeCodes[a.Outcome]; ok {
		b.WriteString(c)
	} else {
		b.WriteString(string(a.Outcome))
	}
	backoff := a.Backoff.Milliseconds()
	if a.Class == "" && a.Code == 0 && backoff == 0 && a.Error == "" {
		return b.String()
	}
	b.WriteByte('|')
	b.WriteString(string(a.Class))
	b.WriteByte('|')
	if a.Code != 0 {
		b.WriteString(strconv.Itoa(a.Code))
	}
	b.WriteByte('|')
	if backoff != 0 {
		b.WriteString(strconv.FormatInt(backoff, 10))
	}
	b.WriteByte('|')
	b.WriteString(a.Error)
	return b.String()
}

func decAttempt(rec string, stages []stage.Spec, base int64) (task.Attempt, error) {
	p := strings.SplitN(rec, "|", attemptFields)
	switch len(p) {
	case attemptFields:
	case attemptFieldsShort:
		p = append(p, make([]string, attemptFields-attemptFieldsShort)...)
	default:
		return task.Attempt{}, fmt.Errorf("%d parts, want %d or %d", len(p), attemptFieldsShort, attemptFields)
	}
	undo := strings.HasPrefix(p[0], "u")
	p[0] = strings.TrimPrefix(p[0], "u")
	var n [5]int64
	for i, name := range []string{"stage index", "run", "attempt", "start", "duration"} {
		v, err := strconv.ParseInt(p[i], 10, 64)
		if err != nil {
			return task.Attempt{}, fmt.Errorf("%s: %w", name, err)
		}
		n[i] = v
	}
	if n[0] < 0 || n[0] >= int64(len(stages)) {
		return task.Attempt{}, fmt.Errorf("stage index %d out of range (%d stages)", n[0], len(stages))
	}
	var code, backoff int64
	for _, f := range []struct {
		name, s string
		dst     *int64
	}{{"code", p[7], &code}, {"backoff", p[8], &backoff}} {
		if f.s == "" {
			continue
		}
		v, err := strconv.ParseInt(f.s, 10, 64)
		if err != nil {
			return task.Attempt{}, fmt.Errorf("%s: %w", f.name, err)
		}
		*f.dst = v
	}
	return task.Attempt{
		StageIndex: int(n[0]), Stage: stages[n[0]].Name, Run: int(n[1]), Attempt: int(n[2]),
		StartedAt: time.UnixMicro(base + n[3]).UTC(), EndedAt: time.UnixMicro(base + n[3] + n[4]).UTC(),
		Outcome: outcomeOf(p[5]), Class: stage.Class(p[6]), Code: int(code),
		Backoff: time.Duration(backoff) * time.Millisecond, Error: p[9], Undo: undo,
	}, nil
}

// taskFields is the whole task hash but its fence, which only bump_fence.lua changes (and the
// write token of save_task.lua). The version is in it: a creation writes 0, a write-back the
// version it writes back; runFields leaves it to save_task.lua, which advances it.
func taskFields(t *task.Task) ([]any, error) {
	params := ""
	if p := t.Params(); p != nil {
		b, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		params = string(b)
	}
	rf, err := runFields(t, 0)
	if err != nil {
		return nil, err
	}
	return append(rf.pairs(make([]any, 0, 2*(nRunFields+len(rf.ledger)+6))),
		"taskId", t.ID(), "planId", t.PlanID(), "tenantId", t.TenantID(),
		"createdAt", encTime(t.CreatedAt()), "params", params, "version", t.Version()), nil
}

// The fields of a task hash a run may change, as indexes of runValues.vals.
const (
	fStatus = iota
	fPauseRequested
	fAttempt
	fStage
	fStartedAt
	fFinishedAt
	fUpdatedAt
	fHeartbeatAt
	fLastError
	fLedger
	fWait
	fVerdict
	fExecutor
	fRollback
	fUndoRequested
	nRunFields
)

// runFieldNames names the fields of runValues.vals.
var runFieldNames = [nRunFields]string{
	fStatus: "status", fPauseRequested: "pauseRequested", fAttempt: "attempt", fStage: "stage",
	fStartedAt: "startedAt", fFinishedAt: "finishedAt", fUpdatedAt: "updatedAt", fHeartbeatAt: "heartbeatAt",
	fLastError: "lastError", fLedger: "ledger", fWait: "wait", fVerdict: "verdict", fExecutor: "executor",
	fRollback: "rollback", fUndoRequested: "undoRequested",
}

// runFieldArgs are runFieldNames as command arguments, converted to interfaces once (a
// conversion per write would allocate).
var runFieldArgs = func() (a [nRunFields]any) {
	for i, name := range runFieldNames {
		a[i] = name
	}
	return a
}()

// sameAsUpdated is the stored heartbeatAt of a task that beat when it was last updated (every
// stage transition): the field then keeps its value from one transition to the next, and a
// transition need not send it.
const sameAsUpdated = "="

// runValues is what runFields encodes: the run's fields in a fixed order (no map to build per
// write) and the ledger attempts from ledgerFrom on.
type runValues struct {
	vals       [nRunFields]string
	ledgerFrom int
	ledger     []string // encoded attempts ledgerFrom, ledgerFrom+1, …
}

// pairs appends every field, value pair of v to dst.
func (v *runValues) pairs(dst []any) []any {
	for i := range runFieldNames {
		dst = append(dst, runFieldArgs[i], v.vals[i])
	}
	return v.ledgerPairs(dst)
}

// ledgerPairs appends the field, value pairs of v's ledger attempts to dst.
func (v *runValues) ledgerPairs(dst []any) []any {
	for i, rec := range v.ledger {
		dst = append(dst, ledgerField(v.ledgerFrom+i), rec)
	}
	return dst
}

// runFields is what a run of t may have changed: every field but those set at creation and
// never changed (id, plan, tenant, createdAt, params: save_task.lua writes only a task that
// exists), and of the ledger the attempts from ledgerFrom on (the ledger only grows: the
// earlier ones are in Redis as they are).
func runFields(t *task.Task, ledgerFrom int) (runValues, error) {
	var v runValues
	if f := t.LastError(); f != nil {
		b, err := json.Marshal(failureJSON(*f))
		if err != nil {
			return v, err
		}
		v.vals[fLastError] = string(b)
	}
	var err error
	if v.vals[fWait], v.vals[fVerdict], err = encGate(t); err != nil {
		return v, err
	}
	v.vals[fPauseRequested] = encPause(t.PauseRequested(), t.PausedByPlan())
	updated := encTime(t.UpdatedAt())
	same := func(at time.Time) string { // most transitions set these to updatedAt: format it once
		if at.Equal(t.UpdatedAt()) {
			return updated
		}
		return encTime(at)
	}
	v.vals[fStatus] = string(t.Status())
	v.vals[fAttempt] = strconv.Itoa(t.Attempt())
	v.vals[fStage] = strconv.Itoa(t.CurrentStage())
	v.vals[fStartedAt], v.vals[fFinishedAt] = same(t.StartedAt()), same(t.FinishedAt())
	v.vals[fUpdatedAt], v.vals[fHeartbeatAt] = updated, sameAsUpdated
	if !t.HeartbeatAt().Equal(t.UpdatedAt()) {
		v.vals[fHeartbeatAt] = encTime(t.HeartbeatAt())
	}
	v.vals[fLedger] = strconv.Itoa(t.LedgerLen())
	v.vals[fExecutor] = t.Executor()
	if t.RollingBack() {
		v.vals[fRollback] = "1"
	}
	if t.RollbackRequested() {
		v.vals[fUndoRequested] = "1"
	}
	v.ledgerFrom = min(max(ledgerFrom, 0), t.LedgerLen())
	if n := t.LedgerLen() - v.ledgerFrom; n > 0 {
		base := t.CreatedAt().UnixMicro()
		v.ledger = make([]string, 0, n)
		for _, a := range t.LedgerFrom(v.ledgerFrom) {
			v.ledger = append(v.ledger, encAttempt(a, base))
		}
	}
	return v, nil
}

// failureJSON is a task's last error as stored.
type failureJSON struct {
	Stage   string      `json:"stage,omitempty"`
	Attempt int         `json:"attempt,omitempty"`
	Class   stage.Class `json:"class"`
	Message string      `json:"message"`
	Code    int         `json:"code,omitempty"`
}

// decodeTask rebuilds a task from its hash (as HGETALL returns it: fields it does not know
// are ignored); stages come from its plan.
func decodeTask(h map[string]string, stages []stage.Spec) (*task.Task, error) {
	s := task.State{
		ID: h["taskId"], PlanID: h["planId"], TenantID: h["tenantId"], Stages: stages,
		Status: task.Status(h["status"]), Executor: h["executor"],
		Rollback: h["rollback"] == "1", RollbackRequested: h["undoRequested"] == "1",
	}
	s.PauseRequested, s.PlanPause = decPause(h["pauseRequested"])
	var err error
	ints := map[string]*int{"attempt": &s.Attempt, "stage": &s.CurrentStage}
	for name, dst := range ints {
		if *dst, err = strconv.Atoi(h[name]); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	if s.Fence, err = strconv.ParseUint(h["fence"], 10, 64); err != nil {
		return nil, fmt.Errorf("fence: %w", err)
	}
	if v := h["version"]; v != "" { // absent in tasks written before versions existed: 0
		if s.Version, err = strconv.ParseUint(v, 10, 64); err != nil {
			return nil, fmt.Errorf("version: %w", err)
		}
	}
	times := map[string]*time.Time{
		"createdAt": &s.CreatedAt, "startedAt": &s.StartedAt, "finishedAt": &s.FinishedAt, "updatedAt": &s.UpdatedAt,
	}
	if h["heartbeatAt"] != sameAsUpdated {
		times["heartbeatAt"] = &s.HeartbeatAt
	}
	if err := decTimes(h, times); err != nil {
		return nil, err
	}
	if h["heartbeatAt"] == sameAsUpdated {
		s.HeartbeatAt = s.UpdatedAt
	}
	if p := h["params"]; p != "" && p != "null" { // "null": written before params were stored as ""
		if err := json.Unmarshal([]byte(p), &s.Params); err != nil {
			return nil, fmt.Errorf("params: %w", err)
		}
	}
	if e := h["lastError"]; e != "" {
		var f failureJSON
		if err := json.Unmarshal([]byte(e), &f); err != nil {
			return nil, fmt.Errorf("lastError: %w", err)
		}
		lf := task.Failure(f)
		s.LastError = &lf
	}
	if s.Ledger, err = decLedger(h, stages, s.CreatedAt.UnixMicro()); err != nil {
		return nil, err
	}
	if s.Wait, s.Verdict, err = decGate(h["wait"], h["verdict"]); err != nil {
		return nil, err
	}
	return task.Load(s)
}

// decLedger decodes the attempt ledger: "ledger" attempts in fields "l0", "l1", ….
func decLedger(h map[string]string, stages []stage.Spec, base int64) ([]task.Attempt, error) {
	if strings.HasPrefix(h["ledger"], "[") {
		return decLegacyLedger(h["ledger"])
	}
	count, err := strconv.Atoi(h["ledger"])
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	if count < 0 {
		return nil, fmt.Errorf("ledger: %d attempts", count)
	}
	if count == 0 {
		return nil, nil
	}
	ledger := make([]task.Attempt, count)
	for n := range ledger {
		name := ledgerField(n)
		rec, ok := h[name]
		if !ok {
			return nil, fmt.Errorf("ledger: %s missing (%d attempts)", name, count)
		}
		if ledger[n], err = decAttempt(rec, stages, base); err != nil {
			return nil, fmt.Errorf("ledger: %s: %w", name, err)
		}
	}
	return ledger, nil
}

// legacyAttempt is a ledger entry as tasks written before the ledger was split stored it: the
// whole ledger as one JSON array in field "ledger". Such a task is read as it is and written
// back in the current form by its next write.
type legacyAttempt struct {
	StageIndex int    `json:"i"`
	Stage      string `json:"s"`
	Run        int    `json:"r"`
	Attempt    int    `json:"a"`
	StartedAt  int64  `json:"t0"` // unix µs
	EndedAt    int64  `json:"t1"` // unix µs
	Outcome    string `json:"o"`
	Class      string `json:"c,omitempty"`
	Error      string `json:"e,omitempty"`
	Code       int    `json:"h,omitempty"`
	BackoffMs  int64  `json:"b,omitempty"`
}

func decLegacyLedger(js string) ([]task.Attempt, error) {
	var legacy []legacyAttempt
	if err := json.Unmarshal([]byte(js), &legacy); err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	var ledger []task.Attempt
	for _, a := range legacy {
		ledger = append(ledger, task.Attempt{
			StageIndex: a.StageIndex, Stage: a.Stage, Run: a.Run, Attempt: a.Attempt,
			StartedAt: time.UnixMicro(a.StartedAt).UTC(), EndedAt: time.UnixMicro(a.EndedAt).UTC(),
			Outcome: task.Outcome(a.Outcome), Class: stage.Class(a.Class), Error: a.Error, Code: a.Code,
			Backoff: time.Duration(a.BackoffMs) * time.Millisecond,
		})
	}
	return ledger, nil
}

// encPause is a task's pause as its pauseRequested field holds it: bit 0 a pause asked and not
// yet honoured, bit 1 the pause (asked or honoured) is its plan's (task.Task.PausedByPlan);
// "0" and "1" are what tasks stored before plan pauses were told apart hold.
func encPause(requested, byPlan bool) string {
	n := 0
	if requested {
		n |= 1
	}
	if byPlan {
		n |= 2
	}
	return strconv.Itoa(n)
}

// decPause reads encPause's field.
func decPause(v string) (requested, byPlan bool) {
	n, _ := strconv.Atoi(v)
	return n&1 != 0, n&2 != 0
}
