package security

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/harness"
)

// TestDebugNeverPrintsCredentials (issue 29, Medium 7): `dynops --debug`
// against the target, with a session token in the environment, logs its
// requests and responses, and neither the secret key, the session token
// nor the signature appears in stdout or stderr.
func TestDebugNeverPrintsCredentials(t *testing.T) {
	if !target.OnEmulator() {
		t.Skip("sets fake credentials in the environment: emulator only")
	}
	const (
		keyID   = "ASIADYNOPSDEBUGTEST1"
		secret  = "dynopsDebugSecret/0123456789+abcdefghijklmn"
		session = "FwoGZXIvYXdzDynopsDebugSessionToken//0123456789+abcdefghijklmnopqrstuvwxyz"
	)
	t.Setenv("AWS_ACCESS_KEY_ID", keyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	t.Setenv("AWS_SESSION_TOKEN", session)
	table := "dev-dbg-" + strings.ToLower(harness.UniqueID())
	ddb := dynamodb.NewFromConfig(target.AWSConfig(t))
	_, err := ddb.CreateTable(context.Background(), &dynamodb.CreateTableInput{
		TableName:            aws.String(table),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = ddb.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(table)})
	})

	stdout, stderr, _ := target.Dynops(t, filepath.Join(t.TempDir(), "audit.log"), "pitr", "status", "--table", table, "--debug")
	all := stdout + stderr
	require.Contains(t, stderr, "X-Amz-Security-Token: [REDACTED]", "the request dump with its session token header, redacted")
	require.Contains(t, stderr, "Authorization: [REDACTED]")
	for _, s := range []string{secret, session, keyID, "Signature="} {
		if n := strings.Count(all, s); n > 0 {
			t.Errorf("--debug printed %q %d times", s, n)
		}
	}
}
