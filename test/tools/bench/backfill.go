package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynops/dynops/internal/tablesettings"
)

// backfillCase: `dynops migrate backfill` of a single table keyed PK/SK
// (stream on, as the migration needs) into one destination, beside raw
// BatchWriteItem of the same routed items into a table of the same shape
// (same number of concurrent writes: backfill's default 4 segments x 2
// writers = e.workers). The backfill also scans the source (consistent
// reads): the raw client has the items in memory.
func backfillCase() *benchCase {
	var src, dst, raw, routesFile, lastState string
	var routed []map[string]types.AttributeValue
	round := 0
	c := &benchCase{name: "migrate backfill", unit: "items/s", goal: 0.8}
	c.refRound = func(e *env) (measure, error) {
		start := time.Now()
		items, err := e.rawScanItems(4, src)
		if err == nil {
			err = e.batchWrite(raw, puts(routeUsers(items)))
		}
		m := measure{work: float64(len(items)), seconds: time.Since(start).Seconds()}
		if err != nil {
			return m, err
		}
		return m, e.batchWrite(raw, deletesPKSK(items))
	}
	c.setup = func(e *env) error {
		c.raw = fmt.Sprintf("BatchWriteItem, %d workers", e.workers)
		c.ref = fmt.Sprintf("Scan (4 segments), then BatchWriteItem, %d workers", e.workers)
		var err error
		if src, err = e.createPKSK("single", true); err != nil {
			return err
		}
		if dst, err = e.createPKSK("users", false); err != nil {
			return err
		}
		if raw, err = e.createPKSK("users-raw", false); err != nil {
			return err
		}
		items := singleTableUsers(e.items)
		if err := e.batchWrite(src, puts(items)); err != nil {
			return err
		}
		routed = routeUsers(items)
		routesFile = filepath.Join(e.tmp, "routes.yaml")
		return writeRoutes(routesFile, dst)
	}
	c.round = func(e *env) (measure, measure, error) {
		round++
		start := time.Now()
		err := e.batchWrite(raw, puts(routed))
		rawM := measure{work: float64(len(routed)), seconds: time.Since(start).Seconds()}
		if err == nil {
			err = e.batchWrite(raw, deletesPKSK(routed))
		}
		if err != nil {
			return measure{}, rawM, err
		}
		state := filepath.Join(e.tmp, "migrate-state-"+strconv.Itoa(round)+".json")
		lastState = state
		out, dyn, err := e.runDynops("migrate", "backfill", "--source", src, "--routes", routesFile, "--state", state)
		if err != nil {
			return dyn, rawM, err
		}
		var rep struct {
			Read         int64 `json:"items_read"`
			WrittenTotal int64 `json:"written_total"`
		}
		if err := json.Unmarshal(out, &rep); err != nil {
			return dyn, rawM, fmt.Errorf("migrate backfill -o json: %w: %s", err, out)
		}
		if rep.WrittenTotal != int64(len(routed)) {
			return dyn, rawM, fmt.Errorf("backfill wrote %d items, want %d", rep.WrittenTotal, len(routed))
		}
		dyn.work = float64(rep.WrittenTotal)
		// Empty the destination for the next round (a backfill starts from empty destinations).
		return dyn, rawM, e.batchWrite(dst, deletesPKSK(routed))
	}
	c.after = func(e *env) ([]string, error) { return catchUpLag(e, src, routesFile, lastState) }
	return c
}

// catchUpLag measures `dynops migrate catch-up` behind a steady writer: the
// last backfill's migration, a writer putting and updating source items at
// lagWritesPerSecond for lagSeconds, and catch-up passes run back to back
// (as --follow runs them) until the writer stops, then one more. Each pass
// reports its lag (now minus the newest record it applied, from the
// service's ApproximateCreationDateTime) and whether it reached the tip.
func catchUpLag(e *env, src, routesFile, state string) ([]string, error) {
	const lagWritesPerSecond, lagSeconds = 20, 15
	if state == "" {
		return nil, fmt.Errorf("catch-up lag: no backfill ran")
	}
	done := make(chan error, 1)
	go func() {
		tick := time.NewTicker(time.Second / lagWritesPerSecond)
		defer tick.Stop()
		stop := time.After(lagSeconds * time.Second)
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			case <-tick.C:
			}
			it := singleTableUsers(1)[0]
			// New users and updates of existing ones, alternating.
			n := e.items + i
			if i%2 == 1 {
				n = i % e.items
			}
			it["PK"] = &types.AttributeValueMemberS{Value: fmt.Sprintf("TENANT#%03d", n%100)}
			it["SK"] = &types.AttributeValueMemberS{Value: fmt.Sprintf("USER#%08d", n)}
			it["bench_write"] = &types.AttributeValueMemberN{Value: strconv.Itoa(i)}
			if _, err := e.db.PutItem(e.ctx, &dynamodb.PutItemInput{TableName: &src, Item: it}); err != nil {
				done <- fmt.Errorf("catch-up lag: the writer's put: %w", err)
				return
			}
		}
	}()
	var lags []time.Duration
	var changed int64
	pass := func() (bool, error) {
		out, _, err := e.runDynops("migrate", "catch-up", "--source", src, "--routes", routesFile, "--state", state)
		if err != nil {
			return false, err
		}
		var p struct {
			Put      int64 `json:"put"`
			Lag      int64 `json:"lag_ns"`
			CaughtUp bool  `json:"caught_up"`
		}
		if err := json.Unmarshal(out, &p); err != nil {
			return false, fmt.Errorf("migrate catch-up -o json: %w: %s", err, out)
		}
		if p.Put > 0 {
			lags = append(lags, time.Duration(p.Lag))
			changed += p.Put
		}
		return p.CaughtUp, nil
	}
	for writing := true; writing; {
		select {
		case err := <-done:
			if err != nil {
				return nil, err
			}
			writing = false
		default:
		}
		if _, err := pass(); err != nil {
			return nil, err
		}
	}
	caughtUp, err := pass()
	if err != nil {
		return nil, err
	}
	if len(lags) == 0 {
		return nil, fmt.Errorf("catch-up lag: no pass applied a change of the writer's %d", lagWritesPerSecond*lagSeconds)
	}
	sorted := slices.Clone(lags)
	slices.Sort(sorted)
	return []string{fmt.Sprintf("migrate catch-up behind a writer of %d puts/s for %d s: %d passes with changes (%d items put, with the source's records in the backfill's one-minute start margin), lag median %s, max %s; caught up at the end: %t",
		lagWritesPerSecond, lagSeconds, len(lags), changed, sorted[len(sorted)/2].Round(time.Millisecond), sorted[len(sorted)-1].Round(time.Millisecond), caughtUp)}, nil
}

// routeUsers is the bench's route done by hand: GSI1PK/GSI1SK renamed, as
// a multi-table route does (DDB-IDX-03).
func routeUsers(items []map[string]types.AttributeValue) []map[string]types.AttributeValue {
	routed := make([]map[string]types.AttributeValue, 0, len(items))
	for _, it := range items {
		out := make(map[string]types.AttributeValue, len(it))
		for k, v := range it {
			out[k] = v
		}
		out["user_list_key"], out["user_list_sort"] = out["GSI1PK"], out["GSI1SK"]
		delete(out, "GSI1PK")
		delete(out, "GSI1SK")
		routed = append(routed, out)
	}
	return routed
}

// singleTableUsers returns n user items of a single-table design: PK
// TENANT#t, SK USER#u, GSI1PK/GSI1SK, and the bench's user attributes.
func singleTableUsers(n int) []map[string]types.AttributeValue {
	items := users(n)
	for i, it := range items {
		it["PK"] = &types.AttributeValueMemberS{Value: fmt.Sprintf("TENANT#%03d", i%100)}
		it["SK"] = &types.AttributeValueMemberS{Value: fmt.Sprintf("USER#%08d", i)}
		it["GSI1PK"] = &types.AttributeValueMemberS{Value: fmt.Sprintf("TENANT#%03d#USERS", i%100)}
		it["GSI1SK"] = &types.AttributeValueMemberS{Value: fmt.Sprintf("CREATED#%08d", i)}
	}
	return items
}

func deletesPKSK(items []map[string]types.AttributeValue) []types.WriteRequest {
	reqs := make([]types.WriteRequest, len(items))
	for i, it := range items {
		reqs[i] = types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: map[string]types.AttributeValue{"PK": it["PK"], "SK": it["SK"]}}}
	}
	return reqs
}

// createPKSK creates an on-demand table keyed PK (S, HASH) / SK (S, RANGE),
// with a NEW_AND_OLD_IMAGES stream when stream is set, and deletes it when
// the bench ends.
func (e *env) createPKSK(suffix string, stream bool) (string, error) {
	return e.createPKSKNamed("dev-"+e.id+"-"+suffix, stream)
}

// createPKSKNamed is createPKSK with the whole table name.
func (e *env) createPKSKNamed(name string, stream bool) (string, error) {
	in := &dynamodb.CreateTableInput{TableName: &name,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("PK"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("SK"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("SK"), KeyType: types.KeyTypeRange}},
		BillingMode: types.BillingModePayPerRequest}
	if stream {
		in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages}
	}
	if _, err := e.db.CreateTable(e.ctx, in); err != nil {
		return "", fmt.Errorf("creating %s: %w", name, err)
	}
	e.cleanup = append(e.cleanup, func() {
		if _, err := e.db.DeleteTable(e.ctx, &dynamodb.DeleteTableInput{TableName: &name}); err != nil {
			fmt.Fprintf(os.Stderr, "bench: deleting %s: %v\n", name, err)
		}
	})
	return name, tablesettings.WaitActive(e.ctx, e.db, name, nil)
}
