package shared

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/spf13/pflag"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/ddbjson"
	"github.com/dynops/dynops/internal/safefile"
	"github.com/dynops/dynops/internal/tablediff"
)

// PlanOut is --plan-out FILE [--hashes-only] [--force]: a dry run writes
// every key it would write, with the item now and what the write would
// leave, to a new 0600 file for review (safefile).
type PlanOut struct {
	File       string
	HashesOnly bool
	Force      bool

	mu      sync.Mutex
	entries []PlanEntry
	err     error // the first item that could not be encoded
}

// PlanEntry is one line of a plan file. Before and After are the items in
// DynamoDB JSON (null: absent; after null: the key is deleted), or with
// --hashes-only their checksums (tablediff.Checksum, the one `table diff`
// uses: the first 16 bytes of a SHA-256 over the canonical item; "" absent).
type PlanEntry struct {
	Key            json.RawMessage `json:"key"`
	Action         string          `json:"action"` // put or delete
	Before         json.RawMessage `json:"before,omitempty"`
	After          json.RawMessage `json:"after,omitempty"`
	BeforeChecksum *string         `json:"before_checksum,omitempty"`
	AfterChecksum  *string         `json:"after_checksum,omitempty"`
}

// AddPlanOutFlags registers --plan-out, --hashes-only and --force.
func AddPlanOutFlags(fl *pflag.FlagSet, p *PlanOut) {
	fl.StringVar(&p.File, "plan-out", "", "write every key a dry run would write, with its item now and after, to FILE (new, mode 0600; one JSON line a key)")
	fl.BoolVar(&p.HashesOnly, "hashes-only", false, "with --plan-out: the items' checksums instead of the items")
	fl.BoolVar(&p.Force, "force", false, "let --plan-out overwrite an existing file")
}

// Check refuses what cannot be honoured, before anything is read: --plan-out
// with --yes (the plan is a dry run's), --hashes-only or --force without
// --plan-out, and a file that exists (without --force) or is unsafe.
func (p *PlanOut) Check(yes bool) error {
	switch {
	case p.File == "" && (p.HashesOnly || p.Force):
		return factory.UsageErrorf("--hashes-only and --force go with --plan-out FILE")
	case p.File == "":
		return nil
	case yes:
		return factory.UsageErrorf("--plan-out %s is a dry run's plan: run without --yes to write it, review it, then run with --yes", p.File)
	}
	if err := safefile.CheckNew(p.File, "plan file", p.Force); err != nil {
		return factory.UsageErrorf("--plan-out: %w", err)
	}
	return nil
}

// Planned returns the callback of a dry run (nil without --plan-out): each
// key's item now and after. Safe for concurrent use.
func (p *PlanOut) Planned() func(keys, before, after map[string]types.AttributeValue) {
	if p.File == "" {
		return nil
	}
	return func(keys, before, after map[string]types.AttributeValue) {
		e := PlanEntry{Action: "put"}
		if after == nil {
			e.Action = "delete"
		}
		var errs [3]error
		e.Key, errs[0] = ddbjson.EncodeItem(keys)
		if p.HashesOnly {
			e.BeforeChecksum, e.AfterChecksum = checksum(before), checksum(after)
		} else {
			e.Before, errs[1] = encoded(before)
			e.After, errs[2] = encoded(after)
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		p.entries = append(p.entries, e)
		for _, err := range errs {
			if err != nil && p.err == nil {
				p.err = fmt.Errorf("writing key %s into the plan: %w", e.Key, err)
			}
		}
	}
}

// Write writes the plan file, ordered by key; how many keys it holds.
func (p *PlanOut) Write() (int, error) {
	if p.File == "" {
		return 0, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return 0, p.err
	}
	sort.Slice(p.entries, func(i, j int) bool { return string(p.entries[i].Key) < string(p.entries[j].Key) })
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, e := range p.entries {
		if err := enc.Encode(e); err != nil {
			return 0, err
		}
	}
	if err := safefile.WriteFile(p.File, "plan file", b.Bytes(), p.Force); err != nil {
		return 0, fmt.Errorf("--plan-out: %w", err)
	}
	return len(p.entries), nil
}

func encoded(item map[string]types.AttributeValue) (json.RawMessage, error) {
	if item == nil {
		return json.RawMessage("null"), nil
	}
	return ddbjson.EncodeItem(item)
}

func checksum(item map[string]types.AttributeValue) *string {
	s := ""
	if item != nil {
		s = tablediff.Checksum(item, nil)
	}
	return &s
}

// Finish writes the plan file of a dry run and says where (nothing without
// --plan-out).
func (p *PlanOut) Finish(f *factory.Factory) error {
	n, err := p.Write()
	if err != nil || p.File == "" {
		return err
	}
	f.IOStreams.Infof("plan: %d key(s), each with its item now and after, written to %s (0600)\n", n, p.File)
	return nil
}
