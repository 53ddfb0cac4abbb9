// Package notfound checks that every not-found error of the command tree
// says where dynops looked (account, region, endpoint) and the likely fix,
// against the target (the local emulator by default), in-process.
package notfound

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/harness"
)

var target *harness.Target

func TestMain(m *testing.M) { harness.Main(m, &target) }

const moto500 = "answers DescribeExport of an unknown ARN with HTTP 500 instead of ExportNotFoundException"

func TestNotFoundSaysWhereDynopsLooked(t *testing.T) {
	account := target.AccountID(t)
	id := harness.UniqueID()
	table := "dev-" + id + "-user"
	queue := "https://sqs." + target.Region + ".amazonaws.com/" + account + "/dev-" + id + "-dlq"
	if target.OnEmulator() {
		queue = target.Endpoint() + "/" + account + "/dev-" + id + "-dlq"
	}
	exportArn := "arn:aws:dynamodb:" + target.Region + ":" + account + ":table/" + table + "/export/01700000000000-abcd1234"
	cases := []struct {
		name   string
		region string
		args   []string
		fix    string
		// emulatorLacks: why the emulator cannot answer not-found here (the
		// case runs with DYNOPS_TEST_TARGET=aws).
		emulatorLacks string
	}{
		{"pitr status", target.Region, []string{"pitr", "status", "--table", table}, "check the table", ""},
		{"pitr status, wrong region", "us-east-1", []string{"pitr", "status", "--table", table}, "--region", ""},
		{"pitr restore", target.Region, []string{"pitr", "restore", "--table", table, "--latest"}, "check the table", ""},
		{"pitr repair", target.Region, []string{"pitr", "repair", "--from", table + "-restored", "--to", table, "--all-differences"}, "check the table", ""},
		{"table diff", target.Region, []string{"table", "diff", "--source", table + "-restored", "--target", table}, "check the table", ""},
		{"check", target.Region, []string{"check", "--table", table}, "check the table", ""},
		{"export full", target.Region, []string{"export", "full", "--table", table, "--bucket", "dev-" + id + "-exports"}, "check the table", ""},
		{"export status", target.Region, []string{"export", "status", exportArn}, "check the table (export", moto500},
		{"export wait", target.Region, []string{"export", "wait", exportArn}, "check the table (export", moto500},
		{"export verify", target.Region, []string{"export", "verify", "--bucket", "dev-" + id + "-exports", "--prefix", "full"}, "check the bucket", ""},
		{"export import", target.Region, []string{"export", "import", "--bucket", "dev-" + id + "-exports", "--prefix", "full", "--table", table, "--hash-key", "pk:S"}, "check the bucket", ""},
		{"dlq inspect", target.Region, []string{"dlq", "inspect", "--queue", queue}, "check the queue URL", ""},
		{"dlq redrive", target.Region, []string{"dlq", "redrive", "--queue", queue}, "check the queue URL", ""},
		{"dlq move", target.Region, []string{"dlq", "move", "--queue", queue, "--to-queue", queue + "-2"}, "check the queue URL", ""},
		{"dr status", target.Region, []string{"dr", "status", "--table", table}, "check the table", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.emulatorLacks != "" {
				target.RequireAWS(t, tc.emulatorLacks)
			}
			log := filepath.Join(t.TempDir(), "audit.jsonl")
			out, errOut, code := target.DynopsInRegion(t, tc.region, log, append(tc.args, "-o", "json")...)
			assert.Equal(t, 1, code)
			for _, want := range []string{"not found", "account " + account, "region " + tc.region, tc.fix} {
				assert.Contains(t, errOut, want)
			}
			if target.OnEmulator() {
				assert.Contains(t, errOut, "endpoint "+target.Endpoint())
			}
			assert.NotContains(t, errOut, "StatusCode:", "the raw SDK chain is behind --debug")
			var doc struct {
				Error struct {
					Message  string `json:"message"`
					Code     string `json:"code"`
					ExitCode int    `json:"exit_code"`
				} `json:"error"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &doc), "-o json writes one JSON document on stdout: %q", out)
			if doc.Error.Code == "" {
				return // the command wrote its own report (one document), the error is on stderr
			}
			assert.Equal(t, "not_found", doc.Error.Code)
			assert.Equal(t, 1, doc.Error.ExitCode)
			assert.True(t, strings.Contains(doc.Error.Message, "account "+account))
		})
	}
}
