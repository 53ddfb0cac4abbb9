package shared

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/cmd/factory"
)

// TestPlanOutChecksBeforeAnythingIsRead: --hashes-only or --force without
// --plan-out, --plan-out with --yes, and an existing file without --force
// are usage errors naming the flag; a new path passes; without --plan-out
// nothing is collected or written.
func TestPlanOutChecksBeforeAnythingIsRead(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "plan.jsonl")
	require.NoError(t, os.WriteFile(existing, []byte("old\n"), 0o600))
	for name, c := range map[string]struct {
		p    *PlanOut
		yes  bool
		want string
	}{
		"--hashes-only alone": {p: &PlanOut{HashesOnly: true}, want: "go with --plan-out"},
		"--force alone":       {p: &PlanOut{Force: true}, want: "go with --plan-out"},
		"with --yes":          {p: &PlanOut{File: filepath.Join(dir, "new.jsonl")}, yes: true, want: "dry run's plan"},
		"an existing file":    {p: &PlanOut{File: existing}, want: existing},
	} {
		t.Run(name, func(t *testing.T) {
			err := c.p.Check(c.yes)
			require.Error(t, err)
			assert.True(t, factory.IsUsageError(err), "exit 2")
			assert.Contains(t, err.Error(), c.want)
		})
	}
	assert.NoError(t, (&PlanOut{File: filepath.Join(dir, "new.jsonl")}).Check(false))
	assert.NoError(t, (&PlanOut{File: existing, Force: true}).Check(false))
	none := &PlanOut{}
	assert.Nil(t, none.Planned(), "no --plan-out: nothing collected")
	n, err := none.Write()
	assert.NoError(t, err)
	assert.Zero(t, n)

	p := &PlanOut{File: existing, Force: true}
	k := map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "b"}}
	p.Planned()(k, nil, k)
	p.Planned()(map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "a"}}, k, nil)
	n, err = p.Write()
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	b, err := os.ReadFile(existing)
	require.NoError(t, err)
	assert.Equal(t, `{"key":{"id":{"S":"a"}},"action":"delete","before":{"id":{"S":"b"}},"after":null}`+"\n"+
		`{"key":{"id":{"S":"b"}},"action":"put","before":null,"after":{"id":{"S":"b"}}}`+"\n", string(b), "ordered by key, one line each")
}
