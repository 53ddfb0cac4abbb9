package provider6

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// Finding is one argument or block the 6.x schema refuses.
type Finding struct {
	Pos     hcl.Pos
	File    string
	Address string // resource.aws_x.name or data.aws_x.name
	Path    string // argument path inside it: replica.kms_key_arn
	Problem string
}

func (f Finding) String() string {
	return fmt.Sprintf("%s:%d: %s %s: %s", f.File, f.Pos.Line, f.Address, f.Path, f.Problem)
}

// Meta-arguments and meta-blocks Terraform handles itself.
var (
	metaArgs   = map[string]bool{"count": true, "for_each": true, "provider": true, "depends_on": true}
	metaBlocks = map[string]bool{"lifecycle": true, "provisioner": true, "connection": true}
)

// Checker caches the schemas it loaded.
type Checker struct {
	Lib     string
	schemas map[string]*Schema
}

// NewChecker reads bindings under lib (the package's lib/ folder).
func NewChecker(lib string) *Checker { return &Checker{Lib: lib, schemas: map[string]*Schema{}} }

// CheckDirs walks every .tf file under the given folders (skipping .terraform).
func (c *Checker) CheckDirs(dirs ...string) ([]Finding, int, error) {
	var out []Finding
	blocks := 0
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == ".terraform" {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".tf") {
				return nil
			}
			f, n, err := c.CheckFile(path)
			out = append(out, f...)
			blocks += n
			return err
		})
		if err != nil {
			return nil, 0, err
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, blocks, nil
}

// CheckFile checks the aws_ resource and data blocks of one file and returns
// what it found and how many blocks it checked.
func (c *Checker) CheckFile(path string) ([]Finding, int, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, fmt.Errorf("reading %s: %w", path, err)
	}
	file, diags := hclsyntax.ParseConfig(src, path, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, 0, fmt.Errorf("parsing %s: %s", path, diags.Error())
	}
	var out []Finding
	n := 0
	for _, b := range file.Body.(*hclsyntax.Body).Blocks {
		if (b.Type != "resource" && b.Type != "data") || len(b.Labels) != 2 || !strings.HasPrefix(b.Labels[0], "aws_") {
			continue
		}
		n++
		addr := b.Type + "." + b.Labels[0] + "." + b.Labels[1]
		s, err := c.schema(b.Type, b.Labels[0])
		if err != nil {
			out = append(out, Finding{Pos: b.DefRange().Start, File: path, Address: addr, Problem: err.Error()})
			continue
		}
		out = append(out, c.body(path, addr, "", b.Body, s, s.Root, true)...)
	}
	return out, n, nil
}

func (c *Checker) schema(mode, typ string) (*Schema, error) {
	key := mode + " " + typ
	if s, ok := c.schemas[key]; ok {
		return s, nil
	}
	s, err := Load(c.Lib, mode, typ)
	if err != nil {
		return nil, err
	}
	c.schemas[key] = s
	return s, nil
}

func (c *Checker) body(file, addr, prefix string, body *hclsyntax.Body, s *Schema, iface string, top bool) []Finding {
	fields := s.Interfaces[iface]
	var out []Finding
	bad := func(pos hcl.Pos, name, problem string) {
		out = append(out, Finding{Pos: pos, File: file, Address: addr, Path: prefix + name, Problem: problem})
	}
	names := make([]string, 0, len(body.Attributes))
	for name := range body.Attributes {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		a := body.Attributes[name]
		if top && metaArgs[name] {
			continue
		}
		f, ok := fields[name]
		switch {
		case !ok:
			bad(a.SrcRange.Start, name, "argument not in hashicorp/aws 6.66.0")
		case f.Kind == KindBlock:
			bad(a.SrcRange.Start, name, "a nested block in 6.66.0, set here as an argument")
		default:
			if k := exprKind(a.Expr); k != KindAny && f.Kind != KindAny && k != f.Kind {
				bad(a.SrcRange.Start, name, fmt.Sprintf("a %s in 6.66.0, set here to a %s", f.Kind, k))
			}
		}
	}
	for _, b := range body.Blocks {
		if top && metaBlocks[b.Type] {
			continue
		}
		name, inner := b.Type, b.Body
		if b.Type == "dynamic" && len(b.Labels) == 1 {
			name, inner = b.Labels[0], nil
			for _, cb := range b.Body.Blocks {
				if cb.Type == "content" {
					inner = cb.Body
				}
			}
		}
		f, ok := fields[name]
		switch {
		case !ok:
			bad(b.TypeRange.Start, name, "block not in hashicorp/aws 6.66.0")
		case f.Kind != KindBlock:
			bad(b.TypeRange.Start, name, fmt.Sprintf("a %s argument in 6.66.0, written here as a block", f.Kind))
		case inner != nil:
			out = append(out, c.body(file, addr, prefix+name+".", inner, s, f.Block, false)...)
		}
	}
	return out
}

// exprKind is the kind of a literal expression; anything computed is KindAny.
func exprKind(e hclsyntax.Expression) Kind {
	switch x := e.(type) {
	case *hclsyntax.LiteralValueExpr:
		switch t := x.Val.Type(); {
		case x.Val.IsNull():
			return KindAny
		case t == cty.String:
			return KindString
		case t == cty.Number:
			return KindNumber
		case t == cty.Bool:
			return KindBool
		}
	case *hclsyntax.TemplateExpr:
		return KindString
	case *hclsyntax.TupleConsExpr:
		return KindList
	case *hclsyntax.ObjectConsExpr:
		return KindMap
	}
	return KindAny
}
