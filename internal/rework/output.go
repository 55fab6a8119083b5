package rework

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// MaxReceiptBytes bounds the whole serialized receipt, raw snapshot included. A larger
// receipt fails closed: nothing is written, nothing is truncated.
const MaxReceiptBytes = 1_000_000

// ErrOutputExists is returned (wrapped) when the output already exists, before any credential
// or request, or when a file was created there concurrently (that file is preserved).
var ErrOutputExists = errors.New("the output already exists; the receipt is immutable: use a fresh run directory")

// ErrReceiptTooLarge is returned (wrapped) when the serialized receipt exceeds MaxReceiptBytes.
var ErrReceiptTooLarge = fmt.Errorf("the serialized receipt is larger than %d bytes", MaxReceiptBytes)

// OutputError is a refused or failed output.
type OutputError struct {
	Rule string
	Err  error
}

func (e *OutputError) Error() string {
	if e.Err != nil {
		return "--output: " + e.Rule + ": " + e.Err.Error()
	}
	return "--output: " + e.Rule
}

func (e *OutputError) Unwrap() error { return e.Err }

// openParent walks path's parent chain descriptor by descriptor with O_NOFOLLOW, so no
// symlink anywhere in the chain is followed (a swapped component cannot redirect the write),
// and returns the parent directory's descriptor and the final name. The parent must be a
// directory owned by the current user and not writable by group or others.
func openParent(path string) (int, string, error) {
	if path == "" {
		return -1, "", &OutputError{Rule: "is required"}
	}
	if strings.HasSuffix(path, "/") {
		return -1, "", &OutputError{Rule: "must name a file, not a directory"}
	}
	parts := strings.Split(path, "/")
	name := parts[len(parts)-1]
	if name == "" || name == "." || name == ".." {
		return -1, "", &OutputError{Rule: "must name a file"}
	}
	start := "."
	if strings.HasPrefix(path, "/") {
		start = "/"
	}
	fd, err := unix.Open(start, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, "", &OutputError{Rule: "cannot open the starting directory", Err: err}
	}
	for _, c := range parts[:len(parts)-1] {
		if c == "" || c == "." {
			continue
		}
		if c == ".." {
			unix.Close(fd)
			return -1, "", &OutputError{Rule: "must not contain .. components"}
		}
		next, err := unix.Openat(fd, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		switch {
		case errors.Is(err, unix.ELOOP), errors.Is(err, unix.ENOTDIR):
			return -1, "", &OutputError{Rule: "a component of the parent chain is a symlink or not a directory (symlinks are never followed)"}
		case errors.Is(err, unix.ENOENT):
			return -1, "", &OutputError{Rule: "the parent directory does not exist (prepare the run directory first)"}
		case err != nil:
			return -1, "", &OutputError{Rule: "cannot open the parent chain", Err: err}
		}
		fd = next
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, "", &OutputError{Rule: "cannot stat the parent directory", Err: err}
	}
	if int(st.Uid) != os.Geteuid() || st.Mode&0o022 != 0 {
		unix.Close(fd)
		return -1, "", &OutputError{Rule: "the parent directory must be owned by the current user and not writable by group or others"}
	}
	return fd, name, nil
}

// PreflightOutput refuses an output that already exists (as anything, a dangling symlink
// included) or whose parent chain is unsafe. It runs before credentials are read or any GET.
func PreflightOutput(path string) error {
	fd, name, err := openParent(path)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	switch err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); {
	case err == nil:
		return &OutputError{Rule: "refused", Err: ErrOutputExists}
	case errors.Is(err, unix.ENOENT):
		return nil
	default:
		return &OutputError{Rule: "cannot check the output", Err: err}
	}
}

// Publish writes data to path atomically and without clobbering: a private (0600) temporary
// file in the same directory, fsynced, then renamed with RENAME_NOREPLACE (or, where the file
// system lacks it, hard-linked, which also refuses an existing name). A file created at path
// concurrently is preserved and ErrOutputExists returned.
func Publish(path string, data []byte) error {
	if len(data) > MaxReceiptBytes {
		return &OutputError{Rule: "refused", Err: ErrReceiptTooLarge}
	}
	fd, name, err := openParent(path)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return &OutputError{Rule: "cannot name the temporary file", Err: err}
	}
	tmp := "." + name + ".tmp-" + hex.EncodeToString(rnd[:])
	tfd, err := unix.Openat(fd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return &OutputError{Rule: "cannot create the temporary file", Err: err}
	}
	f := os.NewFile(uintptr(tfd), tmp)
	cleanup := func() { _ = unix.Unlinkat(fd, tmp, 0) }
	if _, err := f.Write(data); err != nil {
		f.Close()
		cleanup()
		return &OutputError{Rule: "cannot write the temporary file", Err: err}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		cleanup()
		return &OutputError{Rule: "cannot sync the temporary file", Err: err}
	}
	if err := f.Close(); err != nil {
		cleanup()
		return &OutputError{Rule: "cannot close the temporary file", Err: err}
	}
	err = unix.Renameat2(fd, tmp, fd, name, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		err = unix.Linkat(fd, tmp, fd, name, 0)
		cleanup()
	}
	if err != nil {
		cleanup()
		if errors.Is(err, unix.EEXIST) {
			return &OutputError{Rule: "not published", Err: ErrOutputExists}
		}
		return &OutputError{Rule: "cannot publish", Err: err}
	}
	_ = unix.Fsync(fd)
	return nil
}
