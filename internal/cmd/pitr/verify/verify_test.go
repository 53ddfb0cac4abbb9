package verify

import (
	"strings"
	"testing"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view/viewtest"
	"github.com/dynops/dynops/internal/repair"
)

func TestShowBothForms(t *testing.T) {
	rep := &repair.VerifyReport{Record: "r.jsonl", From: "restored", To: "prod-hoge-user", Keys: 3, Repaired: 2, Deleted: 1, PromiseHolds: true}
	human, doc := viewtest.Forms[map[string]any](t, nil, func(f *factory.Factory) error { return show(f, rep) })
	for _, want := range []string{"Verified the repair of prod-hoge-user from restored: 3 key(s) of r.jsonl", "STATE", "The repair's promise holds."} {
		if !strings.Contains(human, want) {
			t.Errorf("human view lacks %q:\n%s", want, human)
		}
	}
	if doc["promise_holds"] != true || doc["repaired"] != 2.0 || doc["deleted"] != 1.0 || doc["to"] != "prod-hoge-user" {
		t.Errorf("JSON view: %v; want the verdict and the counts", doc)
	}
}
