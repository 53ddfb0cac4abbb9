// Package safefile is dynops's one file discipline for what it writes on a
// person's behalf (the audit log, keys files, tables.yaml entries, migration
// state): no symlink at the path or in a directory above it that someone
// other than root could have planted, no hard link, mode 0600, owned by the
// user, and no overwrite unless asked.
package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// CheckPath checks the directories above path (what names the file in
// errors, e.g. "audit log"): none is a symlink, except root's own directly
// under / (such as /var and /tmp on macOS), since a symlink could send the
// file anywhere; and the parent is a directory that others cannot write to,
// unless it has the sticky bit.
func CheckPath(path, what string) error {
	dir, err := parent(path, what)
	if err != nil {
		return err
	}
	if err := checkAncestors(dir, what); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("%s directory %s: %w", what, dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s directory %s is not a directory", what, dir)
	}
	if fi.Mode().Perm()&0o022 != 0 && fi.Mode()&os.ModeSticky == 0 {
		return fmt.Errorf("%s directory %s has mode %04o: others could replace the file; run chmod go-w %s", what, dir, fi.Mode().Perm(), dir)
	}
	return nil
}

// MkdirParent creates the directory of path, 0700, when missing, after
// checking that no symlink above it would take it elsewhere.
func MkdirParent(path, what string) error {
	dir, err := parent(path, what)
	if err != nil {
		return err
	}
	if err := checkAncestors(dir, what); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating the %s directory %s: %w", what, dir, err)
	}
	return nil
}

func parent(path, what string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", what, path, err)
	}
	return filepath.Dir(abs), nil
}

// checkAncestors refuses a symlink at dir or above it (components that do
// not exist yet are skipped), except one root owns directly under /.
func checkAncestors(dir, what string) error {
	for d := dir; ; d = filepath.Dir(d) {
		up := filepath.Dir(d)
		fi, err := os.Lstat(d)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return fmt.Errorf("%s directory %s: %w", what, d, err)
		case fi.Mode()&os.ModeSymlink != 0:
			st, ok := fi.Sys().(*syscall.Stat_t)
			if !ok || st.Uid != 0 || filepath.Dir(up) != up {
				real, _ := filepath.EvalSymlinks(d)
				return fmt.Errorf("%s directory %s is a symlink (to %s): dynops does not follow it; use the real directory in the path", what, d, real)
			}
		}
		if up == d {
			return nil
		}
	}
}

// CheckOpened checks a file just opened (never followed through a
// symlink): a regular file with one link, owned by the user, not readable or
// writable by group or others.
func CheckOpened(f *os.File, path, what string) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, path, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s %s is not a regular file (%s)", what, path, fi.Mode().Type())
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%s %s has mode %04o, looser than 0600: others could read or change it; run chmod 600 %s", what, path, perm, path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if int(st.Uid) != os.Geteuid() {
			return fmt.Errorf("%s %s belongs to uid %d, not to you (uid %d): use a file of your own", what, path, st.Uid, os.Geteuid())
		}
		if st.Nlink > 1 {
			return fmt.Errorf("%s %s has %d hard links: another name reaches the same file; use a new file", what, path, st.Nlink)
		}
	}
	return nil
}

// Open opens path with flag (plus O_NOFOLLOW and O_CLOEXEC; O_CREAT makes it
// 0600) after CheckPath, and checks it with CheckOpened.
func Open(path, what string, flag int) (*os.File, error) {
	if path == "" {
		return nil, fmt.Errorf("no %s path", what)
	}
	if err := CheckPath(path, what); err != nil {
		return nil, err
	}
	fd, err := syscall.Open(path, flag|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		switch {
		case errors.Is(err, syscall.ELOOP):
			return nil, fmt.Errorf("%s %s is a symlink: dynops does not follow it; name a regular file", what, path)
		case errors.Is(err, syscall.EEXIST):
			return nil, fmt.Errorf("%s %s already exists: pass --force to overwrite it, or name a new file", what, path)
		}
		return nil, fmt.Errorf("opening the %s %s: %w", what, path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	if err := CheckOpened(f, path, what); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// CheckNew checks, before a long operation, that Create(path, what, force)
// can succeed: CheckPath, and nothing at path unless force (and never a
// symlink, a non-regular file or another user's file).
func CheckNew(path, what string, force bool) error {
	if err := CheckPath(path, what); err != nil {
		return err
	}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("%s %s: %w", what, path, err)
	case fi.Mode()&os.ModeSymlink != 0:
		return fmt.Errorf("%s %s is a symlink: dynops does not follow or replace it; name a regular file", what, path)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s %s is not a regular file (%s)", what, path, fi.Mode().Type())
	case !force:
		return fmt.Errorf("%s %s already exists: pass --force to overwrite it, or name a new file", what, path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s %s belongs to uid %d, not to you (uid %d): use a file of your own", what, path, st.Uid, os.Geteuid())
	}
	return nil
}

// Create creates path for writing (see Open). An existing file is refused
// unless force; with force, a regular file of the user's is removed first
// (a symlink or another's file never is) and a new one created in its place.
func Create(path, what string, force bool) (*os.File, error) {
	if err := CheckNew(path, what, force); err != nil {
		return nil, err
	}
	if force {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("overwriting the %s %s: %w", what, path, err)
		}
	}
	return Open(path, what, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL)
}

// WriteFile writes data to path through Create and syncs it.
func WriteFile(path, what string, data []byte, force bool) error {
	f, err := Create(path, what, force)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("writing the %s %s: %w", what, path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("syncing the %s %s: %w", what, path, err)
	}
	return f.Close()
}
