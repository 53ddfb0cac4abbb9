// Command gen rewrites the files rendered from internal/permissions:
// modules/dynamodb-access/operator-actions.json and the command -> actions
// table in modules/dynamodb-access/README.md. Run it with
// `go generate ./internal/permissions` (or `make generate`).
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/dynops/dynops/internal/permissions"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run() error {
	// go generate runs in internal/permissions; the repository root is two up.
	root := filepath.Join("..", "..")
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	readme, err := os.ReadFile(filepath.Join(root, permissions.ReadmeFile))
	if err != nil {
		return err
	}
	files, err := permissions.Generate(permissions.Commands(), string(readme))
	if err != nil {
		return err
	}
	for path, b := range files {
		if err := os.WriteFile(filepath.Join(root, path), b, 0o644); err != nil {
			return err
		}
		fmt.Println("wrote", path)
	}
	return nil
}
