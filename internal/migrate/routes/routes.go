// Package routes reads a migration routes file: which destination table each
// item of a single source table goes to, chosen by prefixes of its primary
// key, and how its attributes are renamed or dropped on the way.
//
//	version: 1
//	source_key: [PK, SK]          # optional, the default
//	routes:
//	  - name: users               # optional, defaults to the table
//	    table: dev-aiagent-users
//	    match: { PK: "TENANT#*", SK: "USER#*" }
//	    rename: { GSI1PK: user_list_pk, GSI1SK: user_list_sk }
//	    drop: [GSI2SK]
//
// A pattern ending in * matches by prefix ("TENANT#*"), "*" alone matches any
// value, anything else matches exactly. The first rule that matches wins.
// Rules match the primary key only, so every key has exactly one destination
// and a stream REMOVE (which carries only the key) can be routed.
package routes

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	yaml "go.yaml.in/yaml/v3"

	"github.com/dynops/dynops/internal/yamlerr"
)

// SeqAttribute is the attribute the catch-up stamps on destination items with
// the stream sequence number of the last change it applied (zero-padded), so
// a change never overwrites a newer one. Routes may not produce it.
const SeqAttribute = "dynops_migrate_seq"

// file is the on-disk form.
type file struct {
	Version   int      `yaml:"version"`
	SourceKey []string `yaml:"source_key"`
	Routes    []rule   `yaml:"routes"`
}

type rule struct {
	Name   string            `yaml:"name"`
	Table  string            `yaml:"table"`
	Match  map[string]string `yaml:"match"`
	Rename map[string]string `yaml:"rename"`
	Drop   []string          `yaml:"drop"`
}

// Pattern is one attribute's match: Exact, or a prefix when Prefix is set.
type Pattern struct {
	Value  string // the exact value or the prefix
	Prefix bool
}

func (p Pattern) String() string {
	if p.Prefix {
		return p.Value + "*"
	}
	return p.Value
}

// Matches reports whether v matches the pattern.
func (p Pattern) Matches(v string) bool {
	if p.Prefix {
		return strings.HasPrefix(v, p.Value)
	}
	return v == p.Value
}

// covers reports whether every value q matches also matches p.
func (p Pattern) covers(q Pattern) bool {
	if p.Prefix {
		return strings.HasPrefix(q.Value, p.Value)
	}
	return !q.Prefix && q.Value == p.Value
}

// Route is one rule of the file.
type Route struct {
	Name   string
	Table  string
	Match  map[string]Pattern
	Rename map[string]string
	Drop   []string
	Line   int // where the rule starts in the file
}

// Routes is a parsed routes file.
type Routes struct {
	Path      string
	SourceKey []string
	Routes    []Route
}

// Tables returns the destination tables, each once, in rule order.
func (r *Routes) Tables() []string {
	var out []string
	seen := map[string]bool{}
	for _, rt := range r.Routes {
		if !seen[rt.Table] {
			seen[rt.Table] = true
			out = append(out, rt.Table)
		}
	}
	return out
}

// Load reads and checks a routes file.
func Load(path string) (*Routes, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading routes file: %w", err)
	}
	return Parse(path, data)
}

// Error is a problem in a routes file, located by line and field.
type Error struct {
	Path  string
	Line  int
	Field string
	Msg   string
}

func (e *Error) Error() string {
	loc := e.Path
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.Path, e.Line)
	}
	if e.Field != "" {
		return fmt.Sprintf("%s: %s: %s", loc, e.Field, e.Msg)
	}
	return fmt.Sprintf("%s: %s", loc, e.Msg)
}

// Parse checks data, the text of the routes file at path.
func Parse(path string, data []byte) (*Routes, error) {
	var f file
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{Path: path, Msg: "the file is empty: it needs `version: 1` and a list of `routes`"}
		}
		if line, msg, ok := yamlerr.Locate(data, err); ok {
			return nil, &Error{Path: path, Line: line, Msg: msg + " (see the routes file format in `dynops migrate --help`)"}
		}
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		msg = strings.NewReplacer("not found in type routes.rule", "is not a rule field (name, table, match, rename, drop)",
			"not found in type routes.file", "is not a top-level field (version, source_key, routes)").Replace(msg)
		return nil, &Error{Path: path, Msg: msg + " (see the routes file format in `dynops migrate --help`)"}
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, &Error{Path: path, Msg: err.Error()}
	}
	loc := locator{path: path, root: &root}
	if f.Version != 1 {
		return nil, loc.err(-1, "version", fmt.Sprintf("is %d: this dynops reads version 1 (add `version: 1`)", f.Version))
	}
	r := &Routes{Path: path, SourceKey: f.SourceKey}
	if len(r.SourceKey) == 0 {
		r.SourceKey = []string{"PK", "SK"}
	}
	if len(r.SourceKey) > 2 || hasEmptyOrDup(r.SourceKey) {
		return nil, loc.err(-1, "source_key", fmt.Sprintf("%v: give the partition key, then the sort key if any (e.g. [PK, SK])", r.SourceKey))
	}
	if len(f.Routes) == 0 {
		return nil, loc.err(-1, "routes", "no rules: add at least one rule with table and match")
	}
	isKey := map[string]bool{}
	for _, k := range r.SourceKey {
		isKey[k] = true
	}
	for i, fr := range f.Routes {
		rt, err := checkRule(loc, i, fr, isKey)
		if err != nil {
			return nil, err
		}
		for j, prev := range r.Routes {
			if prev.shadows(rt) {
				return nil, loc.err(i, "match", fmt.Sprintf("rule %d (%s) can never match: rule %d (%s, line %d) matches every item it matches and comes first; put the narrower rule first or remove it",
					i+1, rt.describe(), j+1, prev.describe(), prev.Line))
			}
		}
		r.Routes = append(r.Routes, rt)
	}
	return r, nil
}

func hasEmptyOrDup(ss []string) bool {
	seen := map[string]bool{}
	for _, s := range ss {
		if strings.TrimSpace(s) == "" || seen[s] {
			return true
		}
		seen[s] = true
	}
	return false
}

func checkRule(loc locator, i int, fr rule, isKey map[string]bool) (Route, error) {
	rt := Route{Name: fr.Name, Table: fr.Table, Match: map[string]Pattern{}, Rename: fr.Rename, Drop: fr.Drop, Line: loc.line(i, "")}
	if strings.TrimSpace(fr.Table) == "" {
		return rt, loc.err(i, "table", "missing: name the destination table")
	}
	if rt.Name == "" {
		rt.Name = fr.Table
	}
	if len(fr.Match) == 0 {
		return rt, loc.err(i, "match", "missing: give a pattern for the partition and/or sort key, e.g. { PK: \"TENANT#*\", SK: \"USER#*\" }")
	}
	for _, a := range sortedKeys(fr.Match) {
		v := fr.Match[a]
		if !isKey[a] {
			return rt, loc.err(i, "match."+a, fmt.Sprintf("%s is not a key attribute of the source (%s): rules match the primary key only", a, keyList(isKey)))
		}
		if v == "" {
			return rt, loc.err(i, "match."+a, "empty pattern: write \"*\" to match any value, \"PREFIX*\" for a prefix or the exact value")
		}
		p := Pattern{Value: v}
		if strings.HasSuffix(v, "*") {
			p = Pattern{Value: strings.TrimSuffix(v, "*"), Prefix: true}
		}
		if strings.Contains(p.Value, "*") {
			return rt, loc.err(i, "match."+a, fmt.Sprintf("%q: * may only end a pattern (a prefix match)", v))
		}
		rt.Match[a] = p
	}
	targets := map[string]string{}
	dropped := map[string]bool{}
	for _, d := range fr.Drop {
		switch {
		case strings.TrimSpace(d) == "":
			return rt, loc.err(i, "drop", "an empty attribute name")
		case isKey[d]:
			return rt, loc.err(i, "drop", fmt.Sprintf("%s is a key attribute: the destination is keyed like the source", d))
		case dropped[d]:
			return rt, loc.err(i, "drop", fmt.Sprintf("%s is listed twice", d))
		}
		dropped[d] = true
	}
	for _, from := range sortedKeys(fr.Rename) {
		to := fr.Rename[from]
		field := "rename." + from
		switch {
		case strings.TrimSpace(from) == "" || strings.TrimSpace(to) == "":
			return rt, loc.err(i, field, "an empty attribute name")
		case isKey[from]:
			return rt, loc.err(i, field, fmt.Sprintf("%s is a key attribute: the destination is keyed like the source, its key cannot be renamed", from))
		case isKey[to]:
			return rt, loc.err(i, field, fmt.Sprintf("renames onto %s, a key attribute: it would replace the item's key", to))
		case to == SeqAttribute:
			return rt, loc.err(i, field, fmt.Sprintf("%s is the attribute the catch-up orders changes with: pick another name", to))
		case from == to:
			return rt, loc.err(i, field, "renames an attribute onto itself")
		case dropped[from]:
			return rt, loc.err(i, field, fmt.Sprintf("%s is also in drop: rename it or drop it", from))
		case dropped[to]:
			return rt, loc.err(i, field, fmt.Sprintf("renames onto %s, which drop removes", to))
		case targets[to] != "":
			return rt, loc.err(i, field, fmt.Sprintf("%s and %s both rename onto %s", targets[to], from, to))
		}
		if _, chained := fr.Rename[to]; chained {
			return rt, loc.err(i, field, fmt.Sprintf("renames onto %s, which is itself renamed: chains are ambiguous, rename each attribute straight to its final name", to))
		}
		targets[to] = from
	}
	return rt, nil
}

func keyList(isKey map[string]bool) string {
	return strings.Join(sortedKeys(isKey), ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// shadows reports whether r matches every item later matches, so later can never win.
func (r Route) shadows(later Route) bool {
	for a, p := range r.Match {
		q, ok := later.Match[a]
		if !ok {
			if p.Prefix && p.Value == "" {
				continue
			}
			return false
		}
		if !p.covers(q) {
			return false
		}
	}
	return true
}

func (r Route) describe() string {
	var parts []string
	for _, a := range sortedKeys(r.Match) {
		parts = append(parts, a+"="+r.Match[a].String())
	}
	return strings.Join(parts, " ") + " -> " + r.Table
}

// Matches reports whether the rule matches an item (or a key).
func (r Route) Matches(item map[string]types.AttributeValue) bool {
	for a, p := range r.Match {
		s, ok := item[a].(*types.AttributeValueMemberS)
		if !ok || !p.Matches(s.Value) {
			return false
		}
	}
	return true
}

// Find returns the first rule matching item (or its key), or nil.
func (r *Routes) Find(item map[string]types.AttributeValue) *Route {
	for i := range r.Routes {
		if r.Routes[i].Matches(item) {
			return &r.Routes[i]
		}
	}
	return nil
}

// Transform returns the destination item: item with the rule's renames and
// drops applied. It fails when a rename's target is already an attribute of
// the item (that value would be lost).
func (r Route) Transform(item map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	out := make(map[string]types.AttributeValue, len(item))
	for k, v := range item {
		out[k] = v
	}
	for _, d := range r.Drop {
		delete(out, d)
	}
	for from, to := range r.Rename {
		v, ok := item[from]
		if !ok {
			continue
		}
		if _, clash := item[to]; clash {
			if _, renamedAway := r.Rename[to]; !renamedAway {
				return nil, fmt.Errorf("route %s renames %s to %s, but the item already has %s", r.Name, from, to, to)
			}
		}
		delete(out, from)
		out[to] = v
	}
	return out, nil
}

// locator finds the line of a rule or of one of its fields.
type locator struct {
	path string
	root *yaml.Node
}

func (l locator) err(i int, field, msg string) *Error {
	prefix := field
	if i >= 0 {
		prefix = fmt.Sprintf("routes[%d].%s", i, field)
	}
	return &Error{Path: l.path, Line: l.line(i, field), Field: prefix, Msg: msg}
}

// line returns the line of field in rule i (i < 0: a top-level field), the
// rule's own line when the field is absent, 0 when unknown.
func (l locator) line(i int, field string) int {
	doc := l.root
	if doc == nil || len(doc.Content) == 0 {
		return 0
	}
	top := doc.Content[0]
	if i < 0 {
		if n := mapValue(top, field); n != nil {
			return n.Line
		}
		return 0
	}
	seq := mapValue(top, "routes")
	if seq == nil || seq.Kind != yaml.SequenceNode || i >= len(seq.Content) {
		return 0
	}
	n := seq.Content[i]
	for _, part := range strings.Split(field, ".") {
		if part == "" {
			break
		}
		v := mapValueKeyLine(n, part)
		if v == nil {
			break
		}
		n = v
	}
	return n.Line
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for j := 0; j+1 < len(m.Content); j += 2 {
		if m.Content[j].Value == key {
			return m.Content[j+1]
		}
	}
	return nil
}

// mapValueKeyLine returns the value node of key, with the key's line when the
// value is a scalar on the same line anyway.
func mapValueKeyLine(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for j := 0; j+1 < len(m.Content); j += 2 {
		if m.Content[j].Value == key {
			v := m.Content[j+1]
			if v.Kind == yaml.ScalarNode {
				return v
			}
			c := *v
			c.Line = m.Content[j].Line
			return &c
		}
	}
	return nil
}
