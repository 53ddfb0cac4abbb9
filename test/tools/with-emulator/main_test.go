package main

import (
	"reflect"
	"testing"
)

// TestParseArgs: --help and a stray option end before an emulator starts
// (the --help case used to start moto and then fail running "--help").
func TestParseArgs(t *testing.T) {
	for _, c := range []struct {
		args []string
		rest []string
		code int
		done bool
	}{
		{[]string{"--help"}, nil, 0, true},
		{[]string{"-h"}, nil, 0, true},
		{[]string{"--frobnicate"}, nil, 2, true},
		{nil, nil, 2, true},
		{[]string{"--"}, nil, 2, true},
		{[]string{"--", "bash", "-c", "true"}, []string{"bash", "-c", "true"}, 0, false},
		{[]string{"bash", "--help"}, []string{"bash", "--help"}, 0, false},
		{[]string{"--", "--help"}, []string{"--help"}, 0, false},
	} {
		rest, code, done := parseArgs(c.args)
		if !reflect.DeepEqual(rest, c.rest) || code != c.code || done != c.done {
			t.Errorf("parseArgs(%q) = %q, %d, %v; want %q, %d, %v", c.args, rest, code, done, c.rest, c.code, c.done)
		}
	}
}
