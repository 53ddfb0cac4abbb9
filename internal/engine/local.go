package engine

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Local runs each shard of a stage as a process of a dynops binary on this
// machine (os.Executable in production): at most Stage.Shards at once, the
// shard given as --shard I/N. Cancel kills them.
type Local struct {
	// Binary is the dynops executable.
	Binary string
	// Env is the shards' environment (nil: this process's).
	Env []string
	// Log receives a line per failed shard, with the end of its stderr.
	Log io.Writer

	mu   sync.Mutex
	jobs map[string]*localJob
	next int
}

// NewLocal is a local engine running binary.
func NewLocal(binary string, log io.Writer) *Local {
	return &Local{Binary: binary, Log: log, jobs: map[string]*localJob{}}
}

type localJob struct {
	id     string
	cancel context.CancelFunc
	done   chan struct{} // closed when every shard has ended

	mu                                  sync.Mutex
	succeeded, failed, running, pending int
}

func (j *localJob) ID() string { return j.id }

// Name is "local".
func (*Local) Name() string { return "local" }

// Submit starts the stage's shards once after (if any) has succeeded; if
// after fails or is cancelled, the stage's shards fail without running.
func (l *Local) Submit(ctx context.Context, s Stage, after Job) (Job, error) {
	if s.Shards < 1 {
		return nil, fmt.Errorf("stage %s: %d shards: want 1 or more", s.Name, s.Shards)
	}
	var prev *localJob
	if after != nil {
		p, ok := after.(*localJob)
		if !ok {
			return nil, fmt.Errorf("stage %s: after is a job of another engine (%s)", s.Name, after.ID())
		}
		prev = p
	}
	l.mu.Lock()
	if l.jobs == nil {
		l.jobs = map[string]*localJob{}
	}
	l.next++
	jctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	j := &localJob{id: fmt.Sprintf("local-%d-%s", l.next, s.Name), cancel: cancel, done: make(chan struct{}), pending: s.Shards}
	l.jobs[j.id] = j
	l.mu.Unlock()
	go func() {
		defer close(j.done)
		if prev != nil {
			select {
			case <-prev.done:
			case <-jctx.Done():
			}
			prev.mu.Lock()
			ok := prev.failed == 0
			prev.mu.Unlock()
			if !ok || jctx.Err() != nil {
				j.mu.Lock()
				j.failed, j.pending = j.pending, 0
				j.mu.Unlock()
				return
			}
		}
		var wg sync.WaitGroup
		for i := range s.Shards {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l.runShard(jctx, j, s, i)
			}()
		}
		wg.Wait()
	}()
	return j, nil
}

// runShard runs one shard's process and counts how it ended.
func (l *Local) runShard(ctx context.Context, j *localJob, s Stage, i int) {
	j.mu.Lock()
	j.pending--
	j.running++
	j.mu.Unlock()
	sh := Shard{Index: i, Count: s.Shards}
	args := append(append([]string{}, s.Args...), "--shard", sh.String())
	cmd := exec.CommandContext(ctx, l.Binary, args...)
	cmd.Env = l.Env
	// Its own process group, killed whole: a shard's children cannot keep
	// it (and its stderr) alive after Cancel, and a Ctrl-C at the terminal
	// reaches this process only, which cancels the shards itself.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	j.mu.Lock()
	j.running--
	if err != nil {
		j.failed++
	} else {
		j.succeeded++
	}
	j.mu.Unlock()
	// A cancelled shard is the driver's to report (Cancel, Ctrl-C).
	if err != nil && ctx.Err() == nil && l.Log != nil {
		fmt.Fprintf(l.Log, "%s shard %s failed: %v: %s\n", s.Name, sh, err, lastLine(stderr.String()))
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func (l *Local) job(j Job) (*localJob, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lj, ok := l.jobs[j.ID()]
	if !ok {
		return nil, fmt.Errorf("no local job %s", j.ID())
	}
	return lj, nil
}

// Status counts the job's shards.
func (l *Local) Status(_ context.Context, j Job) (Status, error) {
	lj, err := l.job(j)
	if err != nil {
		return Status{}, err
	}
	done := false
	select {
	case <-lj.done:
		done = true
	default:
	}
	lj.mu.Lock()
	defer lj.mu.Unlock()
	return Status{Succeeded: lj.succeeded, Failed: lj.failed, Running: lj.running, Pending: lj.pending, Done: done}, nil
}

// Cancel kills the job's shard processes and waits for them to end.
func (l *Local) Cancel(ctx context.Context, j Job, _ string) error {
	lj, err := l.job(j)
	if err != nil {
		return err
	}
	lj.cancel()
	select {
	case <-lj.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
