package runbook

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/cmd/exitcode"
	"github.com/dynops/dynops/internal/ddbjson"
	"github.com/dynops/dynops/internal/runbook"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

// drillLines are the shell lines of docs/sandbox.md's first drill (the
// first sh block under "## A first drill"), continuations joined.
func drillLines(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "sandbox.md"))
	require.NoError(t, err)
	md := string(b)
	i := strings.Index(md, "## A first drill")
	require.GreaterOrEqual(t, i, 0, "docs/sandbox.md has no \"## A first drill\"")
	md = md[i:]
	start := strings.Index(md, "```sh\n")
	require.GreaterOrEqual(t, start, 0, "the first drill has no sh block")
	block := md[start+len("```sh\n"):]
	block = block[:strings.Index(block, "```")]
	var lines []string
	for _, l := range strings.Split(strings.ReplaceAll(block, "\\\n", " "), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestSandboxFirstDrillAsDocumented runs docs/sandbox.md's first drill line
// by line as it is written (docs that execute): the `bin/dynops` lines
// through the CLI against the emulator, the `aws dynamodb` lines as the same
// calls through the SDK (their JSON taken from the doc), with a table name
// of its own for $T. It checks what the doc says each step does: --until
// restore stops before the restore (exit 5, nothing restored), --through
// restore after it (exit 5, one restored table), the resumed run ends with
// the damage repaired (exit 0), and the timeline shows the decision taken.
func TestSandboxFirstDrillAsDocumented(t *testing.T) {
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	table := "dev-" + harness.UniqueID() + "-user" // a dev name: not protected, as the doc's dev-practice-user
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	ctx := context.Background()
	lines := drillLines(t)
	t.Chdir(t.TempDir()) // the drill's files (its key list) are relative to where it runs
	restored := func() int { return len(restoredTables(t, db, table)) }
	dropRestoredWhenDone(t, db, table)
	var timeline string
	dynopsLines := 0
	for _, line := range lines {
		// $T is the test's table; $(date ...) the time the line runs, as the shell would.
		shell := strings.NewReplacer("$T", table, "$(date -u +%FT%TZ)", time.Now().UTC().Format(time.RFC3339))
		args, err := runbook.Split(shell.Replace(line))
		require.NoError(t, err, line)
		switch {
		case strings.HasPrefix(line, "T="):
			continue // the test's own table name stands in for it
		case strings.HasPrefix(line, "aws dynamodb create-table"):
			fixture.Create(t, db, fixture.Table{Name: table, HashKey: flagValue(t, args, "--key-schema", "AttributeName=", ",")})
		case strings.HasPrefix(line, "aws dynamodb update-continuous-backups"):
			_, err := db.UpdateContinuousBackups(ctx, &dynamodb.UpdateContinuousBackupsInput{TableName: aws.String(table),
				PointInTimeRecoverySpecification: &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(true)}})
			require.NoError(t, err, line)
		case strings.HasPrefix(line, "aws dynamodb put-item"):
			item, err := ddbjson.DecodeItem([]byte(flagValue(t, args, "--item", "", "")))
			require.NoError(t, err, line)
			_, err = db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item})
			require.NoError(t, err, line)
		case strings.HasPrefix(line, "aws dynamodb delete-item"):
			key, err := ddbjson.DecodeItem([]byte(flagValue(t, args, "--key", "", "")))
			require.NoError(t, err, line)
			_, err = db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: key})
			require.NoError(t, err, line)
		case strings.HasPrefix(line, "sleep "):
			d, err := time.ParseDuration(strings.TrimPrefix(line, "sleep ") + "s")
			require.NoError(t, err, line)
			time.Sleep(d)
		case strings.HasPrefix(line, "printf "):
			// printf '%s\n' A B >FILE: the lines A and B in FILE.
			out := args[len(args)-1]
			require.True(t, strings.HasPrefix(out, ">"), "%s: a printf of the drill writes to a file", line)
			require.NoError(t, os.WriteFile(strings.TrimPrefix(out, ">"), []byte(strings.Join(args[2:len(args)-1], "\n")+"\n"), 0o600), line)
		case strings.HasPrefix(line, "bin/dynops "):
			dynopsLines++
			out, errOut, code := target.Dynops(t, log, args[1:]...)
			switch {
			case strings.Contains(line, "--until restore"):
				require.Equal(t, exitcode.Stopped, code, "%s\n%s", line, errOut)
				assert.Contains(t, errOut, "Stopped before step 2/7 restore (--until restore)")
				assert.Equal(t, 0, restored(), "--until restore stops before the restore")
			case strings.Contains(line, "--through restore"):
				require.Equal(t, exitcode.Stopped, code, "%s\n%s", line, errOut)
				assert.Contains(t, errOut, "Stopped after step 2/7 restore (--through restore)")
				assert.Equal(t, 1, restored(), "--through restore stops after the restore")
			case strings.Contains(line, "audit timeline"):
				require.Equal(t, 0, code, "%s\n%s", line, errOut)
				timeline = out
			default:
				require.Equal(t, 0, code, "%s: the resumed drill ends with exit 0\n%s", line, errOut)
				for _, id := range []string{"u1", "u2"} {
					got := fixture.Get(t, db, table, map[string]types.AttributeValue{"user_id": &types.AttributeValueMemberS{Value: id}})
					require.NotNil(t, got, "%s is back after the repair", id)
					assert.Equal(t, &types.AttributeValueMemberS{Value: "active"}, got["status"], "%s as before the damage", id)
				}
				assert.Equal(t, audit.ResultOK, runbookRun(t, log, "INC-PRACTICE-1").Result)
			}
		default:
			t.Fatalf("docs/sandbox.md's drill has a line this test does not know how to run: %q; teach TestSandboxFirstDrillAsDocumented what it does", line)
		}
	}
	require.Equal(t, 4, dynopsLines, "the drill's bin/dynops lines: --until, --through, the resume and the timeline")
	assert.Contains(t, timeline, "runbook.decide path: repair (the default: no terminal", "the timeline shows the decision taken")
	for _, step := range []string{"status", "restore", "diff", "repair", "verify"} {
		assert.Contains(t, timeline, "[pitr-restore / "+step+"]", "the timeline lists step %s", step)
	}
}

// flagValue is the value after flag in args; with prefix and end, the part
// of it between them (e.g. the attribute of AttributeName=user_id,KeyType=HASH).
func flagValue(t *testing.T, args []string, flag, prefix, end string) string {
	t.Helper()
	for i, a := range args[:len(args)-1] {
		if a != flag {
			continue
		}
		v := args[i+1]
		if prefix != "" {
			v = strings.TrimPrefix(v, prefix)
			v, _, _ = strings.Cut(v, end)
		}
		return v
	}
	t.Fatalf("%v has no %s", args, flag)
	return ""
}

// TestRunbookRefusedStepIsRefusedInTheTimeline: a protected step run with
// --yes and without its name (no terminal) is refused: the step and the
// runbook run exit 2 and read back as refused, not as findings, in the
// audit log and the timeline; nothing was restored.
func TestRunbookRefusedStepIsRefusedInTheTimeline(t *testing.T) {
	db, table := prodTable(t)
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	incident := "INC-" + harness.UniqueID()
	_, errOut, code := target.Dynops(t, log, "runbook", "run", "pitr-restore", "--incident", incident, "--param", "table="+table, "--yes")
	require.Equal(t, exitcode.Usage, code, errOut)
	assert.Contains(t, errOut, "--confirm "+table)
	assert.Equal(t, audit.ResultRefused, runbookRun(t, log, incident).Result, "the runbook run is refused, not findings")
	assert.Empty(t, restoredTables(t, db, table), "refused, yet restored")
	md, _, code := target.Dynops(t, log, "audit", "timeline", "--incident", incident, "--format", "markdown")
	require.Equal(t, 0, code)
	assert.NotContains(t, md, "findings", md)
	assert.Contains(t, md, "| refused (exit 2", md)
}
