// Package shared holds what the `dynops export` verbs print and wait alike.
package shared

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view"
	"github.com/dynops/dynops/internal/export"
	"github.com/dynops/dynops/internal/exportverify"
	"github.com/dynops/dynops/internal/iostreams"
)

// FirstOf is the first non-empty string: a flag, then its fallbacks.
func FirstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// BucketStore reads the export bucket in its region (--bucket-region, else
// the command's region).
func BucketStore(c awsclients.Set, bucket, bucketRegion string) exportverify.S3Store {
	return exportverify.S3Store{Client: c.In(bucketRegion).S3(), Bucket: bucket}
}

// Wait waits for an export, with progress on a terminal.
func Wait(ctx context.Context, f *factory.Factory, db export.DynamoDB, arn string) (export.Export, error) {
	bar := f.IOStreams.StartProgress("export "+shortArn(arn), 0)
	e, err := export.Wait(ctx, db, arn, func(e export.Export, waited time.Duration) {
		bar.Status("%s after %s", e.Status, waited.Round(time.Second))
	})
	bar.Done()
	return e, err
}

// PrintExports shows exports: a table, or the JSON document (a list).
func PrintExports(f *factory.Factory, es []export.Export) error {
	return view.Results(f, func(es []export.Export) error { return exportsTable(f.IOStreams, es) }).Show(es)
}

// exportsTable is the human view of exports: one row each.
func exportsTable(ios *iostreams.IOStreams, es []export.Export) error {
	rows := make([][]string, len(es))
	for i, e := range es {
		rows[i] = []string{e.Arn, e.Type, colour(ios, e.Status), period(e), count(e), e.Failure}
	}
	return ios.Table([]string{"EXPORT", "TYPE", "STATUS", "TIME", "ITEMS", "FAILURE"}, rows)
}

func colour(ios *iostreams.IOStreams, status string) string {
	switch status {
	case "COMPLETED":
		return ios.Colour(iostreams.Green, status)
	case "FAILED":
		return ios.Colour(iostreams.Red, status)
	}
	return ios.Colour(iostreams.Yellow, status)
}

func period(e export.Export) string {
	switch {
	case !e.From.IsZero():
		return e.From.UTC().Format(time.RFC3339) + ".." + e.To.UTC().Format(time.RFC3339)
	case !e.ExportTime.IsZero():
		return e.ExportTime.UTC().Format(time.RFC3339)
	}
	return "-"
}

func count(e export.Export) string {
	if e.Status != "COMPLETED" || e.Items == nil {
		return "-"
	}
	return fmt.Sprint(*e.Items)
}

func shortArn(arn string) string {
	if len(arn) > 60 {
		return "..." + arn[len(arn)-57:]
	}
	return arn
}

// OneExportArn is the Args rule of the verbs that take one export ARN.
func OneExportArn(_ *cobra.Command, args []string) error {
	if len(args) != 1 {
		return factory.UsageErrorf("give one export ARN (from `dynops export list --table T`)")
	}
	return nil
}
