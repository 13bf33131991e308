package api

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/executor-dev/executor/app"
)

var timeType = reflect.TypeFor[time.Time]()

// checkShape compares a generic JSON value (decoded with UseNumber) with the Go type it will be
// decoded into and lists every unknown field and every value of the wrong type, each named by
// its path ("stages[0].timeout"). It is what makes decoding strict and its errors precise:
// encoding/json names neither the path of an unknown field nor the index of a bad element.
// Field names are matched exactly (encoding/json alone would accept "Name" for "name").
//
// It also drops what it reports from v (an unknown field or a value of the wrong type is
// deleted from its object; an element of the wrong type becomes null), so that v decodes into
// t with the rest of the document, for the use case to check the rest (decodeLenient).
func checkShape(v any, t reflect.Type) []app.FieldViolation {
	var out []app.FieldViolation
	if _, ok := v.(map[string]any); !ok {
		return append(out, app.FieldViolation{Field: "body", Reason: "must be a JSON object"})
	}
	walkShape(v, t, "", func(field, reason string) {
		out = append(out, app.FieldViolation{Field: field, Reason: reason})
	})
	return out
}

// walkShape reports through add what is wrong in v and reports whether v itself is wrong (its
// parent drops it); what is wrong under v is dropped from v.
func walkShape(v any, t reflect.Type, path string, add func(field, reason string)) (drop bool) {
	if v == nil {
		return false // null leaves the field at its zero value, as encoding/json does
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var reason string
	switch {
	case t == timeType:
		reason = timeShape(v)
	case t.Kind() == reflect.Struct:
		reason = walkStruct(v, t, path, add)
	case t.Kind() == reflect.Map:
		reason = walkMap(v, t, path, add)
	case t.Kind() == reflect.Slice:
		reason = walkSlice(v, t, path, add)
	default:
		reason = scalarShape(v, t)
	}
	if reason == "" {
		return false
	}
	add(path, reason)
	return true
}

// timeShape is what is wrong with v as a time.Time, "" if nothing.
func timeShape(v any) string {
	s, ok := v.(string)
	if !ok {
		return "must be an RFC 3339 time string, such as \"2026-11-21T10:00:00Z\""
	}
	if _, err := time.Parse(time.RFC3339, s); err != nil {
		return fmt.Sprintf("%q is not an RFC 3339 time, such as \"2026-11-21T10:00:00Z\"", s)
	}
	return ""
}

// walkStruct checks v against struct type t: unknown fields and fields of the wrong shape
// are reported and dropped from v. It returns what is wrong with v itself, "" if nothing.
func walkStruct(v any, t reflect.Type, path string, add func(field, reason string)) string {
	obj, ok := v.(map[string]any)
	if !ok {
		return "must be an object"
	}
	fields := jsonFields(t)
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		f, known := fields[k]
		if !known {
			add(joinPath(path, k), "unknown field")
			delete(obj, k)
			continue
		}
		if walkShape(obj[k], f.Type, joinPath(path, k), add) {
			delete(obj, k)
		}
	}
	return ""
}

// walkMap checks v against map type t, dropping the entries of the wrong shape.
func walkMap(v any, t reflect.Type, path string, add func(field, reason string)) string {
	obj, ok := v.(map[string]any)
	if !ok {
		return "must be an object"
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if walkShape(obj[k], t.Elem(), joinPath(path, k), add) {
			delete(obj, k)
		}
	}
	return ""
}

// walkSlice checks v against slice type t, nulling the elements of the wrong shape.
func walkSlice(v any, t reflect.Type, path string, add func(field, reason string)) string {
	arr, ok := v.([]any)
	if !ok {
		return "must be an array"
	}
	for i, e := range arr {
		if walkShape(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i), add) {
			arr[i] = nil
		}
	}
	return ""
}

// scalarShape is what is wrong with v as a value of scalar type t, "" if nothing (an
// interface takes anything).
func scalarShape(v any, t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		if _, ok := v.(string); !ok {
			return "must be a string"
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return "must be true or false"
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := v.(json.Number)
		if !ok {
			return "must be an integer"
		}
		if i, err := n.Int64(); err != nil || reflect.Zero(t).OverflowInt(i) {
			return "must be an integer in range"
		}
	case reflect.Float32, reflect.Float64:
		n, ok := v.(json.Number)
		if !ok {
			return "must be a number"
		}
		if f, err := n.Float64(); err != nil || math.IsInf(f, 0) {
			return "must be a number in range"
		}
	}
	return ""
}

// jsonFields maps the JSON names of t's exported fields to the fields.
func jsonFields(t reflect.Type) map[string]reflect.StructField {
	out := make(map[string]reflect.StructField, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		out[name] = f
	}
	return out
}

func joinPath(path, key string) string {
	if key == "" {
		key = `""` // the empty key: a field is never named by nothing (found by FuzzSubmitBody)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}
