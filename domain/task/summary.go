package task

import (
	"cmp"
	"maps"
	"slices"
)

// SlowestLen is how many of a plan's slowest RUNNING tasks a Summary names.
const SlowestLen = 10

// Summary counts a plan's tasks as its index holds them: by status, by current stage and
// status, by failure class. It is kept with the writes of the tasks (Add), so reading it
// never reads the plan's every task.
type Summary struct {
	// Total counts the tasks indexed.
	Total int
	// Statuses counts the tasks by status.
	Statuses map[Status]int
	// Stages counts the tasks by current stage index, then status (WAITING at a stage: the
	// tasks at its gate).
	Stages map[int]map[Status]int
	// Classes counts the tasks whose last error has a failure class, by class, with a sample.
	Classes map[string]ClassCount
	// Slowest are the RUNNING tasks longest at their stage, oldest first (at most SlowestLen).
	Slowest []Row
}

// ClassCount counts the tasks of one failure class, with one of them as a sample.
type ClassCount struct {
	Count    int
	TenantID string
	Message  string
}

// NewSummary returns an empty summary.
func NewSummary() Summary {
	return Summary{Statuses: map[Status]int{}, Stages: map[int]map[Status]int{}, Classes: map[string]ClassCount{}}
}

// Add counts r in (n = 1) or out (n = -1) of s. A class counted in keeps r as its sample.
func (s *Summary) Add(r Row, n int) {
	s.Total += n
	s.Statuses[r.Status] += n
	if s.Statuses[r.Status] == 0 {
		delete(s.Statuses, r.Status)
	}
	st := s.Stages[r.Stage]
	if st == nil {
		st = map[Status]int{}
		s.Stages[r.Stage] = st
	}
	st[r.Status] += n
	if st[r.Status] == 0 {
		delete(st, r.Status)
		if len(st) == 0 {
			delete(s.Stages, r.Stage)
		}
	}
	if r.Class != "" {
		c := s.Classes[r.Class]
		c.Count += n
		if n > 0 {
			c.TenantID, c.Message = r.TenantID, r.Message
		}
		if c.Count == 0 {
			delete(s.Classes, r.Class)
		} else {
			s.Classes[r.Class] = c
		}
	}
}

// Clone returns a deep copy of s.
func (s Summary) Clone() Summary {
	out := s
	out.Statuses = maps.Clone(s.Statuses)
	out.Stages = make(map[int]map[Status]int, len(s.Stages))
	for i, st := range s.Stages {
		out.Stages[i] = maps.Clone(st)
	}
	out.Classes = maps.Clone(s.Classes)
	out.Slowest = slices.Clone(s.Slowest)
	return out
}

// SlowestOf returns the RUNNING rows of rows longest at their stage, oldest first, at most
// SlowestLen.
func SlowestOf(rows []Row) []Row {
	var running []Row
	for _, r := range rows {
		if r.Status == Running {
			running = append(running, r)
		}
	}
	slices.SortFunc(running, func(a, b Row) int {
		return cmp.Or(a.Since.Compare(b.Since), cmp.Compare(a.ID, b.ID))
	})
	return running[:min(len(running), SlowestLen)]
}
