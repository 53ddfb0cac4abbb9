package failover

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/dynops/dynops/internal/testctx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// replicasDB answers DescribeTable with the given replica regions.
type replicasDB struct {
	DynamoDB
	regions []string
	err     error
}

func (d *replicasDB) DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	if d.err != nil {
		return nil, d.err
	}
	var rs []types.ReplicaDescription
	for _, r := range d.regions {
		rs = append(rs, types.ReplicaDescription{RegionName: aws.String(r)})
	}
	return &dynamodb.DescribeTableOutput{Table: &types.TableDescription{Replicas: rs}}, nil
}

// TestDiscoverRegions: the home region first, then every replica region the
// table lists, each once, whether or not the list names home itself.
func TestDiscoverRegions(t *testing.T) {
	for _, c := range []struct {
		name     string
		replicas []string
		want     []string
	}{
		{"not a global table", nil, []string{"eu-west-1"}},
		{"replicas without home", []string{"us-east-1", "ap-south-1"}, []string{"eu-west-1", "us-east-1", "ap-south-1"}},
		{"replicas with home", []string{"us-east-1", "eu-west-1"}, []string{"eu-west-1", "us-east-1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := DiscoverRegions(testctx.Bounded(t), &replicasDB{regions: c.replicas}, "prod-hoge-user", "eu-west-1")
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
	_, err := DiscoverRegions(testctx.Bounded(t), &replicasDB{err: errors.New("AccessDeniedException")}, "prod-hoge-user", "eu-west-1")
	assert.ErrorContains(t, err, "describing prod-hoge-user in eu-west-1")
}
