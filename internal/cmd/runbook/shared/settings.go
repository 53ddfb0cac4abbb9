package shared

import (
	"os"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/protect"
	"github.com/dynops/dynops/internal/runbook"
	"github.com/dynops/dynops/runbooks"
)

// EnvConfigs reads the config file's runbook section (env -> settings) and
// the file's path; no file: an empty map. A section dynops cannot read
// (unknown keys, values out of range, steps no runbook has) is a usage
// error (exit 2): nothing runs on settings other than meant.
func EnvConfigs(f *factory.Factory) (string, map[string]runbook.EnvConfig, error) {
	getenv := f.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	c, path, found, err := protect.ReadConfig(protect.Settings{Getenv: getenv})
	if err != nil {
		return path, nil, factory.UsageErrorf("%w; nothing was run", err)
	}
	if !found {
		return path, map[string]runbook.EnvConfig{}, nil
	}
	books, err := runbook.LoadAll(runbooks.FS)
	if err != nil {
		return path, nil, err
	}
	envs, err := runbook.ParseEnvConfigs(path, &c.Runbook, books)
	if err != nil {
		return path, nil, factory.UsageErrorf("%w; nothing was run", err)
	}
	return path, envs, nil
}
