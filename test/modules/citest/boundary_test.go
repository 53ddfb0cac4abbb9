package citest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/harness"
)

// TestEveryModuleRoleTakesTheBoundary_DDB_SEC_01: under the CI test role a
// role can only be created with its permissions boundary, so every
// aws_iam_role of every module (and of modules added later) must set
// permissions_boundary from the module's permissions_boundary_arn input, and
// every root that calls such a module must pass its own
// permissions_boundary_arn on (the harness sets TF_VAR_permissions_boundary_arn
// on AWS). The CI role's own role is the one exception: it is what the
// boundary protects against.
func TestEveryModuleRoleTakesTheBoundary_DDB_SEC_01(t *testing.T) {
	root := harness.RepoRoot()
	files, err := filepath.Glob(filepath.Join(root, "modules", "*", "*.tf"))
	require.NoError(t, err)
	roles := 0
	withRoles := map[string]bool{}
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		body := parse(t, f)
		for _, b := range body.Blocks {
			if b.Type != "resource" || len(b.Labels) != 2 || b.Labels[0] != "aws_iam_role" {
				continue
			}
			if rel == filepath.Join("modules", "ci-test-role", "main.tf") && b.Labels[1] == "this" {
				continue
			}
			roles++
			withRoles[filepath.Base(filepath.Dir(f))] = true
			a, ok := b.Body.Attributes["permissions_boundary"]
			if !assert.True(t, ok, "%s: aws_iam_role.%s has no permissions_boundary: set it to var.permissions_boundary_arn (DDB-SEC-01)", rel, b.Labels[1]) {
				continue
			}
			assert.Equal(t, "var.permissions_boundary_arn", expr(t, f, a.Expr), "%s: aws_iam_role.%s", rel, b.Labels[1])
		}
	}
	require.Greater(t, roles, 5, "found too few roles: the walk is broken")

	// Every module with roles declares the input; every example and env root
	// that calls one passes its own variable on.
	for m := range withRoles {
		vars, err := os.ReadFile(filepath.Join(root, "modules", m, "variables.tf"))
		require.NoError(t, err)
		assert.Contains(t, string(vars), `variable "permissions_boundary_arn"`, "modules/%s creates roles: declare permissions_boundary_arn", m)
	}
	// A module that calls a role-creating module creates roles too
	// (dynamodb-stack): the closure over module calls.
	callsOf := func(f string) map[string]*hclsyntax.Block {
		out := map[string]*hclsyntax.Block{}
		for _, b := range parse(t, f).Blocks {
			if src, ok := b.Body.Attributes["source"]; ok && b.Type == "module" {
				called := filepath.Base(strings.Trim(expr(t, f, src.Expr), `"`))
				if called == ".." || called == "." {
					called = filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(f))))
				}
				out[b.Labels[0]+" "+called] = b
			}
		}
		return out
	}
	for changed := true; changed; {
		changed = false
		for _, f := range files {
			m := filepath.Base(filepath.Dir(f))
			for k := range callsOf(f) {
				if withRoles[strings.Fields(k)[1]] && !withRoles[m] {
					withRoles[m], changed = true, true
				}
			}
		}
	}
	roots, err := filepath.Glob(filepath.Join(root, "modules", "*", "examples", "*", "main.tf"))
	require.NoError(t, err)
	envs, err := filepath.Glob(filepath.Join(root, "envs", "*", "main.tf"))
	require.NoError(t, err)
	checked := 0
	for _, f := range append(append(roots, envs...), files...) {
		rel, _ := filepath.Rel(root, f)
		for k, b := range callsOf(f) {
			called := strings.Fields(k)[1]
			if !withRoles[called] || called == "ci-test-role" {
				continue
			}
			checked++
			a, ok := b.Body.Attributes["permissions_boundary_arn"]
			if assert.True(t, ok, "%s: module %q (modules/%s creates roles) does not pass permissions_boundary_arn", rel, b.Labels[0], called) {
				assert.Contains(t, expr(t, f, a.Expr), "var.permissions_boundary_arn", "%s: module %q", rel, b.Labels[0])
			}
		}
	}
	require.Greater(t, checked, 4, "found too few callers of role-creating modules: the walk is broken")
}

func parse(t *testing.T, path string) *hclsyntax.Body {
	t.Helper()
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	f, diags := hclsyntax.ParseConfig(src, path, hcl.InitialPos)
	require.False(t, diags.HasErrors(), "%s: %s", path, diags.Error())
	return f.Body.(*hclsyntax.Body)
}

func expr(t *testing.T, path string, e hclsyntax.Expression) string {
	t.Helper()
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	r := e.Range()
	return strings.TrimSpace(string(src[r.Start.Byte:r.End.Byte]))
}
