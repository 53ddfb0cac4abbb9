// Package release checks the release workflow (.github/workflows/release.yml)
// and docs/release.md against what a release must be (issue 44): only a
// version tag whose commit is on main is built and signed, signing runs in
// the protected release environment, every built binary has its own SBOM,
// and the verification the docs give binds the signature to the workflow
// and a version tag.
package release

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	"golang.org/x/mod/modfile"
)

const root = "../../.."

type workflow struct {
	Jobs map[string]job `yaml:"jobs"`
}

type job struct {
	Needs       any    `yaml:"needs"`
	Environment any    `yaml:"environment"`
	Steps       []step `yaml:"steps"`
}

type step struct {
	Name string            `yaml:"name"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	With map[string]string `yaml:"with"`
}

func readWorkflow(t *testing.T) workflow {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, ".github/workflows/release.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var w workflow
	if err := yaml.Unmarshal(b, &w); err != nil {
		t.Fatalf("release.yml: %v", err)
	}
	return w
}

// ancestry is the check that the tagged commit is on main.
var ancestry = regexp.MustCompile(`git merge-base --is-ancestor "\$GITHUB_SHA" origin/main`)

// firstStep is the index of the first step whose run matches re, or -1.
func firstStep(j job, re *regexp.Regexp) int {
	for i, s := range j.Steps {
		if re.MatchString(s.Run) {
			return i
		}
	}
	return -1
}

func needs(j job) []string {
	switch n := j.Needs.(type) {
	case string:
		return []string{n}
	case []any:
		var out []string
		for _, x := range n {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func environment(j job) string {
	switch e := j.Environment.(type) {
	case string:
		return e
	case map[string]any:
		s, _ := e["name"].(string)
		return s
	}
	return ""
}

// TestReleaseSignsOnlyCommitsOfMain: every job that signs (cosign
// sign-blob) runs in the protected `release` environment, checks that the
// tagged commit is on main before it signs, and needs a gate job that
// checks it too (and that the tag is vMAJOR.MINOR.PATCH) before anyone is
// asked to approve.
func TestReleaseSignsOnlyCommitsOfMain(t *testing.T) {
	w := readWorkflow(t)
	sign := regexp.MustCompile(`cosign sign-blob`)
	signers := 0
	for name, j := range w.Jobs {
		at := firstStep(j, sign)
		if at < 0 {
			continue
		}
		signers++
		if env := environment(j); env != "release" {
			t.Errorf("job %s signs outside the protected release environment (environment %q): add `environment: release`", name, env)
		}
		if c := firstStep(j, ancestry); c < 0 || c > at {
			t.Errorf("job %s signs (step %d) without first checking that $GITHUB_SHA is on main (git merge-base --is-ancestor \"$GITHUB_SHA\" origin/main)", name, at)
		}
		gated := false
		for _, n := range needs(j) {
			g, ok := w.Jobs[n]
			if ok && firstStep(g, ancestry) >= 0 && firstStep(g, regexp.MustCompile(`\^v\[0-9\]\+`)) >= 0 {
				gated = true
			}
		}
		if !gated {
			t.Errorf("job %s needs no gate job that checks the tag (vMAJOR.MINOR.PATCH) and its commit on main before the environment's approval", name)
		}
	}
	if signers == 0 {
		t.Fatal("release.yml has no job that signs (cosign sign-blob): the test reads the wrong file")
	}
}

// TestReleaseHasAnSBOMPerBinary: the SBOMs are made by syft from each built
// binary (file:), not from the source tree, and listed in the signed
// SHA256SUMS; the signature is verified against the workflow on a version tag.
func TestReleaseHasAnSBOMPerBinary(t *testing.T) {
	w := readWorkflow(t)
	j, ok := w.Jobs["release"]
	if !ok {
		t.Fatal("release.yml has no release job")
	}
	var all strings.Builder
	for _, s := range j.Steps {
		if strings.HasPrefix(s.Uses, "anchore/sbom-action@") && s.With["path"] != "" {
			t.Errorf("step %q makes an SBOM of the source tree (path %q): make one per built binary (syft on the artifact)", s.Name, s.With["path"])
		}
		all.WriteString(s.Run + "\n")
	}
	run := all.String()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`for archive in dynops_\*\.tar\.gz`),
		regexp.MustCompile(`"\$SYFT" scan "file:[^"]*/dynops" -o "spdx-json=\$name\.spdx\.json"`),
		regexp.MustCompile(`sha256sum -- \*\.spdx\.json >>SHA256SUMS`),
	} {
		if !want.MatchString(run) {
			t.Errorf("the release job runs nothing matching %s", want)
		}
	}
	identity := `--certificate-identity-regexp "^https://github\.com/${GITHUB_REPOSITORY}/\.github/workflows/release\.yml@refs/tags/v[0-9]+\.[0-9]+\.[0-9]+$"`
	if !strings.Contains(run, identity) {
		t.Errorf("the release job does not verify its signature as docs/release.md tells users to: %s", identity)
	}
	if at, sbom := firstStep(j, regexp.MustCompile(`cosign sign-blob`)), firstStep(j, regexp.MustCompile(`spdx-json=`)); sbom < 0 || sbom > at {
		t.Errorf("the SBOMs (step %d) must be made and listed in SHA256SUMS before it is signed (step %d)", sbom, at)
	}
}

// TestReleaseDocMatchesGoMod: every line of go.mod that docs/release.md
// names ("go.mod's `toolchain` line") is in go.mod.
func TestReleaseDocMatchesGoMod(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(root, "docs/release.md"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := modfile.Parse("go.mod", b, nil)
	if err != nil {
		t.Fatal(err)
	}
	has := map[string]bool{"module": mod.Module != nil, "go": mod.Go != nil, "toolchain": mod.Toolchain != nil}
	named := regexp.MustCompile("go\\.mod's\\s+`(\\w+)`\\s+line").FindAllStringSubmatch(string(doc), -1)
	if len(named) == 0 {
		t.Fatal("docs/release.md names no line of go.mod: say which Go version builds a release")
	}
	for _, m := range named {
		if !has[m[1]] {
			t.Errorf("docs/release.md names go.mod's `%s` line, which go.mod does not have", m[1])
		}
	}
	if mod.Go != nil && !strings.Contains(string(doc), mod.Go.Version) {
		t.Errorf("docs/release.md does not name go.mod's Go version %s", mod.Go.Version)
	}
}
