package lambdazip

import (
	"archive/zip"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteIsReproducibleAndExecutable(t *testing.T) {
	var a, b bytes.Buffer
	require.NoError(t, Write(&a, []byte("binary")))
	require.NoError(t, Write(&b, []byte("binary")))
	assert.Equal(t, a.Bytes(), b.Bytes(), "same binary, same zip bytes (stable source_code_hash)")

	zr, err := zip.NewReader(bytes.NewReader(a.Bytes()), int64(a.Len()))
	require.NoError(t, err)
	require.Len(t, zr.File, 1)
	assert.Equal(t, "bootstrap", zr.File[0].Name, "provided.al2023 runs the file named bootstrap")
	assert.Equal(t, os.FileMode(0o755), zr.File[0].Mode().Perm(), "bootstrap must be executable")
}

func TestBuildTheExampleConsumer(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the example consumer for linux/arm64")
	}
	out := filepath.Join(t.TempDir(), "consumer.zip")
	require.NoError(t, Build(context.Background(), "github.com/dynops/dynops/modules/stream-consumer/examples/go-consumer", out))
	zr, err := zip.OpenReader(out)
	require.NoError(t, err)
	defer zr.Close()
	require.Len(t, zr.File, 1)
	r, err := zr.File[0].Open()
	require.NoError(t, err)
	defer r.Close()
	head := make([]byte, 20)
	_, err = r.Read(head)
	require.NoError(t, err)
	assert.Equal(t, []byte{0x7f, 'E', 'L', 'F'}, head[:4], "an ELF binary")
	assert.Equal(t, byte(0xb7), head[18], "machine EM_AARCH64 (arm64)")
}

func TestBuildReportsCompileErrors(t *testing.T) {
	err := Build(context.Background(), "./does-not-exist", filepath.Join(t.TempDir(), "x.zip"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "go build ./does-not-exist")
}
