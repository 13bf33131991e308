package redisrepo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/executor-dev/executor/domain/checkpoint"
)

// checkpointJSON is a checkpoint as stored in executor:ckpt:{<taskId>} (the field names of docs/design.md §3).
// The task id is the key's, not repeated in the value (26 bytes of every checkpoint; a reader
// of an older checkpoint that has it gets it from the value). contextData leaves out the stages without output (nil or JSON null): most stages have none,
// and a null per stage is most of a checkpoint's size. Decoding gives each completed stage
// left out a nil output again, so a JSON null output reads back as nil (which Outputs and the
// API show as they show null).
type checkpointJSON struct {
	TaskID          string                     `json:"taskId,omitempty"`
	LastCompleted   int                        `json:"lastCompletedStageIndex"`
	CompletedStages []string                   `json:"completedStages"`
	ContextData     map[string]json.RawMessage `json:"contextData"`
	SavedAt         time.Time                  `json:"savedAt"`
	Fence           uint64                     `json:"fence"`
	Progress        *checkpoint.Progress       `json:"progress,omitempty"`
}

// isNull reports whether a stage output is no output: nil, empty or JSON null.
func isNull(out json.RawMessage) bool {
	out = bytes.TrimSpace(out)
	return len(out) == 0 || bytes.Equal(out, []byte("null"))
}

// encCheckpoint writes cp as checkpointJSON would marshal it (without its task id and null
// outputs), appending to one buffer: it runs once per stage transition, and json.Marshal of a
// copied state cost a map, a slice and reflection per output.
func encCheckpoint(cp *checkpoint.Checkpoint) ([]byte, error) {
	stages := cp.CompletedStages()
	b := make([]byte, 0, 128+24*len(stages))
	b = append(b, `{"lastCompletedStageIndex":`...)
	b = strconv.AppendInt(b, int64(cp.LastCompletedStageIndex()), 10)
	b = append(b, `,"completedStages":[`...)
	var err error
	for i, name := range stages {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = appendJSONString(b, name); err != nil {
			return nil, err
		}
	}
	b = append(b, `],"contextData":{`...)
	first := true
	for _, name := range stages {
		out, _ := cp.Output(name)
		if isNull(out) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		if b, err = appendJSONString(b, name); err != nil {
			return nil, err
		}
		b = append(b, ':')
		buf := bytes.NewBuffer(b)
		if err := json.Compact(buf, out); err != nil {
			return nil, fmt.Errorf("output of stage %s: %w", name, err)
		}
		b = buf.Bytes()
	}
	b = append(b, `},"savedAt":"`...)
	b = cp.SavedAt().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","fence":`...)
	b = strconv.AppendUint(b, cp.Fence(), 10)
	if p, ok := cp.InProgress(); ok { // rare: a stage's partial progress (an http poll's first response)
		q, err := json.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("progress of stage %s: %w", p.Stage, err)
		}
		b = append(append(b, `,"progress":`...), q...)
	}
	return append(b, '}'), nil
}

// appendJSONString appends s as a JSON string: as it is when it holds only the characters of
// a stage name (stage.NamePattern), else as encoding/json writes it.
func appendJSONString(b []byte, s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			q, err := json.Marshal(s)
			return append(b, q...), err
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), nil
}

// decCheckpoint decodes a stored checkpoint (also one written before null outputs were left
// out, whose nulls read as nil too).
func decCheckpoint(taskID string, b []byte) (*checkpoint.Checkpoint, error) {
	c := checkpointJSON{TaskID: taskID}
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	data := make(map[string]json.RawMessage, len(c.CompletedStages))
	for _, name := range c.CompletedStages {
		if out := c.ContextData[name]; !isNull(out) {
			data[name] = out
		} else {
			data[name] = nil
		}
	}
	return checkpoint.Load(checkpoint.State{
		TaskID: c.TaskID, LastCompleted: c.LastCompleted, CompletedStages: c.CompletedStages,
		ContextData: data, SavedAt: c.SavedAt, Fence: c.Fence, Progress: c.Progress,
	})
}
