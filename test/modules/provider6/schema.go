// Package provider6 checks the Terraform of modules/ and envs/ against the
// hashicorp/aws 6.x schema without a 6.x provider binary: the schema comes from
// the typed bindings of the npm package @cdktn/provider-aws (generated from
// hashicorp/aws 6.66.0), one lib/<resource>/index.d.ts per resource type,
// installed by scripts/setup.sh.
package provider6

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// Kind is what an argument holds, as far as a configuration can tell.
type Kind string

// The kinds the checker tells apart.
const (
	KindString Kind = "string"
	KindNumber Kind = "number"
	KindBool   Kind = "bool"
	KindList   Kind = "list"
	KindMap    Kind = "map"
	KindBlock  Kind = "block"
	KindAny    Kind = "any"
)

// Field is one argument or nested block of a config interface.
type Field struct {
	Kind Kind
	// Block is the nested interface of a block field.
	Block string
}

// Schema is the config interfaces of one index.d.ts, by interface name, each
// field keyed by its Terraform (snake_case) name.
type Schema struct {
	Root       string
	Interfaces map[string]map[string]Field
}

var (
	ifaceRe = regexp.MustCompile(`^export interface (\w+)(?: extends [\w.]+)? \{$`)
	fieldRe = regexp.MustCompile(`^\s+readonly (\w+)\??: (.+?);?$`)
	// The doc link above each field names its Terraform argument; the field
	// itself may be renamed (cloudtrail's `equals` is `equalTo`).
	docRe = regexp.MustCompile(`/docs/(?:resources|data-sources)/\w+#(\w+) `)
)

// LibDir is where the bindings' lib/ folder is: $PROVIDER6_SCHEMA_DIR, set by
// `scripts/setup.sh --print-env`.
func LibDir() string { return os.Getenv("PROVIDER6_SCHEMA_DIR") }

// Folder is the lib/ folder of a Terraform resource or data source type:
// aws_dynamodb_table -> dynamodb-table, data aws_region -> data-aws-region.
func Folder(mode, typ string) string {
	if mode == "data" {
		return "data-" + strings.ReplaceAll(typ, "_", "-")
	}
	return strings.ReplaceAll(strings.TrimPrefix(typ, "aws_"), "_", "-")
}

// Load reads lib/<folder>/index.d.ts.
func Load(lib, mode, typ string) (*Schema, error) {
	path := filepath.Join(lib, Folder(mode, typ), "index.d.ts")
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s %q: no 6.x binding at %s: %w", mode, typ, path, err)
	}
	defer f.Close()
	s := &Schema{Interfaces: map[string]map[string]Field{}}
	var cur map[string]Field
	var pendingName, pendingType, doc string
	name := func(field string) string {
		if doc != "" {
			return doc
		}
		return snake(field)
	}
	depth := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if cur == nil {
			if m := ifaceRe.FindStringSubmatch(line); m != nil {
				cur = map[string]Field{}
				s.Interfaces[m[1]] = cur
				if strings.HasSuffix(m[1], "Config") && s.Root == "" {
					s.Root = m[1]
				}
			}
			continue
		}
		trim := strings.TrimSpace(line)
		if depth > 0 { // a multi-line type such as { [key: string]: string; }
			pendingType += " " + trim
			depth += strings.Count(trim, "{") - strings.Count(trim, "}")
			if depth == 0 {
				cur[name(pendingName)] = fieldOf(pendingType, s)
				doc = ""
			}
			continue
		}
		if trim == "}" {
			cur, doc = nil, ""
			continue
		}
		if d := docRe.FindStringSubmatch(line); d != nil {
			doc = d[1]
			continue
		}
		m := fieldRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if d := strings.Count(m[2], "{") - strings.Count(m[2], "}"); d > 0 {
			pendingName, pendingType, depth = m[1], m[2], d
			continue
		}
		cur[name(m[1])] = fieldOf(m[2], s)
		doc = ""
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if s.Root == "" {
		return nil, fmt.Errorf("%s: no *Config interface", path)
	}
	return s, nil
}

// fieldOf maps a TypeScript field type to a kind. Interface names are blocks;
// the interface itself may come later in the file, so the name is kept.
func fieldOf(ts string, s *Schema) Field {
	t := strings.TrimSpace(strings.TrimSuffix(ts, ";"))
	t = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(strings.ReplaceAll(t, "| cdktn.IResolvable", "")), "|"))
	switch {
	case t == "string":
		return Field{Kind: KindString}
	case t == "number":
		return Field{Kind: KindNumber}
	case t == "boolean":
		return Field{Kind: KindBool}
	case strings.HasPrefix(t, "{"):
		return Field{Kind: KindMap}
	case strings.HasSuffix(t, "[]"):
		base := strings.TrimSuffix(t, "[]")
		if isIdent(base) && unicode.IsUpper(rune(base[0])) {
			return Field{Kind: KindBlock, Block: base}
		}
		return Field{Kind: KindList}
	case isIdent(t) && unicode.IsUpper(rune(t[0])):
		return Field{Kind: KindBlock, Block: t}
	}
	return Field{Kind: KindAny}
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' {
			return false
		}
	}
	return true
}

// snake turns the bindings' camelCase back into the Terraform name.
func snake(camel string) string {
	var b strings.Builder
	for i, r := range camel {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
