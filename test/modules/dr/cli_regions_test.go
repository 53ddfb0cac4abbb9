package dr

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/failover"
	"github.com/dynops/dynops/test/helpers/drpair"
)

// TestCLIThreeRegions_DDB_DR_01: dr status, failover and failback through
// the dynops command on three stand-in tables (eu-west-1, eu-central-1,
// eu-north-1): status gives a verdict per other replica with the
// other-replicas row; a drill without --to is refused naming the
// replicas; the failover fences both other replicas (read back from the
// emulator); status shows both FENCED; a failback without --to is refused
// naming the two fenced replicas; the failback with --to removes every
// fence and the audit log has the fence-others and unfence-old steps.
func TestCLIThreeRegions_DDB_DR_01(t *testing.T) {
	t.Parallel()
	p := drpair.New(t, target, drpair.Options{Third: true})
	flags := []string{"--table", p.Table, "--regions", strings.Join([]string{drpair.Home, drpair.Away, drpair.Third}, ","), "--allow-unreplicated"}
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	run := func(args ...string) (string, string, int) {
		return target.Dynops(t, log, append(args, flags...)...)
	}

	out, _, code := run("dr", "status", "-o", "json")
	require.Equal(t, 0, code)
	var rep struct {
		Verdicts []failover.Verdict
		Ready    bool
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Verdicts, 2, "one verdict per replica writes could move to")
	for _, v := range rep.Verdicts {
		assert.True(t, v.Ready, "%s: %v", v.To, v.Why)
		var others string
		for _, c := range v.Checks {
			if c.Name == "other-replicas" {
				others = c.Detail
			}
		}
		assert.Contains(t, others, "will be fenced", v.To)
	}

	_, errOut, code := run("dr", "drill", "--yes")
	assert.NotEqual(t, 0, code)
	out, _, _ = run("dr", "drill", "--yes")
	assert.Contains(t, out+errOut, "the table has 3 replicas ("+drpair.Home+", "+drpair.Away+", "+drpair.Third+"): pass --to")

	out, errOut, code = run("dr", "failover", "--to", drpair.Away, "--yes")
	require.Equal(t, 0, code, "%s%s", out, errOut)
	assert.Contains(t, out, "fence-others")
	assert.True(t, p.Fenced(t, drpair.Home))
	assert.True(t, p.Fenced(t, drpair.Third))
	assert.False(t, p.Fenced(t, drpair.Away))

	out, _, _ = run("dr", "status")
	assert.Equal(t, 2, strings.Count(out, "FENCED (by content: DynopsDRFenceWrites)"), out)
	assert.NotContains(t, out, "HALF-DONE")

	out, errOut, code = run("dr", "failback", "--yes")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, out+errOut, "2 replicas carry a fence of dynops dr ("+drpair.Home+", "+drpair.Third)
	assert.True(t, p.Fenced(t, drpair.Third), "a refused failback changes nothing")

	out, errOut, code = run("dr", "failback", "--to", drpair.Home, "--yes")
	require.Equal(t, 0, code, "%s%s", out, errOut)
	p.AssertUnchanged(t)
	audited, err := os.ReadFile(log)
	require.NoError(t, err)
	for _, step := range []string{audit.DRStepAction("failover", "fence-others"), audit.DRStepAction("failback", "unfence-old")} {
		assert.Contains(t, string(audited), step)
	}
}
