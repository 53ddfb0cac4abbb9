package runbook

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Lookup reads path (".a.b[0].c"; ".a.#" is the length of a list or object)
// in a decoded JSON document.
func Lookup(doc any, path string) (any, bool) {
	cur := doc
	for _, seg := range segments(path) {
		switch {
		case seg == "#":
			switch x := cur.(type) {
			case []any:
				cur = float64(len(x))
			case map[string]any:
				cur = float64(len(x))
			default:
				return nil, false
			}
		case strings.HasPrefix(seg, "["):
			i, err := strconv.Atoi(strings.Trim(seg, "[]"))
			list, ok := cur.([]any)
			if err != nil || !ok {
				return nil, false
			}
			if i < 0 {
				i += len(list)
			}
			if i < 0 || i >= len(list) {
				return nil, false
			}
			cur = list[i]
		default:
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			if cur, ok = m[seg]; !ok {
				return nil, false
			}
		}
	}
	return cur, true
}

func segments(path string) []string {
	var out []string
	for _, part := range strings.Split(strings.TrimPrefix(path, "."), ".") {
		if part == "" {
			continue
		}
		for {
			i := strings.Index(part, "[")
			if i < 0 {
				out = append(out, part)
				break
			}
			if i > 0 {
				out = append(out, part[:i])
			}
			j := strings.Index(part, "]")
			if j < i {
				out = append(out, part)
				break
			}
			out = append(out, part[i:j+1])
			part = part[j+1:]
			if part == "" {
				break
			}
		}
	}
	return out
}

// String renders a JSON value as a step output: strings as they are, other
// values as JSON.
func String(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// Eval evaluates c on doc; the error says what was found instead.
func (c Check) Eval(doc any) error {
	v, ok := Lookup(doc, c.Path)
	if c.Op == "exists" {
		if !ok || v == nil {
			return fmt.Errorf("check `%s` failed: %s is missing", c.Text, c.Path)
		}
		return nil
	}
	if !ok {
		return fmt.Errorf("check `%s` failed: %s is missing", c.Text, c.Path)
	}
	got := String(v)
	wantText := c.Value
	if strings.HasPrefix(c.Value, ".") { // compare with another value of the output
		w, ok := Lookup(doc, c.Value)
		if !ok {
			return fmt.Errorf("check `%s` failed: %s is missing", c.Text, c.Value)
		}
		wantText = String(w)
	}
	if n, isNum := v.(float64); isNum {
		want, err := strconv.ParseFloat(wantText, 64)
		if err != nil {
			return fmt.Errorf("check `%s`: %s is a number (%s) and %q is not", c.Text, c.Path, got, c.Value)
		}
		if !compare(n, want, c.Op) {
			return fmt.Errorf("check `%s` failed: %s is %s (want %s %s)", c.Text, c.Path, got, c.Op, wantText)
		}
		return nil
	}
	var pass bool
	switch c.Op {
	case "==":
		pass = got == wantText
	case "!=":
		pass = got != wantText
	default:
		return fmt.Errorf("check `%s`: %s is %s, not a number, so only == and != apply", c.Text, c.Path, got)
	}
	if !pass {
		return fmt.Errorf("check `%s` failed: %s is %s (want %s %s)", c.Text, c.Path, got, c.Op, wantText)
	}
	return nil
}

func compare(a, b float64, op string) bool {
	switch op {
	case "==":
		return a == b
	case "!=":
		return a != b
	case ">":
		return a > b
	case ">=":
		return a >= b
	case "<":
		return a < b
	case "<=":
		return a <= b
	}
	return false
}
