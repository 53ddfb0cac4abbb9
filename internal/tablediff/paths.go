package tablediff

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A document path names an attribute or a part of one: profile.name (a map
// member), tags[0] (a list element), orders[2].lines[0].sku. Segments are
// separated by "."; an index follows a name in brackets.

// segment is one step of a path: a map member (name) or a list index.
type segment struct {
	name  string
	index int // -1 for a name
}

// Path is a parsed document path.
type Path []segment

// ParsePath parses a document path; an error says what is wrong and how to
// write it.
func ParsePath(s string) (Path, error) {
	bad := func(why string) (Path, error) {
		return nil, fmt.Errorf("attribute path %q: %s (write a.b for a map member and a[0] for a list element)", s, why)
	}
	if s == "" {
		return bad("empty")
	}
	var p Path
	for _, part := range strings.Split(s, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if name == "" {
			return bad("empty name")
		}
		if strings.ContainsAny(name, "]") {
			return bad("unbalanced ]")
		}
		p = append(p, segment{name: name, index: -1})
		if rest == "" && !strings.Contains(part, "[") {
			continue
		}
		rest = "[" + rest
		for rest != "" {
			if rest[0] != '[' {
				return bad("text after ]")
			}
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return bad("unbalanced [")
			}
			n, err := strconv.Atoi(rest[1:end])
			if err != nil || n < 0 {
				return bad(fmt.Sprintf("list index %q is not a number", rest[1:end]))
			}
			p = append(p, segment{index: n})
			rest = rest[end+1:]
		}
	}
	return p, nil
}

// String writes the path back in its canonical form.
func (p Path) String() string {
	var b strings.Builder
	for i, s := range p {
		switch {
		case s.index >= 0:
			fmt.Fprintf(&b, "[%d]", s.index)
		case i > 0:
			b.WriteString("." + s.name)
		default:
			b.WriteString(s.name)
		}
	}
	return b.String()
}

// Lookup returns the value at the path in item.
func (p Path) Lookup(item map[string]types.AttributeValue) (types.AttributeValue, bool) {
	var cur types.AttributeValue = &types.AttributeValueMemberM{Value: item}
	for _, s := range p {
		switch v := cur.(type) {
		case *types.AttributeValueMemberM:
			if s.index >= 0 {
				return nil, false
			}
			next, ok := v.Value[s.name]
			if !ok {
				return nil, false
			}
			cur = next
		case *types.AttributeValueMemberL:
			if s.index < 0 || s.index >= len(v.Value) {
				return nil, false
			}
			cur = v.Value[s.index]
		default:
			return nil, false
		}
	}
	return cur, true
}

// projectable is the part of the path a ProjectionExpression reads: up to
// the first list index (DynamoDB returns a projected list element as a list
// of one, at index 0, so the whole list is read and indexed here).
func (p Path) projectable() Path {
	for i, s := range p {
		if s.index >= 0 {
			return p[:i]
		}
	}
	return p
}

// lookupAttr finds attr (a top-level name or a document path) in item.
func lookupAttr(item map[string]types.AttributeValue, attr string) (types.AttributeValue, bool) {
	if !strings.ContainsAny(attr, ".[") {
		v, ok := item[attr]
		return v, ok
	}
	p, err := ParsePath(attr)
	if err != nil {
		v, ok := item[attr]
		return v, ok
	}
	return p.Lookup(item)
}

// projection builds a ProjectionExpression over the key and attrs (document
// paths) with a placeholder for every name segment (DDB-API-04). A path
// inside another listed one is read with it: DynamoDB refuses overlapping
// paths.
func projection(keyNames, attrs []string) (*string, map[string]string) {
	if len(attrs) == 0 {
		return nil, nil
	}
	var paths []Path
	for _, k := range keyNames {
		paths = append(paths, Path{{name: k, index: -1}})
	}
	for _, a := range attrs {
		p, err := ParsePath(a)
		if err != nil {
			p = Path{{name: a, index: -1}}
		}
		paths = append(paths, p.projectable())
	}
	var kept []Path
	for i, p := range paths {
		covered := false
		for j, q := range paths {
			if i != j && within(p, q) && (len(q) < len(p) || j < i) {
				covered = true
				break
			}
		}
		if !covered {
			kept = append(kept, p)
		}
	}
	names := map[string]string{}
	ph := map[string]string{}
	var parts []string
	for _, p := range kept {
		var b strings.Builder
		for i, s := range p {
			if i > 0 {
				b.WriteByte('.')
			}
			h, ok := ph[s.name]
			if !ok {
				h = fmt.Sprintf("#p%d", len(ph))
				ph[s.name], names[h] = h, s.name
			}
			b.WriteString(h)
		}
		parts = append(parts, b.String())
	}
	expr := strings.Join(parts, ", ")
	return &expr, names
}

// within says whether p lies inside q (q is a prefix of p, or equal).
func within(p, q Path) bool {
	if len(q) > len(p) {
		return false
	}
	for i := range q {
		if q[i] != p[i] {
			return false
		}
	}
	return true
}
