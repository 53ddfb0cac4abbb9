package iostreams

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/itchyny/gojq"
)

// JQ is a compiled --jq expression (github.com/itchyny/gojq, the jq
// language): the one filter of every -o json document.
type JQ struct {
	expr string
	code *gojq.Code
}

// ParseJQ compiles expr; its error names the flag and says what is wrong.
func ParseJQ(expr string) (*JQ, error) {
	q, err := gojq.Parse(expr)
	if err != nil {
		return nil, fmt.Errorf("--jq %q is not a jq expression: %v (see https://jqlang.org/manual/)", expr, err)
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return nil, fmt.Errorf("--jq %q does not compile: %v", expr, err)
	}
	return &JQ{expr: expr, code: code}, nil
}

// Print runs the expression on v's JSON and writes each result on its own
// line, as `jq -r -c` does: a string as it is, anything else as compact
// JSON. Numbers keep their digits (no float64 rounding of large keys).
func (j *JQ) Print(out io.Writer, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("writing JSON output: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return fmt.Errorf("writing JSON output: %w", err)
	}
	var buf bytes.Buffer
	iter := j.code.Run(doc)
	for {
		r, ok := iter.Next()
		if !ok {
			break
		}
		if err, isErr := r.(error); isErr {
			if h, halt := err.(*gojq.HaltError); halt && h.Value() == nil {
				break // `halt`: stop, no error
			}
			return fmt.Errorf("--jq %q failed on the output: %v", j.expr, err)
		}
		if str, isStr := r.(string); isStr {
			buf.WriteString(str)
		} else {
			b, err := gojq.Marshal(r)
			if err != nil {
				return fmt.Errorf("--jq %q: %v", j.expr, err)
			}
			buf.Write(b)
		}
		buf.WriteByte('\n')
	}
	// Nothing is written when the expression fails part way: the output
	// is all of its results or none.
	if _, err := out.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("writing --jq output: %w", err)
	}
	return nil
}
