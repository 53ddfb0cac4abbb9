package export

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/exportverify"
)

// TestVerifyDataOnlyPrefixWithTwoExports (issue 43): a data-only prefix
// that holds two exports' data folders (Monday's 25 items, Tuesday's 31)
// is verified as two exports, each counted on its own, in the JSON and on
// the terminal, not as one export of 56 items that matches neither.
func TestVerifyDataOnlyPrefixWithTwoExports(t *testing.T) {
	if !target.OnEmulator() {
		t.Skip("emulator only: --data-only is for exports without manifests (AWS writes them; its prefixes verify per manifest-summary.json)")
	}
	fx := newFixture(t, 25)
	_, _, code := fx.dynops(t, "export", "full", "--table", fx.table, "--bucket", fx.bucket, "--prefix", "nightly/mon", "--wait")
	require.Equal(t, 0, code)
	for i := 25; i < 31; i++ {
		_, err := fx.db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: &fx.table, Item: map[string]types.AttributeValue{
			"user_id": &types.AttributeValueMemberS{Value: fmt.Sprintf("u%03d", i)}}})
		require.NoError(t, err)
	}
	_, _, code = fx.dynops(t, "export", "full", "--table", fx.table, "--bucket", fx.bucket, "--prefix", "nightly/tue", "--wait")
	require.Equal(t, 0, code)

	args := append([]string{"export", "verify", "--bucket", fx.bucket, "--prefix", "nightly", "--data-only"}, unverified...)
	out, errOut, code := fx.dynops(t, append(args, "-o", "json")...)
	require.Equal(t, 0, code, errOut)
	var rep exportverify.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	require.Len(t, rep.Exports, 2, "each data folder is its own export")
	assert.True(t, strings.HasPrefix(rep.Exports[0].Dir, "nightly/mon/"), rep.Exports[0].Dir)
	assert.EqualValues(t, 25, rep.Exports[0].Items, "Monday's export alone")
	assert.True(t, strings.HasPrefix(rep.Exports[1].Dir, "nightly/tue/"), rep.Exports[1].Dir)
	assert.EqualValues(t, 31, rep.Exports[1].Items, "Tuesday's export alone")
	assert.EqualValues(t, 56, rep.Items)
	assert.True(t, rep.OK)

	out, _, code = fx.dynops(t, args...)
	require.Equal(t, 0, code)
	assert.Regexp(t, `(?m)^nightly/mon/\S+: OK, \d+ of \d+ data files decode, 25 items`, out)
	assert.Regexp(t, `(?m)^nightly/tue/\S+: OK, \d+ of \d+ data files decode, 31 items`, out)
}
