// Package shared holds what the runbook commands share: where a run's
// state is kept (a local directory, or the team's S3 prefix).
package shared

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/runbook"
)

// AddStateBucketFlag registers --state-bucket.
func AddStateBucketFlag(fl *pflag.FlagSet, p *string) {
	fl.StringVar(p, "state-bucket", "", "keep the run's state in this S3 bucket (BUCKET or BUCKET/PREFIX, default prefix dynops/runbooks) shared by the team, instead of the local directory next to the audit log")
}

// Store is the state store of --state-bucket, or the local directory next
// to the audit log without it (the sandbox, one laptop). The S3 store's
// holder is the caller's STS ARN: without one the shared state is refused
// (a lease must name who holds it).
func Store(ctx context.Context, f *factory.Factory, stateBucket string) (runbook.Store, error) {
	local := filepath.Join(filepath.Dir(f.Audit.Path()), "runbooks")
	if stateBucket == "" {
		return runbook.FileStore{Dir: local}, nil
	}
	bucket, prefix, err := runbook.ParseStateBucket(stateBucket)
	if err != nil {
		return nil, factory.UsageErrorf("%w", err)
	}
	clients, err := f.AWS(ctx)
	if err != nil {
		return nil, err
	}
	arn, err := f.CallerArn(ctx)
	if err != nil {
		return nil, fmt.Errorf("--state-bucket %s: reading who you are (needed to hold the run): %w", stateBucket, err)
	}
	return &runbook.S3Store{S3: clients.S3(), Bucket: bucket, Prefix: prefix, Caller: arn, Local: local, Now: f.Now}, nil
}
