package migrate

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
	"github.com/dynops/dynops/internal/testctx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pointerSSM is the parameter store at the SDK interface; readBack, when
// set, is what a read after a put returns.
type pointerSSM struct {
	params   map[string]string
	readBack string
	putErr   error
	getErr   error
}

func (s *pointerSSM) GetParameter(_ context.Context, in *ssm.GetParameterInput, _ ...func(*ssm.Options)) (*ssm.GetParameterOutput, error) {
	if s.getErr != nil {
		return nil, s.getErr
	}
	v, ok := s.params[aws.ToString(in.Name)]
	if !ok {
		return nil, &ssmtypes.ParameterNotFound{Message: aws.String("no parameter")}
	}
	return &ssm.GetParameterOutput{Parameter: &ssmtypes.Parameter{Name: in.Name, Value: aws.String(v)}}, nil
}

func (s *pointerSSM) PutParameter(_ context.Context, in *ssm.PutParameterInput, _ ...func(*ssm.Options)) (*ssm.PutParameterOutput, error) {
	if s.putErr != nil {
		return nil, s.putErr
	}
	v := aws.ToString(in.Value)
	if s.readBack != "" {
		v = s.readBack
	}
	s.params[aws.ToString(in.Name)] = v
	return &ssm.PutParameterOutput{}, nil
}

// sourceDB is a source table without a resource policy (no fence), or gone.
type sourceDB struct {
	DynamoDB
	gone        bool
	describeErr error
}

func (d *sourceDB) DescribeTable(_ context.Context, in *dynamodb.DescribeTableInput, _ ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	if d.gone {
		return nil, &types.ResourceNotFoundException{Message: aws.String("Requested resource not found")}
	}
	if d.describeErr != nil {
		return nil, d.describeErr
	}
	return &dynamodb.DescribeTableOutput{Table: &types.TableDescription{TableName: in.TableName, TableStatus: types.TableStatusActive,
		TableArn: aws.String("arn:aws:dynamodb:eu-west-1:123456789012:table/" + aws.ToString(in.TableName))}}, nil
}

func (d *sourceDB) GetResourcePolicy(context.Context, *dynamodb.GetResourcePolicyInput, ...func(*dynamodb.Options)) (*dynamodb.GetResourcePolicyOutput, error) {
	return nil, &types.PolicyNotFoundException{Message: aws.String("no policy")}
}

func TestRollbackTarget(t *testing.T) {
	cut := &CutoverState{Pointer: "/app/tables", PointerBefore: "legacy"}
	cases := []struct {
		name           string
		cutover        *CutoverState
		o              RollbackOptions
		pointer, value string
	}{
		{"no cutover: the defaults", nil, RollbackOptions{Source: "src"}, "/dynops/migrate/src/active", PointerSingle},
		{"the cutover's pointer and its value before", cut, RollbackOptions{Source: "src"}, "/app/tables", "legacy"},
		{"flags win over the cutover", cut, RollbackOptions{Source: "src", Pointer: "/p", Value: "v"}, "/p", "v"},
		{"a cutover that recorded nothing", &CutoverState{}, RollbackOptions{Source: "src"}, "/dynops/migrate/src/active", PointerSingle},
	}
	for _, c := range cases {
		p, v := RollbackTarget(&State{Cutover: c.cutover}, c.o)
		assert.Equal(t, c.pointer, p, c.name)
		assert.Equal(t, c.value, v, c.name)
	}
}

func TestRollback(t *testing.T) {
	ctx := testctx.Bounded(t)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	newState := func(t *testing.T) *State {
		return NewState(filepath.Join(t.TempDir(), "src.json"), "src", "sum")
	}

	t.Run("flips the pointer back, reads it back, records the rollback", func(t *testing.T) {
		st := newState(t)
		st.Cutover = &CutoverState{Pointer: "/app/tables", PointerBefore: "single", PointerValue: "multi"}
		s := &pointerSSM{params: map[string]string{"/app/tables": "multi"}}
		var acts []string
		steps, err := Rollback(ctx, Clients{DB: &sourceDB{}, SSM: s}, RollbackOptions{Source: "src", Now: func() time.Time { return now },
			Act: func(what, target string, _ any) { acts = append(acts, what+" "+target) }}, st)
		require.NoError(t, err)
		assert.Equal(t, "single", s.params["/app/tables"])
		require.Len(t, steps, 3)
		assert.Equal(t, Step{Name: "check-source", Status: "done", Detail: "src is ACTIVE"}, steps[0])
		assert.Equal(t, Step{Name: "unfence", Status: "skipped", Detail: "no fence on the source"}, steps[1])
		assert.Equal(t, Step{Name: "flip-pointer", Status: "done", Detail: `/app/tables = "single" (was "multi"), read back`}, steps[2])
		assert.Equal(t, []string{"flip-pointer /app/tables"}, acts, "only changes made are audited")
		saved, err := LoadState(st.Path())
		require.NoError(t, err)
		require.NotNil(t, saved.Cutover.RolledBackAt)
		assert.Equal(t, now, *saved.Cutover.RolledBackAt)
	})

	t.Run("a pointer that does not exist yet reads as empty", func(t *testing.T) {
		st := newState(t)
		s := &pointerSSM{params: map[string]string{}}
		steps, err := Rollback(ctx, Clients{DB: &sourceDB{}, SSM: s}, RollbackOptions{Source: "src"}, st)
		require.NoError(t, err)
		assert.Equal(t, PointerSingle, s.params["/dynops/migrate/src/active"])
		assert.Equal(t, `/dynops/migrate/src/active = "single" (was ""), read back`, steps[2].Detail)
		require.NotNil(t, st.Cutover)
		assert.NotNil(t, st.Cutover.RolledBackAt)
	})

	refused := []struct {
		name string
		db   *sourceDB
		ssm  *pointerSSM
		err  string
		// steps done before the refusal
		steps int
	}{
		{"the source is gone", &sourceDB{gone: true}, &pointerSSM{params: map[string]string{}},
			"source src no longer exists: there is nothing to roll back to", 0},
		{"the source cannot be described", &sourceDB{describeErr: errors.New("AccessDenied")}, &pointerSSM{params: map[string]string{}},
			"describing source src: AccessDenied", 0},
		{"the pointer cannot be read", &sourceDB{}, &pointerSSM{params: map[string]string{}, getErr: errors.New("throttled")},
			"reading the pointer /dynops/migrate/src/active: throttled", 2},
		{"the pointer cannot be set", &sourceDB{}, &pointerSSM{params: map[string]string{}, putErr: errors.New("AccessDenied")},
			`setting /dynops/migrate/src/active to "single": AccessDenied`, 2},
		{"the pointer reads back otherwise", &sourceDB{}, &pointerSSM{params: map[string]string{}, readBack: "multi"},
			`/dynops/migrate/src/active read back "multi", not "single"`, 2},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			st := newState(t)
			var acts []string
			steps, err := Rollback(ctx, Clients{DB: c.db, SSM: c.ssm}, RollbackOptions{Source: "src",
				Act: func(what, _ string, _ any) { acts = append(acts, what) }}, st)
			assert.ErrorContains(t, err, c.err)
			if c.db.gone {
				assert.True(t, IsInputError(err), "a missing source is the user's input")
			}
			assert.Len(t, steps, c.steps)
			assert.Empty(t, acts, "nothing claimed")
			assert.Nil(t, st.Cutover, "no rollback recorded")
		})
	}
}

// A cutover before the backfill finished is refused before anything is read
// or changed.
func TestCutoverRefusesUnfinishedBackfill(t *testing.T) {
	for name, st := range map[string]*State{
		"no backfill":         {path: filepath.Join(t.TempDir(), "a.json")},
		"backfill unfinished": {Backfill: &BackfillState{}, path: filepath.Join(t.TempDir(), "b.json")},
	} {
		s := &pointerSSM{params: map[string]string{}, getErr: errors.New("must not be read")}
		res, err := Cutover(testctx.Bounded(t), Clients{DB: &sourceDB{describeErr: errors.New("must not be read")}, SSM: s},
			CutoverOptions{CatchUp: CatchUpOptions{Input: Input{Source: "src"}}}, st)
		assert.Nil(t, res, name)
		assert.True(t, IsInputError(err), name)
		assert.ErrorContains(t, err, "the backfill of src has not finished", name)
		assert.Nil(t, st.Cutover, name)
	}
}
