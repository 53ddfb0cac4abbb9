package citest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestConsumerWorkflowPinsActionsBySHA: the example workflow for a team's
// repository pins every action by a full commit SHA (tag in a comment),
// keeps top-level permissions read-only, and takes AWS access only by OIDC
// into a role named by a variable (no access keys). actionlint checks the
// rest of it (scripts/lint.sh).
func TestConsumerWorkflowPinsActionsBySHA(t *testing.T) {
	files, err := filepath.Glob("../../../examples/consumer-ci/.github/workflows/*.yml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example workflow found (%v)", err)
	}
	uses := regexp.MustCompile(`^\s*(?:-\s+)?uses:\s*(\S+)(.*)$`)
	pinned := regexp.MustCompile(`^[\w.-]+/[\w./-]+@[0-9a-f]{40}$`)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc := string(raw)
		n := 0
		for i, line := range strings.Split(doc, "\n") {
			m := uses.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			n++
			if !pinned.MatchString(m[1]) || !strings.Contains(m[2], "# v") {
				t.Errorf("%s:%d: %q is not pinned by commit SHA with its tag in a comment", f, i+1, strings.TrimSpace(line))
			}
		}
		if n < 5 {
			t.Errorf("%s: %d actions found; the parser missed them", f, n)
		}
		if !strings.Contains(doc, "permissions:\n  contents: read\n") {
			t.Errorf("%s: top-level permissions must be contents: read", f)
		}
		for _, bad := range []string{"aws-access-key-id", "aws-secret-access-key", "AWS_SECRET_ACCESS_KEY"} {
			if strings.Contains(doc, bad) {
				t.Errorf("%s: uses %s; AWS access is OIDC only", f, bad)
			}
		}
		if !strings.Contains(doc, "id-token: write") || !strings.Contains(doc, "role-to-assume: ${{ vars.") {
			t.Errorf("%s: AWS access must be OIDC into a role from a repository variable", f)
		}
	}
}
