package badinput

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadInput feeds every class of bad input the commands have today:
// --confirm values that do not match (protected or not), repair sources that
// are not restores of the target, protection settings, missing and malformed
// flags, bad names and times, targets that do not exist. Each case must exit
// non-zero (2 for usage), name what is wrong, and change nothing.
func TestBadInput(t *testing.T) {
	x := setup(t)
	t.Cleanup(func() { unchanged(t, x) })
	lam := []string{"--lambda-endpoint-url", fns.URL}
	regions := []string{"--regions", "eu-west-1,eu-central-1", "--allow-unreplicated"}
	missingQueue := x.devDLQ[:len(x.devDLQ)-len("dlq")] + "nosuchqueue"
	badConfig := filepath.Join(workDir, "bad-config.yaml")
	if err := os.WriteFile(badConfig, []byte("protected_envs: {oops\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	devConfig := filepath.Join(workDir, "dev-protected.yaml")
	if err := os.WriteFile(devConfig, []byte("protected_envs: [dev]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := func(a ...string) invocation { return invocation{args: a} }
	withEnv := func(inv invocation, env ...string) invocation { inv.env = env; return inv }

	cases := []badCase{
		// --confirm that does not match: always a usage error, protected or not, dry run or not.
		{name: "restore: --confirm of another table, dev, dry run", inv: args("pitr", "restore", "--table", x.devTable, "--latest", "--confirm", x.devOther), code: 2, want: []string{`--confirm "` + x.devOther + `" does not match`, x.devTable}},
		{name: "restore: --confirm of another table, dev, --yes", inv: args("pitr", "restore", "--table", x.devTable, "--latest", "--yes", "--confirm", x.devOther), code: 2, want: []string{"does not match"}},
		{name: "restore: --confirm in another case", inv: args("pitr", "restore", "--table", "PROD-"+x.id+"-legacy", "--latest", "--yes", "--confirm", "prod-"+x.id+"-legacy"), code: 2, want: []string{"does not match"}},
		{name: "restore: --confirm with a trailing space", inv: args("pitr", "restore", "--table", x.devTable, "--latest", "--yes", "--confirm", x.devTable+" "), code: 2, want: []string{"does not match"}},
		{name: "repair: --confirm of the source", inv: args("pitr", "repair", "--from", x.devRestored, "--to", x.devTable, "--all-differences", "--yes", "--confirm", x.devRestored), code: 2, want: []string{"does not match"}},
		{name: "import: --confirm of another table", inv: args("export", "import", "--bucket", x.bucket, "--prefix", x.prefix, "--table", "dev-"+x.id+"-new", "--hash-key", "user_id:S", "--yes", "--confirm", "dev-"+x.id+"-old", "--unverified-exports", emulatorExports), code: 2, want: []string{"does not match"}},
		{name: "move: --confirm of another queue", inv: args("dlq", "move", "--queue", x.devDLQ, "--to-queue", x.devDest, "--yes", "--confirm", "dev-"+x.id+"-other-dlq"), code: 2, want: []string{"does not match"}},
		{name: "redrive: --confirm of another function", inv: invocation{args: append([]string{"dlq", "redrive", "--queue", x.devDLQ, "--function", x.devFn, "--yes", "--confirm", "prod-" + x.id + "-consumer"}, lam...)}, code: 2, want: []string{"does not match"}},
		{name: "failover: --confirm of another table", inv: invocation{args: append([]string{"dr", "failover", "--table", x.devTable, "--to", "eu-central-1", "--confirm", x.devOther}, regions...)}, code: 2, want: []string{"does not match"}},
		{name: "failback: --confirm of another table", inv: invocation{args: append([]string{"dr", "failback", "--table", x.devTable, "--confirm", x.devOther}, regions...)}, code: 2, want: []string{"does not match"}},
		{name: "drill: --confirm of another table", inv: invocation{args: append([]string{"dr", "drill", "--table", x.devTable, "--confirm", x.devOther}, regions...)}, code: 2, want: []string{"does not match"}},

		// Repair sources that are not a restore of the target.
		{name: "repair: unrelated source", inv: args("pitr", "repair", "--from", x.devOther, "--to", x.devTable, "--all-differences", "--yes"), code: 2, want: []string{x.devOther + " has no restored-from tag", "--allow-unrelated-source REASON"}},
		{name: "repair: a restore of another table", inv: args("pitr", "repair", "--from", x.devRestored, "--to", x.devOther, "--all-differences", "--yes"), code: 2, want: []string{"is a restore of " + x.devTable + " (its restored-from tag), not of --to " + x.devOther}},
		{name: "repair: the original as the source", inv: args("pitr", "repair", "--from", x.devTable, "--to", x.devRestored, "--all-differences", "--yes"), code: 2, want: []string{"not a restore"}},
		{name: "repair: unrelated source into prod with --confirm", inv: args("pitr", "repair", "--from", x.devOther, "--to", "prod-"+x.id+"-user", "--all-differences", "--yes", "--confirm", "prod-"+x.id+"-user"), code: 2, want: []string{"has no restored-from tag"}},
		{name: "repair: another key schema", inv: args("pitr", "repair", "--from", x.devOrders, "--to", x.devTable, "--all-differences", "--yes", "--allow-unrelated-source", "test"), code: 2, want: []string{"key schema", "order_id HASH S", "user_id HASH S"}},
		{name: "repair: an empty reason", inv: args("pitr", "repair", "--from", x.devOther, "--to", x.devTable, "--all-differences", "--yes", "--allow-unrelated-source", " "), code: 2, want: []string{"--allow-unrelated-source needs a REASON"}},
		{name: "repair: a source that does not exist", inv: args("pitr", "repair", "--from", "dev-"+x.id+"-nosuch", "--to", x.devTable, "--all-differences", "--yes"), want: []string{"dev-" + x.id + "-nosuch"}},
		{name: "repair: a target that does not exist", inv: args("pitr", "repair", "--from", x.devRestored, "--to", "dev-"+x.id+"-nosuch", "--all-differences", "--yes"), want: []string{"dev-" + x.id + "-nosuch"}},

		// Redrive into a protected function.
		{name: "redrive: the message's function is protected, --function not given", inv: invocation{args: append([]string{"dlq", "redrive", "--queue", x.devFnDLQ, "--yes"}, lam...)}, code: 2, want: []string{"function " + x.msgFn + " is protected"}},
		{name: "redrive: the message's function, only the queue confirmed", inv: invocation{args: append([]string{"dlq", "redrive", "--queue", x.devFnDLQ, "--yes", "--confirm", "dev-" + x.id + "-fn-dlq"}, lam...)}, code: 2, want: []string{"--confirm " + x.msgFn}},
		{name: "redrive: a protected function by ARN", inv: invocation{args: append([]string{"dlq", "redrive", "--queue", x.devDLQ, "--function", "arn:aws:lambda:eu-west-1:123456789012:function:" + x.msgFn, "--yes"}, lam...)}, code: 2, want: []string{"function " + x.msgFn + " is protected"}},

		// Protection settings.
		{name: "DYNOPS_PROTECTED_ENVS protects dev", inv: withEnv(args("pitr", "restore", "--table", x.devTable, "--latest", "--yes"), "DYNOPS_PROTECTED_ENVS=dev"), code: 2, want: []string{"DYNOPS_PROTECTED_ENVS", "--confirm " + x.devTable}},
		{name: "--protected-envs protects dev", inv: args("pitr", "restore", "--table", x.devTable, "--latest", "--yes", "--protected-envs", "stg,dev"), code: 2, want: []string{"--protected-envs", "--confirm " + x.devTable}},
		{name: "config file protects dev", inv: withEnv(args("dlq", "move", "--queue", x.devDLQ, "--to-queue", x.devDest, "--yes"), "DYNOPS_CONFIG="+devConfig), code: 2, want: []string{"config " + devConfig, "--confirm dev-" + x.id + "-dlq"}},
		{name: "DYNOPS_UNPROTECTED_ENVS cannot unprotect prod", inv: withEnv(args("pitr", "restore", "--table", "prod-"+x.id+"-user", "--latest", "--yes"), "DYNOPS_UNPROTECTED_ENVS=prod"), code: 2, want: []string{"--confirm prod-" + x.id + "-user"}},
		{name: "unreadable config file", inv: withEnv(args("pitr", "restore", "--table", x.devTable, "--latest", "--yes"), "DYNOPS_CONFIG="+badConfig), code: 2, want: []string{badConfig}},
		{name: "missing config file named by DYNOPS_CONFIG", inv: withEnv(args("dlq", "move", "--queue", x.devDLQ, "--yes"), "DYNOPS_CONFIG="+filepath.Join(workDir, "nope.yaml")), code: 2, want: []string{"nope.yaml"}},
		{name: "--protected-envs with a name that is not an env", inv: args("pitr", "restore", "--table", x.devTable, "--latest", "--yes", "--protected-envs", "prod-eu"), code: 2, want: []string{"--protected-envs", "prod-eu"}},

		// pitr restore.
		{name: "restore: no --table", inv: args("pitr", "restore", "--latest"), code: 2, want: []string{"--table"}},
		{name: "restore: neither --time nor --latest", inv: args("pitr", "restore", "--table", x.devTable), code: 2, want: []string{"--time", "--latest"}},
		{name: "restore: both --time and --latest", inv: args("pitr", "restore", "--table", x.devTable, "--latest", "--time", "2026-11-21T09:30:00Z"), code: 2, want: []string{"exactly one"}},
		{name: "restore: --time not RFC3339", inv: args("pitr", "restore", "--table", x.devTable, "--time", "yesterday"), code: 2, want: []string{`--time "yesterday"`}},
		{name: "restore: --time with month 13", inv: args("pitr", "restore", "--table", x.devTable, "--time", "2026-13-01T00:00:00Z"), code: 2, want: []string{"--time"}},
		{name: "restore: --time without a zone", inv: args("pitr", "restore", "--table", x.devTable, "--time", "2026-11-21T09:30:00"), code: 2, want: []string{"RFC3339"}},
		{name: "restore: --time in the future", inv: args("pitr", "restore", "--table", x.devTable, "--time", "2099-01-01T00:00:00Z", "--yes"), code: 2, want: []string{"window"}},
		{name: "restore: a table that does not exist", inv: args("pitr", "restore", "--table", "dev-"+x.id+"-nosuch", "--latest"), want: []string{"dev-" + x.id + "-nosuch"}},
		{name: "restore: --target that exists", inv: args("pitr", "restore", "--table", x.devTable, "--latest", "--target", x.devOther, "--yes"), code: 2, want: []string{x.devOther}},
		{name: "restore: --target with characters DynamoDB refuses", inv: args("pitr", "restore", "--table", x.devTable, "--latest", "--target", "bad name!", "--yes"), code: 2, want: []string{"bad name!"}},
		{name: "restore: an argument", inv: args("pitr", "restore", x.devTable, "--latest"), code: 2, want: []string{x.devTable}},

		// pitr repair flags.
		{name: "repair: no --to", inv: args("pitr", "repair", "--from", x.devRestored, "--all-differences"), code: 2, want: []string{"--to ORIGINAL"}},
		{name: "repair: --from is --to", inv: args("pitr", "repair", "--from", x.devTable, "--to", x.devTable, "--all-differences"), code: 2, want: []string{"--from and --to are both"}},
		{name: "repair: neither --keys nor --all-differences", inv: args("pitr", "repair", "--from", x.devRestored, "--to", x.devTable), code: 2, want: []string{"--keys FILE", "--all-differences"}},
		{name: "repair: --workers 0", inv: args("pitr", "repair", "--from", x.devRestored, "--to", x.devTable, "--all-differences", "--workers", "0"), code: 2, want: []string{"--workers 0"}},
		{name: "repair: --workers not a number", inv: args("pitr", "repair", "--from", x.devRestored, "--to", x.devTable, "--all-differences", "--workers", "many"), code: 2, want: []string{"--workers"}},
		{name: "repair: a keys file that does not exist", inv: args("pitr", "repair", "--from", x.devRestored, "--to", x.devTable, "--keys", filepath.Join(workDir, "nope.jsonl"), "--yes"), code: 2, want: []string{"nope.jsonl"}},

		// export import.
		{name: "import: an export DynamoDB cannot vouch for, without --unverified-exports", inv: args("export", "import", "--bucket", x.bucket, "--prefix", x.prefix, "--table", "dev-"+x.id+"-new", "--hash-key", "user_id:S", "--yes"), code: 2, want: []string{"DynamoDB does not vouch for the export", "s3://" + x.bucket + "/" + x.prefix + "/", "--unverified-exports"}},
		{name: "export verify: data without manifests, without --unverified-exports", inv: args("export", "verify", "--bucket", x.bucket, "--prefix", x.prefix, "--data-only"), code: 2, want: []string{"no manifest-summary.json", "--unverified-exports"}},
		{name: "export verify: --unverified-exports without a reason", inv: args("export", "verify", "--bucket", x.bucket, "--prefix", x.prefix, "--data-only", "--unverified-exports", " "), code: 2, want: []string{"--unverified-exports", "has no letters"}},
		{name: "import: no --bucket", inv: args("export", "import", "--prefix", x.prefix, "--table", "dev-"+x.id+"-new", "--hash-key", "user_id:S"), code: 2, want: []string{"--bucket"}},
		{name: "import: --hash-key and --schema-from", inv: args("export", "import", "--bucket", x.bucket, "--prefix", x.prefix, "--table", "dev-"+x.id+"-new", "--hash-key", "user_id:S", "--schema-from", x.devTable), code: 2, want: []string{"not both"}},
		{name: "import: --hash-key of type X", inv: args("export", "import", "--bucket", x.bucket, "--prefix", x.prefix, "--table", "dev-"+x.id+"-new", "--hash-key", "user_id:X"), code: 2, want: []string{"--hash-key"}},
		{name: "import: --range-key without --hash-key", inv: args("export", "import", "--bucket", x.bucket, "--prefix", x.prefix, "--table", "dev-"+x.id+"-new", "--schema-from", x.devTable, "--range-key", "sk:S"), code: 2, want: []string{"--range-key needs --hash-key"}},
		{name: "import: a name outside DDB-NAME-01", inv: args("export", "import", "--bucket", x.bucket, "--prefix", x.prefix, "--table", "Dev_"+x.id, "--hash-key", "user_id:S"), code: 2, want: []string{"DDB-NAME-01"}},
		{name: "import: a prefix with no export", inv: args("export", "import", "--bucket", x.bucket, "--prefix", "nothing-here", "--table", "dev-"+x.id+"-new", "--hash-key", "user_id:S", "--yes"), want: []string{"nothing-here"}},
		{name: "import: --tag without a value", inv: args("export", "import", "--bucket", x.bucket, "--prefix", x.prefix, "--table", "dev-"+x.id+"-new", "--hash-key", "user_id:S", "--tag", "env"), code: 2, want: []string{"--tag"}},

		// dlq redrive and move flags.
		{name: "redrive: no --queue", inv: args("dlq", "redrive", "--yes"), code: 2, want: []string{"--queue URL"}},
		{name: "redrive: --function and --to-queue", inv: args("dlq", "redrive", "--queue", x.devDLQ, "--function", x.devFn, "--to-queue", x.devDest), code: 2, want: []string{"not both"}},
		{name: "redrive: --to-queue is the DLQ", inv: args("dlq", "redrive", "--queue", x.devDLQ, "--to-queue", x.devDLQ), code: 2, want: []string{"--to-queue is the DLQ itself"}},
		{name: "redrive: --max -1", inv: args("dlq", "redrive", "--queue", x.devDLQ, "--max", "-1"), code: 2, want: []string{"--max -1"}},
		{name: "redrive: --concurrency 0", inv: args("dlq", "redrive", "--queue", x.devDLQ, "--concurrency", "0"), code: 2, want: []string{"--concurrency 0"}},
		{name: "redrive: --visibility-timeout 1s", inv: args("dlq", "redrive", "--queue", x.devDLQ, "--visibility-timeout", "1s"), code: 2, want: []string{"--visibility-timeout 1s"}},
		{name: "redrive: --visibility-timeout not a duration", inv: args("dlq", "redrive", "--queue", x.devDLQ, "--visibility-timeout", "soon"), code: 2, want: []string{"--visibility-timeout"}},
		{name: "redrive: a queue that does not exist", inv: invocation{args: append([]string{"dlq", "redrive", "--queue", missingQueue, "--function", x.devFn, "--yes"}, lam...)}, code: 2, want: []string{"nosuchqueue"}},
		{name: "move: no --queue", inv: args("dlq", "move", "--to-queue", x.devDest), code: 2, want: []string{"--queue URL"}},
		{name: "move: --to-queue is the DLQ", inv: args("dlq", "move", "--queue", x.devDLQ, "--to-queue", x.devDLQ), code: 2, want: []string{"--to-queue is the DLQ itself"}},
		{name: "move: --max -5", inv: args("dlq", "move", "--queue", x.devDLQ, "--max", "-5"), code: 2, want: []string{"--max -5"}},
		{name: "move: a queue that does not exist", inv: args("dlq", "move", "--queue", missingQueue, "--to-queue", x.devDest, "--yes"), code: 2, want: []string{"nosuchqueue"}},

		// dr.
		{name: "failover: no --table", inv: args("dr", "failover", "--to", "eu-central-1"), code: 2, want: []string{"--table is required"}},
		{name: "failover: no --to", inv: args("dr", "failover", "--table", x.devTable), code: 2, want: []string{"--to is required"}},
		{name: "failover: one region", inv: args("dr", "failover", "--table", x.devTable, "--to", "eu-central-1", "--regions", "eu-west-1"), code: 2, want: []string{"at least two regions"}},
		{name: "failover: a region twice", inv: args("dr", "failover", "--table", x.devTable, "--to", "eu-central-1", "--regions", "eu-west-1,eu-west-1"), code: 2, want: []string{"list each region once"}},
		{name: "failover: --to outside --regions", inv: args("dr", "failover", "--table", x.devTable, "--to", "us-east-1", "--regions", "eu-west-1,eu-central-1"), code: 2, want: []string{"us-east-1 is not in --regions"}},
		{name: "failover: --to is --from", inv: args("dr", "failover", "--table", x.devTable, "--to", "eu-west-1", "--from", "eu-west-1"), code: 2, want: []string{"--to and --from are both eu-west-1"}},
		{name: "failover: break-glass role not an ARN", inv: args("dr", "failover", "--table", x.devTable, "--to", "eu-central-1", "--break-glass-role-arn", "admin"), code: 2, want: []string{"is not one IAM role ARN"}},
		{name: "failover: --max-replication-latency 0s", inv: args("dr", "failover", "--table", x.devTable, "--to", "eu-central-1", "--max-replication-latency", "0s"), code: 2, want: []string{"--max-replication-latency"}},
		{name: "failover: --replication-timeout -1s", inv: args("dr", "failover", "--table", x.devTable, "--to", "eu-central-1", "--replication-timeout", "-1s"), code: 2, want: []string{"--replication-timeout"}},
		{name: "failover: bad --health-check", inv: args("dr", "failover", "--table", x.devTable, "--to", "eu-central-1", "--health-check", "eu-west-1="), code: 2, want: []string{"--health-check takes REGION=ID"}},
		{name: "drill: --force", inv: args("dr", "drill", "--table", x.devTable, "--force"), code: 2, want: []string{"drill does not take --force"}},

		// General.
		{name: "--output yaml", inv: args("pitr", "restore", "--table", x.devTable, "--latest", "-o", "yaml"), code: 2, want: []string{`--output "yaml"`}},
		{name: "an unknown flag", inv: args("pitr", "restore", "--table", x.devTable, "--latest", "--yess"), code: 2, want: []string{"--yess"}},
		{name: "table diff without --target", inv: args("table", "diff", "--source", x.devTable), code: 2, want: []string{"table diff needs one --target"}},
		{name: "table diff of a table with itself", inv: args("table", "diff", "--source", x.devTable, "--target", x.devTable), code: 2, want: []string{"both"}},
		{name: "export full without --bucket", inv: args("export", "full", "--table", x.devTable), code: 2, want: []string{"--bucket"}},
		{name: "pitr status without --table", inv: args("pitr", "status"), code: 2, want: []string{"--table NAME"}},
		{name: "pitr status of a table that does not exist", inv: args("pitr", "status", "--table", "dev-"+x.id+"-nosuch"), want: []string{"dev-" + x.id + "-nosuch"}},

		// Mistyped subcommands: exit 2 with cobra's suggestion, for every parent.
		{name: "typo: pitr restroe", inv: args("pitr", "restroe", "--table", x.devTable, "--latest", "--yes"), code: 2, want: []string{"Did you mean this?", "restore"}},
		{name: "typo: pitr reapir", inv: args("pitr", "reapir", "--from", x.devRestored, "--to", x.devTable, "--yes"), code: 2, want: []string{"repair"}},
		{name: "typo: dlq redirve", inv: args("dlq", "redirve", "--queue", x.devDLQ, "--yes"), code: 2, want: []string{"redrive"}},
		{name: "typo: dlq mvoe", inv: args("dlq", "mvoe", "--queue", x.devDLQ, "--yes"), code: 2, want: []string{"move"}},
		{name: "typo: export imprt", inv: args("export", "imprt", "--bucket", x.bucket, "--prefix", x.prefix, "--yes"), code: 2, want: []string{"import"}},
		{name: "typo: dr failovr", inv: args("dr", "failovr", "--table", x.devTable, "--to", "eu-central-1", "--yes"), code: 2, want: []string{"failover"}},
		{name: "typo: table dif", inv: args("table", "dif", "--source", x.devTable, "--target", x.devOther), code: 2, want: []string{"diff"}},
		{name: "typo: a top-level command", inv: args("pirt", "restore"), code: 2, want: []string{"pirt"}},
		{name: "a parent without a subcommand", inv: args("dlq"), code: 2, want: []string{"needs a subcommand"}},

		// Every duration and number flag is validated before anything runs.
		{name: "inspect: --critical -1h", inv: args("dlq", "inspect", "--queue", x.devDLQ, "--critical", "-1h"), code: 2, want: []string{"--critical"}},
		{name: "inspect: --critical 0s", inv: args("dlq", "inspect", "--queue", x.devDLQ, "--critical", "0s"), code: 2, want: []string{"--critical"}},
		{name: "--timeout -5s", inv: args("pitr", "status", "--table", x.devTable, "--timeout", "-5s"), code: 2, want: []string{"--timeout"}},
		{name: "--wait-timeout -1m", inv: args("pitr", "restore", "--table", x.devTable, "--latest", "--yes", "--wait-timeout", "-1m"), code: 2, want: []string{"--wait-timeout"}},
		{name: "diff: --segments 0", inv: args("table", "diff", "--source", x.devTable, "--target", x.devOther, "--segments", "0"), code: 2, want: []string{"--segments 0"}},
		{name: "repair: --workers 0", inv: args("pitr", "repair", "--from", x.devRestored, "--to", x.devTable, "--all-differences", "--workers", "0", "--yes"), code: 2, want: []string{"--workers"}},
		{name: "export verify: --parallel -2", inv: args("export", "verify", "--bucket", x.bucket, "--prefix", x.prefix, "--parallel", "-2"), code: 2, want: []string{"--parallel"}},
		{name: "dr status: --latency-window -15m", inv: args("dr", "status", "--table", x.devTable, "--latency-window", "-15m"), code: 2, want: []string{"--latency-window"}},
		{name: "audit log: --since -2h", inv: args("audit", "log", "--since", "-2h"), code: 2, want: []string{"--since"}},

		// Not-found errors name where dynops looked and the likely fix.
		{name: "not found: restore names region and endpoint", inv: args("pitr", "restore", "--table", "dev-"+x.id+"-nosuch", "--latest", "--yes"), want: []string{"dev-" + x.id + "-nosuch", target.Region, target.Endpoint()}},
		{name: "not found: diff names region and endpoint", inv: args("table", "diff", "--source", "dev-"+x.id+"-nosuch", "--target", x.devTable), want: []string{"dev-" + x.id + "-nosuch", target.Region, target.Endpoint()}},
		{name: "not found: a bad profile is named with its source", inv: withEnv(args("pitr", "status", "--table", x.devTable), "AWS_PROFILE=dynops-no-such-profile", "AWS_CONFIG_FILE="+filepath.Join(workDir, "nope-config")), want: []string{"dynops-no-such-profile", "AWS_PROFILE"}},
		{name: "not found: --profile is named", inv: args("pitr", "status", "--table", x.devTable, "--profile", "dynops-no-such-profile"), want: []string{`profile "dynops-no-such-profile"`}},

		// export import: the dry run checks that the target does not exist.
		{name: "import: dry run into an existing table", inv: args("export", "import", "--bucket", x.bucket, "--prefix", x.prefix, "--table", x.devOther, "--hash-key", "user_id:S", "--unverified-exports", emulatorExports), code: 2, want: []string{x.devOther}},
		{name: "import: --yes into an existing table", inv: args("export", "import", "--bucket", x.bucket, "--prefix", x.prefix, "--table", x.devOther, "--hash-key", "user_id:S", "--yes", "--unverified-exports", emulatorExports), code: 2, want: []string{x.devOther}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { check(t, x, c) })
	}
}

// TestJSONErrorOnStdout: with -o json a refused run still writes one JSON
// document on stdout, the error object, so pipelines get valid JSON; and it
// changes nothing.
func TestJSONErrorOnStdout(t *testing.T) {
	x := setup(t)
	t.Cleanup(func() { unchanged(t, x) })
	for _, args := range [][]string{
		{"pitr", "restroe", "--table", x.devTable},
		{"pitr", "restore", "--table", x.devTable, "--latest", "--yes", "--confirm", x.devOther},
		{"pitr", "restore", "--table", "prod-" + x.id + "-user", "--latest", "--yes"},
		{"dlq", "inspect", "--queue", x.devDLQ, "--critical", "-1h"},
		{"pitr", "status", "--table", "dev-" + x.id + "-nosuch"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := dynops(t, invocation{args: append(args, "-o", "json")})
			if r.code == 0 {
				t.Fatalf("exit 0, want a refusal; stderr: %s", r.stderr)
			}
			var doc struct {
				Error *struct {
					Message  string `json:"message"`
					Code     string `json:"code"`
					ExitCode int    `json:"exit_code"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
				t.Fatalf("stdout is not one JSON document: %v\nstdout: %q", err, r.stdout)
			}
			if doc.Error == nil || doc.Error.Message == "" || doc.Error.ExitCode != r.code {
				t.Fatalf("stdout %s: want an error object with a message and exit_code %d", r.stdout, r.code)
			}
		})
	}
}
