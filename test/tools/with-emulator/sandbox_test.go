package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/emulator"
)

// exports parses the "export K=V" lines up and env print.
func exports(t *testing.T, out string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		k, v, ok := strings.Cut(strings.TrimPrefix(l, "export "), "=")
		require.True(t, ok && strings.HasPrefix(l, "export "), "not an export line: %q", l)
		m[k] = v
	}
	return m
}

// TestSandboxUpEnvDown: up starts a real moto_server that outlives the
// call and takes DynamoDB calls at the exported URL; a second up reuses it;
// env prints the same exports; down stops it by PID and prints the unsets;
// after down, env fails naming the state file and the fix.
func TestSandboxUpEnvDown(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var out, errb bytes.Buffer
	require.NoError(t, sandboxUp(ctx, dir, &out, &errb), errb.String())
	env := exports(t, out.String())
	st, err := readState(dir, &errb)
	require.NoError(t, err)
	require.NotNil(t, st, "up records the sandbox")
	t.Cleanup(func() { _ = emulator.StopPID(st.PID) })
	assert.True(t, emulator.IsServer(st.PID), "the recorded PID is a running moto_server")
	assert.Equal(t, st.URL, env["AWS_ENDPOINT_URL"])
	assert.Equal(t, st.URL, env["DYNOPS_EMULATOR_URL"])
	assert.Equal(t, "eu-west-1", env["AWS_REGION"])
	assert.Equal(t, "eu-west-1", env["AWS_DEFAULT_REGION"], "the AWS CLI reads AWS_DEFAULT_REGION")

	// The exported settings reach a real emulator.
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion(env["AWS_REGION"]),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"], "")),
		config.WithBaseEndpoint(env["AWS_ENDPOINT_URL"]))
	require.NoError(t, err)
	db := dynamodb.NewFromConfig(cfg)
	_, err = db.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String("dev-sandbox-practice"), BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash}}})
	require.NoError(t, err)

	// A second up reuses the running sandbox (its table is still there).
	out.Reset()
	errb.Reset()
	require.NoError(t, sandboxUp(ctx, dir, &out, &errb))
	assert.Contains(t, errb.String(), "already up")
	assert.Equal(t, env, exports(t, out.String()))
	tables, err := db.ListTables(ctx, &dynamodb.ListTablesInput{})
	require.NoError(t, err)
	assert.Equal(t, []string{"dev-sandbox-practice"}, tables.TableNames)

	out.Reset()
	require.NoError(t, sandboxEnv(ctx, dir, &out, &errb))
	assert.Equal(t, env, exports(t, out.String()))
	out.Reset()
	require.NoError(t, sandboxStatus(ctx, dir, &out, &errb))
	assert.Contains(t, out.String(), "running")

	out.Reset()
	errb.Reset()
	require.NoError(t, sandboxDown(ctx, dir, &out, &errb))
	assert.False(t, emulator.IsServer(st.PID), "down stops the server")
	assert.Equal(t, "unset AWS_ENDPOINT_URL DYNOPS_EMULATOR_URL AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_REGION AWS_DEFAULT_REGION\n", out.String())
	_, err = os.Stat(statePath(dir))
	assert.True(t, os.IsNotExist(err), "down removes the state")

	err = sandboxEnv(ctx, dir, &out, &errb)
	require.Error(t, err)
	assert.Contains(t, err.Error(), statePath(dir), "the error says where it looked")
	assert.Contains(t, err.Error(), "with-emulator up", "and the fix")
	out.Reset()
	require.NoError(t, sandboxStatus(ctx, dir, &out, &errb))
	assert.Contains(t, out.String(), "not running")
}

// TestSandboxStalePIDIsNeverSignalled: a state file whose PID now belongs
// to another program (here this test process) is stale: env and down say
// so, remove it, and signal nothing.
func TestSandboxStalePIDIsNeverSignalled(t *testing.T) {
	dir := t.TempDir()
	b, _ := json.Marshal(sandboxState{PID: os.Getpid(), URL: "http://127.0.0.1:1"})
	require.NoError(t, os.WriteFile(statePath(dir), b, 0o644))
	var out, errb bytes.Buffer
	require.NoError(t, sandboxDown(context.Background(), dir, &out, &errb)) // this process survives
	assert.Contains(t, errb.String(), "no longer running")
	assert.Contains(t, errb.String(), "no sandbox was running")
	_, err := os.Stat(statePath(dir))
	assert.True(t, os.IsNotExist(err), "the stale state is removed")
}
