package catchup

import (
	"bytes"
	"strings"
	"testing"

	"github.com/dynops/dynops/internal/capacity"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view/viewtest"
	"github.com/dynops/dynops/internal/migrate"
)

// TestViewBothForms: a --follow run's passes go to stderr for a person and
// nowhere under JSON; the total is the lines or the JSON document.
func TestViewBothForms(t *testing.T) {
	opts := &Options{Follow: true}
	opts.Source = "dev-a-single"
	total := migrate.PassResult{Records: 5, Keys: 3, Put: 2, Deleted: 1, CaughtUp: true}
	var stderr []string // per form: human, then JSON
	human, doc := viewtest.Forms[map[string]any](t, nil, func(f *factory.Factory) error {
		v := newView(f, opts)
		v.Pass(1, &total)
		err := v.Total(total, 1, []capacity.Use{})
		stderr = append(stderr, f.IOStreams.ErrOut.(*bytes.Buffer).String())
		return err
	})
	for _, want := range []string{"Catch-up of dev-a-single: 1 pass(es), 5 record(s) read", "put 2, deleted 1", "(caught up with the stream's tip)"} {
		if !strings.Contains(human, want) {
			t.Errorf("human view lacks %q:\n%s", want, human)
		}
	}
	if doc["put"] != 2.0 || doc["deleted"] != 1.0 || doc["capacity"] == nil {
		t.Errorf("JSON view: %v; want the counts and the capacity", doc)
	}
	if len(stderr) != 2 || !strings.Contains(stderr[0], "pass 1: 5 record(s)") || strings.Contains(stderr[1], "pass 1") {
		t.Errorf("stderr per form %q; want the pass line for a person only", stderr)
	}
}
