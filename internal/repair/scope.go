package repair

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynops/dynops/internal/ddbjson"
	"github.com/dynops/dynops/internal/tablediff"
)

// A restore point cannot tell damage from good writes: every item written
// after it differs from the restored table, the damage and the application's
// legitimate updates alike. A Scope limits a repair to the keys the incident
// damaged: those written in the damage window [Since, Until]. A differing key
// not written in the window is a good write (left alone, out of scope); a key
// written in the window and again after it is a conflict (left alone: putting
// back its old image would lose the later write), as `export revert` does.

// ErrScope marks a scope that cannot be built from what was given.
var ErrScope = errors.New("cannot scope the repair to the damage window")

// Verdict is what a scope says of one differing key.
type Verdict int

// Verdicts of a scope.
const (
	InScope     Verdict = iota // written in the damage window only: repair it
	AfterWindow                // written in the window and after it: a conflict, left alone
	OutOfScope                 // not written in the window: a good write, left alone
)

// Scope is the set of keys written in the damage window, and of those
// written after it.
type Scope struct {
	Since  time.Time `json:"since"`
	Until  time.Time `json:"until"`
	Source string    `json:"source"` // where the keys come from, e.g. "stream arn:...", "keys file damaged.jsonl"
	// LaterKnown says whether the source can see writes after the window
	// (a stream can; a key list cannot).
	LaterKnown bool `json:"later_known"`
	// Damaged and Later count the keys the source listed.
	Damaged int `json:"damaged_keys"`
	Later   int `json:"later_keys"`
	// Undated are damaged keys the source could not date (deleted items,
	// with an updated-at attribute): they may be good deletes.
	Undated int `json:"undated_keys,omitempty"`

	damaged map[string]bool
	later   map[string]bool
}

// NewScope is an empty scope of the window [since, until] read from source.
func NewScope(since, until time.Time, source string, laterKnown bool) (*Scope, error) {
	if until.IsZero() {
		return nil, fmt.Errorf("%w: no end of the damage window (--damage-until TIME)", ErrScope)
	}
	if !since.IsZero() && !until.After(since) {
		return nil, fmt.Errorf("%w: the damage window ends (%s) before it starts (%s)", ErrScope,
			until.UTC().Format(time.RFC3339), since.UTC().Format(time.RFC3339))
	}
	return &Scope{Since: since, Until: until, Source: source, LaterKnown: laterKnown,
		damaged: map[string]bool{}, later: map[string]bool{}}, nil
}

// Add records that key (canonical, tablediff.EncodeKey) was written at t.
// Stream times are rounded down to the second: a write in the second the
// window ends counts both in it and after it (a conflict, left alone), so an
// uncertain key is never overwritten.
func (s *Scope) Add(key []byte, t time.Time) {
	sec := t.Truncate(time.Second)
	if !s.Since.IsZero() && sec.Before(s.Since.Truncate(time.Second)) {
		return // before the window: in the restored table already
	}
	if !sec.After(s.Until) {
		if !s.damaged[string(key)] {
			s.damaged[string(key)] = true
			s.Damaged++
		}
	}
	if sec.After(s.Until) || sec.Equal(s.Until.Truncate(time.Second)) {
		if !s.later[string(key)] {
			s.later[string(key)] = true
			s.Later++
		}
	}
}

// AddDamaged records a key listed as damaged (a key list: no time).
func (s *Scope) AddDamaged(key []byte) {
	if !s.damaged[string(key)] {
		s.damaged[string(key)] = true
		s.Damaged++
	}
}

// Of says what the scope makes of one differing key.
func (s *Scope) Of(key []byte) Verdict {
	switch {
	case !s.damaged[string(key)]:
		return OutOfScope
	case s.later[string(key)]:
		return AfterWindow
	default:
		return InScope
	}
}

// ReadKeyList reads a list of damaged keys into s: one key per line in
// DynamoDB JSON ({"user_id":{"S":"u1"}}, as `aws dynamodb get-item --key`
// takes it), or a line of a keys file (its "key"); blank lines, lines
// starting with # and a keys file's header are skipped.
func (s *Scope) ReadKeyList(path string, keyNames []string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%w: --damage-keys: %w", ErrScope, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		var wrapped struct {
			Diff json.RawMessage `json:"diff"`
			Key  json.RawMessage `json:"key"`
		}
		raw := json.RawMessage(text)
		if json.Unmarshal(raw, &wrapped) == nil {
			if wrapped.Diff != nil {
				continue
			}
			if wrapped.Key != nil {
				raw = wrapped.Key
			}
		}
		item, err := ddbjson.DecodeItem(raw)
		if err != nil {
			return fmt.Errorf("%w: --damage-keys %s line %d: %w; write one key per line, e.g. {\"%s\":{\"S\":\"...\"}}", ErrScope, path, line, err, keyNames[0])
		}
		if len(item) != len(keyNames) {
			return fmt.Errorf("%w: --damage-keys %s line %d: a key has exactly the attributes %v, this line has %d", ErrScope, path, line, keyNames, len(item))
		}
		key, err := tablediff.EncodeKey(item, keyNames)
		if err != nil {
			return fmt.Errorf("%w: --damage-keys %s line %d: %w", ErrScope, path, line, err)
		}
		s.AddDamaged(key)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%w: --damage-keys %s: %w", ErrScope, path, err)
	}
	return nil
}

// ScopeFromKeyList is the scope of the window [since, until] whose damaged
// keys are listed in path (ReadKeyList). A list cannot say which keys were
// written again after the window: the conditional writes still leave alone
// any key changed since the diff.
func ScopeFromKeyList(ctx context.Context, db tablediff.Describer, table, path string, since, until time.Time) (*Scope, error) {
	sc, err := NewScope(since, until, "keys file "+path, false)
	if err != nil {
		return nil, err
	}
	keyNames, err := tableKey(ctx, db, table)
	if err != nil {
		return nil, err
	}
	if err := sc.ReadKeyList(path, keyNames); err != nil {
		return nil, err
	}
	return sc, nil
}

// ScopeFromAttribute is the scope of the window [since, until] read from
// an updated-at attribute the application writes on every put (attr: an
// RFC3339 string, or epoch seconds or milliseconds as a number). Each
// differing key of the keys file is dated by its current item in table:
// written in the window when the time is in it; a later time is a good
// write after the window, left alone (the attribute holds only the last
// write, so it cannot show a key written in the window too); an earlier
// time is out of the window. An item whose attribute is
// missing, not a time, or the same as in the restored table (from) was
// written by something that does not keep the attribute: damage, in
// scope. A deleted item cannot be dated: in scope, and counted in Undated
// (they may be good deletes).
func ScopeFromAttribute(ctx context.Context, db DynamoDB, from, to, keysFile, attr string, since, until time.Time) (*Scope, error) {
	sc, err := NewScope(since, until, "attribute "+attr+" of "+to, true)
	if err != nil {
		return nil, err
	}
	bo := DefaultBackoff()
	var batch []tablediff.KeyRecord
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		keys := make([]map[string]types.AttributeValue, 0, len(batch))
		for _, r := range batch {
			k, err := tablediff.DecodeKey(r.Key)
			if err != nil {
				return err
			}
			keys = append(keys, k)
		}
		now, err := getBatch(ctx, db, to, keys, bo)
		if err != nil {
			return err
		}
		then, err := getBatch(ctx, db, from, keys, bo)
		if err != nil {
			return err
		}
		keyNames := make([]string, 0, len(keys[0]))
		for n := range keys[0] {
			keyNames = append(keyNames, n)
		}
		byKey := func(items []map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
			m := map[string]types.AttributeValue{}
			for _, it := range items {
				k, err := tablediff.EncodeKey(it, keyNames)
				if err != nil {
					return nil, err
				}
				m[string(k)] = it[attr]
			}
			return m, nil
		}
		cur, err := byKey(now)
		if err != nil {
			return err
		}
		old, err := byKey(then)
		if err != nil {
			return err
		}
		for _, r := range batch {
			v, present := cur[string(r.Key)]
			t, ok := attrTime(v)
			switch {
			case r.Kind == tablediff.OnlyInSource || !present:
				sc.AddDamaged(r.Key)
				sc.Undated++
			case !ok || sameValue(v, old[string(r.Key)]):
				sc.AddDamaged(r.Key)
			default:
				sc.Add(r.Key, t)
			}
		}
		batch = batch[:0]
		return nil
	}
	_, err = tablediff.ReadKeys(keysFile, func(r tablediff.KeyRecord) error {
		batch = append(batch, r)
		if len(batch) == maxBatchGet {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return nil, fmt.Errorf("dating the differing keys by %s: %w", attr, err)
	}
	return sc, nil
}

// attrTime reads an updated-at value: an RFC3339 string, or a number of
// epoch seconds (or milliseconds, above 1e11).
func attrTime(v types.AttributeValue) (time.Time, bool) {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		t, err := time.Parse(time.RFC3339, v.Value)
		return t, err == nil
	case *types.AttributeValueMemberN:
		f, err := strconv.ParseFloat(v.Value, 64)
		if err != nil {
			return time.Time{}, false
		}
		if f > 1e11 {
			return time.UnixMilli(int64(f)), true
		}
		return time.Unix(0, int64(f*1e9)), true
	}
	return time.Time{}, false
}

func sameValue(a, b types.AttributeValue) bool {
	if a == nil || b == nil {
		return false
	}
	k := map[string]types.AttributeValue{"v": a}
	return tablediff.Checksum(k, nil) == tablediff.Checksum(map[string]types.AttributeValue{"v": b}, nil)
}
