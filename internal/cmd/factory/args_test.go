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
