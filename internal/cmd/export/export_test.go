package export_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dynops/dynops/internal/cmd/cmdtest"
	"github.com/dynops/dynops/internal/cmd/root"
)

// TestBadInput: every refused command line exits 2 with a message naming
// the flag and the fix, before any AWS call (the endpoint is unreachable).
func TestBadInput(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"full", "--bucket", "b"}, "needs --table NAME and --bucket BUCKET"},
		{[]string{"full", "--table", "dev-hoge-user", "--bucket", "b", "--time", "yesterday"}, "--time \"yesterday\": use RFC3339"},
		{[]string{"incremental", "--table", "dev-hoge-user", "--bucket", "b"}, "give --from T1 --to T2, or --since-checkpoint"},
		{[]string{"incremental", "--table", "dev-hoge-user", "--bucket", "b", "--from", "2026-03-01T00:00:00Z"}, "--to is missing"},
		{[]string{"incremental", "--table", "dev-hoge-user", "--bucket", "b", "--from", "2026-03-01T00:00:00Z", "--to", "2026-03-01T01:00:00Z", "--since-checkpoint"}, "not both"},
		{[]string{"incremental", "--table", "dev-hoge-user", "--bucket", "b", "--since-checkpoint"}, "--since-checkpoint needs --checkpoint-table"},
		{[]string{"status"}, "give one export ARN"},
		{[]string{"wait", "a", "b"}, "give one export ARN"},
		{[]string{"verify", "--prefix", "p"}, "needs --bucket BUCKET (or --dir DIR"},
		{[]string{"verify", "--bucket", "b", "--dir", "d"}, "not both"},
		{[]string{"verify", "--bucket", "b", "--parallel", "0"}, "--parallel 0"},
		{[]string{"import", "--bucket", "b", "--prefix", "p", "--table", "dev-hoge-user"}, "give the new table's keys"},
		{[]string{"import", "--bucket", "b", "--prefix", "p", "--table", "dev-hoge-user", "--hash-key", "id:S", "--schema-from", "x"}, "not both"},
		{[]string{"import", "--bucket", "b", "--prefix", "p", "--table", "Users", "--hash-key", "id:S"}, "DDB-NAME-01"},
		{[]string{"import", "--bucket", "b", "--prefix", "p", "--table", "dev-hoge-user", "--hash-key", "id:BOOL"}, "--hash-key: key \"id:BOOL\": write NAME:TYPE"},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			r := cmdtest.Run(t, root.Execute, cmdtest.Env{Endpoint: "http://127.0.0.1:1", Region: "eu-west-1"}, append([]string{"export"}, c.args...)...)
			assert.Equal(t, 2, r.Code, r.Stderr)
			assert.Contains(t, r.Stderr, c.want)
		})
	}
}
