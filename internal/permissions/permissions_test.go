package permissions_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/root"
	"github.com/dynops/dynops/internal/iostreams"
	"github.com/dynops/dynops/internal/permissions"
)

// commandsWithoutAWS are the runnable commands (or command groups) that
// call no AWS API: the audit commands read the local log, runbook list and
// show read the embedded runbooks.
var commandsWithoutAWS = []string{"version", "help", "completion", "audit", "runbook list", "runbook show"}

// runnable walks the real command tree and returns every runnable command's
// path without the root name, e.g. "check", "pitr restore".
func runnable(t *testing.T) []string {
	t.Helper()
	ios, _, _, _ := iostreams.Test()
	cmd := root.NewCmdRoot(factory.New(ios), "test")
	cmd.InitDefaultHelpCmd()
	cmd.InitDefaultCompletionCmd()
	var paths []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Runnable() && c != cmd && !c.HasSubCommands() { // parents run only to refuse a missing or mistyped subcommand
			path := strings.TrimPrefix(c.CommandPath(), cmd.Name()+" ")
			first, _, _ := strings.Cut(path, " ")
			if !slices.Contains(commandsWithoutAWS, first) && !slices.Contains(commandsWithoutAWS, path) {
				paths = append(paths, path)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(cmd)
	if len(paths) == 0 {
		t.Fatal("the command tree has no runnable command: the walk is broken")
	}
	return paths
}

// TestEveryCommandHasAnEntry_DDB_SEC_01: the dynops-operator role is exactly
// what the commands need, so every command must be in the table and every
// entry must be a real command.
func TestEveryCommandHasAnEntry_DDB_SEC_01(t *testing.T) {
	cmds := permissions.Commands()
	if err := permissions.Validate(cmds); err != nil {
		t.Fatal(err)
	}
	tree := runnable(t)
	var listed []string
	for _, c := range cmds {
		listed = append(listed, c.Path)
	}
	for _, p := range tree {
		if !slices.Contains(listed, p) {
			t.Errorf("command %q has no entry in internal/permissions.Commands(): add one line with the IAM actions it calls, then `make generate`", p)
		}
	}
	for _, p := range listed {
		if !slices.Contains(tree, p) {
			t.Errorf("internal/permissions.Commands() lists %q, which is not a runnable dynops command: remove or rename the entry", p)
		}
	}
	t.Logf("%d runnable commands, %d entries", len(tree), len(listed))
}

// TestGeneratedFilesInSync: operator-actions.json and the README table are
// what `go generate ./internal/permissions` writes.
func TestGeneratedFilesInSync(t *testing.T) {
	repo := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(repo, permissions.ReadmeFile))
	if err != nil {
		t.Fatal(err)
	}
	want, err := permissions.Generate(permissions.Commands(), string(readme))
	if err != nil {
		t.Fatal(err)
	}
	for path, b := range want {
		got, err := os.ReadFile(filepath.Join(repo, path))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(b) {
			t.Errorf("%s is out of date: run `make generate` (go generate ./internal/permissions)", path)
		}
	}
}

func TestScope(t *testing.T) {
	for action, want := range map[string]string{
		"dynamodb:ListTables":    "*",
		"dynamodb:DescribeTable": "dynamodb",
		"sqs:ReceiveMessage":     "sqs",
		"s3:PutObject":           "s3",
	} {
		if got := permissions.Scope(action); got != want {
			t.Errorf("Scope(%q) = %q, want %q", action, got, want)
		}
	}
}

func TestValidateRefusesWildcardsAndDuplicates(t *testing.T) {
	for name, cmds := range map[string][]permissions.Command{
		"wildcard":  {{Path: "check", Actions: []string{"dynamodb:*"}}},
		"no action": {{Path: "check"}},
		"no colon":  {{Path: "check", Actions: []string{"DescribeTable"}}},
		"duplicate": {{Path: "check", Actions: []string{"dynamodb:DescribeTable"}}, {Path: "check", Actions: []string{"dynamodb:ListTables"}}},
	} {
		if err := permissions.Validate(cmds); err == nil {
			t.Errorf("%s: Validate accepted %v", name, cmds)
		}
	}
}

// TestGenerate: `go generate` writes both files from one valid table, and
// writes nothing when the table or the README is wrong (the error names
// what to fix).
func TestGenerate(t *testing.T) {
	readme := "# dynamodb-access\n\nintro\n" + permissions.BeginMarker + "\nold table\n" + permissions.EndMarker + "\nafter\n"
	valid := []permissions.Command{
		{Path: "pitr status", Actions: []string{"dynamodb:DescribeTable", "dynamodb:DescribeContinuousBackups"}},
		{Path: "check", Actions: []string{"dynamodb:ListTables", "dynamodb:DescribeTable"}},
	}
	cases := []struct {
		name    string
		cmds    []permissions.Command
		readme  string
		wantErr string // "" = both files generated
	}{
		{"valid table", valid, readme, ""},
		{"wildcard action", []permissions.Command{{Path: "check", Actions: []string{"dynamodb:*"}}}, readme, `action "dynamodb:*" must be an exact service:Action`},
		{"duplicate command", append(slices.Clone(valid), valid[0]), readme, `command "pitr status" is listed twice`},
		{"command without actions", []permissions.Command{{Path: "check"}}, readme, "needs a command path and at least one action"},
		{"README without markers", valid, "# dynamodb-access\n", permissions.ReadmeFile + ": permissions: marker " + permissions.BeginMarker + " not found"},
		{"README without end marker", valid, permissions.BeginMarker + "\n", permissions.ReadmeFile + ": permissions: marker " + permissions.EndMarker + " not found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			files, err := permissions.Generate(tc.cmds, tc.readme)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Generate error = %v, want one containing %q", err, tc.wantErr)
				}
				if files != nil {
					t.Errorf("Generate returned files with its error: %v", files)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != 2 {
				t.Fatalf("Generate wrote %d files, want %s and %s", len(files), permissions.JSONFile, permissions.ReadmeFile)
			}
			var doc permissions.Document
			if err := json.Unmarshal(files[permissions.JSONFile], &doc); err != nil {
				t.Fatalf("%s: %v", permissions.JSONFile, err)
			}
			if got := doc.Commands["check"]; !slices.Equal(got, []string{"dynamodb:DescribeTable", "dynamodb:ListTables"}) {
				t.Errorf("%s: check = %v", permissions.JSONFile, got)
			}
			md := string(files[permissions.ReadmeFile])
			want := "# dynamodb-access\n\nintro\n" + permissions.BeginMarker + "\n" + permissions.Markdown(tc.cmds) + permissions.EndMarker + "\nafter\n"
			if md != want {
				t.Errorf("%s:\n%s\nwant\n%s", permissions.ReadmeFile, md, want)
			}
			// Rows sorted by command path, whatever the table's order.
			if i, j := strings.Index(md, "`dynops check`"), strings.Index(md, "`dynops pitr status`"); i < 0 || j < i {
				t.Errorf("README rows not sorted by command: %s", md)
			}
		})
	}
}
