package migrate

import (
	"context"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"golang.org/x/sync/errgroup"

	"github.com/dynops/dynops/internal/export"
	"github.com/dynops/dynops/internal/exportverify"
)

// ExportOptions make a backfill read a full export of the source instead of
// scanning it: the read side of the transfer is DynamoDB's own export (no
// read capacity consumed on the source, no consistent Scan of production),
// and dynops streams the export's data files through the routes into the
// destinations, with a checkpoint per data file.
//
// The catch-up then starts from the export's time: the stream must still
// hold records that old (24 hours on AWS), which is checked before anything
// is written.
type ExportOptions struct {
	// URI of a finished full export of the source:
	// s3://BUCKET/PREFIX/AWSDynamoDB/EXPORT_ID, or a local copy of it.
	URI string
	// To starts a new point-in-time export of the source into this bucket
	// and prefix (when URI is empty), and reads it once it has finished.
	To *export.Target
	// Open opens an export's URI (with the run's S3 client) once whoever
	// the command believes has vouched for it (exportverify.Vouch): every
	// read of the export's data goes through it.
	Open func(ctx context.Context, uri string) (*exportverify.Export, error)
	// Exports starts and describes exports (with To, or to resume a wait).
	Exports export.DynamoDB
	// Parallel is how many data files are read at once (default 4).
	Parallel int
	// Waiting, when set, is called while the export runs.
	Waiting func(e export.Export, waited time.Duration)
	// Import, when set, creates the destinations with ImportTable from
	// per-destination files instead of writing into existing tables
	// (backfill_import.go).
	Import *ImportOptions
}

// Requested reports whether the backfill reads an export.
func (e *ExportOptions) Requested() bool { return e != nil && (e.URI != "" || e.To != nil) }

// ExportState is what an export backfill remembers: the export, its time
// (where the catch-up starts) and each data file once it is fully written.
type ExportState struct {
	// URI is the finished export being read ("" while a started one runs).
	URI string `json:"uri,omitempty"`
	// Arn of the export, when known (started by dynops, or in the summary).
	Arn string `json:"export_arn,omitempty"`
	// Time is the export's point in time.
	Time time.Time `json:"export_time,omitzero"`
	// Files holds each data file (by key) once all its items are written.
	Files map[string]SegmentState `json:"files,omitempty"`
	// Import is set when the destinations are created by ImportTable.
	Import *ImportState `json:"import,omitempty"`
}

// streamTooShort refuses an export older than the stream's records.
func streamTooShort(source string, exportTime, now time.Time, o CatchUpOptions) error {
	if now.Sub(exportTime) <= o.Retention-o.Margin {
		return nil
	}
	return &InputError{[]string{fmt.Sprintf("the export of %s is as of %s, but its stream keeps records for %s (the oldest it can still hold is from %s): the catch-up could not replay the changes made since the export. Take a new export (--export-to s3://BUCKET/PREFIX) or use a scan backfill",
		source, exportTime.UTC().Format(time.RFC3339), o.Retention, now.Add(-o.Retention).UTC().Format(time.RFC3339))}}
}

// openGivenExport reads the summary and file list of the export at uri and
// checks that it is a full export of the source recent enough for the
// catch-up and that the stream existed at its time.
func openGivenExport(ctx context.Context, c Clients, o BackfillOptions, src *SourceInfo, uri string) (*exportverify.Export, exportverify.Summary, []exportverify.FileEntry, time.Time, error) {
	ex, err := o.Export.Open(ctx, uri)
	if err != nil {
		return nil, exportverify.Summary{}, nil, time.Time{}, &InputError{[]string{fmt.Sprintf("--from-export: %v", err)}}
	}
	sum, entries, err := ex.Files(ctx)
	if err != nil {
		return nil, sum, nil, time.Time{}, fmt.Errorf("reading the export %s: %w", uri, err)
	}
	if sum.TableArn != "" && !strings.HasSuffix(sum.TableArn, ":table/"+o.Source) {
		return nil, sum, nil, time.Time{}, &InputError{[]string{fmt.Sprintf("the export %s is of %s, not of the source %s: give an export of the source", uri, sum.TableArn, o.Source)}}
	}
	at, err := time.Parse(time.RFC3339Nano, sum.ExportTime)
	if err != nil {
		return nil, sum, nil, time.Time{}, &InputError{[]string{fmt.Sprintf("the export %s has no readable exportTime (%q) in its manifest-summary.json: the catch-up could not know where to start", uri, sum.ExportTime)}}
	}
	return ex, sum, entries, at, nil
}

// checkStreamCovers refuses an export taken before the stream existed: the
// changes between the export and the stream's start are in neither.
func checkStreamCovers(ctx context.Context, s Streams, src *SourceInfo, at time.Time) error {
	d, err := s.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: &src.StreamARN})
	if err != nil {
		return fmt.Errorf("describing stream %s: %w", src.StreamARN, err)
	}
	if created := aws.ToTime(d.StreamDescription.CreationRequestDateTime); !created.IsZero() && created.After(at) {
		return &InputError{[]string{fmt.Sprintf("the stream of %s was enabled at %s, after the export's time %s: changes made between them are in neither. Take a new export (--export-to s3://BUCKET/PREFIX)",
			src.Table, created.UTC().Format(time.RFC3339), at.UTC().Format(time.RFC3339))}}
	}
	return nil
}

// startExport begins an export backfill: for a given export, its checks and
// the stream position at the export's time; for --export-to, the stream
// position first (now), then the export request (idempotent: the same
// state asks with the same ClientToken), both recorded in the state.
func startExport(ctx context.Context, c Clients, o BackfillOptions, src *SourceInfo, st *State) error {
	retention := CatchUpOptions{}
	retention.defaults()
	if o.Export.URI != "" {
		_, sum, _, at, err := openGivenExport(ctx, c, o, src, o.Export.URI)
		if err != nil {
			return err
		}
		if err := streamTooShort(o.Source, at, o.Now(), retention); err != nil {
			return err
		}
		if err := checkStreamCovers(ctx, c.Streams, src, at); err != nil {
			return err
		}
		pos, err := recordPosition(ctx, c.Streams, src.StreamARN, at)
		if err != nil {
			return err
		}
		return st.Update(func(s *State) {
			s.Position = pos
			s.CatchUp, s.Cutover = nil, nil
			s.Backfill = &BackfillState{Started: o.Now().UTC(), Total: sum.ItemCount, AllowUnmatched: o.AllowUnmatched,
				Export: &ExportState{URI: o.Export.URI, Arn: sum.ExportArn, Time: at.UTC(), Files: map[string]SegmentState{}}}
		})
	}
	pos, err := recordPosition(ctx, c.Streams, src.StreamARN, o.Now())
	if err != nil {
		return err
	}
	err = st.Update(func(s *State) {
		s.Position = pos
		s.CatchUp, s.Cutover = nil, nil
		s.Backfill = &BackfillState{Started: o.Now().UTC(), Total: src.ItemCount, AllowUnmatched: o.AllowUnmatched,
			Export: &ExportState{Files: map[string]SegmentState{}}}
	})
	if err != nil {
		return err
	}
	e, err := export.StartFull(ctx, o.Export.Exports, src.ARN, time.Time{}, *o.Export.To, export.Token("migrate", src.ARN, st.Path(), pos.Time.Format(time.RFC3339Nano)))
	if err != nil {
		return err
	}
	return st.Update(func(s *State) { s.Backfill.Export.Arn = e.Arn })
}

// finishExport waits for an export dynops started (again, after a kill) and
// records where its files are.
func finishExport(ctx context.Context, o BackfillOptions, st *State) error {
	if st.Backfill.Export.URI != "" {
		return nil
	}
	arn := st.Backfill.Export.Arn
	if arn == "" {
		return &InputError{[]string{fmt.Sprintf("the backfill of %s was stopped before its export was requested (state %s): start over with --restart", st.Source, st.Path())}}
	}
	e, err := export.Wait(ctx, o.Export.Exports, arn, o.Export.Waiting)
	if err != nil {
		return err
	}
	if e.Manifest == "" || e.Bucket == "" {
		return fmt.Errorf("export %s finished without a manifest location (bucket %q, manifest %q)", arn, e.Bucket, e.Manifest)
	}
	uri := "s3://" + e.Bucket + "/" + path.Dir(e.Manifest)
	return st.Update(func(s *State) {
		s.Backfill.Export.URI = uri
		if !e.ExportTime.IsZero() {
			s.Backfill.Export.Time = e.ExportTime.UTC()
		}
		if e.Items != nil {
			s.Backfill.Total = *e.Items
		}
	})
}

// checkExportResume refuses to resume a backfill with the other kind of
// read, or with another export than the one it started with.
func checkExportResume(o BackfillOptions, st *State) error {
	was := st.Backfill.Export
	switch {
	case was == nil && o.Export.Requested():
		return &InputError{[]string{fmt.Sprintf("the backfill of %s in %s scans the source: resume it without --from-export/--export-to, or start over with --restart", st.Source, st.Path())}}
	case was != nil && o.Export != nil && o.Export.URI != "" && was.URI != "" && o.Export.URI != was.URI:
		return &InputError{[]string{fmt.Sprintf("the backfill of %s in %s reads the export %s, not %s: resume it with that export, or start over with --restart", st.Source, st.Path(), was.URI, o.Export.URI)}}
	case was != nil && was.Import != nil && (o.Export == nil || o.Export.Import == nil):
		return &InputError{[]string{fmt.Sprintf("the backfill of %s in %s creates its destinations by import (s3://%s/%s): resume it with the same --import-to", st.Source, st.Path(), was.Import.Bucket, was.Import.Prefix)}}
	case was != nil && was.Import == nil && o.Export != nil && o.Export.Import != nil:
		return &InputError{[]string{fmt.Sprintf("the backfill of %s in %s writes into existing destinations: resume it without --import-to, or start over with --restart", st.Source, st.Path())}}
	case was != nil && (o.Export == nil || o.Export.Open == nil):
		return &InputError{[]string{fmt.Sprintf("the backfill of %s in %s reads an export (%s): resume it with --from-export", st.Source, st.Path(), was.URI)}}
	}
	return nil
}

// exportChunk is how many items of a data file are routed and handed to the
// writers at once (a page of a Scan backfill).
const exportChunk = 1000

// exportFiles writes every data file not yet done, Parallel at a time; a
// file's counts land in the state only once all its items are written, so
// a killed run reads a half-written file again (its puts are idempotent).
func (b *backfiller) exportFiles(ctx context.Context) error {
	ex, err := b.o.Export.Open(ctx, b.st.Backfill.Export.URI)
	if err != nil {
		return fmt.Errorf("opening the export %s: %w", b.st.Backfill.Export.URI, err)
	}
	sum, entries, err := ex.Files(ctx)
	if err != nil {
		return fmt.Errorf("reading the export %s: %w", b.st.Backfill.Export.URI, err)
	}
	if err := b.st.Update(func(s *State) { s.Backfill.Total = sum.ItemCount }); err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(b.o.Export.Parallel, 1))
	for _, en := range entries {
		b.st.mu.Lock()
		done := b.st.Backfill.Export.Files[en.DataFileS3Key].Done
		b.st.mu.Unlock()
		if done {
			continue
		}
		if b.st.Backfill.Export.Import != nil {
			g.Go(func() error { return b.stageFile(gctx, ex, sum, en) })
			continue
		}
		g.Go(func() error { return b.exportFile(gctx, ex, sum, en) })
	}
	return g.Wait()
}

func (b *backfiller) exportFile(ctx context.Context, ex *exportverify.Export, sum exportverify.Summary, en exportverify.FileEntry) error {
	fs := SegmentState{Written: map[string]int64{}}
	var counted int64 // items of this file in b.inFlightRead
	var inflight *pageWrites
	var prev *page
	wait := func() error {
		if inflight == nil {
			return nil
		}
		err := inflight.wait()
		if err == nil {
			fs.add(prev)
		}
		inflight = nil
		return err
	}
	var chunk []map[string]types.AttributeValue
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		p, err := b.route(&dynamodb.ScanOutput{Items: chunk})
		if err != nil {
			return err
		}
		chunk = nil
		if err := wait(); err != nil {
			return err
		}
		inflight, prev = b.submit(ctx, p), p
		counted += p.read
		b.inFlightRead.Add(p.read)
		b.progress()
		return nil
	}
	err := ex.EachItemOfFile(ctx, sum, en, func(item map[string]types.AttributeValue) error {
		chunk = append(chunk, item)
		if len(chunk) < exportChunk {
			return nil
		}
		return flush()
	})
	if err == nil {
		err = flush()
	}
	if werr := wait(); err == nil {
		err = werr
	}
	if err != nil {
		b.inFlightRead.Add(-counted)
		return err
	}
	fs.Done = true
	err = b.st.Update(func(s *State) {
		s.Backfill.Export.Files[en.DataFileS3Key] = fs
		s.Backfill.ActiveSeconds = b.activeAtStart + b.o.Now().Sub(b.runStart).Seconds()
	})
	b.inFlightRead.Add(-counted) // now counted in the state
	b.progress()
	return err
}

// add counts a written page into a file's state.
func (ss *SegmentState) add(p *page) {
	ss.Read += p.read
	for t, reqs := range p.batches {
		ss.Written[t] += int64(len(reqs))
	}
	ss.Unmatched += int64(len(p.unmatched))
	ss.Samples = appendSample(ss.Samples, p.unmatched...)
	ss.Untransformable += int64(len(p.untransformable))
	ss.UntransformableSamples = appendSample(ss.UntransformableSamples, p.untransformable...)
}
