// Package clidoc renders the CLI reference (docs/cli/*.md) from the cobra
// command tree, so help texts are written once, in the commands.
package clidoc

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/root"
	"github.com/dynops/dynops/internal/iostreams"
)

// Dir is where the reference lives, relative to the repository root.
const Dir = "docs/cli"

// Tree returns the dynops command tree as the reference shows it: the
// version is left out so that the reference does not change per build.
func Tree() *cobra.Command {
	cmd := root.NewCmdRoot(factory.New(iostreams.System()), "dev")
	disableAutoGenTag(cmd)
	return cmd
}

func disableAutoGenTag(cmd *cobra.Command) {
	cmd.DisableAutoGenTag = true
	for _, c := range cmd.Commands() {
		disableAutoGenTag(c)
	}
}

// Write renders one Markdown file per command into dir, after removing the
// Markdown files already there (a removed command leaves no stale page).
func Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("clidoc: %w", err)
	}
	old, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		return fmt.Errorf("clidoc: %w", err)
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return fmt.Errorf("clidoc: %w", err)
		}
	}
	if err := doc.GenMarkdownTree(Tree(), dir); err != nil {
		return fmt.Errorf("clidoc: writing %s: %w", dir, err)
	}
	return nil
}

// Diff renders the reference into a temporary directory and compares it
// with dir: it returns the names of the pages that are missing, stale or no
// longer generated (empty when dir is current).
func Diff(dir string) ([]string, error) {
	tmp, err := os.MkdirTemp("", "clidoc-")
	if err != nil {
		return nil, fmt.Errorf("clidoc: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := Write(tmp); err != nil {
		return nil, err
	}
	want, err := readDir(tmp)
	if err != nil {
		return nil, err
	}
	have, err := readDir(dir)
	if err != nil {
		return nil, err
	}
	var diff []string
	for name, w := range want {
		h, ok := have[name]
		switch {
		case !ok:
			diff = append(diff, name+" (missing)")
		case h != w:
			diff = append(diff, name+" (stale)")
		}
	}
	for name := range have {
		if _, ok := want[name]; !ok {
			diff = append(diff, name+" (no such command)")
		}
	}
	return diff, nil
}

func readDir(dir string) (map[string]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		return nil, fmt.Errorf("clidoc: %w", err)
	}
	out := make(map[string]string, len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("clidoc: %w", err)
		}
		out[filepath.Base(f)] = strings.ReplaceAll(string(b), "\r\n", "\n")
	}
	return out, nil
}
