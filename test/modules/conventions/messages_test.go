package conventions

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// TestErrorMessagesAreKnownAtPlan (issue 43 #5): no validation, precondition
// or postcondition of a module builds its error_message from a value that may
// be unknown until apply. Terraform evaluates the message only when the
// condition is known to be false; if the message then holds an unknown value
// it prints "Invalid error message: Unsuitable value for error message"
// instead of the rule (a replica's DDB-PITR-01 message once read the table's
// name from its ARN).
//
// May be unknown: an input named like an ARN (`*_arn`, `*_arns`), a
// resource's attributes, `self`, a module output named like an ARN or an ID;
// locals are followed to what they read. Such a value may appear in a
// message only when the condition reads it too: while it is unknown the
// condition is unknown, and terraform defers the check instead of printing
// the message. Names (table_name, local.name) are known at plan: use them.
func TestErrorMessagesAreKnownAtPlan(t *testing.T) {
	dirs, err := filepath.Glob("../../../modules/*")
	subs, _ := filepath.Glob("../../../modules/*/modules/*") // submodules, e.g. dynamodb-alarms/modules/account
	dirs = append(dirs, subs...)
	if err != nil || len(dirs) < 8 {
		t.Fatalf("modules/*: %d folders, %v", len(dirs), err)
	}
	checked := 0
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.tf"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			continue
		}
		srcs := map[string][]byte{}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			srcs[filepath.ToSlash(strings.TrimPrefix(f, "../../../"))] = b
		}
		n, problems := unknownInMessages(t, srcs)
		checked += n
		for _, p := range problems {
			t.Error(p)
		}
	}
	// The table module alone has over 40: a parse that finds few checks nothing.
	if checked < 150 {
		t.Errorf("found %d validation/precondition/postcondition blocks: the parse missed them", checked)
	}
}

// TestErrorMessageCheckFindsTheReplicaARN: the check above refuses the
// message that issue 43 #5 found (the table's name read from the ARN of a
// table created in the same plan) and accepts it once it uses table_name,
// or when the condition reads the ARN itself.
func TestErrorMessageCheckFindsTheReplicaARN(t *testing.T) {
	module := func(msg, cond string) map[string][]byte {
		return map[string][]byte{"modules/x/variables.tf": []byte(`
locals {
  name_from_arn = regex("table/([^/]+)$", var.global_table_arn)[0]
}
variable "global_table_arn" { type = string }
variable "table_name" { type = string }
variable "point_in_time_recovery" {
  type = object({ recovery_period_in_days = number })
  validation {
    condition     = ` + cond + `
    error_message = "` + msg + `"
  }
}
resource "aws_dynamodb_table" "this" {
  name = var.table_name
  lifecycle {
    postcondition {
      condition     = self.name == var.table_name
      error_message = "table ${self.arn} is not ${var.table_name}"
    }
  }
}
`)}
	}
	pitr := "var.point_in_time_recovery.recovery_period_in_days == 35"
	for _, c := range []struct {
		name, msg, cond string
		want, wantNot   []string
	}{
		{"name read from the ARN", `DDB-PITR-01: table ${regex("table/([^/]+)$", var.global_table_arn)[0]}: 7 days`, pitr,
			[]string{"modules/x/variables.tf:9: the validation's error_message reads var.global_table_arn", "self.arn"}, nil},
		{"name read from the ARN through a local", `DDB-PITR-01: table ${local.name_from_arn}: 7 days`, pitr, []string{"var.global_table_arn"}, nil},
		{"table_name", `DDB-PITR-01: table ${var.table_name}: 7 days`, pitr, []string{"self.arn"}, []string{"reads var.global_table_arn", "reads var.table_name"}},
		{"the condition reads the ARN", `DDB-DR-01: ${var.global_table_arn} is not a table ARN`, `can(regex("^arn:", var.global_table_arn))`, []string{"self.arn"}, []string{"reads var.global_table_arn"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, problems := unknownInMessages(t, module(c.msg, c.cond))
			if n != 2 {
				t.Fatalf("found %d checks, want 2", n)
			}
			joined := strings.Join(problems, "\n")
			for _, w := range c.want {
				if !strings.Contains(joined, w) {
					t.Errorf("the findings do not name %q:\n%s", w, joined)
				}
			}
			for _, w := range c.wantNot {
				if strings.Contains(joined, w) {
					t.Errorf("the findings name %q, known at plan or read by the condition:\n%s", w, joined)
				}
			}
		})
	}
}

// Names of values a provider knows only after apply.
var (
	arnName   = regexp.MustCompile(`(^|_)arns?$`)
	arnOrID   = regexp.MustCompile(`(^|_)(arns?|ids?)$`)
	knownRoot = map[string]bool{"var": true, "local": true, "each": true, "count": true, "path": true, "terraform": true, "data": true, "module": true, "self": true}
)

// unknownInMessages returns how many checks one module's files hold and,
// per check, the values its message reads that may be unknown at plan and
// that its condition does not read.
func unknownInMessages(t *testing.T, srcs map[string][]byte) (int, []string) {
	t.Helper()
	locals := map[string]hcl.Expression{}
	var bodies []*hclsyntax.Body
	var names []string
	for name := range srcs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		f, diags := hclsyntax.ParseConfig(srcs[name], name, hcl.InitialPos)
		if diags.HasErrors() {
			t.Fatalf("%s: %v", name, diags)
		}
		body := f.Body.(*hclsyntax.Body)
		bodies = append(bodies, body)
		for _, b := range body.Blocks {
			if b.Type == "locals" {
				for n, a := range b.Body.Attributes {
					locals[n] = a.Expr
				}
			}
		}
	}
	var expand func(hcl.Expression, map[string]bool) map[string]bool
	expand = func(e hcl.Expression, seen map[string]bool) map[string]bool {
		out := map[string]bool{}
		for _, tr := range e.Variables() {
			root := tr.RootName()
			attr := ""
			if len(tr) > 1 {
				if a, ok := tr[1].(hcl.TraverseAttr); ok {
					attr = a.Name
				}
			}
			switch {
			case root == "local":
				if seen[attr] || locals[attr] == nil {
					continue
				}
				seen[attr] = true
				for k := range expand(locals[attr], seen) {
					out[k] = true
				}
			case root == "module" && len(tr) > 2:
				if a, ok := tr[2].(hcl.TraverseAttr); ok {
					out["module."+attr+"."+a.Name] = true
				}
			case !knownRoot[root] && len(tr) > 2:
				// A resource: type.name.attribute.
				if a, ok := tr[2].(hcl.TraverseAttr); ok {
					out[root+"."+attr+"."+a.Name] = true
				}
			default:
				out[root+"."+attr] = true
			}
		}
		return out
	}
	mayBeUnknown := func(ref string) bool {
		parts := strings.Split(ref, ".")
		last := parts[len(parts)-1]
		switch parts[0] {
		case "var":
			return arnName.MatchString(last)
		case "module":
			return arnOrID.MatchString(last)
		case "self":
			return true
		case "local", "each", "count", "path", "terraform", "data":
			return false
		default:
			return true // a resource's attribute
		}
	}
	checks := 0
	var problems []string
	var walk func(*hclsyntax.Body)
	walk = func(body *hclsyntax.Body) {
		for _, b := range body.Blocks {
			if b.Type == "validation" || b.Type == "precondition" || b.Type == "postcondition" {
				checks++
				msg, cond := b.Body.Attributes["error_message"], b.Body.Attributes["condition"]
				if msg == nil || cond == nil {
					problems = append(problems, b.DefRange().String()+": a "+b.Type+" without condition or error_message")
					continue
				}
				condRefs := expand(cond.Expr, map[string]bool{})
				var bad []string
				for ref := range expand(msg.Expr, map[string]bool{}) {
					if mayBeUnknown(ref) && !condRefs[ref] {
						bad = append(bad, ref)
					}
				}
				if len(bad) > 0 {
					sort.Strings(bad)
					problems = append(problems, b.DefRange().Filename+":"+strconv.Itoa(b.DefRange().Start.Line)+": the "+b.Type+"'s error_message reads "+strings.Join(bad, ", ")+
						", which may be known only after apply while its condition (which does not read it) is already false: terraform then prints \"Invalid error message\" instead of the rule. Name the object with a value known at plan (e.g. var.table_name, local.name).")
				}
			}
			walk(b.Body)
		}
	}
	for _, body := range bodies {
		walk(body)
	}
	return checks, problems
}
