package repair

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/dynops/dynops/internal/safefile"
	"github.com/dynops/dynops/internal/tablediff"
)

// Outcome is what a repair did with one key of the keys file.
type Outcome string

// Outcomes of a repair, one per key in its record.
const (
	OutCopied     Outcome = "copied"           // put back to the restored image
	OutDeleted    Outcome = "deleted"          // only in the original, deleted (--delete-extra)
	OutEqual      Outcome = "already_equal"    // already as restored (a re-run, or the application)
	OutGone       Outcome = "gone_from_source" // no longer in the restored table or export
	OutKeptExtra  Outcome = "kept_extra"       // only in the original, kept
	OutConflict   Outcome = "conflict"         // left alone: written after the window, or changed since the diff
	OutOutOfScope Outcome = "out_of_scope"     // left alone: not written in the damage window (a good write)
)

// RecordHeader is the first line of a repair record: which repair it is.
type RecordHeader struct {
	From        string    `json:"from"`
	To          string    `json:"to"`
	KeysFile    string    `json:"keys_file"`
	KeyNames    []string  `json:"key_names"`
	Attributes  []string  `json:"attributes,omitempty"` // what the checksums cover; empty: whole items
	Time        time.Time `json:"time"`
	Scope       *Scope    `json:"scope,omitempty"`
	Unscoped    string    `json:"unscoped_reason,omitempty"`
	DeleteExtra bool      `json:"delete_extra"`
}

// KeyOutcome is one key of a repair record.
type KeyOutcome struct {
	Key       json.RawMessage `json:"key"`
	Kind      tablediff.Kind  `json:"kind"`
	Outcome   Outcome         `json:"outcome"`
	Reason    string          `json:"reason,omitempty"`
	SourceSum string          `json:"source_sum,omitempty"` // the restored item's checksum the diff saw ("" absent)
	TargetSum string          `json:"target_sum,omitempty"` // the original's checksum the diff saw ("" absent)
	// WrittenSum is the checksum of the item a versioned write put (its
	// version is the next one, not the restored one); "" otherwise.
	WrittenSum string `json:"written_sum,omitempty"`
	// ChangedSinceRead are the attributes the write replaced that another
	// writer changed between the repair's read and its write.
	ChangedSinceRead []string `json:"changed_since_read,omitempty"`
}

// recordWriter writes a repair record: the header, then one line per key
// as the workers finish it (any order).
type recordWriter struct {
	mu  sync.Mutex
	f   *os.File
	w   *bufio.Writer
	enc *json.Encoder
	err error
}

func createRecord(path string, h RecordHeader) (*recordWriter, error) {
	// A re-run of the same repair replaces its record: the keys already
	// repaired read back as already_equal.
	f, err := safefile.Create(path, "repair record (--record)", true)
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriter(f)
	rw := &recordWriter{f: f, w: w, enc: json.NewEncoder(w)}
	if err := rw.enc.Encode(struct {
		Header RecordHeader `json:"repair"`
	}{h}); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing repair record %s: %w", path, err)
	}
	return rw, nil
}

func (rw *recordWriter) add(o KeyOutcome) {
	if rw == nil {
		return
	}
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.err == nil {
		rw.err = rw.enc.Encode(o)
	}
}

func (rw *recordWriter) close() error {
	if rw == nil {
		return nil
	}
	err := rw.err
	if ferr := rw.w.Flush(); err == nil {
		err = ferr
	}
	if cerr := rw.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing repair record %s: %w", rw.f.Name(), err)
	}
	return nil
}

// ReadRecord reads a repair record (`pitr repair --record`): its header,
// then fn for each key.
func ReadRecord(path string, fn func(KeyOutcome) error) (RecordHeader, error) {
	f, err := os.Open(path)
	if err != nil {
		return RecordHeader{}, fmt.Errorf("opening repair record: %w", err)
	}
	defer f.Close()
	return readRecord(f, path, fn)
}

func readRecord(r io.Reader, name string, fn func(KeyOutcome) error) (RecordHeader, error) {
	dec := json.NewDecoder(bufio.NewReader(r))
	var first struct {
		Header *RecordHeader `json:"repair"`
	}
	if err := dec.Decode(&first); err != nil || first.Header == nil {
		return RecordHeader{}, fmt.Errorf("%s is not a repair record from `dynops pitr repair --record` (no header line)", name)
	}
	for line := 2; dec.More(); line++ {
		var o KeyOutcome
		if err := dec.Decode(&o); err != nil {
			return *first.Header, fmt.Errorf("%s line %d: %w", name, line, err)
		}
		if len(o.Key) == 0 || o.Outcome == "" {
			return *first.Header, fmt.Errorf("%s line %d: a key line needs key and outcome", name, line)
		}
		if err := fn(o); err != nil {
			return *first.Header, err
		}
	}
	return *first.Header, nil
}
