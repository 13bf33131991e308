package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"gopkg.in/yaml.v3"
)

// writeYAML writes v as YAML: the document -o json prints, as YAML (the JSON field names, in
// the JSON's order; numbers, booleans and nulls as such; a string YAML would read as another
// type, such as "true" or "012", quoted).
func writeYAML(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	dec := json.NewDecoder(&b)
	dec.UseNumber()
	n, err := yamlNode(dec)
	if err != nil {
		return err
	}
	ye := yaml.NewEncoder(w)
	ye.SetIndent(2)
	if err := ye.Encode(n); err != nil {
		return err
	}
	return ye.Close()
}

// yamlNode reads the next JSON value of dec as a YAML node.
func yamlNode(dec *json.Decoder) (*yaml.Node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		return yamlCollection(dec, t)
	case string:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: t}, nil
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(t.String(), ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: t.String()}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(t)}, nil
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	}
	return nil, fmt.Errorf("yaml: unexpected JSON token %v", tok)
}

// yamlCollection reads the members of the object or array that delim opened, and its end.
func yamlCollection(dec *json.Decoder, delim json.Delim) (*yaml.Node, error) {
	n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	if delim == '{' {
		n.Kind, n.Tag = yaml.MappingNode, "!!map"
	}
	for dec.More() {
		if n.Kind == yaml.MappingNode {
			key, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, ok := key.(string)
			if !ok {
				return nil, errors.New("yaml: a JSON object key that is not a string")
			}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k})
		}
		child, err := yamlNode(dec)
		if err != nil {
			return nil, err
		}
		n.Content = append(n.Content, child)
	}
	if len(n.Content) == 0 {
		n.Style = yaml.FlowStyle // {} and []
	}
	_, err := dec.Token() // the closing delimiter
	return n, err
}
