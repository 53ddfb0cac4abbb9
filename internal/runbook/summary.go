package runbook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Summarize is the short human line of a step's JSON output: the scalar
// fields of its top-level object in their order (numbers, booleans, short
// strings: the counts and names the next decision needs), at most max; an
// array is its length and its first element's fields. Nested objects and
// long strings stay in the full output (-o json, and the state file).
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
	dec := json.NewDecoder(bytes.NewReader(doc))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	var parts []string
	for dec.More() && len(parts) < max {
		k, err := dec.Token()
		if err != nil {
			return strings.Join(parts, ", ")
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return strings.Join(parts, ", ")
		}
		var v any
		_ = json.Unmarshal(raw, &v)
		switch x := v.(type) {
		case float64, bool:
			parts = append(parts, fmt.Sprintf("%s=%s", k, raw))
		case string:
			if x != "" && len(x) <= 64 {
				parts = append(parts, fmt.Sprintf("%s=%s", k, x))
			}
		}
	}
	return strings.Join(parts, ", ")
}
