package shared

import (
	"strings"
	"testing"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view/viewtest"
	"github.com/dynops/dynops/internal/export"
)

func TestFirstOf(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{{[]string{"", "a", "b"}, "a"}, {[]string{"b", "a"}, "b"}, {[]string{"", ""}, ""}, {nil, ""}} {
		if got := FirstOf(c.in...); got != c.want {
			t.Errorf("FirstOf(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestPrintExportsBothForms(t *testing.T) {
	items := int64(7)
	es := []export.Export{{Arn: "arn:aws:dynamodb:eu-west-1:123456789012:table/t/export/e1", Type: "FULL_EXPORT", Status: "COMPLETED", Items: &items}}
	human, doc := viewtest.Forms[[]map[string]any](t, nil, func(f *factory.Factory) error { return PrintExports(f, es) })
	if !strings.Contains(human, "EXPORT") || !strings.Contains(human, "export/e1") || !strings.Contains(human, "COMPLETED") {
		t.Errorf("human view lacks the table header or the export:\n%s", human)
	}
	if len(doc) != 1 || doc[0]["export_arn"] != es[0].Arn || doc[0]["status"] != "COMPLETED" || doc[0]["type"] != "FULL_EXPORT" {
		t.Errorf("JSON view: %v; want the one export with its ARN, status and type", doc)
	}
}
