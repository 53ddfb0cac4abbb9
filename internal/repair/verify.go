package repair

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"golang.org/x/sync/errgroup"

	"github.com/dynops/dynops/internal/tablediff"
)

// Getter is the part of the API Verify reads with.
type Getter interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
}

// Finding is a key whose state does not keep the repair's promise, or is
// worth a look.
type Finding struct {
	Key     json.RawMessage `json:"key"`
	Outcome Outcome         `json:"outcome"`
	Why     string          `json:"why"`
}

// VerifyReport is what Verify found, key by key of the record.
type VerifyReport struct {
	Record string `json:"record"`
	From   string `json:"from"`
	To     string `json:"to"`
	Keys   int64  `json:"keys"`
	// PromiseHolds: every repaired key holds the restored value, every
	// deleted key is gone, and no key the repair left alone holds the
	// restored value it differed from (nothing reverted).
	PromiseHolds bool `json:"promise_holds"`
	// Repaired: copied or already equal, and the original holds the restored value.
	Repaired int64 `json:"repaired"`
	Deleted  int64 `json:"deleted"`
	// LeftAlone: conflicts and out-of-scope keys still as the diff saw them.
	LeftAlone int64 `json:"left_alone"`
	// ChangedSince: left-alone keys the application changed again since
	// (not to the restored value): not the repair's doing.
	ChangedSince int64 `json:"changed_since"`
	// ExtraKept: items only in the original, still there.
	ExtraKept int64 `json:"extra_kept"`
	// Broken are the keys that do not keep the promise (every one listed);
	// Notes the ones worth a look that do.
	Broken []Finding `json:"broken"`
	Notes  []Finding `json:"notes"`
}

// Verify reads the original's current item for every key of a repair
// record (consistent GetItem, workers at once) and checks what the repair
// promised: repaired keys hold the restored value, deleted keys are gone,
// conflicts and out-of-scope keys were not reverted, extra items are kept.
// The restored values are the record's checksums (what the diff saw), so
// the restored table (or export) is not read again.
func Verify(ctx context.Context, db Getter, path string, workers int) (*VerifyReport, error) {
	if workers <= 0 {
		workers = 8
	}
	var keys []KeyOutcome
	h, err := ReadRecord(path, func(o KeyOutcome) error {
		keys = append(keys, o)
		return nil
	})
	if err != nil {
		return nil, err
	}
	rep := &VerifyReport{Record: path, From: h.From, To: h.To, Keys: int64(len(keys)), Broken: []Finding{}, Notes: []Finding{}}
	var mu sync.Mutex
	add := func(f func()) {
		mu.Lock()
		defer mu.Unlock()
		f()
	}
	work := make(chan KeyOutcome)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(work)
		for _, k := range keys {
			select {
			case work <- k:
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		return nil
	})
	for range workers {
		g.Go(func() error {
			for o := range work {
				key, err := tablediff.DecodeKey(o.Key)
				if err != nil {
					return fmt.Errorf("%s: %w", path, err)
				}
				out, err := db.GetItem(gctx, &dynamodb.GetItemInput{TableName: aws.String(h.To), Key: key, ConsistentRead: aws.Bool(true)})
				if err != nil {
					return fmt.Errorf("reading an item of %s: %w", h.To, err)
				}
				sum := ""
				if len(out.Item) > 0 {
					sum = tablediff.Checksum(out.Item, h.Attributes)
				}
				add(func() { judge(rep, o, sum) })
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for _, l := range [][]Finding{rep.Broken, rep.Notes} {
		sort.Slice(l, func(i, j int) bool { return string(l[i].Key) < string(l[j].Key) })
	}
	rep.PromiseHolds = len(rep.Broken) == 0
	return rep, nil
}

// judge checks one key's current checksum (sum, "" absent) against what
// the repair did with it.
func judge(rep *VerifyReport, o KeyOutcome, sum string) {
	broken := func(why string) { rep.Broken = append(rep.Broken, Finding{Key: o.Key, Outcome: o.Outcome, Why: why}) }
	note := func(why string) { rep.Notes = append(rep.Notes, Finding{Key: o.Key, Outcome: o.Outcome, Why: why}) }
	switch o.Outcome {
	case OutCopied, OutEqual:
		if len(o.ChangedSinceRead) > 0 {
			note("the repair's write replaced changes another writer made between its read and its write: " + strings.Join(o.ChangedSinceRead, ", "))
		}
		switch {
		case o.Kind == tablediff.OnlyInTarget && sum == "":
			rep.Deleted++
		case sum == o.SourceSum || (o.WrittenSum != "" && sum == o.WrittenSum):
			rep.Repaired++
		default:
			broken("the repair put it back, but the original does not hold the restored value now (changed since, or the write was lost): diff this key again")
		}
	case OutDeleted:
		if len(o.ChangedSinceRead) > 0 {
			note("the repair's delete removed changes another writer made between its read and its delete: " + strings.Join(o.ChangedSinceRead, ", "))
		}
		if sum == "" {
			rep.Deleted++
		} else {
			broken("the repair deleted it, but the original holds an item again")
		}
	case OutConflict, OutOutOfScope:
		switch {
		case sum == o.TargetSum:
			rep.LeftAlone++
		case sum == o.SourceSum:
			broken("left alone by the repair, yet the original holds the restored value now: a good write may have been reverted")
		default:
			rep.ChangedSince++
			note("left alone by the repair; the application changed it again since")
		}
	case OutKeptExtra:
		if sum != "" {
			rep.ExtraKept++
		} else {
			note("kept by the repair; deleted since by someone else")
		}
	case OutGone:
		note("no longer in the restored table or export when the repair ran: not repaired")
	}
}
