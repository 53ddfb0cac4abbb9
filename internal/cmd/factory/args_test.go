package factory

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestShardArgs(t *testing.T) {
	assert.Empty(t, (&GlobalFlags{Output: OutputJSON}).ShardArgs(), "nothing set: nothing passed, the output format is the shard's own")
	g := &GlobalFlags{Region: "eu-west-1", Profile: "ops", EndpointURL: "http://127.0.0.1:5000", AuditLog: "/var/log/a.jsonl",
		Incident: "INC-1", ProtectedEnvs: []string{"stg", "qa"}, AuditClearKeys: true, Output: OutputJSON}
	assert.Equal(t, []string{"--region", "eu-west-1", "--profile", "ops", "--endpoint-url", "http://127.0.0.1:5000", "--audit-log", "/var/log/a.jsonl",
		"--incident", "INC-1", "--protected-envs", "stg,qa", "--audit-clear-keys"}, g.ShardArgs())
}

// TestBatchShardsGetNoLocalPaths: a shard in a container has none of the
// driver's files or profiles.
func TestBatchShardsGetNoLocalPaths(t *testing.T) {
	g := &GlobalFlags{Region: "eu-west-1", Profile: "ops", AuditLog: "/home/me/a.jsonl", AuditLogGroup: "/dynops/audit", Debug: true}
	assert.Equal(t, []string{"--region", "eu-west-1", "--audit-log-group", "/dynops/audit", "--debug"}, g.ContainerShardArgs())
	assert.Contains(t, g.ShardArgs(), "--profile", "a local shard shares this machine's profile")
}
