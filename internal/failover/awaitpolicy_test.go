package failover

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// laggingDB answers GetResourcePolicy from a script of reads, as an
// eventually consistent read back does (the last answer repeats).
type laggingDB struct {
	DynamoDB
	reads []policyRead
	n     int
}

type policyRead struct {
	doc, rev string
	err      error
}

func (d *laggingDB) GetResourcePolicy(context.Context, *dynamodb.GetResourcePolicyInput, ...func(*dynamodb.Options)) (*dynamodb.GetResourcePolicyOutput, error) {
	r := d.reads[min(d.n, len(d.reads)-1)]
	d.n++
	if r.err != nil {
		return nil, r.err
	}
	return &dynamodb.GetResourcePolicyOutput{Policy: aws.String(r.doc), RevisionId: aws.String(r.rev)}, nil
}

// TestAwaitPolicyNeedsThreeReadsInARow (DDB-DR-01): a policy change counts
// as read back only when readBacks (3) reads in a row show it at the
// revision written (any revision when none is known); a stale read in
// between starts the count again; a read error or the timeout ends the wait
// with an error, never with success.
func TestAwaitPolicyNeedsThreeReadsInARow(t *testing.T) {
	const arn = "arn:aws:dynamodb:eu-west-1:123456789012:table/dev-hoge-session"
	isNew := func(doc string) bool { return doc == "new" }
	old, fresh, otherRev := policyRead{doc: "old", rev: "rev-1"}, policyRead{doc: "new", rev: "rev-2"}, policyRead{doc: "new", rev: "rev-3"}
	cases := []struct {
		name    string
		rev     string
		reads   []policyRead
		timeout time.Duration
		wantN   int
		wantErr string
	}{
		{"three fresh reads", "rev-2", []policyRead{fresh}, time.Minute, 3, ""},
		{"stale, then fresh", "rev-2", []policyRead{old, old, fresh, fresh, fresh}, time.Minute, 5, ""},
		{"a stale read restarts the count", "rev-2", []policyRead{fresh, fresh, old, fresh, fresh, fresh}, time.Minute, 6, ""},
		{"the right content at another revision is not it", "rev-2", []policyRead{otherRev, otherRev, otherRev, fresh, fresh, fresh}, time.Minute, 6, ""},
		{"no revision known: any revision", "", []policyRead{otherRev, fresh, otherRev}, time.Minute, 3, ""},
		{"never shown: the timeout", "rev-2", []policyRead{old}, time.Nanosecond, 1, "did not show the change 3 times in a row"},
		{"a read error", "rev-2", []policyRead{fresh, {err: errors.New("throttled")}}, time.Minute, 2, "throttled"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			db := &laggingDB{reads: c.reads}
			doc, err := awaitPolicy(ctx, db, arn, c.rev, isNew, time.Millisecond, c.timeout)
			assert.Equal(t, c.wantN, db.n, "reads")
			if c.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "new", doc)
		})
	}
}
