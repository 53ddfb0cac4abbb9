// Package version implements `dynops version` and `dynops --version`.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view"
)

// Info is what `dynops version` prints: the version set at build time, the
// module version and the VCS state the binary was built from (build info).
type Info struct {
	Version   string `json:"version"`
	Module    string `json:"module_version,omitempty"`
	Commit    string `json:"commit,omitempty"`
	Time      string `json:"commit_time,omitempty"`
	Modified  bool   `json:"modified"`
	GoVersion string `json:"go_version"`
}

// Read returns the Info of this binary; version is the -ldflags version.
func Read(version string) Info {
	info := Info{Version: version, GoVersion: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return info
	}
	info.Module = bi.Main.Version
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Commit = s.Value
		case "vcs.time":
			info.Time = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	return info
}

// String is the one-line form, e.g.
// "dynops 1.2.0 (module v1.2.0, commit 0123abc 2026-11-22T10:00:00Z, modified, go1.26.8)".
func (i Info) String() string {
	s := "dynops " + i.Version + " ("
	if i.Module != "" {
		s += "module " + i.Module + ", "
	}
	commit := "unknown"
	if i.Commit != "" {
		commit = i.Commit
		if i.Time != "" {
			commit += " " + i.Time
		}
		if i.Modified {
			commit += ", modified"
		}
	}
	return s + "commit " + commit + ", " + i.GoVersion + ")"
}

// NewCmdVersion returns `dynops version`.
func NewCmdVersion(f *factory.Factory, version string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the dynops version and the commit it was built from",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			info := Read(version)
			return view.Results(f, func(i Info) error {
				_, err := fmt.Fprintln(f.IOStreams.Out, i)
				return err
			}).Show(info)
		},
	}
	cmdfacts.ReadOnly(cmd)
	cmdfacts.SkipAudit(cmd)
	return cmd
}
