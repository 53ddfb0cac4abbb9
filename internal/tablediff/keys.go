package tablediff

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/dynops/dynops/internal/safefile"
)

// Kind says how an item differs between the source and the target.
type Kind string

// Kinds of difference.
const (
	OnlyInSource Kind = "only_in_source" // e.g. deleted from the original since the restore point
	OnlyInTarget Kind = "only_in_target" // e.g. written to the original after the restore point
	Changed      Kind = "changed"        // same key, different attributes
)

// Header is the first line of a keys file: which diff the keys come from.
type Header struct {
	Source     string    `json:"source"`
	Target     string    `json:"target"`
	KeyNames   []string  `json:"key_names"`
	Attributes []string  `json:"attributes,omitempty"` // compared attributes; empty: whole items
	Time       time.Time `json:"time"`
}

// KeyRecord is one differing key in a keys file, with the checksums of the
// item on each side at diff time ("" where the item was absent), so a repair
// can tell whether the target changed since the diff.
type KeyRecord struct {
	Kind      Kind            `json:"kind"`
	Key       json.RawMessage `json:"key"`
	SourceSum string          `json:"source_sum,omitempty"`
	TargetSum string          `json:"target_sum,omitempty"`
}

// keysLine is a line of the on-disk form: one JSON document per line, the header first.
type keysLine struct {
	Header *Header `json:"diff,omitempty"`
	KeyRecord
}

// keysWriter writes a keys file.
type keysWriter struct {
	f   *os.File
	w   *bufio.Writer
	enc *json.Encoder
}

func createKeys(path string, force bool, h Header) (*keysWriter, error) {
	f, err := safefile.Create(path, "keys file (--keys-out)", force)
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriter(f)
	kw := &keysWriter{f: f, w: w, enc: json.NewEncoder(w)}
	if err := kw.enc.Encode(struct {
		Header Header `json:"diff"`
	}{h}); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing keys file %s: %w", path, err)
	}
	return kw, nil
}

func (kw *keysWriter) write(r KeyRecord) error {
	if err := kw.enc.Encode(keysLine{KeyRecord: r}); err != nil {
		return fmt.Errorf("writing keys file %s: %w", kw.f.Name(), err)
	}
	return nil
}

func (kw *keysWriter) close() error {
	if err := kw.w.Flush(); err != nil {
		kw.f.Close()
		return fmt.Errorf("writing keys file %s: %w", kw.f.Name(), err)
	}
	return kw.f.Close()
}

// ReadKeys reads a keys file written by Diff: it returns the header and calls
// fn for each key in file order, stopping at fn's first error.
func ReadKeys(path string, fn func(KeyRecord) error) (Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, fmt.Errorf("opening keys file: %w", err)
	}
	defer f.Close()
	return readKeys(f, path, fn)
}

func readKeys(r io.Reader, name string, fn func(KeyRecord) error) (Header, error) {
	dec := json.NewDecoder(bufio.NewReader(r))
	var first keysLine
	if err := dec.Decode(&first); err != nil || first.Header == nil {
		return Header{}, fmt.Errorf("%s is not a keys file from `dynops table diff --keys-out` (no header line)", name)
	}
	h := *first.Header
	for line := 2; dec.More(); line++ {
		var l keysLine
		if err := dec.Decode(&l); err != nil {
			return h, fmt.Errorf("%s line %d: %w", name, line, err)
		}
		switch l.Kind {
		case OnlyInSource, OnlyInTarget, Changed:
		default:
			return h, fmt.Errorf("%s line %d: unknown kind %q", name, line, l.Kind)
		}
		if err := fn(l.KeyRecord); err != nil {
			return h, err
		}
	}
	return h, nil
}
