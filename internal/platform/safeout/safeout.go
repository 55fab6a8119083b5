// Package safeout is the one way forgectx writes a file an operator names on the command line
// or in the environment (--dotenv, --stats, --report, the cassette files of --record, the job
// summary): it never destroys what the path names when that is not a file forgectx may
// replace.
//
// # The rule
//
// WriteFile replaces the whole file; Append adds to its end. For both, the target is judged by
// what the path names after following symlinks:
//
//   - a missing path is created (its parent directory must exist);
//   - a regular file is replaced (WriteFile: a temporary file written beside it, synced, then
//     renamed over it, so a reader or a failed write never sees half a file) or appended to;
//   - a symlink is followed to what it names and that is judged instead: a symlink to a regular
//     file updates that file (the link itself stays), a dangling symlink is refused (creating a
//     file wherever a planted link points is how a shared directory is attacked);
//   - a directory, a block device, a socket and anything else is refused;
//   - a named pipe (FIFO) or a character device (/dev/stdout, /dev/null, a terminal) is refused
//     unless Options.Stream is set, in which case the bytes are written through it — opened
//     without O_CREAT and O_TRUNC, so the node is never replaced; a FIFO without a reader is an
//     error, not a hang.
//
// Renaming a temporary file over a character device is what turned `--dotenv /dev/null` into
// the loss of /dev/null when forgectx ran as root: the rename replaces the directory entry,
// whatever it named. Here the rename only ever replaces a regular file, and a path found missing
// is claimed with link(2), which fails instead of replacing an entry that appeared meanwhile.
//
// Every error is an *Error naming the target path the operator gave (never the temporary
// file) and the rule it broke, so a caller prefixes its flag: "--dotenv /dev/null: is a
// character device; …".
package safeout

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// Options tune WriteFile and Append.
type Options struct {
	// Perm is the mode of a file forgectx creates (default 0600). An existing file replaced by
	// WriteFile gets this mode too; Append leaves an existing file's mode alone.
	Perm fs.FileMode
	// Stream allows a FIFO or a character device as the target: the bytes are written through
	// it and the node is left in place. For outputs an operator may point at /dev/stdout.
	Stream bool
}

func (o Options) perm() fs.FileMode {
	if o.Perm == 0 {
		return 0o600
	}
	return o.Perm
}

// Error is a refused or failed write. Path is the target as given.
type Error struct {
	Path string
	Rule string // what is wrong, in words
	Err  error  // the underlying cause, when there is one (an errno, never a temporary path)
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Path, e.Rule, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Path, e.Rule)
}

func (e *Error) Unwrap() error { return e.Err }

// ErrRefused is wrapped by every Error about the kind of target (not an I/O failure), so a
// command can map it to its configuration exit code.
var ErrRefused = errors.New("refused output target")

// Is makes errors.Is(err, ErrRefused) true for a refusal.
func (e *Error) Is(target error) bool { return target == ErrRefused && e.Err == nil }

// kind is what a path names after following symlinks.
type kind int

const (
	kindMissing kind = iota
	kindRegular
	kindStream // FIFO or character device
)

// resolve judges path and returns the path to operate on (the symlink's final target for a
// symlink) and its kind.
func resolve(path string, o Options) (string, kind, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return path, kindMissing, parentOK(path, path)
	}
	if err != nil {
		return "", 0, &Error{Path: path, Rule: "cannot inspect", Err: bareErr(err)}
	}
	real := path
	if fi.Mode()&fs.ModeSymlink != 0 {
		if real, err = filepath.EvalSymlinks(path); err != nil {
			return "", 0, &Error{Path: path, Rule: "is a dangling or looping symlink; forgectx writes through a symlink only to an existing file"}
		}
		if fi, err = os.Stat(real); err != nil {
			return "", 0, &Error{Path: path, Rule: "cannot inspect the symlink's target", Err: bareErr(err)}
		}
	}
	m := fi.Mode()
	switch {
	case m.IsRegular():
		return real, kindRegular, nil
	case m&fs.ModeNamedPipe != 0 && o.Stream, m&fs.ModeCharDevice != 0 && o.Stream:
		return real, kindStream, nil
	}
	return "", 0, &Error{Path: path, Rule: "is " + describe(m) + "; forgectx replaces only a regular file or creates a new one"}
}

// parentOK checks that the directory a new file goes into exists and is writable.
func parentOK(path, shown string) error {
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	if err != nil {
		return &Error{Path: shown, Rule: "its directory " + dir + " does not exist"}
	}
	if !fi.IsDir() {
		return &Error{Path: shown, Rule: dir + " is not a directory"}
	}
	if err := unix.Access(dir, unix.W_OK|unix.X_OK); err != nil {
		return &Error{Path: shown, Rule: "its directory " + dir + " is not writable"}
	}
	return nil
}

func describe(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file"
}

// bareErr drops an *os.PathError's path (which may be a temporary file's) and keeps the cause.
func bareErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// Check reports whether WriteFile(path, …, o) would be allowed, without writing: the pre-flight
// a command runs on every output before its first request, so a bad path fails in
// configuration and not after the work is done.
func Check(path string, o Options) error {
	real, k, err := resolveNamed(path, o)
	if err != nil {
		return err
	}
	if k == kindRegular {
		return parentOK(real, path)
	}
	return nil
}

// CheckAppend reports whether Append(path, …, o) would be allowed, without writing. Unlike
// Check it does not require a writable directory for an existing regular file: appending
// writes into the file itself (a runner's $GITHUB_OUTPUT may sit in a directory the job cannot
// write).
func CheckAppend(path string, o Options) error {
	_, _, err := resolveNamed(path, o)
	return err
}

// WriteFile replaces (or creates) the file path names with data, by the package rule.
func WriteFile(path string, data []byte, o Options) error {
	return write(path, data, o, replaceFile)
}

// replaceFile is WriteFile's part for a regular or missing file: a temporary file beside it,
// linked or renamed into place.
func replaceFile(path, real string, k kind, data []byte, o Options) error {
	dir, base := filepath.Split(real)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".forgectx-*")
	if err != nil {
		return &Error{Path: path, Rule: "cannot create a temporary file beside it", Err: bareErr(err)}
	}
	tmpName := tmp.Name()
	done := false
	defer func() {
		if !done {
			_ = os.Remove(tmpName)
		}
	}()
	_, werr := tmp.Write(data)
	if werr == nil {
		werr = tmp.Chmod(o.perm())
	}
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return &Error{Path: path, Rule: "write failed", Err: bareErr(werr)}
	}
	if k == kindMissing {
		// link(2) never replaces: if something appeared at the path since it was judged, it
		// is judged again instead of being overwritten.
		err := os.Link(tmpName, real)
		switch {
		case err == nil:
			return nil // the deferred Remove drops the temporary name
		case errors.Is(err, fs.ErrExist):
			real2, k2, rerr := resolve(path, o)
			if rerr != nil {
				return rerr
			}
			if k2 == kindStream {
				return writeThrough(path, real2, data)
			}
			if k2 != kindRegular {
				return &Error{Path: path, Rule: "appeared while being written and is not a regular file"}
			}
			real = real2
		case errors.Is(err, syscall.EPERM), errors.Is(err, syscall.ENOTSUP), errors.Is(err, syscall.EXDEV):
			// A file system without hard links: fall back to the rename below.
		default:
			return &Error{Path: path, Rule: "cannot create", Err: bareErr(err)}
		}
	}
	if err := os.Rename(tmpName, real); err != nil {
		return &Error{Path: path, Rule: "cannot replace", Err: bareErr(err)}
	}
	done = true
	return nil
}

// Append adds data to the end of the file path names (created when missing), by the package
// rule. It is for files another program owns and reads line by line ($GITHUB_OUTPUT,
// $GITHUB_STEP_SUMMARY): their content is kept.
func Append(path string, data []byte, o Options) error {
	return write(path, data, o, appendFile)
}

// appendFile is Append's part for a regular or missing file.
func appendFile(path, real string, k kind, data []byte, o Options) error {
	flags := os.O_WRONLY | os.O_APPEND | syscall.O_NOFOLLOW | syscall.O_NONBLOCK
	if k == kindMissing {
		flags |= os.O_CREATE
	}
	f, err := os.OpenFile(real, flags, o.perm())
	if err != nil {
		return &Error{Path: path, Rule: "cannot open", Err: bareErr(err)}
	}
	defer f.Close()
	// The node judged may have been swapped before the open: check what was opened.
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return &Error{Path: path, Rule: "is not a regular file"}
	}
	if _, err := f.Write(data); err != nil {
		return &Error{Path: path, Rule: "write failed", Err: bareErr(err)}
	}
	if err := f.Close(); err != nil {
		return &Error{Path: path, Rule: "write failed", Err: bareErr(err)}
	}
	return nil
}

// resolveNamed is resolve behind the one check every entry point makes first: a path at all.
func resolveNamed(path string, o Options) (string, kind, error) {
	if path == "" {
		return "", 0, &Error{Path: path, Rule: "is empty"}
	}
	return resolve(path, o)
}

// write is the common front of WriteFile and Append: the path is judged, a FIFO or character
// device is written through as it is, and a regular or missing file goes to toFile.
func write(path string, data []byte, o Options, toFile func(path, real string, k kind, data []byte, o Options) error) error {
	real, k, err := resolveNamed(path, o)
	if err != nil {
		return err
	}
	if k == kindStream {
		return writeThrough(path, real, data)
	}
	return toFile(path, real, k, data, o)
}

// writeThrough writes data into a FIFO or character device without creating, truncating or
// replacing it. O_NONBLOCK makes a FIFO without a reader fail (ENXIO) instead of hanging.
func writeThrough(path, real string, data []byte) error {
	f, err := os.OpenFile(real, os.O_WRONLY|syscall.O_NOCTTY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ENXIO) {
			return &Error{Path: path, Rule: "is a named pipe with no reader"}
		}
		return &Error{Path: path, Rule: "cannot open", Err: bareErr(err)}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Mode()&(fs.ModeNamedPipe|fs.ModeCharDevice) == 0 {
		return &Error{Path: path, Rule: "changed while being opened"}
	}
	if _, err := f.Write(data); err != nil {
		return &Error{Path: path, Rule: "write failed", Err: bareErr(err)}
	}
	return nil
}

// CheckDir is the pre-flight for a directory output (--out, --record): the path must be
// missing with an existing, writable parent directory, or an existing real directory (not a
// symlink). Whether it must also be empty is the caller's rule.
func CheckDir(path string) error {
	if path == "" {
		return &Error{Path: path, Rule: "is empty"}
	}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return parentOK(path, path)
	case err != nil:
		return &Error{Path: path, Rule: "cannot inspect", Err: bareErr(err)}
	case fi.Mode()&fs.ModeSymlink != 0:
		return &Error{Path: path, Rule: "is a symlink; forgectx writes a tree only into a real directory"}
	case !fi.IsDir():
		return &Error{Path: path, Rule: "is " + describe(fi.Mode()) + ", not a directory"}
	}
	if err := unix.Access(path, unix.W_OK|unix.X_OK); err != nil {
		return &Error{Path: path, Rule: "is not writable"}
	}
	return nil
}
