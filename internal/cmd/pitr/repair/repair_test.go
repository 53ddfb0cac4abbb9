package repair

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/cmd/cmdtest"
	"github.com/dynops/dynops/internal/cmd/factory"
)

func parse(t testing.TB, args ...string) (*Options, error) {
	return cmdtest.Parse(t, NewCmdRepair, args...)
}

func TestRepairFlags(t *testing.T) {
	o, err := parse(t, "--from", "a-restored", "--to", "a", "--keys", "k.jsonl")
	require.NoError(t, err)
	assert.Equal(t, "a-restored", o.Repair.From)
	assert.Equal(t, "k.jsonl", o.Repair.KeysFile)
	assert.False(t, o.Yes, "a dry run unless --yes")
	assert.False(t, o.Repair.DeleteExtra, "never deletes unless --delete-extra")
	assert.False(t, o.Repair.Unconditional, "conditional writes by default")
	assert.Equal(t, 8, o.Repair.Workers)

	o, err = parse(t, "--from", "a-restored", "--to", "a", "--all-differences", "--delete-extra", "--unconditional", "--yes", "--confirm", "a", "--workers", "2")
	require.NoError(t, err)
	assert.True(t, o.AllDifferences && o.Repair.DeleteExtra && o.Repair.Unconditional && o.Yes)
	assert.Equal(t, []string{"a"}, o.Confirm)
	assert.Equal(t, 2, o.Repair.Workers)

	for _, w := range []string{"1", "256"} { // both bounds allowed
		o, err = parse(t, "--from", "a-restored", "--to", "a", "--keys", "k.jsonl", "--workers", w)
		require.NoError(t, err, "--workers %s", w)
		assert.Equal(t, w, fmt.Sprint(o.Repair.Workers))
	}
	o, err = parse(t, "--from", "b", "--to", "a", "--keys", "k", "--allow-unrelated-source", "INC-1: restored by hand")
	require.NoError(t, err)
	assert.Equal(t, "INC-1: restored by hand", o.AllowUnrelated)

	o, err = parse(t, "--from", "b", "--to", "a", "--keys", "k", "--damage-until", "2026-11-21T09:41:00Z", "--damage-stream", "--record", "r.jsonl")
	require.NoError(t, err)
	assert.True(t, o.DamageStream)
	assert.Equal(t, "2026-11-21T09:41:00Z", o.DamageUntil)
	assert.Equal(t, "r.jsonl", o.Repair.RecordFile)

	plan := t.TempDir() + "/plan.jsonl"
	o, err = parse(t, "--from", "b", "--to", "a", "--keys", "k", "--version-attribute", "ver", "--plan-out", plan, "--hashes-only", "--yes")
	require.NoError(t, err, "unlike export revert, the run writes its plan too")
	assert.Equal(t, "ver", o.Repair.VersionAttribute)
	assert.Equal(t, plan, o.Plan.File)
	assert.True(t, o.Plan.HashesOnly)
}

func TestRepairFlagsRefused(t *testing.T) {
	cases := map[string][]string{
		"needs exactly one of --keys FILE":                  {"--from", "b", "--to", "a"},
		"exactly one of --keys":                             {"--from", "b", "--to", "a", "--keys", "k", "--all-differences"},
		"one of --from RESTORED (a table) or --from-export": {"--to", "a", "--keys", "k"},
		"needs --to ORIGINAL":                               {"--from", "b", "--keys", "k"},
		"or --from-export s3://BUCKET/PREFIX":               {"--from", "b", "--from-export", "s3://x/y", "--to", "a", "--keys", "k"},
		"--from and --to are both a":                        {"--from", "a", "--to", "a", "--keys", "k"},
		"--workers 0 is out of range: use 1 to 256":         {"--from", "b", "--to", "a", "--keys", "k", "--workers", "0"},
		"--workers 257 is out of range: use 1 to 256":       {"--from", "b", "--to", "a", "--keys", "k", "--workers", "257"},
		"--allow-unrelated-source needs a REASON":           {"--from", "b", "--to", "a", "--keys", "k", "--allow-unrelated-source", "  "},
		"each name where the damaged keys come from":        {"--from", "b", "--to", "a", "--keys", "k", "--damage-until", "2026-11-21T09:41:00Z", "--damage-stream", "--damage-keys", "d"},
		"need --damage-until TIME":                          {"--from", "b", "--to", "a", "--keys", "k", "--damage-keys", "d"},
		"a damage window needs its keys":                    {"--from", "b", "--to", "a", "--keys", "k", "--damage-until", "2026-11-21T09:41:00Z"},
		"--unscoped needs a REASON":                         {"--from", "b", "--to", "a", "--keys", "k", "--unscoped", " "},
		"give one or the other":                             {"--from", "b", "--to", "a", "--keys", "k", "--damage-until", "2026-11-21T09:41:00Z", "--damage-stream", "--unscoped", "x"},
		`--damage-since "09:29" is not an RFC3339 time`:     {"--from", "b", "--to", "a", "--keys", "k", "--damage-since", "09:29", "--damage-until", "2026-11-21T09:41:00Z", "--damage-stream"},
		"--unconditional writes without conditions":         {"--from", "b", "--to", "a", "--keys", "k", "--version-attribute", "ver", "--unconditional"},
		"batch writes read nothing of --to":                 {"--from", "b", "--to", "a", "--keys", "k", "--plan-out", "p.jsonl", "--unconditional", "--yes"},
		"--hashes-only and --force go with --plan-out FILE": {"--from", "b", "--to", "a", "--keys", "k", "--hashes-only"},
	}
	for msg, args := range cases {
		t.Run(msg, func(t *testing.T) {
			o, err := parse(t, args...)
			require.Error(t, err)
			assert.True(t, factory.IsUsageError(err), "exit 2")
			assert.Contains(t, err.Error(), msg)
			assert.Nil(t, o, "the run function is not called")
		})
	}
}
