package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/capacity"
	"github.com/dynops/dynops/internal/ddbjson"
	"github.com/dynops/dynops/internal/exportverify/exporttest"
)

// The two sections `make bench` prints after the ratios (-only budget and
// -only path select them):
//
//   - AT A BUDGET: each bulk command run once with a capacity budget, its
//     items/s and the units/s it used (as the responses reported them,
//     ConsumedCapacity TOTAL) beside the budget. The used/budget ratio must
//     stay at or under 1 (the first second's burst and the requests in
//     flight aside: docs/capacity.md).
//   - MIGRATION PATHS: the same source migrated by each backfill path
//     (scan, export, export+import), its items/s and the units and GB it
//     took beside `migrate plan`'s estimate of that path.
//
// Both run on budgetItems items (at most -items): a budget run's time is
// its units over the budget, not the machine's speed.
const budgetItems = 1000

// budgetRow is one line of AT A BUDGET.
type budgetRow struct {
	command, table string
	items          int64
	seconds        float64
	use            capacity.Use
}

// budgetSection runs each bulk command at a budget and prints the table.
func budgetSection(e *env) error {
	n := min(e.items, budgetItems)
	// Budgets low enough to bind on moto, which charges 1 unit a call: a
	// put (repair), a BatchWriteItem of 25 items (backfill), a Scan page.
	const writeBudget, batchWriteBudget, readBudget = 50.0, 5.0, 2.0
	var rows []budgetRow

	// table diff: two tables, read budget on each.
	from, err := e.createTable("budget-restored")
	if err != nil {
		return err
	}
	to, err := e.createTable("budget")
	if err != nil {
		return err
	}
	if err := e.tagRestoredFrom(from, to); err != nil {
		return err
	}
	items := users(n)
	if err := e.batchWrite(from, puts(items)); err != nil {
		return err
	}
	if err := e.batchWrite(to, puts(items[:n/2])); err != nil {
		return err
	}
	keys := filepath.Join(e.tmp, "keys-budget.jsonl")
	out, m, err := e.runDynops("table", "diff", "--source", from, "--target", to, "--keys-out", keys, "--max-read-units", ftoa(readBudget))
	if err != nil {
		return err
	}
	var diff struct {
		ReadBudgets []capacity.Use `json:"read_budgets"`
	}
	if err := json.Unmarshal(out, &diff); err != nil {
		return fmt.Errorf("table diff -o json: %w: %s", err, out)
	}
	for _, u := range diff.ReadBudgets {
		rows = append(rows, budgetRow{command: "table diff", table: u.Table, items: int64(n + n/2), seconds: m.seconds, use: u})
	}

	// pitr repair: conditional puts of the lost half, write budget on the target.
	out, m, err = e.runDynops("pitr", "repair", "--from", from, "--to", to, "--keys", keys,
		"--workers", strconv.Itoa(e.workers), "--max-write-units", ftoa(writeBudget), "--yes")
	if err != nil {
		return err
	}
	var rep struct {
		Result struct {
			Copied        int64           `json:"copied"`
			WriteCapacity *capacity.Usage `json:"write_capacity"`
		} `json:"result"`
		WriteBudget capacity.Budget `json:"write_budget"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		return fmt.Errorf("pitr repair -o json: %w: %s", err, out)
	}
	rows = append(rows, budgetRow{command: "pitr repair", table: to, items: rep.Result.Copied, seconds: m.seconds,
		use: capacity.Use{Budget: rep.WriteBudget, Used: rep.Result.WriteCapacity}})

	// export apply: an incremental export of the half the target lacks
	// (AWS's layout, exporttest) applied onto it at the write budget.
	applied, err := e.applyAtBudget(to, items[n/2:], writeBudget)
	if err != nil {
		return err
	}
	rows = append(rows, applied)

	// migrate backfill (scan path), catch-up and verify, a budget on each table.
	src, routes, dsts, err := e.migrationSource("budget", n, true)
	if err != nil {
		return err
	}
	if err := e.createDestinations(dsts); err != nil {
		return err
	}
	state := filepath.Join(e.tmp, "migrate-budget.json")
	for _, step := range []struct {
		name string
		args []string
	}{
		{"migrate backfill", []string{"migrate", "backfill", "--source", src, "--routes", routes, "--state", state,
			"--max-read-units", ftoa(readBudget), "--max-write-units", ftoa(batchWriteBudget)}},
		{"migrate catch-up", []string{"migrate", "catch-up", "--source", src, "--routes", routes, "--state", state,
			"--max-write-units", ftoa(writeBudget)}},
		{"migrate verify", []string{"migrate", "verify", "--source", src, "--routes", routes, "--state", state,
			"--max-read-units", ftoa(readBudget)}},
	} {
		if step.name == "migrate catch-up" {
			// Changes for the catch-up: every source item written again, changed.
			changed := singleTableUsers(n)
			for _, it := range changed {
				it["note"] = &types.AttributeValueMemberS{Value: "changed after the backfill"}
			}
			if err := e.batchWrite(src, puts(changed)); err != nil {
				return err
			}
		}
		out, m, err := e.runDynops(step.args...)
		if err != nil {
			return err
		}
		var res struct {
			Capacity []capacity.Use `json:"capacity"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			return fmt.Errorf("%s -o json: %w: %s", step.name, err, out)
		}
		for _, u := range res.Capacity {
			rows = append(rows, budgetRow{command: step.name, table: u.Table, items: int64(n), seconds: m.seconds, use: u})
		}
	}

	fmt.Printf("\nAT A BUDGET (%d items; units as the responses reported them, ConsumedCapacity TOTAL)\n", n)
	fmt.Printf("%-18s %-36s %-6s %-12s %-14s %-16s %s\n", "COMMAND", "TABLE", "KIND", "ITEMS/S", "UNITS/S USED", "BUDGET UNITS/S", "USED/BUDGET (BOUND)")
	over := 0
	for _, r := range rows {
		used := "-"
		ratio := "-"
		if r.use.Used != nil {
			used = fmt.Sprintf("%.1f", r.use.Used.PerSecond)
			if b, el := r.use.UnitsPerSecond, r.use.Used.ElapsedSecs; b > 0 && el > 0 {
				// The bucket starts full (one second of the budget) and
				// each of the run's requests in flight is charged after
				// it returns: over el seconds the run may use
				// b*el + b + inFlight units at most.
				q := r.use.Used.PerSecond / b
				allowed := (b*el + b + float64(e.workers)) / (b * el)
				ratio = fmt.Sprintf("%.2f (<= %.2f)", q, allowed)
				if q > allowed {
					ratio += " OVER"
					over++
				}
			}
		}
		fmt.Printf("%-18s %-36s %-6s %-12.1f %-14s %-16.1f %s\n", r.command, r.table, r.use.Kind,
			float64(r.items)/r.seconds, used, r.use.UnitsPerSecond, ratio)
	}
	fmt.Printf("units/s used = units the table's responses reported over the run's time with that budget; the bound in ( ) adds the bucket's first second and %d requests in flight, spread over the run. On moto every call reports 1 unit (a Scan page too), so its read units are far under the items read; on AWS they follow item size.\n", e.workers)
	if over > 0 {
		fmt.Printf("%d budget(s) exceeded\n", over)
	}
	return nil
}

// applyAtBudget writes an incremental export (AWS's layout) whose window
// inserts items, uploads it and runs export apply onto table at budget.
func (e *env) applyAtBudget(table string, items []map[string]types.AttributeValue, budget float64) (budgetRow, error) {
	recs, err := records(items, 4, "user_id")
	if err != nil {
		return budgetRow{}, err
	}
	root := filepath.Join(e.tmp, "apply-export")
	from := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	bucket, err := e.bucket("budget-apply")
	if err != nil {
		return budgetRow{}, err
	}
	// The export names the bucket and ends after its upload, as AWS writes
	// one; the emulator keeps no export records (--unverified-exports).
	spec := exporttest.Spec{Prefix: "inc", ExportID: "01772323200000-" + e.id[len(e.id)-8:], Incremental: true,
		From: from, To: from.Add(time.Hour), Records: recs, Table: table, Bucket: bucket, EndTime: time.Now().Add(time.Hour)}
	if _, err = exporttest.Write(root, spec); err != nil {
		return budgetRow{}, err
	}
	if err := e.upload(bucket, root); err != nil {
		return budgetRow{}, err
	}
	out, m, err := e.runDynops("export", "apply", "--bucket", bucket, "--prefix", "inc", "--table", table,
		"--since", from.Format(time.RFC3339), "--max-write-units", ftoa(budget), "--yes",
		"--source-table", spec.TableARN(), "--unverified-exports", "bench: the emulator keeps no export records")
	if err != nil {
		return budgetRow{}, err
	}
	var rep struct {
		Increments []struct {
			Puts    int64 `json:"puts"`
			Deletes int64 `json:"deletes"`
		} `json:"increments"`
		WriteCapacity *capacity.Usage  `json:"write_capacity"`
		WriteBudget   *capacity.Budget `json:"write_budget"`
	}
	if err := json.Unmarshal(out, &rep); err != nil || rep.WriteBudget == nil {
		return budgetRow{}, fmt.Errorf("export apply -o json: %v: %s", err, out)
	}
	var changes int64
	for _, i := range rep.Increments {
		changes += i.Puts + i.Deletes
	}
	return budgetRow{command: "export apply", table: table, items: changes, seconds: m.seconds,
		use: capacity.Use{Budget: *rep.WriteBudget, Used: rep.WriteCapacity}}, nil
}

// records spreads items over files data files as export records (their
// new images in DynamoDB JSON): a full export's items, or, with the key
// attributes named, an incremental window's inserts.
func records(items []map[string]types.AttributeValue, files int, keys ...string) ([][]exporttest.Record, error) {
	recs := make([][]exporttest.Record, files)
	for i, it := range items {
		b, err := ddbjson.EncodeItem(it)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, err
		}
		r := exporttest.Record{New: m}
		if len(keys) > 0 {
			r.Keys = map[string]any{}
			for _, k := range keys {
				r.Keys[k] = m[k]
			}
		}
		recs[i%files] = append(recs[i%files], r)
	}
	return recs, nil
}

// pathSection migrates one source by each backfill path and prints what
// each took beside the plan's estimate.
func pathSection(e *env) error {
	n := min(e.items, budgetItems)
	src, routes, dsts, err := e.migrationSource("paths", n, true)
	if err != nil {
		return err
	}
	if _, err := e.db.UpdateContinuousBackups(e.ctx, &dynamodb.UpdateContinuousBackupsInput{TableName: &src,
		PointInTimeRecoverySpecification: &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(true)}}); err != nil {
		return fmt.Errorf("PITR on %s (the export path needs it): %w", src, err)
	}
	if err := e.createDestinations(dsts); err != nil {
		return err
	}
	out, _, err := e.runDynops("migrate", "plan", "--source", src, "--routes", routes)
	if err != nil {
		return err
	}
	var plan struct {
		Paths []struct {
			Name       string  `json:"name"`
			ReadUnits  float64 `json:"read_units"`
			WriteUnits float64 `json:"write_units"`
			ExportGB   float64 `json:"export_gb"`
			ImportGB   float64 `json:"import_gb"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(out, &plan); err != nil {
		return fmt.Errorf("migrate plan -o json: %w: %s", err, out)
	}
	bucket, err := e.bucket("paths")
	if err != nil {
		return err
	}
	type took struct {
		items                  int64
		seconds                float64
		reads, writes          float64
		exportGB, importGB     float64
		hasExport, hasImport   bool
		exportNote, importNote string
	}
	// On AWS each export path starts its own export (--export-to); moto's
	// exports write no manifests, so on the emulator both read a full
	// export of the source written in AWS's layout (--from-export).
	exportFlags := func(prefix string) ([]string, error) {
		if e.endpoint == "" {
			return []string{"--export-to", "s3://" + bucket + "/" + prefix}, nil
		}
		dir, err := e.sourceExport(src, prefix)
		return []string{"--from-export", dir, "--unverified-exports", "bench: a local copy of an export the emulator did not run"}, err
	}
	results := map[string]took{}
	for _, p := range []struct {
		name   string
		prefix string
		extra  []string
	}{
		{"scan", "", nil},
		{"export", "export", nil},
		{"export+import", "export-import", []string{"--import-to", "s3://" + bucket + "/import"}},
	} {
		if p.prefix != "" {
			flags, err := exportFlags(p.prefix)
			if err != nil {
				return err
			}
			p.extra = append(flags, p.extra...)
		}
		r := routes
		if p.name != "scan" {
			// Each path writes its own destinations: new names, made
			// beforehand unless the path creates them by import.
			var names []string
			if r, names, err = e.routesInto(p.name, routes, dsts); err != nil {
				return err
			}
			if p.name == "export" {
				if err := e.createDestinations(names); err != nil {
					return err
				}
			} else {
				e.dropAtEnd(names)
			}
		}
		// A budget far above the run's needs: the units are counted, the run is not held.
		args := append([]string{"migrate", "backfill", "--source", src, "--routes", r, "--state", filepath.Join(e.tmp, "migrate-"+p.name+".json"),
			"--max-read-units", "1000000", "--max-write-units", "1000000"}, p.extra...)
		out, m, err := e.runDynops(args...)
		if err != nil {
			return err
		}
		var res struct {
			WrittenTotal int64 `json:"written_total"`
			Export       *struct {
				Arn    string `json:"export_arn"`
				Import *struct {
					Tables map[string]struct {
						ImportArn string `json:"import_arn"`
						Imported  int64  `json:"imported_items"`
					} `json:"tables"`
				} `json:"import"`
			} `json:"export"`
			Capacity []capacity.Use `json:"capacity"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			return fmt.Errorf("migrate backfill (%s) -o json: %w: %s", p.name, err, out)
		}
		t := took{items: res.WrittenTotal, seconds: m.seconds}
		for _, u := range res.Capacity {
			if u.Used == nil {
				continue
			}
			if u.Kind == capacity.Read {
				t.reads += u.Used.Used
			} else {
				t.writes += u.Used.Used
			}
		}
		if res.Export != nil {
			t.hasExport = true
			t.exportGB, t.exportNote = e.exportGB(res.Export.Arn)
			if res.Export.Import != nil {
				t.hasImport = true
				imported := int64(0)
				for _, tbl := range res.Export.Import.Tables {
					imported += tbl.Imported
					gb, note := e.importGB(tbl.ImportArn)
					t.importGB += gb
					t.importNote = note
				}
				t.items = max(t.items, imported) // the items the imports wrote
			}
		}
		results[p.name] = t
	}
	fmt.Printf("\nMIGRATION PATHS (%d items; each path's use beside migrate plan's estimate of it)\n", n)
	fmt.Printf("%-14s %-10s %-20s %-20s %-24s %s\n", "PATH", "ITEMS/S", "READ UNITS (est)", "WRITE UNITS (est)", "EXPORT GB (est)", "IMPORT GB (est)")
	for _, p := range plan.Paths {
		t, ok := results[p.Name]
		if !ok {
			continue
		}
		gb := func(v float64, note string, est float64) string {
			if note != "" {
				return fmt.Sprintf("%s (%.6f)", note, est)
			}
			return fmt.Sprintf("%.6f (%.6f)", v, est)
		}
		exp, imp := "-", "-"
		if t.hasExport {
			exp = gb(t.exportGB, t.exportNote, p.ExportGB)
		}
		if t.hasImport {
			imp = gb(t.importGB, t.importNote, p.ImportGB)
		}
		fmt.Printf("%-14s %-10.1f %-20s %-20s %-24s %s\n", p.Name, float64(t.items)/t.seconds,
			fmt.Sprintf("%.0f (%.0f)", t.reads, p.ReadUnits), fmt.Sprintf("%.0f (%.0f)", t.writes, p.WriteUnits), exp, imp)
	}
	fmt.Println("GB: what DescribeExport (BilledSizeBytes) and DescribeImport (ProcessedSizeBytes) report; \"?\" where the service reported none (on moto the export is one written in AWS's layout, not made by the service). Units on moto: 1 per call (a Scan page, a BatchWriteItem of 25 items); on AWS they follow item size.")
	return nil
}

// migrationSource creates a single table (PK/SK, stream on) of n users and
// a routes file sending them to one destination; it returns the source,
// the routes file and the destination names (not created).
func (e *env) migrationSource(suffix string, n int, stream bool) (src, routes string, dsts []string, err error) {
	if src, err = e.createPKSK(suffix+"-single", stream); err != nil {
		return "", "", nil, err
	}
	if err := e.batchWrite(src, puts(singleTableUsers(n))); err != nil {
		return "", "", nil, err
	}
	dst := "dev-" + e.id + "-" + suffix + "-users"
	routes = filepath.Join(e.tmp, "routes-"+suffix+".yaml")
	return src, routes, []string{dst}, writeRoutes(routes, dst)
}

func writeRoutes(file, dst string) error {
	return os.WriteFile(file, []byte(fmt.Sprintf(`version: 1
source_key: [PK, SK]
routes:
  - name: users
    table: %s
    match: { PK: "TENANT#*", SK: "USER#*" }
    rename: { GSI1PK: user_list_key, GSI1SK: user_list_sort }
`, dst)), 0o644)
}

// routesInto writes a copy of the routes with each destination renamed
// for one path.
func (e *env) routesInto(path, routes string, dsts []string) (string, []string, error) {
	name := dsts[0] + "-" + map[string]string{"export": "exp", "export+import": "imp"}[path]
	file := routes + "." + map[string]string{"export": "exp", "export+import": "imp"}[path]
	return file, []string{name}, writeRoutes(file, name)
}

// createDestinations creates each destination (PK/SK, on demand) and
// deletes it when the bench ends.
func (e *env) createDestinations(names []string) error {
	for _, n := range names {
		if _, err := e.createPKSKNamed(n, false); err != nil {
			return err
		}
	}
	return nil
}

// dropAtEnd deletes tables the run creates (by import) when the bench ends.
func (e *env) dropAtEnd(names []string) {
	e.cleanup = append(e.cleanup, func() {
		for _, n := range names {
			_, _ = e.db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(n)})
		}
	})
}

// bucket creates an empty bucket, emptied and deleted when the bench ends.
func (e *env) bucket(suffix string) (string, error) {
	name := "dev-" + e.id + "-" + suffix
	s3c := awsclients.New(e.cfg).S3()
	in := &s3.CreateBucketInput{Bucket: &name}
	if e.region != "us-east-1" {
		in.CreateBucketConfiguration = &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraint(e.region)}
	}
	if _, err := s3c.CreateBucket(e.ctx, in); err != nil {
		return "", fmt.Errorf("creating bucket %s: %w", name, err)
	}
	e.cleanup = append(e.cleanup, func() {
		ctx := context.Background()
		p := s3.NewListObjectsV2Paginator(s3c, &s3.ListObjectsV2Input{Bucket: &name})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				break
			}
			for _, o := range page.Contents {
				_, _ = s3c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &name, Key: o.Key})
			}
		}
		_, _ = s3c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: &name})
	})
	return name, nil
}

// sourceExport writes what src holds now as a full export in AWS's layout
// (exporttest) under a local folder and returns it.
func (e *env) sourceExport(src, prefix string) (string, error) {
	items, err := e.rawScanItems(4, src)
	if err != nil {
		return "", err
	}
	recs, err := records(items, 4)
	if err != nil {
		return "", err
	}
	root := filepath.Join(e.tmp, "source-export-"+prefix)
	now := time.Now()
	id := fmt.Sprintf("%014d-%s", now.UnixMilli(), e.id[len(e.id)-8:])
	_, err = exporttest.Write(root, exporttest.Spec{Prefix: prefix, ExportID: id, ExportTime: now, Records: recs, Table: src})
	return root, err
}

// exportGB is the export's billed size as DynamoDB reports it.
func (e *env) exportGB(arn string) (float64, string) {
	if arn == "" {
		return 0, "?"
	}
	out, err := e.db.DescribeExport(e.ctx, &dynamodb.DescribeExportInput{ExportArn: &arn})
	if err != nil || out.ExportDescription == nil || out.ExportDescription.BilledSizeBytes == nil {
		return 0, "?"
	}
	return float64(*out.ExportDescription.BilledSizeBytes) / 1e9, ""
}

// importGB is the data an import processed as DynamoDB reports it.
func (e *env) importGB(arn string) (float64, string) {
	if arn == "" {
		return 0, "?"
	}
	out, err := e.db.DescribeImport(e.ctx, &dynamodb.DescribeImportInput{ImportArn: &arn})
	if err != nil || out.ImportTableDescription == nil || out.ImportTableDescription.ProcessedSizeBytes == nil {
		return 0, "?"
	}
	return float64(*out.ImportTableDescription.ProcessedSizeBytes) / 1e9, ""
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// timed runs one section and says on stderr how long it took.
func timed(name string, f func(*env) error, e *env) error {
	start := time.Now()
	err := f(e)
	fmt.Fprintf(os.Stderr, "bench: %s took %.1fs\n", name, time.Since(start).Seconds())
	return err
}
