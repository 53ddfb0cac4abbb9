package diff

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/iostreams"
)

func parse(args ...string) (*Options, error) {
	ios, _, _, _ := iostreams.Test()
	var got *Options
	cmd := NewCmdDiff(factory.New(ios), func(_ context.Context, o *Options) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(ios.Out)
	cmd.SetErr(ios.ErrOut)
	return got, cmd.Execute()
}

func TestDiffFlags(t *testing.T) {
	o, err := parse("--source", "b", "--target", "a")
	require.NoError(t, err)
	assert.Equal(t, 4, o.Diff.Segments)
	assert.Equal(t, 0, o.Diff.Buckets, "sized from the item count")
	assert.Equal(t, 10, o.Diff.SampleSize)
	assert.Empty(t, o.Diff.Attributes, "whole items by default")

	o, err = parse("--source", "b", "--target", "a", "--segments", "16", "--buckets", "64", "--attributes", "status,email", "--keys-out", "k.jsonl", "--exit-code")
	require.NoError(t, err)
	assert.Equal(t, 16, o.Diff.Segments)
	assert.Equal(t, 64, o.Diff.Buckets)
	assert.Equal(t, []string{"status", "email"}, o.Diff.Attributes)
	assert.Equal(t, "k.jsonl", o.Diff.KeysOut)
	assert.True(t, o.ExitCode)
}

func TestDiffFlagsRefused(t *testing.T) {
	cases := map[string][]string{
		"needs --source A and --target B": {"--source", "a"},
		"are both a":                      {"--source", "a", "--target", "a"},
		"--segments 0: use 1 to 1000000":  {"--source", "a", "--target", "b", "--segments", "0"},
		"--buckets 5000":                  {"--source", "a", "--target", "b", "--buckets", "5000"},
	}
	for msg, args := range cases {
		t.Run(msg, func(t *testing.T) {
			o, err := parse(args...)
			require.Error(t, err)
			assert.True(t, factory.IsUsageError(err))
			assert.Contains(t, err.Error(), msg)
			assert.Nil(t, o)
		})
	}
}
