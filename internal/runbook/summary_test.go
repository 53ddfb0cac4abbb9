package runbook

import "testing"

func TestSummarize(t *testing.T) {
	for _, c := range []struct{ name, doc, want string }{
		{"a diff's counts in their order", `{"source":"a","target":"b","key_names":["k"],"same":3,"only_in_source":1,"changed":0,"sample":{"changed":[]}}`,
			"source=a, target=b, same=3, only_in_source=1, changed=0"},
		{"booleans, and long strings left out", `{"dry_run":true,"note":"` + string(make([]byte, 0)) + `x` + `","path":"` + "0123456789012345678901234567890123456789012345678901234567890123456789" + `"}`,
			"dry_run=true, note=x"},
		{"an array: its length and its first element", `[{"table":"t","status":"ENABLED","window":{"a":1}},{"table":"u"}]`,
			"2 item(s); first: table=t, status=ENABLED, window.a=1"},
		{"a repair: the result's counts first, then the plan's", `{"dry_run":false,"source":{"from":"a-restored","related":true},"plan":{"mode":"batch","missing":3,"changed":2},"result":{"copied":5,"deleted":0,"conflicts":0,"conflict_sample":[]}}`,
			"dry_run=false, result.copied=5, result.deleted=0, result.conflicts=0, plan.missing=3, plan.changed=2"},
		{"empty output", ``, ""},
		{"not JSON", `nope`, ""},
	} {
		if got := Summarize([]byte(c.doc), 10); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	if got := Summarize([]byte(`{"a":1,"b":2,"c":3}`), 2); got != "a=1, b=2" {
		t.Errorf("at most max fields: %q", got)
	}
}
