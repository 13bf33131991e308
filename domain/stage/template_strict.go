package stage

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"
)

// Template functions. index replaces text/template's own, which yields nothing for a missing
// key; the two others are appended to parsed templates (strict, escapeURL), never written.
const (
	fnValue    = "_executor_value"    // fails an action that yields nothing
	fnURLPath  = "_executor_urlpath"  // url.PathEscape
	fnURLQuery = "_executor_urlquery" // url.QueryEscape
)

var funcs = template.FuncMap{
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
	"index":    strictIndex,
	fnValue:    requireValue,
	fnURLPath:  urlPathEscape,
	fnURLQuery: urlQueryEscape,
	fnSecret:   noSecrets,
	fnRange:    rangeGuard,
	fnMade:     madeGuard,
}

// noValueError is what the strict functions fail with: Render reports it as ErrNoValue, with
// its message alone as the reason (it names the stage and the key).
type noValueError struct{ msg string }

func (e *noValueError) Error() string { return e.msg }

func noValue(format string, args ...any) error {
	return &noValueError{msg: fmt.Sprintf(format, args...)}
}

// outputs is the type of .Outputs in a template: earlier stages' outputs by stage name.
type outputs map[string]any

// placeholderOutput stands in for an earlier stage's output when templates are checked before
// anything ran (PlaceholderOutputs): an empty object (ranging over it is empty) whose keys,
// read with index, are all there, as placeholders.
type placeholderOutput map[string]any

// placeholder is the value index reads from a placeholderOutput: it prints as
// "<output STAGE.KEY>" (a dry run's preview shows it), compares as a string and can be
// indexed further.
type placeholder string

// PlaceholderOutputs stands in for the outputs of stages[:index] when a template is checked
// before anything ran: each earlier stage's output is a placeholder object, so that `index
// .Outputs "earlier" "key"` renders (as "<output earlier.key>") whatever the key, while a
// reference to a stage that does not run earlier fails.
func PlaceholderOutputs(stages []Spec, index int) map[string]any {
	out := make(map[string]any, index)
	for _, s := range stages[:index] {
		out[s.Name] = placeholderOutput{}
	}
	return out
}

// strictIndex is index that fails where text/template's would yield nothing: a missing map
// key, an index into nil, out of range. Read from .Outputs, its errors name the stage and the
// key: `stage "build" has no output key "image"`.
func strictIndex(item any, keys ...any) (any, error) {
	var (
		stageName string   // set once item was .Outputs
		path      []string // keys read below the stage's output
	)
	subject := func() string {
		switch {
		case stageName == "" && len(path) == 0:
			return "value"
		case stageName == "":
			return fmt.Sprintf("key %q", strings.Join(path, "."))
		case len(path) == 0:
			return fmt.Sprintf("stage %q output", stageName)
		default:
			return fmt.Sprintf("stage %q output key %q", stageName, strings.Join(path, "."))
		}
	}
	for i, key := range keys {
		switch v := item.(type) {
		case outputs:
			name, ok := key.(string)
			if !ok {
				return nil, fmt.Errorf("index of .Outputs: a stage name is a string, not %T", key)
			}
			out, ok := v[name]
			if !ok {
				return nil, noValue("no stage %q runs before this one", name)
			}
			stageName, item = name, out
			continue
		case placeholderOutput:
			return placeholderFor(stageName, keys[i:]), nil
		case placeholder:
			return placeholder(strings.TrimSuffix(string(v), ">") + "." + keyPath(keys[i:]) + ">"), nil
		case nil:
			return nil, noValue("%s is null: no key %s", subject(), keyText(key))
		}
		next, err := indexOnce(reflect.ValueOf(item), key)
		if err != nil {
			return nil, err
		}
		if !next.found {
			switch {
			case next.what == "index":
				return nil, noValue("%s has no index %s (length %d)", subject(), keyText(key), next.length)
			case stageName != "":
				return nil, noValue("stage %q has no output key %q", stageName, strings.Join(append(path, fmt.Sprint(key)), "."))
			default:
				return nil, noValue("%s has no key %s", subject(), keyText(key))
			}
		}
		path = append(path, fmt.Sprint(key))
		item = next.value
	}
	return item, nil
}

func placeholderFor(stageName string, keys []any) placeholder {
	if len(keys) == 0 {
		return placeholder("<output " + stageName + ">")
	}
	return placeholder("<output " + stageName + "." + keyPath(keys) + ">")
}

func keyPath(keys []any) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprint(k)
	}
	return strings.Join(parts, ".")
}

func keyText(key any) string {
	if s, ok := key.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(key)
}

type indexed struct {
	value  any
	found  bool
	what   string // "key" or "index", for the error when not found
	length int    // of what an index was out of range of
}

// indexOnce reads key of item (a map with string keys, a slice, an array or a string) as
// text/template's index does.
func indexOnce(item reflect.Value, key any) (indexed, error) {
	switch item.Kind() {
	case reflect.Map:
		k := reflect.ValueOf(key)
		if !k.IsValid() || !k.Type().AssignableTo(item.Type().Key()) {
			return indexed{}, fmt.Errorf("index of %s: key %s is a %T", item.Type(), keyText(key), key)
		}
		v := item.MapIndex(k)
		if !v.IsValid() {
			return indexed{what: "key"}, nil
		}
		return indexed{value: v.Interface(), found: true}, nil
	case reflect.Slice, reflect.Array, reflect.String:
		n, ok := intKey(key)
		if !ok {
			return indexed{}, fmt.Errorf("index of %s: %s is not an integer", item.Type(), keyText(key))
		}
		if n < 0 || n >= int64(item.Len()) {
			return indexed{what: "index", length: item.Len()}, nil
		}
		return indexed{value: item.Index(int(n)).Interface(), found: true}, nil
	default:
		return indexed{}, fmt.Errorf("cannot index a %s with %s", item.Type(), keyText(key))
	}
}

func intKey(key any) (int64, bool) {
	v := reflect.ValueOf(key)
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int(), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if v.Uint() > 1<<62 {
			return -1, true
		}
		return int64(v.Uint()), true
	}
	return 0, false
}

// requireValue fails an action whose pipeline yields nothing: text/template would print
// "<no value>". action is the action as written.
func requireValue(action string, v any) (any, error) {
	if v == nil {
		return nil, noValue("%s yields no value", action)
	}
	return v, nil
}

// strict appends requireValue to the pipeline of every action that prints (declarations and
// assignments print nothing), as html/template appends its escapers.
func strict(tree *parse.Tree) {
	if tree == nil || tree.Root == nil {
		return
	}
	walkActions(tree.Root, func(a *parse.ActionNode) {
		if len(a.Pipe.Decl) > 0 {
			return
		}
		text := a.String()
		arg := &parse.StringNode{NodeType: parse.NodeString, Pos: a.Pos, Quoted: strconv.Quote(text), Text: text}
		appendCommand(a, fnValue, arg)
	})
}

// appendCommand appends `| fn args...` to a's pipeline.
func appendCommand(a *parse.ActionNode, fn string, args ...parse.Node) {
	ident := parse.NewIdentifier(fn).SetTree(nil).SetPos(a.Pos)
	a.Pipe.Cmds = append(a.Pipe.Cmds, &parse.CommandNode{
		NodeType: parse.NodeCommand, Pos: a.Pos, Args: append([]parse.Node{ident}, args...),
	})
}

// walkActions calls fn on every action node under n, in document order.
func walkActions(n parse.Node, fn func(*parse.ActionNode)) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			walkActions(c, fn)
		}
	case *parse.ActionNode:
		fn(n)
	case *parse.IfNode:
		walkActions(n.List, fn)
		walkActions(n.ElseList, fn)
	case *parse.RangeNode:
		walkActions(n.List, fn)
		walkActions(n.ElseList, fn)
	case *parse.WithNode:
		walkActions(n.List, fn)
		walkActions(n.ElseList, fn)
	}
}
