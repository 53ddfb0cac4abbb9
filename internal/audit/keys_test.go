package audit

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKeysHashedByDefault (issue 29): without ClearKeys (--audit-clear-keys)
// no key value reaches the log: key fields of action details (last_key,
// unmatched_sample, exclusive_start_key, ...), key values quoted in error
// texts of details, the finished record's error and findings.
func TestKeysHashedByDefault(t *testing.T) {
	secrets := []string{"user-4711", "9081726354", "acct-secret-1", "sample-key-7", "tenant-x#order-2"}
	run := func(t *testing.T, clear bool) string {
		path := filepath.Join(t.TempDir(), "audit.jsonl")
		r := New(Options{Path: path, Caller: okCaller, ClearKeys: clear})
		must(t, r.Start(context.Background(), Plan{}))
		r.Act("backfill-checkpoint", "dev-a-user", map[string]any{
			"last_key":            `{"pk":{"S":"user-4711"}}`,
			"exclusive_start_key": map[string]any{"pk": map[string]any{"N": "9081726354"}},
			"unmatched_sample":    []string{`{"pk":{"S":"sample-key-7"}}`},
			"error":               `writing item {"S":"acct-secret-1"}: ConditionalCheckFailed`,
		})
		r.Finding(`key {"pk":{"S":"tenant-x#order-2"}} differs`)
		must(t, r.Finish(context.Background(), Outcome{Err: errors.New(`put {"pk": {"S": "user-4711"}} failed`)}))
		b, err := os.ReadFile(path)
		must(t, err)
		return string(b)
	}
	log := run(t, false)
	for _, s := range secrets {
		if strings.Contains(log, s) {
			t.Errorf("key value %q in the log by default:\n%s", s, log)
		}
	}
	if !strings.Contains(log, "sha256:") || !strings.Contains(log, "ConditionalCheckFailed") {
		t.Errorf("want hashes and the rest of the error text kept:\n%s", log)
	}
	log = run(t, true)
	for _, s := range secrets {
		if !strings.Contains(log, s) {
			t.Errorf("ClearKeys: key value %q missing:\n%s", s, log)
		}
	}
}
