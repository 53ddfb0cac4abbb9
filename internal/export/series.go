package export

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynops/dynops/internal/exportwindow"
)

// CheckpointDB is the part of the API the checkpoint store uses.
type CheckpointDB interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
}

// Checkpoint store item attributes. The item is keyed by the exported
// table's name; `state` holds exportwindow.State as JSON, `checkpoint` the
// same time for people and queries, `version` the compare-and-swap counter.
const (
	attrTable      = "table_name"
	attrState      = "state"
	attrCheckpoint = "checkpoint"
	attrVersion    = "version"
)

// ErrConflict: another run changed the series between our read and write.
var ErrConflict = errors.New("the checkpoint changed under us (another run of the series?): nothing was written; run again")

// CheckpointStore keeps each table's series state in a DynamoDB table, one
// item per exported table, written only with a conditional put on the
// version read: two runs cannot both advance the checkpoint or both start a
// window.
type CheckpointStore struct {
	DB    CheckpointDB
	Table string // the checkpoint table, e.g. dev-hoge-export-checkpoint
}

// Load returns the table's state (zero State with Table set when none).
func (c CheckpointStore) Load(ctx context.Context, table string) (exportwindow.State, error) {
	s := exportwindow.State{Table: table}
	out, err := c.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: &c.Table, ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{attrTable: &types.AttributeValueMemberS{Value: table}}})
	if err != nil {
		return s, fmt.Errorf("reading the export checkpoint of %s from %s: %w", table, c.Table, err)
	}
	if out.Item == nil {
		return s, nil
	}
	v, ok := out.Item[attrState].(*types.AttributeValueMemberS)
	if !ok {
		return s, fmt.Errorf("checkpoint item of %s in %s has no %s string", table, c.Table, attrState)
	}
	if err := json.Unmarshal([]byte(v.Value), &s); err != nil {
		return s, fmt.Errorf("checkpoint item of %s in %s: %w", table, c.Table, err)
	}
	return s, nil
}

// Save writes next if the stored version is still prev's; it returns next
// with its new version, or ErrConflict.
func (c CheckpointStore) Save(ctx context.Context, prev, next exportwindow.State) (exportwindow.State, error) {
	next.Version = prev.Version + 1
	body, err := json.Marshal(next)
	if err != nil {
		return prev, err
	}
	item := map[string]types.AttributeValue{
		attrTable:   &types.AttributeValueMemberS{Value: next.Table},
		attrState:   &types.AttributeValueMemberS{Value: string(body)},
		attrVersion: &types.AttributeValueMemberN{Value: strconv.FormatInt(next.Version, 10)},
	}
	if !next.Checkpoint.IsZero() {
		item[attrCheckpoint] = &types.AttributeValueMemberS{Value: next.Checkpoint.UTC().Format(time.RFC3339)}
	}
	in := &dynamodb.PutItemInput{TableName: &c.Table, Item: item,
		ExpressionAttributeNames: map[string]string{"#k": attrTable}, ConditionExpression: aws.String("attribute_not_exists(#k)")}
	if prev.Version > 0 {
		in.ConditionExpression = aws.String("#v = :v")
		in.ExpressionAttributeNames = map[string]string{"#v": attrVersion}
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: strconv.FormatInt(prev.Version, 10)}}
	}
	if _, err := c.DB.PutItem(ctx, in); err != nil {
		var ccf *types.ConditionalCheckFailedException
		if errors.As(err, &ccf) {
			// The SDK retries a put whose answer was lost; when the first
			// attempt had landed, the retry fails its own condition. The write
			// took when the stored state is this one (read back).
			if cur, lerr := c.Load(ctx, next.Table); lerr == nil && cur.Version == next.Version {
				if stored, merr := json.Marshal(cur); merr == nil && bytes.Equal(stored, body) {
					return next, nil
				}
			}
			return prev, fmt.Errorf("%s in %s: %w", next.Table, c.Table, ErrConflict)
		}
		return prev, fmt.Errorf("writing the export checkpoint of %s to %s: %w", next.Table, c.Table, err)
	}
	return next, nil
}

// SeriesDB is what a series needs: exports and the checkpoint table.
type SeriesDB interface {
	DynamoDB
	CheckpointDB
}

// Series runs the gap-free export series of one table: a full export, then
// contiguous incremental windows from the checkpoint.
type Series struct {
	DB          DynamoDB
	Checkpoints CheckpointStore
	Table       string
	// Target: full exports go under Prefix/full, incremental ones under
	// Prefix/incremental.
	Target Target
	Now    func() time.Time
}

// Outcome is what one Step did.
type Outcome struct {
	Table     string                  `json:"table"`
	Decisions []exportwindow.Decision `json:"decisions"`
	Started   *exportwindow.InFlight  `json:"started,omitempty"` // the export requested, if any
	Completed []exportwindow.InFlight `json:"completed,omitempty"`
	Failed    []exportwindow.InFlight `json:"failed,omitempty"`
	Gap       bool                    `json:"gap,omitempty"`
	State     exportwindow.State      `json:"state"`
	Lag       time.Duration           `json:"lag_ns"`
}

// maxDecisions bounds one step: account for a finished export, start the next.
const maxDecisions = 8

// Step moves the series on as far as it can without waiting: it accounts for
// the export in flight (advancing the checkpoint when it COMPLETED, dropping
// it when it FAILED) and requests the next one. The checkpoint moves only to
// the end of a COMPLETED export; every write is conditional on the version
// read, and the in-flight export is recorded before it is requested (with a
// deterministic client token) so a crash cannot start a second one.
func (s Series) Step(ctx context.Context) (out Outcome, err error) {
	// Named results: the deferred out.State and out.Lag below reach the
	// caller (with an unnamed result they were set on a copy, and every
	// outcome said "no checkpoint, nothing in flight": --wait never waited).
	out = Outcome{Table: s.Table}
	if s.Now == nil {
		s.Now = time.Now
	}
	st, err := s.Checkpoints.Load(ctx, s.Table)
	if err != nil {
		return out, err
	}
	tbl, err := DescribeTable(ctx, s.DB, s.Table)
	if err != nil {
		return out, err
	}
	defer func() {
		out.State = st
		out.Lag = exportwindow.Lag(st, s.Now())
	}()
	for range maxDecisions {
		d := exportwindow.Decide(st, tbl.PITR)
		out.Decisions = append(out.Decisions, d)
		out.Gap = out.Gap || d.Gap
		switch d.Action {
		case exportwindow.StartFull, exportwindow.StartIncremental:
			f := &exportwindow.InFlight{Type: exportwindow.Full, ExportTime: d.ExportTime, StartedAt: s.Now().UTC()}
			if d.Action == exportwindow.StartIncremental {
				f = &exportwindow.InFlight{Type: exportwindow.Incremental, Window: d.Window, StartedAt: s.Now().UTC()}
			}
			f.Token = Token(tbl.Arn, f.Type, f.ExportTime.String(), f.Window.String(), strconv.Itoa(st.Failures))
			next := st
			next.InFlight = f
			if st, err = s.Checkpoints.Save(ctx, st, next); err != nil {
				return out, err
			}
			return out, s.request(ctx, tbl, &st, &out)
		case exportwindow.Request:
			return out, s.request(ctx, tbl, &st, &out)
		case exportwindow.Poll:
			e, err := Describe(ctx, s.DB, st.InFlight.ExportArn)
			if err != nil {
				return out, err
			}
			f := *st.InFlight
			f.Status, f.Failure = e.Status, e.Failure
			st.InFlight = &f // in memory only: the next decision writes
		case exportwindow.Advance:
			next := st
			out.Completed = append(out.Completed, *st.InFlight)
			next.Checkpoint, next.InFlight, next.Failures = st.InFlight.End(), nil, 0
			if st, err = s.Checkpoints.Save(ctx, st, next); err != nil {
				return out, err
			}
		case exportwindow.Retry:
			next := st
			out.Failed = append(out.Failed, *st.InFlight)
			next.InFlight, next.Failures = nil, st.Failures+1
			if st, err = s.Checkpoints.Save(ctx, st, next); err != nil {
				return out, err
			}
		default: // Wait, UpToDate
			return out, nil
		}
	}
	return out, nil
}

// request sends the recorded in-flight export and records its ARN.
func (s Series) request(ctx context.Context, tbl Table, st *exportwindow.State, out *Outcome) error {
	f := *st.InFlight
	var e Export
	var err error
	if f.Type == exportwindow.Full {
		to := s.Target
		to.Prefix = joinPrefix(to.Prefix, "full")
		e, err = StartFull(ctx, s.DB, tbl.Arn, f.ExportTime, to, f.Token)
	} else {
		to := s.Target
		to.Prefix = joinPrefix(to.Prefix, "incremental")
		e, err = StartIncremental(ctx, s.DB, tbl.Arn, f.Window, to, f.Token)
	}
	if err != nil {
		return err // the in-flight record stays: the next step requests it again with the same token
	}
	f.ExportArn, f.Status = e.Arn, ""
	next := *st
	next.InFlight = &f
	saved, err := s.Checkpoints.Save(ctx, *st, next)
	if err != nil {
		return err
	}
	*st = saved
	out.Started = &f
	return nil
}

func joinPrefix(prefix, sub string) string {
	if prefix == "" {
		return sub
	}
	return prefix + "/" + sub
}
