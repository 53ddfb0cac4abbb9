package item

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/guard"
	"github.com/dynops/dynops/internal/cmd/view"
	"github.com/dynops/dynops/internal/item"
	"github.com/dynops/dynops/internal/protect"
	"github.com/dynops/dynops/internal/repair"
	"github.com/dynops/dynops/internal/throttle"
)

// writeFlags are the flags every writing item command takes.
type writeFlags struct {
	table, key, reason, ifHash       string
	version                          string // --version-attribute (put, delete)
	condition, condNames, condValues string
	confirm                          []string
	yes                              bool
}

func (w *writeFlags) add(fl *pflag.FlagSet, withKey bool) {
	fl.StringVar(&w.table, "table", "", "table name")
	if withKey {
		fl.StringVar(&w.key, "key", "", "the item's key: a JSON object (DynamoDB JSON or plain JSON)")
	}
	fl.StringVar(&w.reason, "reason", "", "why (lands in the audit; required on a protected table)")
	fl.StringVar(&w.ifHash, "if-hash", "", "write only if the item's image still has this hash (from item get or the dry run); 'absent' for no item")
	fl.StringVar(&w.condition, "condition", "", "a ConditionExpression to use instead of the image read before (placeholders in --condition-names/--condition-values)")
	fl.StringVar(&w.condNames, "condition-names", "", `the placeholders of --condition, e.g. '{"#s": "status"}'`)
	fl.StringVar(&w.condValues, "condition-values", "", `the values of --condition, e.g. '{":s": "open"}' (DynamoDB JSON or plain JSON)`)
	fl.BoolVar(&w.yes, "yes", false, "do it (default: a dry run that prints the before and after images)")
	factory.AddConfirmFlag(fl, &w.confirm, "the table name of a write to a protected table")
}

// addVersion registers --version-attribute (put and delete: the writes that
// replace a whole item).
func (w *writeFlags) addVersion(fl *pflag.FlagSet) {
	fl.StringVar(&w.version, "version-attribute", "", "NAME of the table's version attribute (a number the application's data-access layer increments): the write is conditional on it and increments it")
}

// lock is the condition model of the write over the item read (repair.Lock).
func (w *writeFlags) lock(t *table) repair.Lock {
	return repair.Lock{KeyNames: t.schema.Names(), Version: w.version}
}

// cond is the condition a write carries.
type cond struct {
	expr   string
	names  map[string]string
	values map[string]types.AttributeValue
	// desc says what it checks, for the output.
	desc string
}

func (w *writeFlags) explicit() (*cond, error) {
	if w.ifHash != "" {
		if err := item.CheckHash(w.ifHash); err != nil {
			return nil, factory.UsageErrorf("--if-hash: %w; nothing was read or written", err)
		}
	}
	if w.condition != "" && w.version != "" {
		return nil, factory.UsageErrorf("--condition replaces the condition on the item read; --version-attribute %s makes it the version: give one or the other", w.version)
	}
	if w.condition == "" {
		if w.condNames != "" || w.condValues != "" {
			return nil, factory.UsageErrorf("--condition-names and --condition-values go with --condition")
		}
		return nil, nil
	}
	c := &cond{expr: w.condition, desc: "--condition " + w.condition}
	if w.condNames != "" {
		if err := json.Unmarshal([]byte(w.condNames), &c.names); err != nil || len(c.names) == 0 {
			return nil, factory.UsageErrorf(`--condition-names %q: give a JSON object of placeholders, e.g. '{"#s": "status"}'`, w.condNames)
		}
	}
	if w.condValues != "" {
		p, err := item.Parse("--condition-values", w.condValues)
		if err != nil {
			return nil, factory.UsageErrorf("%w", err)
		}
		c.values = p.Attrs
	}
	return c, nil
}

// change is one planned write.
type change struct {
	op     string // put, update, delete
	key    map[string]types.AttributeValue
	before map[string]types.AttributeValue
	after  map[string]types.AttributeValue // expected; nil for a delete
	cond   *cond
	// do writes; it returns the item the write replaced (ReturnValues
	// ALL_OLD) when it replaces a whole item, nil otherwise.
	do func(ctx context.Context, c *cond) (map[string]types.AttributeValue, error)
}

type writeResult struct {
	Table      string          `json:"table"`
	Op         string          `json:"operation"`
	DryRun     bool            `json:"dry_run"`
	ReadAs     []string        `json:"read_as"`
	Condition  string          `json:"condition"`
	Before     json.RawMessage `json:"before"`
	BeforeHash string          `json:"before_hash"`
	After      json.RawMessage `json:"after"`
	AfterHash  string          `json:"after_hash"`
	Written    bool            `json:"written"`
	Note       string          `json:"note,omitempty"`
	// ChangedSinceRead are the attributes the write replaced that another
	// writer changed between the read and the write: a conflict (exit 1).
	ChangedSinceRead []string `json:"changed_since_read,omitempty"`
}

// run is the one flow of put, update and delete: protection and --reason,
// confirmation, the image read before, --if-hash, the condition, the dry
// run or the audited conditional write and the image read back.
func run(ctx context.Context, f *factory.Factory, w *writeFlags, t *table, readAs []string, key map[string]types.AttributeValue,
	plan func(before map[string]types.AttributeValue) (*change, error)) error {
	p, err := prepareWrite(ctx, f, w, t, readAs, key, plan)
	if err != nil || p.ch.do == nil { // an error, or nothing to do (a delete of an absent item)
		return err
	}
	res, ch, c := p.res, p.ch, p.ch.cond
	if w.yes && p.decided.Decisions()[0].Protected && !slices.Contains(w.confirm, t.name) {
		// The name is typed at a prompt: show what it confirms first.
		fmt.Fprintf(f.IOStreams.ErrOut, "With the name typed, dynops will %s in %s, if %s:\n", res.Op, res.Table, res.Condition)
		printImages(f.IOStreams.ErrOut, res)
	}
	g, err := p.decided.Confirm(w.yes, w.confirm)
	if err != nil {
		return err
	}
	res.DryRun = g.DryRun()
	detail := map[string]any{"key": keyJSON(key), "reason": w.reason, "before_hash": res.BeforeHash, "after_hash": res.AfterHash,
		"old_image": res.Before, "new_image": res.After, "condition": c.desc}
	if g.DryRun() {
		f.Audit.Act(audit.ItemAction(ch.op, audit.ItemPlanned), t.name, detail)
		if err := showWrite(f, res); err != nil {
			return err
		}
		g.PrintDryRun(ch.op)
		return nil
	}
	if _, err := g.StartAudit(ctx, audit.Plan{Targets: []string{t.name}, Counts: map[string]int64{"items_to_" + ch.op: 1}}); err != nil {
		return err
	}
	old, err := ch.do(ctx, c)
	if err != nil {
		if isConditionFailed(err) {
			f.Audit.Act(audit.ItemAction(ch.op, audit.ItemRefused), t.name, detail)
			return fmt.Errorf("the item in %s changed since it was read (%s no longer holds): nothing written. Read it again (dynops item get) and decide: %w", t.name, c.desc, err)
		}
		return fmt.Errorf("%s on %s: %w", ch.op, t.name, throttle.WithKey(err, string(keyJSON(key))))
	}
	res.Written = true
	if old != nil {
		res.ChangedSinceRead = repair.ChangedSinceRead(p.before, old)
		detail["changed_since_read"] = res.ChangedSinceRead
	}
	after, err := t.read(ctx, key)
	if err != nil {
		f.Audit.Act(audit.ItemAction(ch.op, audit.ItemWritten), t.name, detail)
		return fmt.Errorf("written, but reading the item back failed: %w", err)
	}
	res.After, res.AfterHash = image(after), item.Hash(after)
	detail["after_hash"], detail["new_image"] = res.AfterHash, res.After
	f.Audit.Act(audit.ItemAction(ch.op, audit.ItemWritten), t.name, detail)
	if err := showWrite(f, res); err != nil {
		return err
	}
	if len(res.ChangedSinceRead) > 0 {
		return factory.ExitError{Code: 1}
	}
	return nil
}

// pending is a write prepared: the protection decision, the item read
// before, the change with its condition and the result so far.
type pending struct {
	decided *guard.Decided
	before  map[string]types.AttributeValue
	ch      *change
	res     writeResult
}

// prepareWrite decides the protection, reads the item, checks --if-hash and
// plans the change with its condition (--condition, else the item read:
// repair.Lock). A change with nothing to do is shown here.
func prepareWrite(ctx context.Context, f *factory.Factory, w *writeFlags, t *table, readAs []string, key map[string]types.AttributeValue,
	plan func(before map[string]types.AttributeValue) (*change, error)) (*pending, error) {
	explicit, err := w.explicit()
	if err != nil {
		return nil, err
	}
	decided, err := guard.Decide(f, protect.ReadTable(ctx, t.db, t.name))
	if err != nil {
		return nil, err
	}
	if err := decided.CheckTyped(w.confirm); err != nil {
		return nil, err
	}
	if err := w.protectedNeeds(f, decided.Decisions()[0]); err != nil {
		return nil, err
	}
	before, err := t.read(ctx, key)
	if err != nil {
		return nil, err
	}
	res := writeResult{Table: t.name, DryRun: !w.yes, ReadAs: readAs, Before: image(before), BeforeHash: item.Hash(before)}
	if w.ifHash != "" && w.ifHash != res.BeforeHash {
		return nil, fmt.Errorf("the item in %s changed: its image is now %s, --if-hash wants %s; nothing written. Read it again (dynops item get) and decide", t.name, res.BeforeHash, w.ifHash)
	}
	ch, err := plan(before)
	if errors.Is(err, repair.ErrVersion) {
		return nil, factory.UsageErrorf("%w; nothing was written", err)
	}
	if err != nil {
		return nil, err
	}
	res.Op = ch.op
	p := &pending{decided: decided, before: before, ch: ch, res: res}
	if ch.do == nil { // nothing to do (a delete of an absent item)
		p.res.Note = "no item at that key: nothing to " + ch.op
		p.res.After, p.res.AfterHash = image(nil), item.Hash(nil)
		return p, showWrite(f, p.res)
	}
	ch.cond = explicit
	if ch.cond == nil {
		expr, names, values, err := w.lock(t).Condition(before)
		if errors.Is(err, repair.ErrVersion) {
			return nil, factory.UsageErrorf("%w; nothing was written", err)
		}
		if err != nil {
			return nil, fmt.Errorf("%w; or give --condition", err)
		}
		ch.cond = &cond{expr: expr, names: names, values: values, desc: w.condDesc(before, res.BeforeHash)}
	}
	p.res.Condition = ch.cond.desc
	p.res.After, p.res.AfterHash = image(ch.after), item.Hash(ch.after)
	return p, nil
}

// condDesc says what the condition on the item read checks.
func (w *writeFlags) condDesc(before map[string]types.AttributeValue, hash string) string {
	if w.version == "" || before == nil {
		return "the item is still the image read before (" + hash + ")"
	}
	if v, ok := before[w.version].(*types.AttributeValueMemberN); ok { // a number: Condition refuses anything else
		return fmt.Sprintf("its version attribute %s is still %s, as read", w.version, v.Value)
	}
	return fmt.Sprintf("it still has no version attribute %s, as read", w.version)
}

func keyJSON(key map[string]types.AttributeValue) json.RawMessage { return image(key) }

// showWrite shows a write's result through its view.
func showWrite(f *factory.Factory, r writeResult) error {
	return view.Results(f, func(r writeResult) error { return printWrite(f, r) }).Show(r)
}

// printWrite is the human view of a write.
func printWrite(f *factory.Factory, r writeResult) error {
	out := f.IOStreams.Out
	for _, s := range r.ReadAs {
		fmt.Fprintf(out, "read as %s\n", s)
	}
	if r.Note != "" {
		fmt.Fprintf(out, "%s (%s)\n", r.Note, r.Table)
		return nil
	}
	if r.DryRun {
		fmt.Fprintln(out, guard.DryRunHeader(fmt.Sprintf("%s in %s, if %s:", r.Op, r.Table, r.Condition)))
	} else {
		fmt.Fprintf(out, "%s done in %s (condition: %s); the image after is read back:\n", r.Op, r.Table, r.Condition)
	}
	printImages(out, r)
	if len(r.ChangedSinceRead) > 0 {
		fmt.Fprintf(out, "CONFLICT: another writer changed the item between the read and the write; the write replaced %s: read it (dynops item get) and decide\n", strings.Join(r.ChangedSinceRead, ", "))
	}
	if r.DryRun {
		fmt.Fprintf(out, "add --if-hash %s to write only if the item is still what this dry run read\n", r.BeforeHash)
	}
	return nil
}

// printImages prints the before and after images with their hashes.
func printImages(out io.Writer, r writeResult) {
	fmt.Fprintf(out, "  before: %s  (%s)\n  after:  %s  (%s)\n", r.Before, r.BeforeHash, r.After, r.AfterHash)
}

// protectedNeeds refuses a write to a protected table, before anything is
// read, naming at once everything it lacks: --reason, and --confirm NAME
// when there is no terminal to type the name at (one round trip, not one
// per missing flag).
func (w *writeFlags) protectedNeeds(f *factory.Factory, d protect.Decision) error {
	if !w.yes || !d.Protected {
		return nil
	}
	var needs []string
	if w.reason == "" {
		needs = append(needs, `--reason "why" (it lands in the audit)`)
	}
	if !slices.Contains(w.confirm, d.Name) && !f.IOStreams.CanPrompt() {
		needs = append(needs, fmt.Sprintf("--confirm %s (no terminal to type its name at)", d.Name))
	}
	if len(needs) == 0 {
		return nil
	}
	return factory.UsageErrorf("%s is protected (%s): a write needs %s; nothing was changed", d.Name, d.Reason, strings.Join(needs, " and "))
}

func newCmdPut(f *factory.Factory) *cobra.Command {
	w := &writeFlags{}
	var itemJSON string
	cmd := &cobra.Command{
		Use:   "put --table T --item JSON [--reason R] [--yes]",
		Short: "Write one whole item (create or replace), conditional on the image read before",
		Example: `  dynops item put --table prod-hoge-user --item '{"user_id": "u1", "status": "active"}' \
      --reason "INC-42: restore status" --yes --confirm prod-hoge-user`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if w.table == "" {
				return factory.UsageErrorf("item put needs --table TABLE and --item JSON")
			}
			ctx := cmd.Context()
			t, p, err := keyed(ctx, f, w.table, "--item", itemJSON)
			if err != nil {
				return err
			}
			key := item.KeyOf(t.schema, p.Attrs)
			return run(ctx, f, w, t, []string{"--item: " + p.Describe()}, key, func(before map[string]types.AttributeValue) (*change, error) {
				after, err := w.lock(t).Next(p.Attrs, before)
				if err != nil {
					return nil, err
				}
				return &change{op: "put", key: key, before: before, after: after, do: func(ctx context.Context, c *cond) (map[string]types.AttributeValue, error) {
					out, err := t.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &t.name, Item: after, ReturnValues: types.ReturnValueAllOld,
						ConditionExpression: &c.expr, ExpressionAttributeNames: c.names, ExpressionAttributeValues: c.values})
					if err != nil {
						return nil, err
					}
					return allOld(out.Attributes), nil
				}}, nil
			})
		},
	}
	w.add(cmd.Flags(), false)
	w.addVersion(cmd.Flags())
	cmd.Flags().StringVar(&itemJSON, "item", "", "the whole item: a JSON object (DynamoDB JSON or plain JSON) with its key")
	cmdfacts.Writes(cmd)
	cmdfacts.SetInterrupt(cmd, Interrupted)
	cmdfacts.SetTimeout(cmd, awsconfig.DefaultTimeout)
	cmdfacts.SetTargets(cmd, "table")
	return cmd
}

func newCmdUpdate(f *factory.Factory) *cobra.Command {
	w := &writeFlags{}
	var setJSON string
	var remove []string
	cmd := &cobra.Command{
		Use:   "update --table T --key JSON [--set JSON] [--remove ATTR ...] [--reason R] [--yes]",
		Short: "Set or remove top-level attributes of an existing item, conditional on the image read before",
		Example: `  dynops item update --table prod-hoge-user --key '{"user_id": "u1"}' --set '{"status": "active", "a.b": 1}' \
      --remove ttl --reason "INC-42" --yes --confirm prod-hoge-user`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if w.table == "" {
				return factory.UsageErrorf("item update needs --table TABLE, --key JSON and --set JSON and/or --remove ATTR")
			}
			var set item.Parsed
			var err error
			if setJSON != "" {
				if set, err = parseUsage("--set", setJSON); err != nil {
					return err
				}
			}
			ctx := cmd.Context()
			t, k, err := keyed(ctx, f, w.table, "--key", w.key)
			if err != nil {
				return err
			}
			readAs := []string{"--key: " + k.Describe()}
			if setJSON != "" {
				readAs = append(readAs, "--set: "+set.Describe())
			}
			u, err := item.BuildUpdate(t.schema, set.Attrs, remove)
			if err != nil {
				return factory.UsageErrorf("%w", err)
			}
			if c, err := w.explicit(); err != nil {
				return err
			} else if c != nil {
				for ph := range c.names {
					if _, ok := u.Names[ph]; ok {
						return factory.UsageErrorf("--condition-names: %s is a placeholder of the update (#s0.. and #r0..): name yours otherwise, e.g. #c0", ph)
					}
				}
				for ph := range c.values {
					if _, ok := u.Values[ph]; ok {
						return factory.UsageErrorf("--condition-values: %s is a placeholder of the update (:s0..): name yours otherwise, e.g. :c0", ph)
					}
				}
			}
			return run(ctx, f, w, t, readAs, k.Attrs, func(before map[string]types.AttributeValue) (*change, error) {
				if before == nil {
					return nil, fmt.Errorf("no item in %s at that key: nothing to update (an update would create it); create it with dynops item put", t.name)
				}
				return &change{op: "update", key: k.Attrs, before: before, after: u.Apply(before, set.Attrs, remove), do: func(ctx context.Context, c *cond) (map[string]types.AttributeValue, error) {
					names := map[string]string{}
					for ph, n := range u.Names {
						names[ph] = n
					}
					for ph, n := range c.names {
						names[ph] = n
					}
					values := map[string]types.AttributeValue{}
					for ph, v := range u.Values {
						values[ph] = v
					}
					for ph, v := range c.values {
						values[ph] = v
					}
					in := &dynamodb.UpdateItemInput{TableName: &t.name, Key: k.Attrs, UpdateExpression: aws.String(u.Expr),
						ConditionExpression: &c.expr, ExpressionAttributeNames: names}
					if len(values) > 0 {
						in.ExpressionAttributeValues = values
					}
					_, err := t.db.UpdateItem(ctx, in)
					return nil, err // an update replaces only the attributes it names
				}}, nil
			})
		},
	}
	w.add(cmd.Flags(), true)
	cmd.Flags().StringVar(&setJSON, "set", "", "attributes to set: a JSON object (DynamoDB JSON or plain JSON); names are literal")
	cmd.Flags().StringArrayVar(&remove, "remove", nil, "an attribute to remove (repeatable); the name is literal")
	cmdfacts.Writes(cmd)
	cmdfacts.SetInterrupt(cmd, Interrupted)
	cmdfacts.SetTimeout(cmd, awsconfig.DefaultTimeout)
	cmdfacts.SetTargets(cmd, "table")
	return cmd
}

func newCmdDelete(f *factory.Factory) *cobra.Command {
	w := &writeFlags{}
	cmd := &cobra.Command{
		Use:     "delete --table T --key JSON [--reason R] [--yes]",
		Short:   "Delete one item, conditional on the image read before",
		Example: `  dynops item delete --table prod-hoge-user --key '{"user_id": "u1"}' --reason "INC-42: bad row" --yes --confirm prod-hoge-user`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if w.table == "" {
				return factory.UsageErrorf("item delete needs --table TABLE and --key JSON")
			}
			ctx := cmd.Context()
			t, k, err := keyed(ctx, f, w.table, "--key", w.key)
			if err != nil {
				return err
			}
			return run(ctx, f, w, t, []string{"--key: " + k.Describe()}, k.Attrs, func(before map[string]types.AttributeValue) (*change, error) {
				ch := &change{op: "delete", key: k.Attrs, before: before}
				if before == nil {
					return ch, nil
				}
				ch.do = func(ctx context.Context, c *cond) (map[string]types.AttributeValue, error) {
					out, err := t.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &t.name, Key: k.Attrs, ReturnValues: types.ReturnValueAllOld,
						ConditionExpression: &c.expr, ExpressionAttributeNames: c.names, ExpressionAttributeValues: c.values})
					if err != nil {
						return nil, err
					}
					return allOld(out.Attributes), nil
				}
				return ch, nil
			})
		},
	}
	w.add(cmd.Flags(), true)
	w.addVersion(cmd.Flags())
	cmdfacts.Writes(cmd)
	cmdfacts.SetInterrupt(cmd, Interrupted)
	cmdfacts.SetTimeout(cmd, awsconfig.DefaultTimeout)
	cmdfacts.SetTargets(cmd, "table")
	return cmd
}

// allOld is the item a write replaced (ALL_OLD), an empty map when there
// was none (nil means: the write does not replace whole items).
func allOld(attrs map[string]types.AttributeValue) map[string]types.AttributeValue {
	if attrs == nil {
		return map[string]types.AttributeValue{}
	}
	return attrs
}

// keyed parses flag (--key, or --item: a whole item), opens the table and
// checks the value against the table's key; bad input is a usage error.
func keyed(ctx context.Context, f *factory.Factory, tableName, flag, raw string) (*table, item.Parsed, error) {
	p, err := parseUsage(flag, raw)
	if err != nil {
		return nil, item.Parsed{}, err
	}
	t, err := openTable(ctx, f, tableName)
	if err != nil {
		return nil, item.Parsed{}, err
	}
	check := t.schema.CheckKey
	if flag == "--item" {
		check = t.schema.CheckItem
	}
	if err := check(flag, p.Attrs); err != nil {
		return nil, item.Parsed{}, factory.UsageErrorf("%w", err)
	}
	return t, p, nil
}
