// Package version implements `dynops version`.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/cmd/factory"
)

// Info is what `dynops version` prints.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	GoVersion string `json:"go_version"`
}

// NewCmdVersion returns `dynops version`.
func NewCmdVersion(f *factory.Factory, version string) *cobra.Command {
	return &cobra.Command{
		Use:         "version",
		Short:       "Print the dynops version",
		Args:        cobra.NoArgs,
		Annotations: map[string]string{"audit": "skip"},
		RunE: func(cmd *cobra.Command, args []string) error {
			info := Info{Version: version, GoVersion: runtime.Version()}
			if bi, ok := debug.ReadBuildInfo(); ok {
				for _, s := range bi.Settings {
					if s.Key == "vcs.revision" {
						info.Commit = s.Value
					}
				}
			}
			if f.JSON() {
				return f.IOStreams.PrintJSON(info)
			}
			fmt.Fprintf(f.IOStreams.Out, "dynops %s (%s)\n", info.Version, info.GoVersion)
			return nil
		},
	}
}
