// Command gen writes the CLI reference (docs/cli/*.md) from the dynops
// command tree. Run it from the repository root: make docs.
package main

import (
	"fmt"
	"os"

	"github.com/dynops/dynops/internal/clidoc"
)

func main() {
	if err := clidoc.Write(clidoc.Dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
