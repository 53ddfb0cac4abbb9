package migrate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dynops/dynops/internal/cmd/cmdtest"
	"github.com/dynops/dynops/internal/cmd/root"
)

// Usage errors exit 2 before anything is read or written, naming the flag.
func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "routes.yaml")
	if err := os.WriteFile(good, []byte("version: 1\nroutes:\n  - table: dev-x-users\n    match: {PK: \"TENANT#*\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("version: 1\nroutes:\n  - table: dev-x-users\n    match: {PK: \"\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src := []string{"--source", "dev-x-single", "--routes", good}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"plan"}, "needs --source TABLE and --routes FILE"},
		{[]string{"backfill", "--source", "dev-x-single"}, "needs --source TABLE and --routes FILE"},
		{[]string{"catch-up", "--routes", good}, "needs --source TABLE and --routes FILE"},
		{append([]string{"plan", "--segments", "0"}, src...), "--segments"},
		{append([]string{"plan", "--sample", "-1"}, src...), "--sample"},
		{append([]string{"backfill", "--writers", "0"}, src...), "--writers"},
		{append([]string{"backfill", "--max-writes-per-second", "-5"}, src...), "--max-writes-per-second"},
		{append([]string{"catch-up", "--interval", "0s"}, src...), "--interval"},
		{append([]string{"verify", "--segments", "0"}, src...), "--segments"},
		{append([]string{"cutover", "--drain-timeout", "0s"}, src...), "--drain-timeout"},
		{append([]string{"cutover", "--value", ""}, src...), "--value"},
		{append([]string{"backfill", "--bogus"}, src...), "unknown flag: --bogus"},
		{[]string{"verify", "--source", "dev-x-single", "--routes", filepath.Join(dir, "missing.yaml")}, "--routes"},
		{[]string{"backfill", "--source", "dev-x-single", "--routes", bad}, "bad.yaml:4: routes[0].match.PK: empty pattern"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			r := cmdtest.Run(t, root.Execute, cmdtest.Env{Endpoint: "http://127.0.0.1:1", Region: "eu-west-1"}, append([]string{"migrate"}, c.args...)...)
			assert.Equal(t, 2, r.Code)
			assert.Contains(t, r.Stderr, c.want)
		})
	}
}
