// Package migrate moves the items of one single table (PK/SK, overloaded
// indexes) into one table per domain, without a maintenance window:
//
//   - Plan scans the source (or a sample) and counts the items per
//     destination under the routes, lists what no rule matches, and checks
//     each destination (exists, same key schema, empty, guideline findings).
//   - Backfill records the source stream's position, then copies every item
//     with a parallel segmented Scan (consistent reads) and BatchWriteItem
//     (unprocessed items retried with backoff, DDB-API-02), at a bounded write
//     rate, with a checkpoint per segment so a killed run resumes where it
//     stopped; a re-run is idempotent.
//   - CatchUp reads the stream from the recorded position and applies each
//     key's changes to its destination (see catchup.go for the ordering).
//   - Verify compares the source, routed and transformed, with the union of
//     the destinations (tablediff's bucketed checksums).
//   - Cutover fences the source's writes (the DR fence), drains the stream,
//     verifies and flips the application's pointer; Rollback flips it back.
//
// The state of a migration (position, checkpoints, cutover) is one JSON file.
package migrate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/dynops/dynops/internal/failover"
	"github.com/dynops/dynops/internal/guideline"
	"github.com/dynops/dynops/internal/migrate/routes"
	"github.com/dynops/dynops/internal/safefile"
)

// DynamoDB is the part of the DynamoDB API a migration uses.
type DynamoDB interface {
	failover.DynamoDB
	guideline.DynamoDB
	Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	BatchWriteItem(context.Context, *dynamodb.BatchWriteItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
}

// Streams is the part of the DynamoDB Streams API the catch-up uses.
type Streams interface {
	DescribeStream(context.Context, *dynamodbstreams.DescribeStreamInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error)
	GetShardIterator(context.Context, *dynamodbstreams.GetShardIteratorInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error)
	GetRecords(context.Context, *dynamodbstreams.GetRecordsInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error)
}

// SSM reads and writes the application's table pointer.
type SSM interface {
	GetParameter(context.Context, *ssm.GetParameterInput, ...func(*ssm.Options)) (*ssm.GetParameterOutput, error)
	PutParameter(context.Context, *ssm.PutParameterInput, ...func(*ssm.Options)) (*ssm.PutParameterOutput, error)
}

// Clients are the API clients of a migration (one region).
type Clients struct {
	DB      DynamoDB
	Streams Streams
	SSM     SSM
}

// State is what a migration remembers between commands, in one JSON file.
type State struct {
	Source    string         `json:"source"`
	RoutesSum string         `json:"routes_sha256"`
	Position  *Position      `json:"position,omitempty"`
	Backfill  *BackfillState `json:"backfill,omitempty"`
	CatchUp   *CatchUpState  `json:"catch_up,omitempty"`
	Cutover   *CutoverState  `json:"cutover,omitempty"`

	path string
	mu   sync.Mutex
}

// Position is where the catch-up starts: the source stream and its shards at
// the moment the backfill started, before its first read.
type Position struct {
	StreamARN string    `json:"stream_arn"`
	Time      time.Time `json:"time"`
	Shards    []string  `json:"shards"`
}

// BackfillState is the backfill's checkpoint.
type BackfillState struct {
	Started  time.Time  `json:"started"`
	Finished *time.Time `json:"finished,omitempty"`
	Total    int64      `json:"total_estimate"` // the source's ItemCount at the start
	// AllowUnmatched records that the backfill left unmatched items behind
	// by choice: the catch-up and the cutover then skip their changes too.
	AllowUnmatched bool `json:"allow_unmatched,omitempty"`
	// AllowUntransformable records that the backfill left items its routes
	// cannot transform behind by choice: the catch-up then skips them too.
	AllowUntransformable bool `json:"allow_untransformable,omitempty"`
	// ActiveSeconds adds up the time of every run, up to each run's last
	// checkpoint (the time between runs does not count).
	ActiveSeconds float64        `json:"active_seconds,omitempty"`
	Segments      []SegmentState `json:"segments"`
	// Export is set when the backfill reads a full export of the source
	// instead of scanning it (Segments is then empty).
	Export *ExportState `json:"export,omitempty"`
}

// SegmentState is one Scan segment's checkpoint: everything before LastKey
// has been written.
type SegmentState struct {
	Done      bool             `json:"done"`
	LastKey   string           `json:"last_key,omitempty"` // canonical DynamoDB JSON of the LastEvaluatedKey
	Read      int64            `json:"read"`
	Written   map[string]int64 `json:"written,omitempty"` // per destination table
	Unmatched int64            `json:"unmatched"`
	Samples   []string         `json:"unmatched_sample,omitempty"`
	// Untransformable items matched a route that cannot transform them.
	Untransformable        int64    `json:"untransformable,omitempty"`
	UntransformableSamples []string `json:"untransformable_sample,omitempty"`
}

// CatchUpState is the catch-up's checkpoint per shard.
type CatchUpState struct {
	Shards    map[string]ShardState `json:"shards"`
	Applied   int64                 `json:"applied"`
	Stale     int64                 `json:"stale_skipped"`
	Unmatched int64                 `json:"unmatched"`
	// Untransformable counts changes whose new image the route cannot transform.
	Untransformable int64      `json:"untransformable,omitempty"`
	NewestRecord    *time.Time `json:"newest_record,omitempty"`
	LastPass        *time.Time `json:"last_pass,omitempty"`
}

// ShardState is how far the catch-up has applied one shard.
type ShardState struct {
	LastSeq string `json:"last_sequence_number,omitempty"`
	Done    bool   `json:"done,omitempty"` // closed and read to its end
}

// CutoverState records the cutover, for rollback.
type CutoverState struct {
	FencedAt      *time.Time `json:"fenced_at,omitempty"`
	PolicyBefore  string     `json:"policy_before,omitempty"`
	Pointer       string     `json:"pointer,omitempty"`
	PointerBefore string     `json:"pointer_before,omitempty"`
	PointerValue  string     `json:"pointer_value,omitempty"`
	CutAt         *time.Time `json:"cut_at,omitempty"`
	RolledBackAt  *time.Time `json:"rolled_back_at,omitempty"`
}

// DefaultStatePath is $XDG_STATE_HOME/dynops/migrate/<source>.json (or under ~/.local/state).
func DefaultStatePath(source string) (string, error) {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("finding the state directory: %w (pass --state FILE)", err)
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "dynops", "migrate", source+".json"), nil
}

// RoutesSum is the digest of a routes file's text: a migration keeps the routes it started with.
func RoutesSum(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// ErrNoState is returned by LoadState when the file does not exist.
var ErrNoState = errors.New("no migration state")

// LoadState reads the state file at path. A missing file is ErrNoState.
func LoadState(path string) (*State, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w at %s", ErrNoState, path)
	}
	if err != nil {
		return nil, fmt.Errorf("reading migration state: %w", err)
	}
	st := &State{}
	if err := json.Unmarshal(data, st); err != nil {
		return nil, fmt.Errorf("reading migration state %s: %w (the file is damaged: restore it or start over with backfill --restart)", path, err)
	}
	st.path = path
	return st, nil
}

// NewState returns an empty state that saves to path.
func NewState(path, source, routesSum string) *State {
	return &State{Source: source, RoutesSum: routesSum, path: path}
}

// Path is where the state is saved.
func (s *State) Path() string { return s.path }

// Check refuses a state that belongs to another source or other routes.
func (s *State) Check(source, routesSum string) error {
	if s.Source != source {
		return fmt.Errorf("the state file %s is the migration of %s, not %s: pass --state for this source", s.path, s.Source, source)
	}
	if s.RoutesSum != routesSum {
		return fmt.Errorf("the routes file changed since the backfill of %s started (state %s): routes must not change during a migration; restore the file or start over with backfill --restart", source, s.path)
	}
	return nil
}

// Update changes the state under its lock and saves it.
func (s *State) Update(fn func(*State)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(s)
	return s.saveLocked()
}

// Save writes the state atomically (temp file, fsync, rename).
func (s *State) Save() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saveLocked()
}

func (s *State) saveLocked() error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding migration state: %w", err)
	}
	// The temp file is created 0600 through the safefile discipline (a
	// symlink at it or above it is refused, never followed); a leftover of a
	// crashed run is replaced. The rename replaces the name, never a file a
	// symlink at s.path points to.
	if err := safefile.MkdirParent(s.path, "migration state"); err != nil {
		return err
	}
	tmp := s.path + ".tmp"
	f, err := safefile.Create(tmp, "migration state", true)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("writing migration state %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("syncing migration state %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing migration state %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, s.path); err != nil {
		return fmt.Errorf("saving migration state %s: %w", s.path, err)
	}
	return nil
}

// BackfillDone reports whether a backfill has finished.
func (s *State) BackfillDone() bool { return s.Backfill != nil && s.Backfill.Finished != nil }

// Input is what every step reads: the source, the routes and the state.
type Input struct {
	Source string
	Routes *routes.Routes
}
