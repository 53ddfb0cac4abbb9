package migrate

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/migrate/routes"
	"github.com/dynops/dynops/internal/testctx"
)

// memTables are tables keyed PK/SK in memory, scanned in pages of two
// items, every segment its share of the items; missing tables are not
// found.
type memTables struct {
	DynamoDB
	mu     sync.Mutex
	tables map[string][]map[string]types.AttributeValue
	scans  map[string]int // Scan calls per table
}

func (m *memTables) DescribeTable(_ context.Context, in *dynamodb.DescribeTableInput, _ ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	name := aws.ToString(in.TableName)
	if _, ok := m.tables[name]; !ok {
		return nil, &types.ResourceNotFoundException{Message: aws.String("not found")}
	}
	return (&scanDB{n: len(m.tables[name])}).DescribeTable(context.Background(), in)
}

func (m *memTables) Scan(ctx context.Context, in *dynamodb.ScanInput, _ ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // as the SDK: a call under a done context fails
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	name := aws.ToString(in.TableName)
	m.scans[name]++
	if in.TotalSegments != nil && (*in.Segment < 0 || *in.Segment >= *in.TotalSegments) {
		return nil, fmt.Errorf("ValidationException: Segment %d is not below TotalSegments %d", *in.Segment, *in.TotalSegments)
	}
	var mine []map[string]types.AttributeValue
	for i, it := range m.tables[name] {
		if in.TotalSegments == nil || i%int(*in.TotalSegments) == int(*in.Segment) {
			mine = append(mine, it)
		}
	}
	start := 0
	if in.ExclusiveStartKey != nil {
		fmt.Sscan(in.ExclusiveStartKey["n"].(*types.AttributeValueMemberS).Value, &start)
	}
	out := &dynamodb.ScanOutput{}
	for _, it := range mine[start:min(start+2, len(mine))] {
		c := map[string]types.AttributeValue{}
		for k, v := range it {
			c[k] = v
		}
		out.Items = append(out.Items, c)
	}
	if start+2 < len(mine) {
		out.LastEvaluatedKey = map[string]types.AttributeValue{"n": &types.AttributeValueMemberS{Value: fmt.Sprint(start + 2)}}
	}
	return out, nil
}

func item(pk, sk string, attrs ...string) map[string]types.AttributeValue {
	it := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: sk}}
	for i := 0; i+1 < len(attrs); i += 2 {
		it[attrs[i]] = &types.AttributeValueMemberS{Value: attrs[i+1]}
	}
	return it
}

// Verify compares the routed, transformed source with the union of the
// destinations: the catch-up's sequence attribute is ignored, an item in
// the wrong table or changed is a difference, unmatched items are counted
// apart.
func TestVerify(t *testing.T) {
	src := []map[string]types.AttributeValue{
		item("TENANT#1", "TASK#1", "GSI1PK", "open"), item("TENANT#1", "TASK#2", "GSI1PK", "done"),
		item("TENANT#1", "EMAIL_MESSAGE#1", "GSI1PK", "x", "body", "hi"), item("OTHER", "X", "a", "b"),
		item("TENANT#2", "TASK#3"),
	}
	same := func() map[string][]map[string]types.AttributeValue {
		return map[string][]map[string]types.AttributeValue{
			"src": src,
			"tasks": {item("TENANT#1", "TASK#1", "status_key", "open", routes.SeqAttribute, "000001"), item("TENANT#1", "TASK#2", "status_key", "done"),
				item("TENANT#2", "TASK#3")},
			"messages": {item("TENANT#1", "EMAIL_MESSAGE#1", "body", "hi")},
		}
	}
	cases := []struct {
		name                      string
		change                    func(map[string][]map[string]types.AttributeValue)
		segments                  int
		onlySrc, onlyDst, changed int64
		sourceItems, targetItems  int64
	}{
		{name: "the same, one segment", segments: 1, sourceItems: 4, targetItems: 4},
		{name: "the same, the default segments", sourceItems: 4, targetItems: 4},
		{name: "an item missing", change: func(ts map[string][]map[string]types.AttributeValue) { ts["tasks"] = ts["tasks"][1:] },
			onlySrc: 1, sourceItems: 4, targetItems: 3},
		{name: "an item changed", change: func(ts map[string][]map[string]types.AttributeValue) {
			ts["messages"] = []map[string]types.AttributeValue{item("TENANT#1", "EMAIL_MESSAGE#1", "body", "bye")}
		}, changed: 1, sourceItems: 4, targetItems: 4},
		{name: "an item in the wrong table", change: func(ts map[string][]map[string]types.AttributeValue) {
			ts["tasks"] = append(ts["tasks"], item("TENANT#1", "EMAIL_MESSAGE#1", "body", "hi"))
			ts["messages"] = nil
		}, onlySrc: 1, onlyDst: 1, sourceItems: 4, targetItems: 4},
		{name: "an extra item", change: func(ts map[string][]map[string]types.AttributeValue) {
			ts["messages"] = append(ts["messages"], item("TENANT#9", "EMAIL_MESSAGE#9"))
		}, onlyDst: 1, sourceItems: 4, targetItems: 5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := same()
			if c.change != nil {
				c.change(ts)
			}
			db := &memTables{tables: ts, scans: map[string]int{}}
			res, err := Verify(testctx.Bounded(t), db, VerifyOptions{Input: Input{Source: "src", Routes: testRoutes(t)}, Segments: c.segments, TempDir: t.TempDir()})
			require.NoError(t, err)
			assert.Equal(t, int64(1), res.Unmatched, "OTHER/X matches no route")
			assert.Equal(t, c.sourceItems, res.SourceItems)
			assert.Equal(t, c.targetItems, res.TargetItems)
			assert.Equal(t, c.onlySrc, res.OnlyInSource)
			assert.Equal(t, c.onlyDst, res.OnlyInTarget)
			assert.Equal(t, c.changed, res.Changed)
			assert.Equal(t, c.onlySrc+c.onlyDst+c.changed, res.Differences())
			want := c.segments
			if want == 0 {
				want = 4
			}
			assert.Equal(t, want, res.Segments)
		})
	}
}

func TestVerifyRefusesMissingDestination(t *testing.T) {
	db := &memTables{tables: map[string][]map[string]types.AttributeValue{"src": nil, "tasks": nil}, scans: map[string]int{}}
	_, err := Verify(testctx.Bounded(t), db, VerifyOptions{Input: Input{Source: "src", Routes: testRoutes(t)}})
	assert.True(t, IsInputError(err))
	assert.ErrorContains(t, err, "destination messages does not exist")
	assert.Zero(t, db.scans["src"], "nothing scanned")
}

// isEmpty: a table with an item is not empty.
func TestIsEmpty(t *testing.T) {
	for _, c := range []struct {
		items []map[string]types.AttributeValue
		want  bool
	}{{nil, true}, {[]map[string]types.AttributeValue{item("a", "b")}, false}} {
		db := &memTables{tables: map[string][]map[string]types.AttributeValue{"t": c.items}, scans: map[string]int{}}
		got, err := isEmpty(testctx.Bounded(t), db, "t")
		require.NoError(t, err)
		assert.Equal(t, c.want, got)
	}
}
