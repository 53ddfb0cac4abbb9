// Package viewtest runs a command's views in tests: the same call once per
// output form, so a test can hold both the human and the JSON form of one
// result (net/http/httptest's role for the view package).
package viewtest

import (
	"encoding/json"
	"testing"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/iostreams"
)

// Forms runs show once in each output form, each time on a fresh Factory
// (set up by setup, when not nil), and returns what it printed on stdout:
// the human text, and the JSON document parsed into a D (map[string]any for
// an object, []map[string]any for a list). It fails the test when show fails
// or the JSON form is not one such document, so a view test only says what
// each form must hold.
func Forms[D any](t testing.TB, setup func(*factory.Factory), show func(*factory.Factory) error) (human string, doc D) {
	t.Helper()
	for _, output := range []string{factory.OutputTable, factory.OutputJSON} {
		ios, _, stdout, _ := iostreams.Test()
		f := factory.New(ios)
		f.Flags.Output = output
		if setup != nil {
			setup(f)
		}
		if err := show(f); err != nil {
			t.Fatalf("-o %s: %v", output, err)
		}
		if output == factory.OutputTable {
			human = stdout.String()
			continue
		}
		if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
			t.Fatalf("-o json: stdout is not one JSON document of %T (%v):\n%s", doc, err, stdout)
		}
	}
	return human, doc
}
