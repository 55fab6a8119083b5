package verify

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/forgectx/forgectx/internal/snapshot/treefs"
)

// The walker reads a context tree without ever following a symlink: the root is opened with
// O_DIRECTORY|O_NOFOLLOW, every entry is classified with fstatat(AT_SYMLINK_NOFOLLOW) relative
// to its parent's descriptor, directories are entered with openat(O_DIRECTORY|O_NOFOLLOW) and
// regular files are opened with openat(O_NOFOLLOW|O_NONBLOCK) and re-checked with fstat on the
// open descriptor (same device and inode as classified, still regular, one link). Path names
// are therefore never re-resolved from the root, so a component swapped for a symlink between
// the listing and the open is refused (ELOOP / ENOTDIR) rather than followed. Only directories
// the v1 tree can contain are entered; any other directory is reported and not descended, so
// the walk is bounded by the tree's fixed depth.

// walkedFile is one regular file read, by tree-relative path.
type walkedFile struct {
	path string
	fileData
}

// byPath returns the files read, by path.
func (w *walker) byPath() map[string]fileData {
	m := make(map[string]fileData, len(w.read))
	for _, f := range w.read {
		m[f.path] = f.fileData
	}
	return m
}

// fileData is one regular file read from the tree: its bytes or, when the walker only
// hashes (CheckCopy), their SHA-256 and size.
type fileData struct {
	data []byte
	sum  [sha256.Size]byte
	size int64
	// facts is set (and data nil) for a file Check summarizes instead of holding.
	facts *textFacts
}

type walker struct {
	opts Options
	// read lists the regular files read, in walk order; a slice rather than a map, so the map
	// a caller builds from it is sized once (a 100k-entry map grown entry by entry rehashes
	// itself repeatedly).
	read  []walkedFile
	dirs  map[string]bool // directories seen (relative, "." excluded)
	viol  []Violation
	total int64
	count int
	// hashOnly keeps each file's digest instead of its bytes (read buffers reused).
	hashOnly bool
	// summarize keeps, for the record files and check logs (summarized), their digest and
	// textFacts instead of their bytes (Check); every other file is held.
	summarize bool
	// pending are files opened and checked, in walk order, whose bytes are read on every core
	// when the batch is flushed (see flush).
	pending      []pendingRead
	pendingBytes int64
}

// pendingRead is a file that passed the in-order checks (links, count, size) and is opened,
// checked and read on every core when its batch is flushed.
type pendingRead struct {
	dirfd    int
	name, p  string
	lst      unix.Stat_t // from the directory listing
	maxBytes int64
	// Set by the read-ahead: a violation of the open, or the open file, the size fstat
	// reported on it and the first size+1 bytes at most (hashOnly: their digest, and the
	// bytes only when more may follow).
	viol *Violation
	f    *os.File // still open when more may follow or nothing was read ahead
	size int64
	data []byte
	sum  [sha256.Size]byte
	n    int64 // bytes read; -1: nothing read ahead
	err  error
	// facts of a summarized file read ahead to its end.
	facts *textFacts
}

// A batch is flushed at these bounds, so the bytes read ahead of the in-order accounting stay
// small (16 MiB, or one file beyond it, as listed: a file whose size changed after it was
// listed is not read ahead) whatever the tree holds.
const (
	maxPendingFiles = 256
	maxPendingBytes = 16 << 20
)

func (w *walker) add(p, rule, detail string) {
	w.viol = append(w.viol, newViolation(p, rule, detail))
}

// descend reports whether the relative directory path is one the v1 tree may contain.
func descendable(rel string) bool {
	switch rel {
	case "entity", "records", "threads", "views", "views/reviews", "relations", "history", "checks", "state":
		return true
	}
	if strings.HasPrefix(rel, "checks/") && !strings.Contains(rel[len("checks/"):], "/") {
		return isHex64(rel[len("checks/"):])
	}
	return false
}

// walkTree reads every regular file below root (keeping only digests when hashOnly). A nil
// error with violations means the tree was read but is unacceptable; an error means the root
// itself could not be opened.
func walkTree(root string, opts Options, hashOnly bool) (*walker, error) {
	return walkTreeMode(root, opts, hashOnly, false)
}

// walkTreeMode is walkTree, with summarize (Check) set.
func walkTreeMode(root string, opts Options, hashOnly, summarize bool) (*walker, error) {
	w := &walker{opts: opts, dirs: map[string]bool{}, hashOnly: hashOnly, summarize: summarize}
	var st unix.Stat_t
	if err := unix.Lstat(root, &st); err != nil {
		return nil, fmt.Errorf("context root: %w", err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
	case unix.S_IFLNK:
		w.add(".", RuleSymlink, "the context root is a symlink")
		return w, nil
	default:
		w.add(".", RuleNotDirectory, "the context root is not a directory")
		return w, nil
	}
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			w.add(".", RuleSymlink, "the context root changed to a symlink while opening it")
			return w, nil
		}
		return nil, fmt.Errorf("open context root: %w", err)
	}
	w.walkDir(fd, ".")
	w.flush()
	return w, nil
}

// walkDir lists one directory (fd is consumed and closed).
func (w *walker) walkDir(fd int, rel string) {
	dir := os.NewFile(uintptr(fd), rel)
	defer dir.Close()
	defer w.flush() // the pending files are opened relative to dir
	// Bounded listing: a directory with more entries than the tree may hold files is refused
	// without reading it all.
	names, err := dir.Readdirnames(w.opts.maxFiles() + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		w.add(rel, ruleUnreadable, "directory cannot be listed")
		return
	}
	if len(names) > w.opts.maxFiles() {
		w.add(rel, RuleTooManyFiles, fmt.Sprintf("directory has more than %d entries", w.opts.maxFiles()))
		return
	}
	sort.Strings(names)
	for _, name := range names {
		p := treefs.EntryPath(rel, name)
		var st unix.Stat_t
		if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			w.add(p, ruleUnreadable, "entry cannot be inspected")
			continue
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			w.add(p, RuleSymlink, "symlinks are not allowed anywhere in the tree")
		case unix.S_IFDIR:
			if !descendable(p) {
				w.add(p, RuleExtraDirectory, "directory is not part of the v1 tree layout")
				continue
			}
			w.dirs[p] = true
			// The files listed before this directory are accounted for before the files in
			// it, as a serial walk would.
			w.flush()
			sub, swapped, err := treefs.OpenDirAt(fd, name)
			if err != nil {
				if swapped {
					w.add(p, RuleSymlink, "directory changed to a symlink while opening it")
				} else {
					w.add(p, ruleUnreadable, "directory cannot be opened")
				}
				continue
			}
			w.walkDir(sub, p)
		case unix.S_IFREG:
			w.readFile(fd, name, p, &st)
		default:
			w.add(p, RuleSpecialFile, "only regular files and directories are allowed")
		}
	}
}

func (w *walker) readFile(dirfd int, name, p string, lst *unix.Stat_t) {
	if lst.Nlink > 1 {
		w.add(p, RuleHardLink, fmt.Sprintf("regular file has %d links; hard links are not allowed", lst.Nlink))
		return
	}
	w.count++
	if w.count > w.opts.maxFiles() {
		if w.count == w.opts.maxFiles()+1 {
			w.add(p, RuleTooManyFiles, fmt.Sprintf("more than %d files", w.opts.maxFiles()))
		}
		return
	}
	maxBytes := w.opts.maxFileBytes()
	if p == "index.json" {
		maxBytes = w.opts.maxIndexBytes()
	}
	if lst.Size > maxBytes {
		w.add(p, RuleFileTooLarge, fmt.Sprintf("%d bytes exceeds the %d-byte bound", lst.Size, maxBytes))
		return
	}
	w.pending = append(w.pending, pendingRead{dirfd: dirfd, name: name, p: p, lst: *lst, maxBytes: maxBytes})
	if w.pendingBytes += max(lst.Size, 0); len(w.pending) >= maxPendingFiles || w.pendingBytes >= maxPendingBytes {
		w.flush()
	}
}

// openRegularAt opens name below the directory dirfd without following a symlink (a FIFO
// does not block, a terminal does not become the controlling one) and checks on the open
// descriptor that it is a regular file. On failure f is nil and rule and detail are the
// violation. Both the walk and a verified re-read (rereadVerified) open files with it.
func openRegularAt(dirfd int, name, p string) (f *os.File, st unix.Stat_t, rule, detail string) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, st, RuleSymlink, "file changed to a symlink while opening it"
		}
		return nil, st, ruleUnreadable, "file cannot be opened"
	}
	f = os.NewFile(uintptr(fd), p)
	if err := unix.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, st, ruleUnreadable, "opened file cannot be inspected"
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		f.Close()
		return nil, st, RuleSpecialFile, "file changed type while opening it"
	}
	return f, st, "", ""
}

// open opens a pending file without following a symlink and checks the open descriptor
// against the listing (still regular, same device and inode, one link, within the bound).
func (r *pendingRead) open() {
	f, st, rule, detail := openRegularAt(r.dirfd, r.name, r.p)
	if f == nil {
		r.violate(rule, detail)
		return
	}
	switch {
	case st.Dev != r.lst.Dev || st.Ino != r.lst.Ino:
		r.violate(RuleReplaced, "file was replaced while opening it")
	case st.Nlink > 1:
		r.violate(RuleHardLink, fmt.Sprintf("regular file has %d links; hard links are not allowed", st.Nlink))
	case st.Size > r.maxBytes:
		r.violate(RuleFileTooLarge, fmt.Sprintf("%d bytes exceeds the %d-byte bound", st.Size, r.maxBytes))
	default:
		r.f, r.size = f, max(st.Size, 0)
		return
	}
	f.Close()
}

func (r *pendingRead) violate(rule, detail string) {
	v := newViolation(r.p, rule, detail)
	r.viol = &v
}

// flush opens, checks and reads the pending files on every core, then accounts for them one
// by one in walk order exactly as a serial walk would. The open and its checks are the serial
// walk's (each file's verdict depends only on that file); each file is read ahead only up to
// the size fstat reported plus one byte, and only when that is the size it was listed with; a
// file that has the extra byte (it grew) is read on in order up to its real bound. The bound
// of a file (its own, or what remains of the tree's total) is applied in order, so which file
// exceeds the total, and every verdict and violation, are those of a serial walk.
func (w *walker) flush() {
	batch := w.pending
	w.pending, w.pendingBytes = w.pending[:0], 0
	forEach(len(batch), func(i int) {
		r := &batch[i]
		r.n = -1
		if r.open(); r.f == nil || r.size != r.lst.Size {
			return // a violation, or a size changed since the listing: read in order
		}
		var buf []byte
		if hashOnly := w.dropsBytes(r.p); hashOnly {
			bp := scratchPool.Get().(*[]byte)
			defer scratchPool.Put(bp)
			buf = (*bp)[:0]
			defer func() { *bp = buf[:0] }()
		} else {
			buf = make([]byte, 0, r.size+1)
		}
		buf, r.err = readBoundedInto(r.f, buf, r.size, r.size)
		r.n = int64(len(buf))
		switch drop := w.dropsBytes(r.p); {
		case !drop || r.n > r.size:
			// Kept: the data, or (hashOnly, summarized) bytes that more may follow.
			r.data = buf
			if drop {
				r.data = append([]byte(nil), buf...)
			}
		default:
			r.sum = sha256.Sum256(buf)
			if w.summarize {
				r.facts = textFactsOf(buf, true)
			}
		}
		if r.n <= r.size {
			r.f.Close() // at its end (or failed): nothing more to read
			r.f = nil
		}
	})
	for i := range batch {
		w.account(&batch[i])
		batch[i] = pendingRead{}
	}
}

// dropsBytes reports whether the walk keeps only a digest (and, summarizing, the textFacts)
// of the file at p rather than its bytes.
func (w *walker) dropsBytes(p string) bool { return w.hashOnly || w.summarize && summarized(p) }

// summarized reports whether Check summarizes the file at p: a record file or a check log by
// path. Their bytes are only ever hashed and checked as text (textFacts), and they are almost
// all of a tree's bytes; every other file (JSON documents, order files, index.json) is held.
func summarized(p string) bool {
	switch role, _ := roleForPath(p); role {
	case "entity_record", "record", "check_log":
		return true
	}
	return false
}

// scratchPool holds the read buffers of hashOnly walks, one per concurrent read.
var scratchPool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// account applies the bounds to one file read ahead, in walk order, and records it.
func (w *walker) account(r *pendingRead) {
	if r.viol != nil {
		w.viol = append(w.viol, *r.viol)
		return
	}
	if r.f != nil {
		defer r.f.Close()
	}
	p, maxBytes := r.p, r.maxBytes
	// Read at most the bound plus one byte: a file that grows after fstat is still bounded,
	// and the extra byte detects it.
	limit := maxBytes
	if rem := w.opts.maxTotalBytes() - w.total; rem < limit {
		limit = rem
	}
	data, err := r.data, r.err
	switch {
	case r.n < 0:
		// Not read ahead (its size changed since the listing): read it now, as a serial walk.
		data, err = readBoundedInto(r.f, nil, r.size, limit)
		r.n = int64(len(data))
	case err == nil && r.n > r.size && r.n <= limit:
		// The file grew after fstat: read on, up to the bound plus one byte in all.
		data, err = readOn(r.f, data, limit)
		r.n = int64(len(data))
	}
	if err != nil && r.n <= limit {
		w.add(p, ruleUnreadable, "file cannot be read")
		return
	}
	if r.n > limit {
		if limit < maxBytes {
			w.add(p, RuleFileTooLarge, fmt.Sprintf("the tree exceeds the %d-byte total bound", w.opts.maxTotalBytes()))
		} else {
			w.add(p, RuleFileTooLarge, fmt.Sprintf("file grew beyond the %d-byte bound while reading", maxBytes))
		}
		return
	}
	w.total += r.n
	if w.dropsBytes(p) {
		sum, facts := r.sum, r.facts
		if data != nil {
			sum = sha256.Sum256(data)
			if w.summarize {
				facts = textFactsOf(data, true)
			}
		}
		w.read = append(w.read, walkedFile{p, fileData{sum: sum, size: r.n, facts: facts}})
		return
	}
	w.read = append(w.read, walkedFile{p, fileData{data: data, size: r.n}})
}

// readBoundedInto reads at most limit+1 bytes of f into buf (emptied; its capacity reused,
// grown to the size fstat reported plus one if short, so reading a large file is one
// allocation instead of io.ReadAll's doubling).
func readBoundedInto(f *os.File, buf []byte, size, limit int64) ([]byte, error) {
	if want := min(max(size, 0), limit) + 1; int64(cap(buf)) < want {
		buf = make([]byte, 0, want)
	}
	return readOn(f, buf[:0], limit)
}

// readOn appends what f still holds to buf, until buf has limit+1 bytes or f ends.
func readOn(f *os.File, buf []byte, limit int64) ([]byte, error) {
	r := io.LimitReader(f, limit+1-int64(len(buf)))
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// TreeDirectory reports whether rel (slash-separated, relative to the tree root) is a
// directory the v1 tree may contain: the only directories verification enters. A copy of a
// tree that is verified afterwards (stage.Seal) descends exactly these, so it refuses exactly
// the symlinks and special files verification would see.
func TreeDirectory(rel string) bool { return descendable(rel) }
