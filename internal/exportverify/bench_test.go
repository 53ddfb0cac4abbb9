package exportverify_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/dynops/dynops/internal/exportverify"
	"github.com/dynops/dynops/internal/exportverify/exporttest"
)

// BenchmarkVerifyVsGzip reads the same export (8 files of 5,000 items of
// about 300 bytes, gzip DynamoDB JSON) with Verify on one worker and with
// `gzip -t`, and reports both in MB/s of compressed input plus their ratio.
// Verify does more than gzip -t (MD5, JSON decoding, attribute types), so
// the ratio says what the extra checks cost.
func BenchmarkVerifyVsGzip(b *testing.B) {
	gzipBin, err := exec.LookPath("gzip")
	if err != nil {
		b.Skip("gzip not on PATH: nothing to compare with")
	}
	root := b.TempDir()
	w, err := exporttest.Write(root, exporttest.Spec{Prefix: prefix, ExportID: "01-bench",
		FileItems: []int{5000, 5000, 5000, 5000, 5000, 5000, 5000, 5000}, PadBytes: 150})
	if err != nil {
		b.Fatal(err)
	}
	files := make([]string, len(w.DataKeys))
	for i, k := range w.DataKeys {
		files[i] = filepath.Join(root, filepath.FromSlash(k))
	}
	mb := float64(w.Bytes) / 1e6
	b.ResetTimer()
	var verifyTime, gzipTime time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		rep, err := exportverify.Verify(context.Background(), exportverify.DirStore{Root: root}, prefix, exportverify.Options{Parallel: 1})
		if err != nil || !rep.OK || rep.Items != w.Items {
			b.Fatalf("verify: %v ok=%v items=%d", err, rep.OK, rep.Items)
		}
		verifyTime += time.Since(start)

		start = time.Now()
		if out, err := exec.Command(gzipBin, append([]string{"-t"}, files...)...).CombinedOutput(); err != nil {
			b.Fatalf("gzip -t: %v %s", err, out)
		}
		gzipTime += time.Since(start)
	}
	verifyMBs := mb * float64(b.N) / verifyTime.Seconds()
	gzipMBs := mb * float64(b.N) / gzipTime.Seconds()
	b.ReportMetric(mb, "MB/export")
	b.ReportMetric(verifyMBs, "verify-MB/s")
	b.ReportMetric(gzipMBs, "gzip-t-MB/s")
	b.ReportMetric(verifyMBs/gzipMBs, "verify/gzip-ratio")
}
