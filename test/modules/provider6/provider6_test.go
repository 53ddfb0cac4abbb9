package provider6_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/modules/provider6"
)

// lib is the 6.x bindings folder; the tests skip, naming setup, without it.
func lib(t *testing.T) string {
	t.Helper()
	dir := provider6.LibDir()
	if dir == "" {
		t.Skip("PROVIDER6_SCHEMA_DIR is unset: run `eval \"$(scripts/setup.sh --print-env)\"` (setup installs @cdktn/provider-aws 25.7.0, the hashicorp/aws 6.66.0 schema)")
	}
	if _, err := os.Stat(filepath.Join(dir, "dynamodb-table", "index.d.ts")); err != nil {
		t.Skipf("no 6.x bindings at %s (%v): run scripts/setup.sh", dir, err)
	}
	return dir
}

// TestModulesAcceptProvider6 walks every aws_ resource and data block of
// modules/ and envs/ and refuses any argument or block hashicorp/aws 6.66.0
// lacks or types differently: the modules claim `>= 5.83, < 7.0`.
func TestModulesAcceptProvider6(t *testing.T) {
	c := provider6.NewChecker(lib(t))
	findings, blocks, err := c.CheckDirs("../../../modules", "../../../envs")
	require.NoError(t, err)
	require.Greater(t, blocks, 80, "the walk found too few aws_ blocks: is it reading modules/ and envs/?")
	for _, f := range findings {
		t.Errorf("%s", f)
	}
	t.Logf("%d aws_ resource/data blocks checked against hashicorp/aws 6.66.0", blocks)
}

// TestCheckerRefusesRemovedArguments proves the check can fail: a fixture with
// arguments 6.0 removed (aws_eip.vpc, aws_instance.cpu_core_count), kinds that
// differ, unknown nested arguments (also inside dynamic blocks).
func TestCheckerRefusesRemovedArguments(t *testing.T) {
	c := provider6.NewChecker(lib(t))
	// The fixture is stored as *.tf.fixture so that tflint, which lints every
	// folder of the repository, does not lint a deliberately broken root.
	dir := t.TempDir()
	for _, name := range []string{"main.tf", "ok.tf"} {
		b, err := os.ReadFile(filepath.Join("testdata", "removed", name+".fixture"))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o600))
	}
	findings, blocks, err := c.CheckDirs(dir)
	require.NoError(t, err)
	assert.Equal(t, 5, blocks, "aws_ blocks only (null_resource is not the AWS provider's)")
	var got []string
	for _, f := range findings {
		got = append(got, f.Address+" "+f.Path+": "+f.Problem)
	}
	assert.ElementsMatch(t, []string{
		"resource.aws_eip.removed vpc: argument not in hashicorp/aws 6.66.0",
		"resource.aws_instance.removed cpu_core_count: argument not in hashicorp/aws 6.66.0",
		"resource.aws_dynamodb_table.kinds read_capacity: a number in 6.66.0, set here to a string",
		"resource.aws_dynamodb_table.kinds ttl: a nested block in 6.66.0, set here as an argument",
		"resource.aws_dynamodb_table.kinds point_in_time_recovery.not_a_field: argument not in hashicorp/aws 6.66.0",
		"resource.aws_dynamodb_table.kinds replica.made_up: argument not in hashicorp/aws 6.66.0",
	}, got)
	for _, f := range findings {
		assert.True(t, strings.HasSuffix(f.File, "main.tf"), "ok.tf has only arguments 6.x accepts: %s", f)
	}
}

// TestUnknownResourceType: a resource type 6.x does not have at all (removed in
// 6.0) is a finding, not a silent pass.
func TestUnknownResourceType(t *testing.T) {
	c := provider6.NewChecker(lib(t))
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.tf"), []byte(`resource "aws_simpledb_domain" "x" { name = "x" }`+"\n"), 0o600))
	findings, _, err := c.CheckDirs(dir)
	require.NoError(t, err)
	require.Len(t, findings, 1)
	assert.Contains(t, findings[0].Problem, "no 6.x binding")
}
