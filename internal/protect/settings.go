package protect

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/agext/levenshtein"
	"go.yaml.in/yaml/v3"
)

// Environment variables and the config file that extend the policy.
const (
	EnvProtected   = "DYNOPS_PROTECTED_ENVS"   // comma-separated envs to protect too
	EnvUnprotected = "DYNOPS_UNPROTECTED_ENVS" // comma-separated envs known to be safe
	EnvConfig      = "DYNOPS_CONFIG"           // path of the config file
)

// Config is the dynops config file ($XDG_CONFIG_HOME/dynops/config.yaml,
// or DYNOPS_CONFIG): its protection part, and the per-env runbook section
// (kept raw here, parsed by internal/runbook: ParseEnvConfigs):
//
//	protected_envs: [stg, perf]
//	unprotected_envs: [qa, sandbox]
//	runbook:
//	  prod: {state_bucket: acme-oncall, approvals: 1}
type Config struct {
	ProtectedEnvs   []string  `yaml:"protected_envs"`
	UnprotectedEnvs []string  `yaml:"unprotected_envs"`
	Runbook         yaml.Node `yaml:"runbook"`
}

// Settings are where LoadPolicy looks.
type Settings struct {
	// Flag is --protected-envs (nil when not given).
	Flag []string
	// Getenv reads the environment (os.Getenv in the CLI).
	Getenv func(string) string
	// ConfigPath overrides the config file location (DYNOPS_CONFIG, then
	// $XDG_CONFIG_HOME/dynops/config.yaml, then ~/.config/dynops/config.yaml).
	ConfigPath string
}

// DefaultConfigPath is where the config file is looked for.
func DefaultConfigPath(getenv func(string) string) string {
	if p := getenv(EnvConfig); p != "" {
		return p
	}
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "dynops", "config.yaml")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "dynops", "config.yaml")
	}
	return ""
}

// LoadPolicy builds the policy: the built-in envs, plus what the config
// file, the environment and --protected-envs add. Settings only add:
// a built-in protected env can never be unprotected, and an env listed as
// both protected and unprotected is protected. A config file that exists but
// cannot be read or parsed is an error: dynops does not act on a policy it
// could not read.
func LoadPolicy(s Settings) (Policy, error) {
	getenv := s.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	p := NewPolicy()
	c, path, found, err := ReadConfig(s)
	if err != nil {
		return p, err
	}
	if found {
		if err := checkEnvs(path+": protected_envs", c.ProtectedEnvs); err != nil {
			return p, err
		}
		if err := checkEnvs(path+": unprotected_envs", c.UnprotectedEnvs); err != nil {
			return p, err
		}
		p.AddProtected("config "+path, c.ProtectedEnvs...)
		p.AddUnprotected("config "+path, c.UnprotectedEnvs...)
	}
	for _, v := range []struct {
		name string
		add  func(string, ...string)
	}{{EnvProtected, p.AddProtected}, {EnvUnprotected, p.AddUnprotected}} {
		if raw := getenv(v.name); raw != "" {
			envs := SplitList(raw)
			if err := checkEnvs(v.name, envs); err != nil {
				return p, err
			}
			v.add(v.name, envs...)
		}
	}
	if err := checkEnvs("--protected-envs", s.Flag); err != nil {
		return p, err
	}
	p.AddProtected("--protected-envs", s.Flag...)
	return p, nil
}

// ReadConfig reads and parses the config file of s (ConfigPath,
// DYNOPS_CONFIG, then the default path). found is false when no file was
// given and the default one does not exist. A file that exists but cannot
// be read or parsed, or has an unknown key, is an error naming it.
func ReadConfig(s Settings) (c Config, path string, found bool, err error) {
	getenv := s.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	path = s.ConfigPath
	explicit := path != "" || getenv(EnvConfig) != ""
	if path == "" {
		path = DefaultConfigPath(getenv)
	}
	if path == "" {
		return c, "", false, nil
	}
	b, err := readConfig(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !explicit:
		return c, path, false, nil
	case err != nil:
		return c, path, false, fmt.Errorf("reading the dynops config %s: %w (fix or remove it; protection settings must be readable)", path, err)
	}
	c, err = parseConfig(path, b)
	if err != nil {
		return c, path, false, err
	}
	return c, path, true, nil
}

// SplitList splits a comma-separated list, dropping blanks.
func SplitList(s string) []string {
	var out []string
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// checkEnvs refuses env names that cannot be an env word of DDB-NAME-01.
func checkEnvs(where string, envs []string) error {
	for _, e := range envs {
		e = strings.TrimSpace(e)
		if e == "" || strings.ContainsAny(e, "-_./: ,") {
			return fmt.Errorf("%s: %q is not an env name (one word, e.g. prod or stg)", where, e)
		}
	}
	return nil
}

// readConfig reads the config file, which must be the user's own and not
// writable by group or others: it decides what dynops may change.
func readConfig(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return nil, fmt.Errorf("it belongs to uid %d, not to you (uid %d): a config of another user could lift protection; use your own (chown or DYNOPS_CONFIG)", st.Uid, os.Geteuid())
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return nil, fmt.Errorf("it has mode %04o: others could change what is protected; run chmod go-w %s", perm, path)
	}
	return io.ReadAll(f)
}

// configKeys are the keys the config file may have.
var configKeys = []string{"protected_envs", "unprotected_envs", "runbook"}

// parseConfig parses the config file; an unknown key is an error naming it,
// the file, and the known key it is closest to.
func parseConfig(path string, b []byte) (Config, error) {
	var c Config
	var raw map[string]any
	if err := yaml.Unmarshal(b, &raw); err != nil {
		return c, fmt.Errorf("parsing the dynops config %s: %w (protected_envs and unprotected_envs are lists of env names)", path, err)
	}
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		if err := UnknownKey(path, "", k, configKeys, "a setting dynops does not read would leave protection other than you meant"); err != nil {
			return c, err
		}
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("parsing the dynops config %s: %w (protected_envs and unprotected_envs are lists of env names)", path, err)
	}
	return c, nil
}

// UnknownKey returns nil when key is one of known, else the one refusal of
// a config key dynops does not read: the file, where in it (a section such
// as "runbook.prod", "" for the top), the key, the known key it is closest
// to (or all of them), and why it matters.
func UnknownKey(path, section, key string, known []string, why string) error {
	if slices.Contains(known, key) {
		return nil
	}
	hint := "the keys are " + strings.Join(known[:len(known)-1], ", ") + " and " + known[len(known)-1]
	if len(known) == 1 {
		hint = "the key is " + known[0]
	}
	best, dist := "", 4
	for _, k := range known {
		if d := levenshtein.Distance(strings.ToLower(key), k, nil); d < dist {
			best, dist = k, d
		}
	}
	if best != "" {
		hint = fmt.Sprintf("did you mean %s?", best)
	}
	where := ""
	if section != "" {
		where = " in " + section
	}
	return fmt.Errorf("the dynops config %s has an unknown key %q%s: %s (%s)", path, key, where, hint, why)
}
