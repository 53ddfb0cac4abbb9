package audit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// The hash chain: every record carries, in `prev`, the SHA-256 of the line
// before it in the same file (its bytes without the newline; "" for the
// file's first line). An edited, deleted or inserted line breaks the chain
// at the line after it, which `dynops audit verify` names. What it cannot
// show: the last line edited (nothing follows it), and the whole file
// rewritten with a fresh chain by someone who holds it (docs/audit.md: the
// central copy and CloudTrail are the records the operator cannot rewrite).

// PrevPrefix starts every `prev` value.
const PrevPrefix = "sha256:"

// LineHash is the `prev` value a record following line carries.
func LineHash(line []byte) string {
	sum := sha256.Sum256(bytes.TrimRight(line, "\r\n"))
	return PrevPrefix + hex.EncodeToString(sum[:])
}

// lastLine returns the file's last line (without its newline), nil when the
// file is empty. f must be open for reading; its offset is not used.
func lastLine(f *os.File) ([]byte, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	end := st.Size()
	if end == 0 {
		return nil, nil
	}
	const chunk = 4096
	var tail []byte
	for pos := end; pos > 0; {
		n := int64(chunk)
		if pos < n {
			n = pos
		}
		pos -= n
		buf := make([]byte, n)
		if _, err := f.ReadAt(buf, pos); err != nil && err != io.EOF {
			return nil, err
		}
		tail = append(buf, tail...)
		body := bytes.TrimSuffix(tail, []byte("\n"))
		if i := bytes.LastIndexByte(body, '\n'); i >= 0 {
			return body[i+1:], nil
		}
		if pos == 0 {
			return body, nil
		}
	}
	return nil, nil
}

// ChainReport is what `dynops audit verify` found in one file.
type ChainReport struct {
	Path  string `json:"path"`
	Lines int    `json:"lines"`
	// Chained counts the records that carry `prev`; Unchained the records
	// before the first of them (written before dynops chained its records).
	Chained   int `json:"chained"`
	Unchained int `json:"unchained"`
	// Broken is the first line whose `prev` does not match the line before
	// it (0: the chain holds); Reason says what did not match.
	Broken int    `json:"broken_line,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// OK tells whether the chain holds.
func (c ChainReport) OK() bool { return c.Broken == 0 }

// VerifyChain checks the chain of the audit log at path and names the first
// line where it breaks. An error is only a file that cannot be read.
func VerifyChain(path string) (ChainReport, error) {
	rep := ChainReport{Path: path}
	data, err := os.ReadFile(path)
	if err != nil {
		return rep, fmt.Errorf("reading the audit log: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var prevLine []byte
	for sc.Scan() {
		rep.Lines++
		n, line := rep.Lines, sc.Bytes()
		var rec struct {
			Prev *string `json:"prev"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			rep.Broken, rep.Reason = n, fmt.Sprintf("line %d is not a JSON record (%v)", n, err)
			return rep, nil
		}
		want := ""
		if n > 1 {
			want = LineHash(prevLine)
		}
		switch {
		case rec.Prev == nil && rep.Chained == 0:
			rep.Unchained++
		case rec.Prev == nil:
			rep.Broken, rep.Reason = n, fmt.Sprintf("line %d carries no prev after chained records: it was inserted, or rewritten without the chain", n)
			return rep, nil
		case *rec.Prev != want:
			rep.Broken = n
			if n == 1 {
				rep.Reason = fmt.Sprintf("line 1 names a previous line (prev %s): the lines before it were deleted", *rec.Prev)
			} else {
				rep.Reason = fmt.Sprintf("line %d's prev is %s, but line %d hashes to %s: line %d was edited, or a line was deleted or inserted between them", n, *rec.Prev, n-1, want, n-1)
			}
			return rep, nil
		default:
			rep.Chained++
		}
		prevLine = append(prevLine[:0], line...)
	}
	if err := sc.Err(); err != nil {
		return rep, fmt.Errorf("reading the audit log %s: %w", path, err)
	}
	return rep, nil
}
