package importcmd

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/cmd/cmdtest"
)

// TestFlags: every check the command makes before it reads anything, each
// refused with a usage error (exit 2) that names the flag and the fix, and
// nothing run; and the accepted forms, which run.
func TestFlags(t *testing.T) {
	base := []string{"--bucket", "b", "--prefix", "p/full", "--table", "dev-hoge-new"}
	without := func(flag string) []string {
		var out []string
		for i := 0; i < len(base); i += 2 {
			if base[i] != flag {
				out = append(out, base[i], base[i+1])
			}
		}
		return append(out, "--hash-key", "pk:S")
	}
	with := func(extra ...string) []string { return append(append([]string{}, base...), extra...) }
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"hash key", with("--hash-key", "pk:S"), ""},
		{"hash and range key", with("--hash-key", "pk:S", "--range-key", "sk:N"), ""},
		{"binary keys", with("--hash-key", "pk:B", "--range-key", "sk:B"), ""},
		{"schema from a table", with("--schema-from", "prod-hoge-user", "--source-region", "eu-west-1"), ""},
		{"no --bucket", without("--bucket"), "needs --bucket"},
		{"no --prefix", without("--prefix"), "needs --prefix"},
		{"no --table", without("--table"), "needs --table"},
		{"none of the three: the first named", []string{"--hash-key", "pk:S"}, "needs --bucket"},
		{"no keys", with(), "--hash-key NAME:TYPE [--range-key NAME:TYPE], or --schema-from SOURCE_TABLE (not both)"},
		{"keys and --schema-from", with("--hash-key", "pk:S", "--schema-from", "prod-hoge-user"), "(not both)"},
		{"range key alone", with("--range-key", "sk:S"), "--hash-key NAME:TYPE"},
		{"range key with --schema-from", with("--range-key", "sk:S", "--schema-from", "prod-hoge-user"), "--range-key needs --hash-key"},
		{"hash key without a type", with("--hash-key", "pk"), "--hash-key:"},
		{"hash key of another type", with("--hash-key", "pk:X"), "--hash-key:"},
		{"range key of another type", with("--hash-key", "pk:S", "--range-key", "sk:BOOL"), "--range-key:"},
		{"table name off the guideline", append(without("--table"), "--table", "hoge"), `--table "hoge": DDB-NAME-01`},
		{"an argument", append(with("--hash-key", "pk:S"), "extra"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "an argument" {
				got, err := cmdtest.Parse(t, NewCmdImport, tc.args...)
				assert.Nil(t, got, "the command takes no arguments")
				assert.Error(t, err)
				return
			}
			cmdtest.ExpectUsage(t, NewCmdImport, tc.wantErr, tc.args...)
		})
	}
}

// TestFlagsReachTheRun: what the run gets is what was typed, tags parsed.
func TestFlagsReachTheRun(t *testing.T) {
	got, err := cmdtest.Parse(t, NewCmdImport, "--bucket", "b", "--bucket-region", "eu-west-1", "--prefix", "p/full",
		"--table", "prod-hoge-user", "--hash-key", "pk:S", "--range-key", "sk:N", "--source-region", "eu-west-2",
		"--tag", "env=prod", "--tag", "product=hoge", "--yes", "--confirm", "prod-hoge-user")
	require.NoError(t, err)
	require.NotNil(t, got)
	assert.Equal(t, Options{Bucket: "b", BucketRegion: "eu-west-1", Prefix: "p/full", Table: "prod-hoge-user", HashKey: "pk:S",
		RangeKey: "sk:N", SourceRegion: "eu-west-2", Tags: map[string]string{"env": "prod", "product": "hoge"}, Yes: true,
		Confirm: []string{"prod-hoge-user"}}, *got)
}
