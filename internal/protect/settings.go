package protect

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Environment variables and the config file that extend the policy.
const (
	EnvProtected   = "DYNOPS_PROTECTED_ENVS"   // comma-separated envs to protect too
	EnvUnprotected = "DYNOPS_UNPROTECTED_ENVS" // comma-separated envs known to be safe
	EnvConfig      = "DYNOPS_CONFIG"           // path of the config file
)

// Config is the protection part of the dynops config file
// ($XDG_CONFIG_HOME/dynops/config.yaml, or DYNOPS_CONFIG):
//
//	protected_envs: [stg, perf]
//	unprotected_envs: [qa, sandbox]
type Config struct {
	ProtectedEnvs   []string `yaml:"protected_envs"`
	UnprotectedEnvs []string `yaml:"unprotected_envs"`
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
	path := s.ConfigPath
	explicit := path != "" || getenv(EnvConfig) != ""
	if path == "" {
		path = DefaultConfigPath(getenv)
	}
	if path != "" {
		b, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist) && !explicit:
		case err != nil:
			return p, fmt.Errorf("reading the dynops config %s: %w (fix or remove it; protection settings must be readable)", path, err)
		default:
			var c Config
			if err := yaml.Unmarshal(b, &c); err != nil {
				return p, fmt.Errorf("parsing the dynops config %s: %w (protected_envs and unprotected_envs are lists of env names)", path, err)
			}
			if err := checkEnvs(path+": protected_envs", c.ProtectedEnvs); err != nil {
				return p, err
			}
			if err := checkEnvs(path+": unprotected_envs", c.UnprotectedEnvs); err != nil {
				return p, err
			}
			p.AddProtected("config "+path, c.ProtectedEnvs...)
			p.AddUnprotected("config "+path, c.UnprotectedEnvs...)
		}
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
