package runbook

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/runbook"
	"github.com/dynops/dynops/test/helpers/harness"
)

// stateBucket creates the team's state bucket.
func stateBucket(t *testing.T) (string, *s3.Client) {
	t.Helper()
	cfg := target.AWSConfig(t)
	bucket := "oncall-" + harness.UniqueID()
	client := awsclients.New(cfg).S3()
	_, err := client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: &bucket,
		CreateBucketConfiguration: &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraint(cfg.Region)}})
	require.NoError(t, err)
	return bucket, client
}

func sharedStore(client *s3.Client, bucket, caller string) *runbook.S3Store {
	return &runbook.S3Store{S3: client, Bucket: bucket, Prefix: "dynops/runbooks/", Caller: caller}
}

// TestSharedStateHoldRace: eight processes (stores with their own lease
// tokens, one caller or several) take the hold of one run at once over the
// emulator's conditional PutObject: exactly one wins, every other is told
// who holds it.
func TestSharedStateHoldRace(t *testing.T) {
	bucket, client := stateBucket(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = sharedStore(client, bucket, "arn:aws:iam::123456789012:user/oncall").Hold(ctx, "INC-RACE", "throttling")
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		var he *runbook.HeldError
		switch {
		case err == nil:
			won++
		case errors.As(err, &he):
			assert.Equal(t, "arn:aws:iam::123456789012:user/oncall", he.Lease.Holder)
			assert.Contains(t, err.Error(), "held by arn:aws:iam::123456789012:user/oncall")
		default:
			t.Errorf("neither won nor told who holds it: %v", err)
		}
	}
	assert.Equal(t, 1, won, "exactly one process holds the run")
}

// TestRunbookRunRefusedWhileHeld: a run held by another caller (alice, on
// another laptop) is refused with exit 2 naming her, before anything runs
// or any state is written; status shows her as holder; once she releases
// it the run goes to the end and status shows the steps done.
func TestRunbookRunRefusedWhileHeld(t *testing.T) {
	_, table := prodTable(t)
	bucket, client := stateBucket(t)
	ctx := context.Background()
	incident := "INC-" + harness.UniqueID()
	alice := sharedStore(client, bucket, "arn:aws:iam::123456789012:user/alice")
	require.NoError(t, alice.Hold(ctx, incident, "throttling"))

	log := filepath.Join(t.TempDir(), "audit.jsonl")
	args := []string{"runbook", "run", "throttling", "--incident", incident, "--yes", "--state-bucket", bucket,
		"--param", "table=" + table, "--param", `key={"user_id": "user_00001"}`, "--decide", "cause=hot-key"}
	_, errOut, code := target.Dynops(t, log, args...)
	require.Equal(t, 2, code, errOut)
	assert.Contains(t, errOut, "held by arn:aws:iam::123456789012:user/alice")
	assert.Contains(t, errOut, "nothing was run")
	st, err := alice.Load(ctx, incident, "throttling")
	require.NoError(t, err)
	assert.Nil(t, st, "a refused run writes no state")
	assert.Empty(t, stepRuns(t, log), "no step ran")

	require.NoError(t, alice.Release(ctx, incident, "throttling"))
	_, errOut, code = target.Dynops(t, log, args...)
	require.Equal(t, 0, code, errOut)

	out, errOut, code := target.Dynops(t, log, "runbook", "status", "--incident", incident, "--state-bucket", bucket, "-o", "json")
	require.Equal(t, 0, code, errOut)
	var status struct {
		Runs []struct {
			Runbook string   `json:"runbook"`
			Done    []string `json:"done"`
			Held    bool     `json:"held"`
			Holder  struct {
				Holder   string `json:"holder"`
				Released bool   `json:"released"`
			} `json:"holder"`
		} `json:"runs"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &status), out)
	require.Len(t, status.Runs, 1)
	assert.Equal(t, "throttling", status.Runs[0].Runbook)
	assert.NotEmpty(t, status.Runs[0].Done)
	assert.False(t, status.Runs[0].Held, "the finished run released its hold")
	assert.True(t, status.Runs[0].Holder.Released)
	assert.NotEqual(t, "arn:aws:iam::123456789012:user/alice", status.Runs[0].Holder.Holder, "the last holder is the caller who ran it")
}

// TestRunbookTwoProcessesResumeAtOnce: two dynops processes start the same
// incident's run on the shared state at the same moment: whichever way they
// interleave (one refused naming the holder, or one after the other, the
// second skipping what the first did) every step runs exactly once.
func TestRunbookTwoProcessesResumeAtOnce(t *testing.T) {
	_, table := prodTable(t)
	bucket, _ := stateBucket(t)
	incident := "INC-" + harness.UniqueID()
	dir := t.TempDir()
	logs := []string{filepath.Join(dir, "laptop-a.jsonl"), filepath.Join(dir, "laptop-b.jsonl")}
	args := []string{"runbook", "run", "throttling", "--incident", incident, "--yes", "--state-bucket", bucket,
		"--param", "table=" + table, "--param", `key={"user_id": "user_00001"}`, "--decide", "cause=hot-key"}
	var wg sync.WaitGroup
	codes := make([]int, 2)
	errOuts := make([]string, 2)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errOuts[i], codes[i] = runAs(t, nil, logs[i], args...)
		}()
	}
	wg.Wait()
	zero := 0
	for i, c := range codes {
		switch c {
		case 0:
			zero++
		case 2:
			assert.Contains(t, errOuts[i], "is held by", errOuts[i])
		default:
			t.Errorf("process %d: exit %d\n%s", i, c, errOuts[i])
		}
	}
	require.GreaterOrEqual(t, zero, 1, "one process ran the runbook:\n%s\n---\n%s", errOuts[0], errOuts[1])
	runs := stepRuns(t, logs[0])
	for step, n := range stepRuns(t, logs[1]) {
		runs[step] += n
	}
	require.NotEmpty(t, runs)
	for step, n := range runs {
		assert.Equal(t, 1, n, "step %s ran %d times", step, n)
	}
}

// accessKey is an IAM user's access key: on the emulator, GetCallerIdentity
// answers the user of the key, so two keys are two callers.
// accessKey is an IAM user's key, or a role session's (Token set).
type accessKey struct{ ID, Secret, Token, ARN string }

// iamUser creates an IAM user with an access key.
func iamUser(t *testing.T, name string) accessKey {
	t.Helper()
	ctx := context.Background()
	client := iam.NewFromConfig(target.AWSConfig(t))
	name += "-" + harness.UniqueID()
	u, err := client.CreateUser(ctx, &iam.CreateUserInput{UserName: &name})
	require.NoError(t, err)
	k, err := client.CreateAccessKey(ctx, &iam.CreateAccessKeyInput{UserName: &name})
	require.NoError(t, err)
	return accessKey{ID: aws.ToString(k.AccessKey.AccessKeyId), Secret: aws.ToString(k.AccessKey.SecretAccessKey), ARN: aws.ToString(u.User.Arn)}
}

// runAs runs the dynops binary (its own process) as key's user (nil: the
// emulator's default credentials).
func runAs(t *testing.T, key *accessKey, log string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var env []string
	if key != nil {
		env = key.env()
	}
	return runEnv(t, log, env, args...)
}

// env is the key as the environment of a process.
func (k accessKey) env() []string {
	return []string{"AWS_ACCESS_KEY_ID=" + k.ID, "AWS_SECRET_ACCESS_KEY=" + k.Secret, "AWS_SESSION_TOKEN=" + k.Token}
}

// runEnv runs the dynops binary (its own process) with env added to its
// environment (credentials, DYNOPS_CONFIG).
func runEnv(t *testing.T, log string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return commandWith(t, log, args, harness.Env(env...)).Run()
}

// stepRuns counts the `started` records of each runbook step in the audit log.
func stepRuns(t *testing.T, log string) map[string]int {
	t.Helper()
	out := map[string]int{}
	f, err := os.Open(log)
	if errors.Is(err, os.ErrNotExist) {
		return out
	}
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var r audit.Record
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Event == "started" && r.Step != "" {
			out[r.Step]++
		}
	}
	return out
}

// TestSharedStateChangedUnderARunIsRefused: a save of a state another
// process changed since this one read it is refused (If-Match on the ETag
// read): the later writer learns, nothing is overwritten.
func TestSharedStateChangedUnderARunIsRefused(t *testing.T) {
	bucket, client := stateBucket(t)
	ctx := context.Background()
	a, b := sharedStore(client, bucket, "arn:aws:iam::123456789012:user/a"), sharedStore(client, bucket, "arn:aws:iam::123456789012:user/b")
	require.NoError(t, a.Save(ctx, &runbook.State{Incident: "INC-CAS", Runbook: "throttling", Done: []string{"probe"}}))
	stA, err := a.Load(ctx, "INC-CAS", "throttling")
	require.NoError(t, err)
	stB, err := b.Load(ctx, "INC-CAS", "throttling")
	require.NoError(t, err)
	stB.Done = append(stB.Done, "check")
	require.NoError(t, b.Save(ctx, stB))
	stA.Done = append(stA.Done, "other")
	err = a.Save(ctx, stA)
	var ce *runbook.ConflictError
	require.ErrorAs(t, err, &ce)
	got, err := b.Load(ctx, "INC-CAS", "throttling")
	require.NoError(t, err)
	assert.Equal(t, []string{"probe", "check"}, got.Done, "b's write stays")
	// A first save of a state that exists (If-None-Match: *) is refused too.
	err = sharedStore(client, bucket, "arn:aws:iam::123456789012:user/c").Save(ctx, &runbook.State{Incident: "INC-CAS", Runbook: "throttling"})
	require.ErrorAs(t, err, &ce)
}

// TestCapSlotsHoldUnderARace: six engineers' runs claim a cap of 2
// destructive runs per hour at once over the emulator's conditional
// PutObject: exactly two get a slot, every other is told the cap and the
// two runs that hold it.
func TestCapSlotsHoldUnderARace(t *testing.T) {
	bucket, client := stateBucket(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := sharedStore(client, bucket, fmt.Sprintf("arn:aws:iam::123456789012:user/oncall-%d", i))
			errs[i] = s.ClaimDestructiveRun(ctx, 2, runbook.DestructiveRun{Env: "prod", Incident: fmt.Sprintf("INC-%d", i), Runbook: "pitr-restore", Step: "restore"})
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		var ce *runbook.CapError
		switch {
		case err == nil:
			won++
		case errors.As(err, &ce):
			assert.Equal(t, 2, ce.Limit)
			assert.Len(t, ce.Used, 2, "the refusal names the two runs holding the cap")
		default:
			t.Errorf("neither a slot nor the cap: %v", err)
		}
	}
	assert.Equal(t, 2, won, "exactly two runs got a slot")
	used, err := sharedStore(client, bucket, "arn:aws:iam::123456789012:user/reader").DestructiveRuns(ctx, "prod", 2)
	require.NoError(t, err)
	assert.Len(t, used, 2)
}
