package factory

import "strings"

// ShardArgs are the global flags a shard process of this run needs to act
// as this run does (a sharded run's engine runs `dynops shard run` with
// them): region, profile, endpoint, audit log and incident. The output
// format and the timeout are the shard command's own.
func (g *GlobalFlags) ShardArgs() []string { return g.shardArgs(true) }

// ContainerShardArgs are ShardArgs for a shard in a container of the
// team's account (AWS Batch, Kubernetes): none of this machine's files or
// profiles (--audit-log, --profile); its credentials are its role's and its
// audit goes to the central copy (--audit-log-group) when set.
func (g *GlobalFlags) ContainerShardArgs() []string { return g.shardArgs(false) }

func (g *GlobalFlags) shardArgs(local bool) []string {
	var args []string
	add := func(name, v string) {
		if v != "" {
			args = append(args, "--"+name, v)
		}
	}
	add("region", g.Region)
	if local {
		add("profile", g.Profile)
	}
	add("endpoint-url", g.EndpointURL)
	if local {
		add("audit-log", g.AuditLog)
	}
	add("audit-log-group", g.AuditLogGroup)
	add("incident", g.Incident)
	add("protected-envs", strings.Join(g.ProtectedEnvs, ","))
	for _, b := range []struct {
		name string
		on   bool
	}{{"allow-insecure-endpoint", g.AllowInsecureEndpoint}, {"audit-clear-keys", g.AuditClearKeys}, {"debug", g.Debug}} {
		if b.on {
			args = append(args, "--"+b.name)
		}
	}
	return args
}
