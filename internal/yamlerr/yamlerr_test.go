package yamlerr

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	yaml "go.yaml.in/yaml/v3"
)

// Every kind of syntax error is put on the line that must be edited: the
// parser's own line is the start of the enclosing collection, counted from 0.
func TestLocateTheLineToEdit(t *testing.T) {
	routes := "version: 1\nsource_key: [PK, SK]\nroutes:\n  - name: a\n    table: t\n    match: { PK: \"A#*\" }\n"
	for _, c := range []struct {
		name, doc string
		line      int
		msg       string
	}{
		{"unclosed [", routes + "  - name: b\n    table: t2\n    match: { PK: \"B#*\" }\n    drop: [x, y\n  - name: c\n    table: t3\n", 10, "did not find expected ',' or ']'"},
		{"unclosed {", routes + "  - name: b\n    match: {PK: \"B#*\"\n  - name: c\n", 8, "did not find expected ',' or '}'"},
		{"mis-indented key", routes + "  - name: b\n    table: t2\n   match: { PK: \"B#*\" }\n", 9, ""},
		{"over-indented key", routes + "  - name: b\n    table: t\n      rename: x\n", 9, "mapping values are not allowed"},
		{"unclosed quote", routes + "  - name: b\n    table: \"t\n  - name: c\n", 8, ""},
		{"tab indentation", "version: 1\nroutes:\n  - name: a\n\ttable: t\n", 4, "tab character"},
		{"bad first line", "version: [1\n", 1, ""},
		{"multi-line flow map closed later, error after it", routes + "  - name: b\n    match: {\n      PK: \"B#*\"\n    }\n   table: t\n", 11, ""},
		{"no newline at the end", routes + "  - name: b\n    drop: [x", 8, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var n yaml.Node
			err := yaml.Unmarshal([]byte(c.doc), &n)
			if !assert.Error(t, err) {
				return
			}
			line, msg, ok := Locate([]byte(c.doc), err)
			assert.True(t, ok)
			assert.Equal(t, c.line, line, "parser said %q; the line to edit is %d:\n%s", err, c.line, numbered(c.doc))
			assert.NotContains(t, msg, "line ")
			assert.Contains(t, msg, c.msg)
		})
	}
}

func TestLocateLeavesOtherErrors(t *testing.T) {
	_, _, ok := Locate([]byte("a: 1\n"), errors.New("yaml: unmarshal errors:\n  line 1: cannot unmarshal !!int"))
	assert.False(t, ok)
	_, _, ok = Locate(nil, nil)
	assert.False(t, ok)
}

func numbered(doc string) string {
	var b strings.Builder
	for i, l := range strings.Split(doc, "\n") {
		b.WriteString(strings.Repeat(" ", 3) + string(rune('0'+(i+1)/10)) + string(rune('0'+(i+1)%10)) + "  " + l + "\n")
	}
	return b.String()
}
