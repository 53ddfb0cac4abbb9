package runbook

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
)

// S3API is the part of the S3 client an S3Store uses.
type S3API interface {
	GetObject(ctx context.Context, in *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	PutObject(ctx context.Context, in *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error)
	ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, optFns ...func(*s3.Options)) (*s3.ListObjectsV2Output, error)
}

// DefaultLeaseTTL is how long a hold lasts without a renewal (the runner
// renews it before every step): a run whose laptop died can be taken over
// after it.
const DefaultLeaseTTL = 30 * time.Minute

// S3Store keeps the states of a team's runbook runs under one S3 prefix.
// Every write is conditional: a new object with If-None-Match: *, a change
// with If-Match: the ETag this process read or wrote last. A run is held by
// one process at a time (a lease object with the holder's STS caller ARN and
// an expiry, written the same way), so two people resuming one incident
// cannot both run its steps.
type S3Store struct {
	S3     S3API
	Bucket string
	Prefix string // ends with "/" (or is empty)
	// Caller is this process's STS caller ARN (written in the lease as its holder).
	Caller string
	// Local is the local directory of the runs' work directories.
	Local string
	TTL   time.Duration
	Now   func() time.Time

	once  sync.Once
	token string // this process's lease token: two terminals of one person are two holders
	mu    sync.Mutex
	etags map[string]string // key -> ETag last read or written
}

// Lease is the hold record of a run.
type Lease struct {
	Holder   string    `json:"holder"` // STS caller ARN
	Token    string    `json:"token"`  // the holding process
	Host     string    `json:"host,omitempty"`
	Acquired time.Time `json:"acquired"`
	Expires  time.Time `json:"expires"`
	Released bool      `json:"released,omitempty"`
}

// Active reports whether the lease still holds the run at now.
func (l *Lease) Active(now time.Time) bool { return l != nil && !l.Released && now.Before(l.Expires) }

// HeldError is a run held by another process (exit 2: nothing was run).
type HeldError struct {
	Incident, Runbook string
	Lease             Lease
	Where             string
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("incident %s, runbook %s is held by %s (host %s, since %s, until %s; lease %s): nothing was run. "+
		"Follow it with `dynops runbook status --incident %s`, or resume after the holder finishes or its lease expires",
		e.Incident, e.Runbook, e.Lease.Holder, orDash(e.Lease.Host), e.Lease.Acquired.Format(time.RFC3339), e.Lease.Expires.Format(time.RFC3339), e.Where, e.Incident)
}

// ConflictError is a state changed by another process since this one read it.
type ConflictError struct{ Key, Where string }

func (e *ConflictError) Error() string {
	return fmt.Sprintf("the runbook state %s was changed by another process since this run read it: stopped, nothing more was run; "+
		"see `dynops runbook status` and resume with the same `dynops runbook run`", e.Where)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (s *S3Store) key(incident, runbook, kind string) string {
	return s.Prefix + incident + "/" + runbook + "." + kind + ".json"
}

func (s *S3Store) where(key string) string { return "s3://" + s.Bucket + "/" + key }

func (s *S3Store) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

func (s *S3Store) myToken() string {
	s.once.Do(func() {
		b := make([]byte, 12)
		_, _ = rand.Read(b)
		s.token = hex.EncodeToString(b)
	})
	return s.token
}

// get reads key's JSON into v, remembering its ETag; found is false when
// there is no such object.
func (s *S3Store) get(ctx context.Context, key string, v any) (found bool, err error) {
	out, err := s.S3.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.Bucket, Key: &key})
	if isCode(err, "NoSuchKey", "NotFound") {
		s.setETag(key, "")
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the runbook state %s: %w", s.where(key), err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		return false, fmt.Errorf("reading the runbook state %s: %w", s.where(key), err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("runbook state %s is not valid JSON (%v): fix or remove it to start over", s.where(key), err)
	}
	s.setETag(key, aws.ToString(out.ETag))
	return true, nil
}

// put writes v to key conditionally: If-Match the ETag this process knows,
// or If-None-Match: * when it knows none. A failed condition is a
// *ConflictError.
func (s *S3Store) put(ctx context.Context, key string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	in := &s3.PutObjectInput{Bucket: &s.Bucket, Key: &key, Body: bytes.NewReader(data), ContentType: aws.String("application/json")}
	if etag := s.etag(key); etag != "" {
		in.IfMatch = &etag
	} else {
		in.IfNoneMatch = aws.String("*")
	}
	out, err := s.S3.PutObject(ctx, in)
	if isCode(err, "PreconditionFailed", "ConditionalRequestConflict") {
		return &ConflictError{Key: key, Where: s.where(key)}
	}
	if err != nil {
		return fmt.Errorf("saving the runbook state %s: %w", s.where(key), err)
	}
	s.setETag(key, aws.ToString(out.ETag))
	return nil
}

func (s *S3Store) etag(key string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.etags[key]
}

func (s *S3Store) setETag(key, etag string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.etags == nil {
		s.etags = map[string]string{}
	}
	s.etags[key] = etag
}

func isCode(err error, codes ...string) bool {
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return false
	}
	for _, c := range codes {
		if ae.ErrorCode() == c {
			return true
		}
	}
	return false
}

// Load returns the saved state, or nil when there is none.
func (s *S3Store) Load(ctx context.Context, incident, runbook string) (*State, error) {
	var st State
	found, err := s.get(ctx, s.key(incident, runbook, "state"), &st)
	if err != nil || !found {
		return nil, err
	}
	return &st, nil
}

// Save writes st if nobody changed it since this process read or wrote it.
func (s *S3Store) Save(ctx context.Context, st *State) error {
	return s.put(ctx, s.key(st.Incident, st.Runbook, "state"), st)
}

// WorkDir is a local directory: a step's files stay on the machine that
// runs it.
func (s *S3Store) WorkDir(incident, runbook string) (string, error) {
	return FileStore{Dir: s.Local}.WorkDir(incident, runbook)
}

// Hold takes or renews this process's lease on the run.
func (s *S3Store) Hold(ctx context.Context, incident, runbook string) error {
	key := s.key(incident, runbook, "lease")
	var cur Lease
	found, err := s.get(ctx, key, &cur)
	if err != nil {
		return err
	}
	now := s.now()
	if found && cur.Active(now) && cur.Token != s.myToken() {
		return &HeldError{Incident: incident, Runbook: runbook, Lease: cur, Where: s.where(key)}
	}
	l := Lease{Holder: s.Caller, Token: s.myToken(), Acquired: now, Expires: now.Add(s.ttl())}
	l.Host, _ = os.Hostname()
	if found && cur.Token == s.myToken() && !cur.Released {
		l.Acquired = cur.Acquired
	}
	err = s.put(ctx, key, l)
	var ce *ConflictError
	if errors.As(err, &ce) { // another process wrote the lease between our read and write
		var won Lease
		if _, rerr := s.get(ctx, key, &won); rerr == nil {
			return &HeldError{Incident: incident, Runbook: runbook, Lease: won, Where: s.where(key)}
		}
	}
	return err
}

func (s *S3Store) ttl() time.Duration {
	if s.TTL > 0 {
		return s.TTL
	}
	return DefaultLeaseTTL
}

// Release marks this process's lease released (conditionally: a lease taken
// over by another process after its expiry stays theirs).
func (s *S3Store) Release(ctx context.Context, incident, runbook string) error {
	key := s.key(incident, runbook, "lease")
	var cur Lease
	found, err := s.get(ctx, key, &cur)
	if err != nil || !found || cur.Token != s.myToken() {
		return err
	}
	cur.Released = true
	cur.Expires = s.now()
	return s.put(ctx, key, cur)
}

// Holder is the run's lease, nil when there is none.
func (s *S3Store) Holder(ctx context.Context, incident, runbook string) (*Lease, error) {
	var l Lease
	found, err := s.get(ctx, s.key(incident, runbook, "lease"), &l)
	if err != nil || !found {
		return nil, err
	}
	return &l, nil
}

// Runs lists the runbooks with a saved state for the incident.
func (s *S3Store) Runs(ctx context.Context, incident string) ([]string, error) {
	prefix := s.Prefix + incident + "/"
	var out []string
	p := s3.NewListObjectsV2Paginator(s.S3, &s3.ListObjectsV2Input{Bucket: &s.Bucket, Prefix: &prefix})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing the runbook states s3://%s/%s: %w", s.Bucket, prefix, err)
		}
		for _, o := range page.Contents {
			name := strings.TrimPrefix(aws.ToString(o.Key), prefix)
			if rb, ok := strings.CutSuffix(name, ".state.json"); ok {
				out = append(out, rb)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// Task is the ECS task a run was started in (`runbook run --in-aws`),
// kept next to the run's state (RUNBOOK.task.json): the task writes the
// state, so the terminal that started it writes only this.
type Task struct {
	ARN            string    `json:"task_arn"`
	Cluster        string    `json:"cluster"`
	TaskDefinition string    `json:"task_definition"`
	Container      string    `json:"container"`
	Command        []string  `json:"command"` // the container's command: dynops's arguments
	StartedBy      string    `json:"started_by"`
	Started        time.Time `json:"started"`
}

// LoadTask returns the run's last task, nil when it never ran in AWS.
func (s *S3Store) LoadTask(ctx context.Context, incident, runbook string) (*Task, error) {
	var t Task
	found, err := s.get(ctx, s.key(incident, runbook, "task"), &t)
	if err != nil || !found {
		return nil, err
	}
	return &t, nil
}

// SaveTask records the run's task (over the one LoadTask read, if any).
func (s *S3Store) SaveTask(ctx context.Context, incident, runbook string, t *Task) error {
	return s.put(ctx, s.key(incident, runbook, "task"), t)
}

// ParseStateBucket splits --state-bucket BUCKET[/PREFIX] (default prefix
// dynops/runbooks/).
func ParseStateBucket(v string) (bucket, prefix string, err error) {
	v = strings.TrimPrefix(v, "s3://")
	bucket, prefix, _ = strings.Cut(v, "/")
	if bucket == "" {
		return "", "", fmt.Errorf("--state-bucket %q: write BUCKET or BUCKET/PREFIX, e.g. --state-bucket acme-oncall/dynops/runbooks", v)
	}
	if prefix == "" {
		prefix = "dynops/runbooks"
	}
	return bucket, strings.TrimSuffix(prefix, "/") + "/", nil
}

var _ Store = (*S3Store)(nil)
var _ Store = FileStore{}
