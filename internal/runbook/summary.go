package runbook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Summarize is the short human line of a step's JSON output: the scalar
// fields of its top-level object in their order (numbers, booleans, short
// strings: the counts and names the next decision needs), then the counts
// (numbers) of its nested objects as name.field, the "result" object's
// first (what the step did: a repair's copied/conflicts, not only its
// dry_run=false), at most max in all; an array is its length and its
// first element's fields. Long strings, lists and deeper objects stay in
// the full output (-o json, and the state file).
func Summarize(doc []byte, max int) string {
	doc = bytes.TrimSpace(doc)
	if len(doc) == 0 {
		return ""
	}
	if doc[0] == '[' {
		var items []json.RawMessage
		if err := json.Unmarshal(doc, &items); err != nil {
			return ""
		}
		s := fmt.Sprintf("%d item(s)", len(items))
		if len(items) > 0 {
			if first := Summarize(items[0], max); first != "" {
				s += "; first: " + first
			}
		}
		return s
	}
	fields, ok := orderedFields(doc)
	if !ok {
		return ""
	}
	var parts []string
	var nested []field
	for _, f := range fields {
		var v any
		_ = json.Unmarshal(f.raw, &v)
		switch x := v.(type) {
		case float64, bool:
			parts = append(parts, fmt.Sprintf("%s=%s", f.name, f.raw))
		case string:
			if x != "" && len(x) <= 64 {
				parts = append(parts, fmt.Sprintf("%s=%s", f.name, x))
			}
		case map[string]any:
			if f.name == "result" {
				nested = append([]field{f}, nested...)
			} else {
				nested = append(nested, f)
			}
		}
	}
	for _, n := range nested {
		inner, _ := orderedFields(n.raw)
		for _, f := range inner {
			var v any
			if json.Unmarshal(f.raw, &v) == nil {
				if _, isNumber := v.(float64); isNumber {
					parts = append(parts, fmt.Sprintf("%s.%s=%s", n.name, f.name, f.raw))
				}
			}
		}
	}
	if len(parts) > max {
		parts = parts[:max]
	}
	return strings.Join(parts, ", ")
}

// field is one member of a JSON object, in the object's order.
type field struct {
	name string
	raw  json.RawMessage
}

// orderedFields are the members of the JSON object doc in their order
// (false when doc is not an object; what was read before an error else).
func orderedFields(doc []byte) ([]field, bool) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var out []field
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return out, true
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return out, true
		}
		out = append(out, field{name: fmt.Sprint(k), raw: raw})
	}
	return out, true
}
