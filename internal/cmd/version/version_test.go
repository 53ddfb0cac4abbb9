package version

import (
	"strings"
	"testing"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view/viewtest"
)

func TestVersionShowsBothForms(t *testing.T) {
	human, doc := viewtest.Forms[map[string]any](t, nil, func(f *factory.Factory) error {
		cmd := NewCmdVersion(f, "v9.9.9")
		cmd.SetArgs(nil)
		return cmd.Execute()
	})
	if !strings.HasPrefix(human, "dynops v9.9.9 (") {
		t.Errorf("human view: %q; want the one version line", human)
	}
	if doc["version"] != "v9.9.9" {
		t.Errorf("JSON view: %v; want version v9.9.9", doc)
	}
}
