package audit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// logFile is the audit log opened for one run: opened once, before the
// `started` record, and kept open until `finished`, so both records of a run
// go to the same file even if the path is swapped in between.
type logFile struct {
	path string
	f    *os.File
}

// openLog opens path for appending, safely: the directory is created 0700
// when missing; a parent that is a symlink, or that others may write to
// without the sticky bit, is refused; the file itself is opened with
// O_NOFOLLOW (a symlink is refused, never followed), created 0600, and
// refused when it is not a regular file, not ours, or readable or writable by
// group or others.
func openLog(path string) (*logFile, error) {
	if path == "" {
		return nil, errors.New("no audit log path (pass --audit-log FILE)")
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the audit log directory %s: %w", dir, err)
	}
	if err := checkParent(dir); err != nil {
		return nil, err
	}
	fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_APPEND|syscall.O_CREAT|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("audit log %s is a symlink: dynops does not follow it; point --audit-log at a regular file", path)
		}
		return nil, fmt.Errorf("opening the audit log %s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	if err := checkFile(f, path); err != nil {
		f.Close()
		return nil, err
	}
	return &logFile{path: path, f: f}, nil
}

func checkParent(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("audit log directory %s: %w", dir, err)
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("audit log directory %s is a symlink: dynops does not follow it; use the real directory", dir)
	}
	if !fi.IsDir() {
		return fmt.Errorf("audit log directory %s is not a directory", dir)
	}
	if fi.Mode().Perm()&0o022 != 0 && fi.Mode()&os.ModeSticky == 0 {
		return fmt.Errorf("audit log directory %s has mode %04o: others could replace the log; run chmod go-w %s", dir, fi.Mode().Perm(), dir)
	}
	return nil
}

func checkFile(f *os.File, path string) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("audit log %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("audit log %s is not a regular file (%s)", path, fi.Mode().Type())
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("audit log %s has mode %04o, looser than 0600: others could read or change it; run chmod 600 %s", path, perm, path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("audit log %s belongs to uid %d, not to you (uid %d): use your own --audit-log", path, st.Uid, os.Geteuid())
	}
	return nil
}

// append writes line (one record, ending in a newline) with a single write
// under an exclusive flock, then syncs it to disk.
func (l *logFile) append(line []byte) error {
	fd := int(l.f.Fd())
	if err := syscall.Flock(fd, syscall.LOCK_EX); err != nil {
		return fmt.Errorf("locking the audit log %s: %w", l.path, err)
	}
	defer syscall.Flock(fd, syscall.LOCK_UN) //nolint:errcheck // closing releases it too
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
