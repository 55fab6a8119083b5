package verify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrChanged is wrapped by the error of a snapshot read (Snapshot.ReadFile) of a file that is
// no longer the one verified: other bytes or size, a symlink, hard link or special file in its
// place or on its path, or gone.
var ErrChanged = errors.New("file changed since it was verified")

// ErrNotInSnapshot is wrapped by the error of a snapshot read of a path that is not a file of
// the verified tree.
var ErrNotInSnapshot = errors.New("not a file of the verified snapshot")

// Open verifies the tree at dir exactly as Check does — the same rules, violations and Report,
// in bounded memory — and, when it passes, returns a Snapshot of it that holds what Check
// holds when its rules run: the manifest, the JSON documents and the order files. The record
// files, check logs and the root index.json, almost all of a tree's bytes, are not held:
// ReadFile (and File, WriteDir) reads each again from dir when it is asked for and hands it on only when its size
// and SHA-256 are the ones verified, opening every path component without following a
// symlink, so a consumer of the snapshot still only ever sees verified bytes. A file changed
// since is refused (ErrChanged), never served.
//
// `forgectx prompt` renders from it, so rendering a 100k-record view costs the index and the
// documents, not the tree. A failing tree returns a nil Snapshot, the report and a nil error,
// as Load does.
func Open(ctx context.Context, dir string, opts Options) (*Snapshot, Report, error) {
	return load(ctx, dir, opts, modeOpen)
}

// Has reports whether p is a file of the verified tree ("index.json" included).
func (s *Snapshot) Has(p string) bool {
	if p == "index.json" {
		return true
	}
	_, ok := s.sums[p]
	return ok
}

// ReadFile returns the verified bytes of p ("index.json" included): the held bytes, or, for a
// file a snapshot from Open does not hold, the file read again from the tree when its size and
// SHA-256 equal those verified. The error wraps ErrNotInSnapshot or ErrChanged and names the
// path and what differs, never content. The slice must not be modified.
func (s *Snapshot) ReadFile(p string) ([]byte, error) {
	var size int64
	var sum [sha256.Size]byte
	switch b, held := s.files[p]; {
	case p == "index.json" && s.Index != nil:
		return s.Index, nil
	case p == "index.json" && s.dir != "":
		size = s.indexSize
		if _, err := hex.Decode(sum[:], []byte(s.IndexSHA256)); err != nil {
			return nil, fmt.Errorf("verify: index.json: %w (no verified digest)", ErrChanged)
		}
	case held:
		return b, nil
	default:
		var unheld, ok bool
		size, unheld = s.unheld[p]
		sum, ok = s.sums[p]
		if !ok || !unheld {
			return nil, fmt.Errorf("verify: %s: %w", cleanText(p), ErrNotInSnapshot)
		}
	}
	b, why := rereadVerified(s.dir, p, size, sum)
	if why != "" {
		return nil, fmt.Errorf("verify: %s: %w (%s)", cleanText(p), ErrChanged, why)
	}
	return b, nil
}

// rereadVerified reads the file p (slash-separated, relative) below dir again and returns its
// bytes when they are exactly size bytes with SHA-256 sum; otherwise why, a fixed description
// of the difference. As the walker reads a tree: the root opened O_DIRECTORY|O_NOFOLLOW, every
// directory component entered with openat(O_DIRECTORY|O_NOFOLLOW), the file opened as the walk
// opens it (openRegularAt) and required to have one link, and at most size+1 bytes read, so a
// file that grew is bounded and detected.
func rereadVerified(dir, p string, size int64, sum [sha256.Size]byte) ([]byte, string) {
	comps := strings.Split(p, "/")
	for _, c := range comps {
		if c == "" || c == "." || c == ".." {
			return nil, "not a tree path"
		}
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, "the tree root cannot be opened as a directory"
	}
	for _, c := range comps[:len(comps)-1] {
		next, err := unix.Openat(fd, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return nil, "a directory on its path is missing or is not a directory"
		}
		fd = next
	}
	f, st, _, detail := openRegularAt(fd, comps[len(comps)-1], p)
	unix.Close(fd)
	if f == nil {
		return nil, detail
	}
	defer f.Close()
	if st.Nlink != 1 {
		return nil, "a hard link"
	}
	b, err := readBoundedInto(f, nil, size, size)
	switch {
	case err != nil:
		return nil, "unreadable"
	case int64(len(b)) != size:
		return nil, fmt.Sprintf("its size is not the verified %d bytes", size)
	case sha256.Sum256(b) != sum:
		return nil, "its sha256 is not the verified one"
	}
	return b, ""
}
