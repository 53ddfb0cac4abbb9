package factory

import (
	"errors"
	"strings"
	"testing"

	"github.com/dynops/dynops/internal/iostreams"
)

func TestConfirm(t *testing.T) {
	cases := []struct {
		name    string
		c       Confirmation
		tty     bool
		typed   string
		want    bool
		wantErr string
	}{
		{name: "no --yes is a dry run", c: Confirmation{Env: "dev", Target: "dev-a-b"}, want: false},
		{name: "no --yes in prod is a dry run too", c: Confirmation{Env: "prod", Target: "prod-a-b"}, want: false},
		{name: "--yes outside prod proceeds", c: Confirmation{Yes: true, Env: "stg", Target: "stg-a-b"}, want: true},
		{name: "prod without a terminal is refused", c: Confirmation{Yes: true, Env: "prod", Target: "prod-a-b"}, wantErr: "--confirm prod-a-b"},
		{name: "prod with --confirm NAME proceeds", c: Confirmation{Yes: true, Env: "prod", Target: "prod-a-b", Typed: "prod-a-b"}, want: true},
		{name: "prod with a wrong --confirm is refused", c: Confirmation{Yes: true, Env: "prod", Target: "prod-a-b", Typed: "prod-a-c"}, wantErr: "does not match"},
		{name: "prod typed at the prompt proceeds", c: Confirmation{Yes: true, Env: "prod", Target: "prod-a-b"}, tty: true, typed: "prod-a-b\n", want: true},
		{name: "prod mistyped at the prompt is refused", c: Confirmation{Yes: true, Env: "prod", Target: "prod-a-b"}, tty: true, typed: "prod-a\n", wantErr: ErrNotConfirmed.Error()},
		{name: "prod with the prompt closed is refused", c: Confirmation{Yes: true, Env: "prod", Target: "prod-a-b"}, tty: true, typed: "", wantErr: ErrNotConfirmed.Error()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ios, in, _, errOut := iostreams.Test()
			ios.SetTTY(tc.tty, tc.tty, tc.tty)
			in.WriteString(tc.typed)
			f := New(ios)
			got, err := f.Confirm(tc.c)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				if got {
					t.Fatal("a refused confirmation must not proceed")
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Confirm = %v, %v; want %v, nil", got, err, tc.want)
			}
			if tc.tty && !strings.Contains(errOut.String(), "Type its name") {
				t.Errorf("prompt not shown: %q", errOut.String())
			}
		})
	}
}

func TestUsageError(t *testing.T) {
	err := UsageErrorf("bad --time %q", "x")
	if !IsUsageError(err) || IsUsageError(errors.New("other")) {
		t.Fatal("IsUsageError must recognise only usage errors")
	}
}
