package cli

import (
	"io"
	"slices"
	"text/tabwriter"
)

// Output formats of -o.
const (
	OutputTable = "table"
	OutputJSON  = "json"
	OutputYAML  = "yaml" // the JSON document as YAML
	OutputName  = "name" // the ids of the objects printed, one a line (objectNames)
	OutputWide  = "wide" // the table, with more columns where there are some worth adding
)

// outputFormats are the values -o takes, in the order the usage lists them.
var outputFormats = []string{OutputTable, OutputJSON, OutputYAML, OutputName, OutputWide}

// annotationNoName marks a command whose output has no ids (Annotations[annotationNoName]):
// -o name is a usage error there.
const annotationNoName = "executor/no-name"

// structured reports whether -o asks for a document (json or yaml): stdout then holds it and
// nothing else, and errors go to stderr as one document too.
func (a *invocation) structured() bool {
	return a.output == OutputJSON || a.output == OutputYAML
}

// tabular reports whether -o asks for a table (table or wide).
func (a *invocation) tabular() bool {
	return a.output == OutputTable || a.output == OutputWide
}

// validOutput reports whether -o names one of outputFormats.
func validOutput(v string) bool { return slices.Contains(outputFormats, v) }

// tableWriter is the tabwriter a table is drawn on, telling the renderers whether -o wide
// asked for their extra columns.
type tableWriter struct {
	*tabwriter.Writer
	wide bool
}

// newTable returns a table writer on stdout: aligned columns two spaces apart.
func (a *invocation) newTable() *tableWriter {
	return &tableWriter{Writer: tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0), wide: a.output == OutputWide}
}

// isWide reports whether w is a table of -o wide: a renderer then adds its extra columns.
func isWide(w io.Writer) bool {
	tw, ok := w.(*tableWriter)
	return ok && tw.wide
}
