package view

import (
	"encoding/json"
	"testing"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/iostreams"
)

type result struct {
	Items int `json:"items"`
}

func TestResultsPicksByOutputFlag(t *testing.T) {
	for _, output := range []string{"text", factory.OutputJSON} {
		ios, _, stdout, _ := iostreams.Test()
		f := factory.New(ios)
		f.Flags.Output = output
		humanRan := false
		err := Results(f, func(r result) error { humanRan = true; return nil }).Show(result{Items: 3})
		if err != nil {
			t.Fatalf("%s: %v", output, err)
		}
		out := stdout.Bytes()
		if output == factory.OutputJSON {
			var got result
			if humanRan || json.Unmarshal(out, &got) != nil || got.Items != 3 {
				t.Errorf("json: human ran %v, stdout %q; want the JSON document only", humanRan, out)
			}
			continue
		}
		if !humanRan || len(out) != 0 {
			t.Errorf("%s: human ran %v, stdout %q; want the human view", output, humanRan, out)
		}
	}
}

func TestResultsInPicksTheCommandsOwnFormat(t *testing.T) {
	for _, output := range []string{"table", factory.OutputJSON, factory.OutputSARIF} {
		ios, _, stdout, _ := iostreams.Test()
		f := factory.New(ios)
		f.Flags.Output = output
		ran := ""
		err := ResultsIn(f, func(r result) error { ran = "human"; return nil }, map[string]func(result) error{
			factory.OutputSARIF: func(r result) error { ran = "sarif"; return nil },
		}).Show(result{Items: 3})
		if err != nil {
			t.Fatalf("%s: %v", output, err)
		}
		want := map[string]string{"table": "human", factory.OutputSARIF: "sarif", factory.OutputJSON: ""}[output]
		if ran != want || (output == factory.OutputJSON) != (stdout.Len() > 0) {
			t.Errorf("-o %s: ran %q, stdout %q; want %q", output, ran, stdout, want)
		}
	}
}

func TestPrintfOnlyForAPerson(t *testing.T) {
	for _, output := range []string{"table", factory.OutputJSON} {
		ios, _, _, stderr := iostreams.Test()
		f := factory.New(ios)
		f.Flags.Output = output
		Printf(f, ios.ErrOut)("budget %d\n", 5)
		want := map[string]string{"table": "budget 5\n", factory.OutputJSON: ""}[output]
		if stderr.String() != want {
			t.Errorf("-o %s: %q, want %q", output, stderr, want)
		}
	}
}
