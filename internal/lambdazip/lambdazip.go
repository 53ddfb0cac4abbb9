// Package lambdazip builds a Go Lambda function (runtime provided.al2023,
// arm64) into a deployment zip holding one executable named bootstrap. The
// build and the zip are reproducible, so the zip's SHA-256 (Terraform's
// source_code_hash) changes only when the code does.
package lambdazip

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// epoch is the fixed modification time of the zip entry (the zip format's earliest).
var epoch = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// Build compiles the main package at pkg (a path or import path) for
// linux/arm64 without cgo and writes out, a zip with the binary as bootstrap.
func Build(ctx context.Context, pkg, out string) error {
	dir, err := os.MkdirTemp("", "lambdazip-")
	if err != nil {
		return fmt.Errorf("creating build dir: %w", err)
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "bootstrap")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-tags", "lambda.norpc", "-o", bin, pkg)
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, stderr.String())
	}
	exe, err := os.ReadFile(bin)
	if err != nil {
		return fmt.Errorf("reading built binary: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(out), err)
	}
	f, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("creating %s: %w", out, err)
	}
	if err := Write(f, exe); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", out, err)
	}
	return f.Close()
}

// Write writes a zip holding exe as the executable file bootstrap, with a
// fixed time stamp so the same binary always gives the same bytes.
func Write(w io.Writer, exe []byte) error {
	zw := zip.NewWriter(w)
	h := &zip.FileHeader{Name: "bootstrap", Method: zip.Deflate, Modified: epoch}
	h.SetMode(0o755)
	fw, err := zw.CreateHeader(h)
	if err != nil {
		return err
	}
	if _, err := fw.Write(exe); err != nil {
		return err
	}
	return zw.Close()
}
