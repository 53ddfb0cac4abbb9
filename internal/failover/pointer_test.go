package failover

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
	"github.com/dynops/dynops/internal/testctx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pointerSSM is one region's pointer parameter. A region that is down
// refuses the write; a stale one accepts it and keeps the old value (a
// write that did not land, as only a read back shows).
type pointerSSM struct {
	value       string
	down, stale bool
}

func (p *pointerSSM) PutParameter(_ context.Context, in *ssm.PutParameterInput, _ ...func(*ssm.Options)) (*ssm.PutParameterOutput, error) {
	if p.down {
		return nil, errors.New("dial tcp: connection refused")
	}
	if !p.stale {
		p.value = aws.ToString(in.Value)
	}
	return &ssm.PutParameterOutput{}, nil
}

func (p *pointerSSM) GetParameter(context.Context, *ssm.GetParameterInput, ...func(*ssm.Options)) (*ssm.GetParameterOutput, error) {
	if p.down {
		return nil, errors.New("dial tcp: connection refused")
	}
	return &ssm.GetParameterOutput{Parameter: &ssmtypes.Parameter{Value: aws.String(p.value)}}, nil
}

// TestFlipPointerReadsBack_DDB_DR_01: the pointer flip reports the regions
// where it read the new value back, names a region it had to skip (--force,
// the region does not answer) and nothing else, keeps an undo to each old
// value, and fails on a write the read back does not show.
func TestFlipPointerReadsBack_DDB_DR_01(t *testing.T) {
	const pointer = "/dynops/dr/prod-hoge-user/active-region"
	regions := []string{"eu-west-1", "us-east-1"}
	for _, c := range []struct {
		name       string
		ssm        map[string]*pointerSSM
		answers    map[string]bool
		force      bool
		wantDetail string
		wantErr    string
		wantUndo   int
	}{
		{name: "both regions set and read back",
			ssm:        map[string]*pointerSSM{"eu-west-1": {value: "eu-west-1"}, "us-east-1": {value: "eu-west-1"}},
			answers:    map[string]bool{"eu-west-1": true, "us-east-1": true},
			wantDetail: pointer + " = us-east-1 in eu-west-1, us-east-1, read back", wantUndo: 2},
		{name: "a write the read back does not show fails",
			ssm:     map[string]*pointerSSM{"eu-west-1": {value: "eu-west-1", stale: true}, "us-east-1": {value: "eu-west-1"}},
			answers: map[string]bool{"eu-west-1": true, "us-east-1": true},
			wantErr: `setting ` + pointer + ` to us-east-1 in eu-west-1: read back "eu-west-1"`},
		{name: "the old region down, --force: skipped and named",
			ssm:        map[string]*pointerSSM{"eu-west-1": {value: "eu-west-1", down: true}, "us-east-1": {value: "eu-west-1"}},
			answers:    map[string]bool{"us-east-1": true},
			force:      true,
			wantDetail: pointer + " = us-east-1 in us-east-1, read back; NOT set in eu-west-1 (does not answer, --force): set it when the region is back", wantUndo: 1},
		{name: "the old region down without --force: fails",
			ssm:     map[string]*pointerSSM{"eu-west-1": {value: "eu-west-1", down: true}, "us-east-1": {value: "eu-west-1"}},
			answers: map[string]bool{"us-east-1": true},
			wantErr: "connection refused"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &Runner{Clients: func(region string) Clients { return Clients{SSM: c.ssm[region]} }}
			var s State
			for _, reg := range regions {
				s.Regions = append(s.Regions, RegionState{Region: reg, Answers: c.answers[reg], Pointer: "eu-west-1"})
			}
			req := Request{Target: Target{Table: "prod-hoge-user", Regions: regions, Pointer: pointer}, Rules: Rules{Mode: Failover, From: "eu-west-1", To: "us-east-1", Force: c.force}}
			var st Step
			err := r.flipPointer(testctx.Bounded(t), &st, req, s)
			if c.wantErr != "" {
				require.ErrorContains(t, err, c.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.wantDetail, st.Detail)
			assert.Len(t, st.Undo, c.wantUndo, "one undo per region written")
			for _, u := range st.Undo {
				assert.Contains(t, u, "--value eu-west-1 ")
			}
		})
	}
}
