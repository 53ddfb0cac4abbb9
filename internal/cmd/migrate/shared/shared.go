// Package shared holds what the `dynops migrate` commands have in common: the
// flags naming the source, the routes file and the state file, the clients,
// and the loading of the routes and the state.
package shared

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/guard"
	"github.com/dynops/dynops/internal/migrate"
	"github.com/dynops/dynops/internal/migrate/routes"
	"github.com/dynops/dynops/internal/protect"
)

// Flags name the migration.
type Flags struct {
	Source     string
	RoutesFile string
	StateFile  string
}

// AddFlags registers --source, --routes and --state on cmd.
func AddFlags(cmd *cobra.Command, fl *Flags) {
	f := cmd.Flags()
	f.StringVar(&fl.Source, "source", "", "the single source table (e.g. dev-aiagent-single)")
	f.StringVar(&fl.RoutesFile, "routes", "", "the routes file (YAML; see `dynops migrate --help`)")
	f.StringVar(&fl.StateFile, "state", "", "the migration's state file (default: $XDG_STATE_HOME/dynops/migrate/SOURCE.json)")
}

// AddConfirmFlag registers --confirm on a step that writes the destinations.
func AddConfirmFlag(cmd *cobra.Command, confirm *[]string) {
	factory.AddConfirmFlag(cmd.Flags(), confirm, "the name of a protected destination table (one per table)")
}

// Validate checks the flags (usage errors).
func (fl *Flags) Validate() error {
	if fl.Source == "" || fl.RoutesFile == "" {
		return factory.UsageErrorf("needs --source TABLE and --routes FILE (e.g. --source dev-aiagent-single --routes modules/dynamodb-stack/examples/migration/routes.yaml)")
	}
	return nil
}

// Loaded is a migration's routes and state.
type Loaded struct {
	Input     migrate.Input
	RoutesSum string
	State     *migrate.State // nil when none exists and create is false
}

// Load reads the routes file (errors are usage errors naming the line) and
// the state file: a missing state is created when create is true.
func Load(fl *Flags, create bool) (*Loaded, error) {
	data, err := os.ReadFile(fl.RoutesFile)
	if err != nil {
		return nil, factory.UsageErrorf("--routes: %v", err)
	}
	r, err := routes.Parse(fl.RoutesFile, data)
	if err != nil {
		return nil, factory.UsageErrorf("bad routes file: %w", err)
	}
	l := &Loaded{Input: migrate.Input{Source: fl.Source, Routes: r}, RoutesSum: migrate.RoutesSum(data)}
	path := fl.StateFile
	if path == "" {
		if path, err = migrate.DefaultStatePath(fl.Source); err != nil {
			return nil, err
		}
	}
	st, err := migrate.LoadState(path)
	switch {
	case errors.Is(err, migrate.ErrNoState) && create:
		st = migrate.NewState(path, fl.Source, l.RoutesSum)
	case errors.Is(err, migrate.ErrNoState):
		return l, nil
	case err != nil:
		return nil, err
	default:
		if err := st.Check(fl.Source, l.RoutesSum); err != nil {
			return nil, err
		}
	}
	l.State = st
	return l, nil
}

// RequireState refuses to go on without a state (no backfill yet).
func (l *Loaded) RequireState(fl *Flags) error {
	if l.State != nil {
		return nil
	}
	where := fl.StateFile
	if where == "" {
		where, _ = migrate.DefaultStatePath(fl.Source)
	}
	return fmt.Errorf("no migration of %s found (looked for %s): run `dynops migrate backfill --source %s --routes %s` first, or pass --state FILE",
		fl.Source, where, fl.Source, fl.RoutesFile)
}

// Clients builds the API clients from the global flags.
func Clients(ctx context.Context, f *factory.Factory) (migrate.Clients, error) {
	c, err := f.AWS(ctx)
	if err != nil {
		return migrate.Clients{}, err
	}
	return migrate.Clients{DB: c.DynamoDB(), Streams: c.Streams(), SSM: c.SSM()}, nil
}

// Preflight runs the validation of `migrate plan` (migrate.Preflight)
// before a step's first write, on the loaded routes: every migrate command
// that writes calls it first (TestEveryWritingStepRunsThePreflight), and
// what plan would list as a problem refuses the step with exit 2, nothing
// written.
func Preflight(ctx context.Context, f *factory.Factory, l *Loaded, o migrate.PreflightOptions) error {
	clients, err := f.AWS(ctx)
	if err != nil {
		return err
	}
	o.Input = l.Input
	return Refusal(migrate.Preflight(ctx, clients.DynamoDB(), o))
}

// Refusal makes a step refused before its first write (migrate.RefusedError:
// the preflight, or a catch-up pass whose records the routes cannot take) a
// usage error: exit 2.
func Refusal(err error) error {
	if migrate.IsRefused(err) {
		return factory.UsageErrorf("%w", err)
	}
	return err
}

// Confirm applies the one confirmation rule (guard's Confirm) to a switch of
// source: the source table is decided by the protection rule (its tags read
// from the service; unreadable tags leave it protected), and the pointer
// follows the source as the DR pointer follows its table. When it goes
// ahead, the run's `started` audit record is written first, and when that
// fails nothing goes ahead.
func Confirm(ctx context.Context, f *factory.Factory, source, pointer string, yes bool, confirm []string) (*guard.Confirmed, error) {
	clients, err := f.AWS(ctx)
	if err != nil {
		return nil, err
	}
	decided, err := guard.Decide(f, protect.ReadTable(ctx, clients.DynamoDB(), source))
	if err != nil {
		return nil, err
	}
	g, err := decided.Confirm(yes, confirm)
	if err != nil || g.DryRun() {
		return g, err
	}
	if _, err := g.StartAudit(ctx, audit.Plan{Targets: []string{source, pointer}}); err != nil {
		return nil, err
	}
	return g, nil
}

// ConfirmWrites applies the one protection rule to the tables a step writes
// (the routes' destinations) before its first write: each is decided from
// its tags read from the service (unreadable tags leave it protected), and a
// protected one needs its name typed at a prompt or given with --confirm.
// The backfill and the catch-up are the migration's writing steps, so there
// is no dry run here (`dynops migrate plan` is the preview). The run's
// `started` record is written before anything is; when it cannot be,
// nothing is written.
//
// With creates (the destinations are made by ImportTable), a destination
// that does not exist yet is still a target, decided by its name with no
// tags: a new prod-looking table, or one dynops cannot show is not prod,
// needs its name typed.
func ConfirmWrites(ctx context.Context, f *factory.Factory, l *Loaded, confirm []string, creates bool, exceptions ...string) error {
	clients, err := f.AWS(ctx)
	if err != nil {
		return err
	}
	db := clients.DynamoDB()
	tables := l.Input.Routes.Tables()
	targets := make([]protect.Target, 0, len(tables))
	for _, t := range tables {
		tg := protect.ReadTable(ctx, db, t)
		var missing *types.ResourceNotFoundException
		if errors.As(tg.TagsErr, &missing) && creates {
			targets = append(targets, protect.Target{Kind: protect.Table, Name: t, TagsFrom: "none yet: created by ImportTable"})
			continue
		}
		if errors.As(tg.TagsErr, &missing) {
			// Nothing to protect and nothing can be written there: the
			// step's own checks name every missing destination.
			continue
		}
		targets = append(targets, tg)
	}
	decided, err := guard.Decide(f, targets...)
	if err != nil {
		return err
	}
	// An exception (e.g. --unverified-exports) on a protected destination
	// is the break-glass role's alone.
	for _, flag := range exceptions {
		if err := decided.AllowException(ctx, flag); err != nil {
			return err
		}
	}
	g, err := decided.Confirm(true, confirm)
	if err != nil {
		return err
	}
	_, err = g.StartAudit(ctx, audit.Plan{Targets: append([]string{l.Input.Source}, tables...)})
	return err
}
