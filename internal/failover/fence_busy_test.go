package failover

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// busyPolicyTable refuses the first `busy` policy writes the way DynamoDB
// refuses a policy change within 15 s of the last one (ResourceInUse), which
// the emulator never does: a fake of the API for that decision only.
type busyPolicyTable struct {
	DynamoDB
	busy, puts int
	fail       error
}

func (b *busyPolicyTable) PutResourcePolicy(_ context.Context, in *dynamodb.PutResourcePolicyInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutResourcePolicyOutput, error) {
	b.puts++
	if b.puts <= b.busy {
		return nil, &types.ResourceInUseException{Message: aws.String("a policy change is in progress")}
	}
	if b.fail != nil {
		return nil, b.fail
	}
	return &dynamodb.PutResourcePolicyOutput{RevisionId: aws.String("r2")}, nil
}

// TestSetPolicyWaitsOutARecentChange_FakeDynamoDB: a refused write is tried
// again (3 s later) and its revision returned; another error is not retried
// and names the table.
func TestSetPolicyWaitsOutARecentChange_FakeDynamoDB(t *testing.T) {
	const arn = "arn:aws:dynamodb:eu-west-1:123456789012:table/dev-a-b"
	db := &busyPolicyTable{busy: 1}
	rev, err := setPolicy(context.Background(), db, arn, `{"Version":"2012-10-17"}`, "r1", false)
	if err != nil || rev != "r2" || db.puts != 2 {
		t.Fatalf("rev %q, err %v, %d puts; want r2 after 2 puts", rev, err, db.puts)
	}

	db = &busyPolicyTable{fail: errors.New("AccessDenied")}
	_, err = setPolicy(context.Background(), db, arn, `{"Version":"2012-10-17"}`, "r1", false)
	if err == nil || db.puts != 1 || !strings.Contains(err.Error(), "writing the resource policy of "+arn) {
		t.Fatalf("err %v after %d puts: want one try, naming the table", err, db.puts)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	db = &busyPolicyTable{busy: 5}
	if _, err = setPolicy(ctx, db, arn, `{"Version":"2012-10-17"}`, "r1", false); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled wait: %v", err)
	}
}
