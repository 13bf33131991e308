package stagekind

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/executor-dev/executor/domain/stage"
)

// lastMeasurements is how many measurements a stage's output and failure keep.
const lastMeasurements = 10

// analysisLog is what an attempt of a prometheus stage measured: the tally, the last
// measurements, and a line per measurement for the transcript (its last TranscriptMax bytes).
type analysisLog struct {
	tally stage.Tally
	last  []stage.Measurement
	lines []string
	bytes int
}

func (l *analysisLog) add(m stage.Measurement) {
	l.tally.Add(m.Verdict)
	l.last = append(l.last, m)
	if len(l.last) > lastMeasurements {
		l.last = l.last[1:]
	}
	line := fmt.Sprintf("%s %s value=%s: %s\n", m.At.Format(time.RFC3339), m.Verdict, m.Value, m.Message)
	l.lines = append(l.lines, line)
	l.bytes += len(line)
	for l.bytes > stage.TranscriptMax && len(l.lines) > 1 {
		l.bytes -= len(l.lines[0])
		l.lines = l.lines[1:]
	}
}

// transcript is every measurement, one line each (the last ones when they are many).
func (l *analysisLog) transcript() stage.Transcript {
	out := strings.Join(l.lines, "")
	if len(out) > stage.TranscriptMax {
		out = runeStart([]byte(out[len(out)-stage.TranscriptMax:]))
	}
	return stage.Transcript{Stdout: out}
}

// failure is the message of a failed or inconclusive analysis: the judgement, the query and
// the last measurement.
func (l *analysisLog) failure(what string, p promParams) string {
	m := l.last[len(l.last)-1]
	q := p.query
	if len(q) > 200 {
		q = strings.ToValidUTF8(q[:200], "") + "..."
	}
	stopped := ""
	if n := l.tally.Total(); n < p.policy.Count {
		stopped = fmt.Sprintf(", stopped after %d of %d", n, p.policy.Count)
	}
	return fmt.Sprintf("%s: %s%s; query %s: last value %s at %s: %s", what, p.policy.Judgement(l.tally), stopped, q,
		m.Value, m.At.Format(time.RFC3339), m.Message)
}

// measurementJSON is a measurement in a stage's output.
type measurementJSON struct {
	At      time.Time     `json:"at"`
	Value   string        `json:"value"`
	Verdict stage.Verdict `json:"verdict"`
	Message string        `json:"message"`
}

// output is a passed analysis' output.
func (l *analysisLog) output() (json.RawMessage, error) {
	out := struct {
		Verdict      stage.Verdict     `json:"verdict"`
		Successful   int               `json:"successful"`
		Failed       int               `json:"failed"`
		Inconclusive int               `json:"inconclusive"`
		Value        string            `json:"value"`
		Measurements []measurementJSON `json:"measurements"`
	}{Verdict: stage.VerdictSuccessful, Successful: l.tally.Successful, Failed: l.tally.Failed, Inconclusive: l.tally.Inconclusive}
	for _, m := range l.last {
		out.Measurements = append(out.Measurements, measurementJSON(m))
		out.Value = m.Value
	}
	return json.Marshal(out)
}
