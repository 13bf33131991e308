package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"reflect"

	"gopkg.in/yaml.v3"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/wire"
	"github.com/executor-dev/executor/yamlerr"
)

// mediaJSON is the media type of JSON; a request body without a Content-Type is JSON too.
const mediaJSON = "application/json"

// yamlMediaTypes are the media types a YAML request body may be sent as.
var yamlMediaTypes = map[string]bool{
	"application/yaml": true, "application/x-yaml": true, "text/yaml": true, "text/x-yaml": true,
}

// MaxCommandBodyBytes bounds the body of a command (approve, reject, retry, a bulk action):
// a comment and a filter, never worth the plan's limit (Options.MaxBodyBytes, whichever is
// smaller), so a large body sent to a tenant or plan that does not exist costs little.
const MaxCommandBodyBytes = 64 << 10

// decodeBody decodes a command's body (r's, JSON or YAML by its Content-Type) strictly into
// dst (a pointer to a struct): no unknown fields, no wrong types, no trailing data, at most
// MaxCommandBodyBytes. A YAML body is converted to JSON first, so the same rules apply.
// An empty body is an error naming "body" unless allowEmpty, when it leaves dst untouched.
func (h *handlers) decodeBody(w http.ResponseWriter, r *http.Request, dst any, allowEmpty bool) error {
	body, err := h.readBody(w, r, allowEmpty, min(h.opts.MaxBodyBytes, MaxCommandBodyBytes))
	if err != nil || body == nil {
		return err
	}
	return decodeJSON(body, dst)
}

// decodeLenient is decodeBody (no empty body) for a request whose every invalid field is
// reported at once (a plan submission): unknown fields and values of the wrong type do not
// stop it. They are returned, and dropped from what is decoded into dst, so that the use case
// checks the rest and reports them with its own violations. Any other error is returned as
// decodeBody's.
func (h *handlers) decodeLenient(w http.ResponseWriter, r *http.Request, dst any) ([]app.FieldViolation, error) {
	body, err := h.readBody(w, r, false, h.opts.MaxBodyBytes)
	if err != nil {
		return nil, err
	}
	generic, err := decodeGeneric(body)
	if err != nil {
		return nil, err
	}
	if _, ok := generic.(map[string]any); !ok {
		return nil, invalid("body", "must be a JSON object")
	}
	vs := checkShape(generic, reflect.TypeOf(dst).Elem()) // drops what it reports
	cleaned, err := json.Marshal(generic)
	if err != nil {
		return nil, invalid("body", "cannot be read: "+err.Error())
	}
	strict := json.NewDecoder(bytes.NewReader(cleaned))
	strict.DisallowUnknownFields()
	if err := strict.Decode(dst); err != nil { // checkShape dropped what does not fit: should not happen
		return nil, invalid("body", "does not match the expected document: "+err.Error())
	}
	return vs, nil
}

// readBody reads r's body as JSON, JSON or YAML by its Content-Type (YAML is converted), at
// most limit bytes, expanded YAML included. An empty body is an error naming "body" unless
// allowEmpty, when it is nil (whatever the Content-Type says).
func (h *handlers) readBody(w http.ResponseWriter, r *http.Request, allowEmpty bool, limit int64) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, &requestError{status: http.StatusRequestEntityTooLarge, typ: wire.ProblemPayloadTooLarge, field: "body",
				detail: fmt.Sprintf("the request body is larger than %d bytes", tooLarge.Limit)}
		}
		return nil, invalid("body", "could not be read: "+err.Error()) // the client broke off
	}
	empty := len(bytes.TrimSpace(body)) == 0
	if empty && allowEmpty {
		return nil, nil // whatever its Content-Type says
	}
	isYAML, err := bodyIsYAML(r)
	if err != nil {
		return nil, err
	}
	if empty {
		return nil, invalid("body", "a request body is required")
	}
	if isYAML {
		if body, err = yamlToJSON(body, limit); err != nil {
			return nil, err
		}
	}
	return body, nil
}

// bodyIsYAML tells JSON from YAML by the Content-Type; any other type is a 415.
func bodyIsYAML(r *http.Request) (bool, error) {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return false, nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	switch {
	case err == nil && mt == mediaJSON:
		return false, nil
	case err == nil && yamlMediaTypes[mt]:
		return true, nil
	}
	return false, &requestError{
		status: http.StatusUnsupportedMediaType, typ: wire.ProblemUnsupportedMediaType, field: "Content-Type",
		detail: fmt.Sprintf("unsupported Content-Type %q: send application/json or application/yaml", ct),
	}
}

// decodeGeneric decodes one JSON value, numbers as json.Number; trailing data is an error.
func decodeGeneric(body []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return nil, invalid("body", "is not valid JSON: "+jsonSyntaxDetail(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, invalid("body", "has data after the JSON value")
	}
	return generic, nil
}

// decodeJSON decodes one JSON object into dst, strictly.
func decodeJSON(body []byte, dst any) error {
	generic, err := decodeGeneric(body)
	if err != nil {
		return err
	}
	if vs := checkShape(generic, reflect.TypeOf(dst).Elem()); len(vs) > 0 {
		return &app.ValidationError{Violations: vs}
	}
	strict := json.NewDecoder(bytes.NewReader(body))
	strict.DisallowUnknownFields()
	if err := strict.Decode(dst); err != nil { // checkShape let it through: should not happen
		return invalid("body", "does not match the expected document: "+err.Error())
	}
	return nil
}

func jsonSyntaxDetail(err error) string {
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("%s (at byte %d)", syn.Error(), syn.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "unexpected end of input"
	default:
		return err.Error()
	}
}

// yamlToJSON converts a single YAML document to JSON, refusing (413, naming body) one whose
// aliases expand it past limit bytes before anything is expanded (yamlExpansion).
func yamlToJSON(body []byte, limit int64) ([]byte, error) {
	dec := yaml.NewDecoder(bytes.NewReader(body))
	var node yaml.Node
	if err := dec.Decode(&node); errors.Is(err, io.EOF) {
		return nil, invalid("body", "the YAML document is empty")
	} else if err != nil {
		return nil, invalid("body", "is not valid YAML: "+yamlerr.Explain(body, err).Error())
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		return nil, invalid("body", "must be a single YAML document")
	}
	if !yamlWithin(&node, limit) {
		return nil, &requestError{status: http.StatusRequestEntityTooLarge, typ: wire.ProblemPayloadTooLarge, field: "body",
			detail: fmt.Sprintf("the YAML document expands (its aliases repeated) to more than %d bytes, the request body limit", limit)}
	}
	var doc any
	if err := node.Decode(&doc); err != nil {
		return nil, invalid("body", "is not valid YAML: "+err.Error())
	}
	v, err := jsonValue(doc, "")
	if err != nil {
		return nil, err
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, invalid("body", "cannot be represented as JSON: "+err.Error())
	}
	return out, nil
}

// jsonValue turns what yaml.v3 decodes into something encoding/json can marshal: mapping keys
// become strings, and non-finite numbers (which JSON lacks) are errors naming their path.
func jsonValue(v any, path string) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			c, err := jsonValue(e, joinPath(path, k))
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case map[any]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			key := fmt.Sprint(k)
			c, err := jsonValue(e, joinPath(path, key))
			if err != nil {
				return nil, err
			}
			out[key] = c
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			c, err := jsonValue(e, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			if path == "" {
				path = "body"
			}
			return nil, invalid(path, "must be a finite number")
		}
		return v, nil
	default:
		return v, nil
	}
}
