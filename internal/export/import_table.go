package export

import (
	"context"
	"fmt"
	"time"

	"github.com/dynops/dynops/internal/tablesettings"
)

// ImportTableDB is the API an import into a new table uses, settings included.
type ImportTableDB interface {
	ImportDB
	tablesettings.DynamoDB
}

// ImportJob is one new table created from an export's data and given the
// settings it must end with.
type ImportJob struct {
	Source Source
	Table  string
	Schema Schema
	// Want is the settings the new table ends with (tablesettings.Guideline).
	Want tablesettings.Settings
	// Started is called once ImportTable answered (tookOver: an import of
	// this source into this table that an earlier attempt had started); an
	// error from it stops the run (the import goes on in AWS).
	Started func(imp Import, tookOver bool) error
	// Waiting is called while the import runs.
	Waiting func(i Import, waited time.Duration)
	// Applied is called for each setting applied after the import.
	Applied func(c tablesettings.Change)
}

// ImportOutcome is what an import job did, as read back from the service.
type ImportOutcome struct {
	Import Import
	// Imported: the import completed, so the table exists with the data
	// (an error after it is about the settings).
	Imported bool
	// Settings is the plan against the new table; Applied what was applied.
	Settings []tablesettings.Change
	Applied  []tablesettings.Change
	// ReadBack is the table's settings after the run (nil when unreadable).
	ReadBack *tablesettings.Settings
}

// RunImport starts the import (or takes over one already started, see
// StartImport), waits for it and for the table, applies the settings the
// new table lacks (planned against what it has) and reads them back,
// whether or not every setting was applied. The one workflow of `export
// import` and a migration's imported destinations.
func RunImport(ctx context.Context, db ImportTableDB, job ImportJob) (ImportOutcome, error) {
	var out ImportOutcome
	imp, tookOver, err := StartImport(ctx, db, job.Source, job.Table, job.Schema, Token(job.Source.Bucket, job.Source.DataPrefix, job.Table))
	if err != nil {
		return out, err
	}
	out.Import = imp
	if job.Started != nil {
		if err := job.Started(imp, tookOver); err != nil {
			return out, err
		}
	}
	done, err := WaitImport(ctx, db, imp.Arn, job.Waiting)
	out.Import = done
	if err != nil {
		return out, err
	}
	out.Imported = true
	if err := tablesettings.WaitActive(ctx, db, job.Table, nil); err != nil {
		return out, err
	}
	have, err := tablesettings.Capture(ctx, db, job.Table)
	if err != nil {
		return out, err
	}
	out.Settings = tablesettings.Plan(have, job.Want)
	out.Applied = []tablesettings.Change{}
	err = tablesettings.Apply(ctx, db, job.Table, out.Settings, func(c tablesettings.Change) {
		out.Applied = append(out.Applied, c)
		if job.Applied != nil {
			job.Applied(c)
		}
	})
	if back, rerr := tablesettings.Capture(ctx, db, job.Table); rerr == nil {
		out.ReadBack = &back
	} else if err == nil {
		err = fmt.Errorf("reading back the settings of %s: %w", job.Table, rerr)
	}
	return out, err
}
