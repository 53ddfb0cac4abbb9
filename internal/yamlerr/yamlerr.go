// Package yamlerr puts a YAML syntax error on the line a person must edit.
//
// go.yaml.in/yaml/v3 reports a syntax error at the start of the collection
// it was parsing, counted from 0: an unclosed `[` on line 12 comes out as
// "line 11", a mis-indented key on line 13 as the line of the list it
// breaks (line 2). The line to edit is the one after the longest prefix of
// the file that still parses: everything before it is well formed, and no
// longer prefix is.
package yamlerr

import (
	"bytes"
	"regexp"
	"strconv"

	yaml "go.yaml.in/yaml/v3"
)

var syntaxErr = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// Locate returns the line to edit (from 1) and the parser's message without
// its line, when err is a syntax error in data; ok is false for any other
// error (a type error names its own node's line, which is right).
func Locate(data []byte, err error) (line int, msg string, ok bool) {
	if err == nil {
		return 0, "", false
	}
	m := syntaxErr.FindStringSubmatch(err.Error())
	if m == nil {
		return 0, "", false
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	for k := len(lines) - 1; k > 0; k-- {
		var n yaml.Node
		if yaml.Unmarshal(bytes.Join(lines[:k], nil), &n) == nil {
			return k + 1, m[2], true
		}
	}
	// No prefix parses: the first line is wrong; keep the parser's own
	// line if it names a later one.
	reported, _ := strconv.Atoi(m[1])
	return max(1, reported), m[2], true
}
