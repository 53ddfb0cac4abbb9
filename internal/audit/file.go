package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/dynops/dynops/internal/safefile"
)

// logFile is the audit log opened for one run: opened once, before the
// `started` record, and kept open until `finished`, so both records of a run
// go to the same file even if the path is swapped in between.
type logFile struct {
	path string
	f    *os.File
}

// openLog opens path for appending with the safefile discipline: the
// directory is created 0700 when missing; a symlink above it that root does
// not own, or a parent that others may write to without the sticky bit, is
// refused; the file itself is opened with O_NOFOLLOW (a symlink is refused,
// never followed), created 0600, and refused when it is not a regular file,
// has another hard link, is not ours, or is readable or writable by group or
// others.
func openLog(path string) (*logFile, error) {
	if path == "" {
		return nil, errors.New("no audit log path (pass --audit-log FILE)")
	}
	if err := safefile.MkdirParent(path, "audit log"); err != nil {
		return nil, err
	}
	f, err := safefile.Open(path, "audit log", syscall.O_RDWR|syscall.O_APPEND|syscall.O_CREAT)
	if err != nil {
		return nil, err
	}
	return &logFile{path: path, f: f}, nil
}

// append chains rec to the file's last line (rec.Prev), encodes it and
// writes the line with a single write under an exclusive flock (so that two
// runs appending at once chain in the order they write), then syncs it to
// disk. It returns rec as written.
func (l *logFile) append(rec Record) (Record, error) {
	fd := int(l.f.Fd())
	if err := syscall.Flock(fd, syscall.LOCK_EX); err != nil {
		return rec, fmt.Errorf("locking the audit log %s: %w", l.path, err)
	}
	defer syscall.Flock(fd, syscall.LOCK_UN) //nolint:errcheck // closing releases it too
	last, err := lastLine(l.f)
	if err != nil {
		return rec, fmt.Errorf("reading the last record of the audit log %s: %w", l.path, err)
	}
	rec.Prev = ""
	if last != nil {
		rec.Prev = LineHash(last)
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return rec, fmt.Errorf("encoding the audit record: %w", err)
	}
	return rec, l.write(append(line, '\n'))
}

// write writes line with a single write, then syncs it; the flock is held.
func (l *logFile) write(line []byte) error {
	n, err := l.f.Write(line)
	if err == nil && n != len(line) {
		err = fmt.Errorf("short write (%d of %d bytes)", n, len(line))
	}
	if err != nil {
		return fmt.Errorf("writing the audit log %s: %w", l.path, err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("syncing the audit log %s: %w", l.path, err)
	}
	return nil
}

func (l *logFile) close() error { return l.f.Close() }
