package reviewctx

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/forgectx/forgectx/internal/platform/inputfile"

	"github.com/forgectx/forgectx/internal/snapshot/canon"
)

// Store wire names and bounds (the public toolkit's: 4 MB, 128 records, 24 h).
const (
	StoreSchema     = "ocr.context-store/v2"
	storeFile       = "context-store.json"
	handlePrefix    = "ctx1_"
	maxStoreBytes   = 4 << 20
	maxStoreRecords = 128
	maxStoreTTL     = 24 * time.Hour
)

// errStore wraps every store write or hostile read-back failure (abort: nothing is served).
var errStore = errors.New("reviewctx: context store rejected")

// ErrHandle wraps every handle lookup failure; it is returned before any record access.
var ErrHandle = errors.New("reviewctx: context handle rejected")

// Binding is the private mapping a handle stands for. It binds the run, the policy digest,
// the adapter and tenant (empty for forge records), the canonical object, the resource
// class, the projections, the version and digest, and the expiry. It is not an encoded
// upstream ID: the handle is random and the mapping lives only in the owner-only store.
type Binding struct {
	RunID           string      `json:"run_id"`
	PolicyDigest    string      `json:"policy_digest"`
	Adapter         string      `json:"adapter"`
	Tenant          string      `json:"tenant"`
	CanonicalObject string      `json:"canonical_object"`
	ResourceClass   string      `json:"resource_class"`
	Projections     Projections `json:"projections"`
	Version         string      `json:"version"`
	Digest          string      `json:"digest"`
	ExpiresAt       string      `json:"expires_at"`
}

// Reply is one pseudonymized remediation reply.
type Reply struct {
	Author string `json:"author"` // run-local pseudonym, e.g. participant-3
	Class  string `json:"class"`  // user, automation, system
	Text   string `json:"text"`
}

// Thread is a remediation bundle: the verified toolkit root, its safe anchor state and its
// ordered selected replies, as one opaque record.
type Thread struct {
	Fingerprint  string       `json:"fingerprint"`
	Root         string       `json:"root"`
	AnchorState  string       `json:"anchor_state"` // current, outdated, none
	Resolved     bool         `json:"resolved"`
	Replies      []Reply      `json:"replies"`
	Completeness Completeness `json:"completeness"`
	ReplyCount   int          `json:"reply_count"`
	// ResolvedCount and OutdatedCount count the record's notes (root and admitted replies)
	// that are resolved, and that are diff notes anchored to another head than the reviewed
	// one.
	ResolvedCount int `json:"resolved_count"`
	OutdatedCount int `json:"outdated_count"`
	// OmittedReplies counts replies left out (class not selected, bound, command-only).
	OmittedReplies int `json:"omitted_replies"`
}

// threadModel is the fixed model projection of a remediation record: everything but the
// finding fingerprint, which binds the record to its finding for the toolkit only (the
// engine needs the claim's text, not the toolkit's identity of it).
type threadModel struct {
	Root           string       `json:"root"`
	AnchorState    string       `json:"anchor_state"`
	Resolved       bool         `json:"resolved"`
	Replies        []Reply      `json:"replies"`
	Completeness   Completeness `json:"completeness"`
	ReplyCount     int          `json:"reply_count"`
	ResolvedCount  int          `json:"resolved_count"`
	OutdatedCount  int          `json:"outdated_count"`
	OmittedReplies int          `json:"omitted_replies"`
}

// CIRecord is one same-revision CI outcome: only the protected check scope, the exact head,
// the closed status, the classification, the provenance and the completion time.
type CIRecord struct {
	Check          string   `json:"check"`
	PathPrefixes   []string `json:"path_prefixes"`
	ReviewedHead   string   `json:"reviewed_head"`
	Status         string   `json:"status"`         // passed, failed, skipped, canceled, unknown
	Classification string   `json:"classification"` // required, advisory
	Provenance     string   `json:"provenance"`     // current_pipeline, same_revision_pipeline
	CompletedAt    string   `json:"completed_at,omitempty"`
}

// Content is a record's normalized, DLP-checked content. Which parts are set depends on the
// resource class: descriptor/state/text (and count) for metadata, discussions, issues and
// documents; Thread for remediation_thread; CI for ci_outcome.
type Content struct {
	Descriptor string    `json:"descriptor,omitempty"`
	State      string    `json:"state,omitempty"`
	Text       string    `json:"text,omitempty"`
	Count      int       `json:"count,omitempty"`
	Thread     *Thread   `json:"thread,omitempty"`
	CI         *CIRecord `json:"ci,omitempty"`
}

// Digest is the hex SHA-256 of the content's canonical JSON.
func (c *Content) Digest() (string, error) {
	b, err := canon.JSON(c)
	if err != nil {
		return "", err
	}
	return canon.SHA256Hex(b), nil
}

// Record is one committed context record.
type Record struct {
	Handle  string  `json:"handle"`
	Source  string  `json:"source"`
	Mutable bool    `json:"mutable"`
	Binding Binding `json:"binding"`
	Content Content `json:"content"`
}

// ModelView is the record's protected model projection: exactly the fields the policy's
// model list names (remediation and CI records have a fixed projection).
func (r *Record) ModelView() map[string]any {
	m := map[string]any{"handle": r.Handle, "resource_class": r.Binding.ResourceClass}
	switch {
	case r.Content.Thread != nil:
		th := r.Content.Thread
		m["thread"] = threadModel{Root: th.Root, AnchorState: th.AnchorState, Resolved: th.Resolved, Replies: th.Replies,
			Completeness: th.Completeness, ReplyCount: th.ReplyCount, ResolvedCount: th.ResolvedCount, OutdatedCount: th.OutdatedCount,
			OmittedReplies: th.OmittedReplies}
		return m
	case r.Content.CI != nil:
		m["ci_outcome"] = r.Content.CI
		return m
	}
	for _, f := range r.Binding.Projections.Model {
		switch f {
		case "descriptor":
			m[f] = r.Content.Descriptor
		case "state":
			m[f] = r.Content.State
		case "text":
			m[f] = r.Content.Text
		case "count":
			m[f] = r.Content.Count
		case "digest":
			m[f] = r.Binding.Digest
		case "version":
			m[f] = r.Binding.Version
		case "expiry":
			m[f] = r.Binding.ExpiresAt
		}
	}
	return m
}

// Store is the private ocr.context-store/v2 document.
type Store struct {
	SchemaVersion string `json:"schema_version"`
	RunID         string `json:"run_id"`
	Mode          Mode   `json:"mode"`
	PolicyDigest  string `json:"policy_digest"` // empty in metadata mode (no policy)
	PolicySHA     string `json:"policy_sha"`    // the protected target SHA
	ReviewedHead  string `json:"reviewed_head"`
	CreatedAt     string `json:"created_at"`
	ExpiresAt     string `json:"expires_at"`
	// AdmittedMutable is true when any admitted record is mutable upstream (discussions).
	AdmittedMutable bool          `json:"admitted_mutable"`
	Sources         []SourceState `json:"sources"`
	Records         []Record      `json:"records"`
}

// StoreIdentity is what the writer knows about the file it committed; LoadStore with it
// detects a replaced or rewritten file.
type StoreIdentity struct {
	Dev, Ino uint64
	Size     int64
	SHA256   string
}

// NewHandle mints a ctx1_ handle: 32 bytes from crypto/rand, unpadded base64url.
func NewHandle() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("reviewctx: handle: %w", err)
	}
	return handlePrefix + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// ValidHandle reports whether h has the exact ctx1_ form (prefix + 43 base64url characters
// decoding to 32 bytes, canonical encoding).
func ValidHandle(h string) bool {
	rest, ok := strings.CutPrefix(h, handlePrefix)
	if !ok || len(rest) != 43 {
		return false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(rest)
	return err == nil && len(b) == 32
}

// newRunID returns a random run identifier (16 bytes, hex).
func newRunID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("reviewctx: run id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

func storeErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", errStore, fmt.Sprintf(format, a...))
}

// validate checks the store's own invariants; both the writer and the reader run it.
func (s *Store) validate() error {
	if s.SchemaVersion != StoreSchema {
		return storeErr("schema_version: must be %s", StoreSchema)
	}
	if s.RunID == "" {
		return storeErr("run_id: empty")
	}
	switch s.Mode {
	case ModeMetadata:
		if s.PolicyDigest != "" {
			return storeErr("policy_digest: metadata mode has no policy")
		}
	case ModeEnriched:
		if len(s.PolicyDigest) != 64 || !canon.IsLowerHex(s.PolicyDigest) {
			return storeErr("policy_digest: must be 64 lowercase hex digits")
		}
	default:
		return storeErr("mode: must be metadata or enriched")
	}
	created, err := time.Parse(time.RFC3339, s.CreatedAt)
	if err != nil {
		return storeErr("created_at: not RFC 3339")
	}
	exp, err := time.Parse(time.RFC3339, s.ExpiresAt)
	if err != nil || !exp.After(created) || exp.Sub(created) > maxStoreTTL {
		return storeErr("expires_at: must be after created_at and within %s", maxStoreTTL)
	}
	if len(s.Records) > maxStoreRecords {
		return storeErr("records: %d, at most %d", len(s.Records), maxStoreRecords)
	}
	seenSrc, err := s.validateSources()
	if err != nil {
		return err
	}
	handles := map[string]bool{}
	for i := range s.Records {
		if err := s.validateRecord(i, handles, seenSrc, exp); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) validateSources() (map[string]bool, error) {
	seen := map[string]bool{}
	for i, ss := range s.Sources {
		switch ss.Completeness {
		case Complete, Partial, Mutated, Unavailable, DLPRejected:
		default:
			return nil, storeErr("sources[%d].completeness: not a closed value", i)
		}
		if seen[ss.Source] {
			return nil, storeErr("sources[%d].source: duplicate", i)
		}
		seen[ss.Source] = true
	}
	return seen, nil
}

// validateRecord checks record i: a unique handle, a known source, the store's run and policy
// binding, an expiry within the store's and a digest of its content.
func (s *Store) validateRecord(i int, handles, sources map[string]bool, storeExpiry time.Time) error {
	r := &s.Records[i]
	if !ValidHandle(r.Handle) || handles[r.Handle] {
		return storeErr("records[%d].handle: not a unique ctx1_ handle", i)
	}
	handles[r.Handle] = true
	if !sources[r.Source] {
		return storeErr("records[%d].source: no source state", i)
	}
	b := r.Binding
	if b.RunID != s.RunID || b.PolicyDigest != s.PolicyDigest {
		return storeErr("records[%d].binding: run or policy does not match the store", i)
	}
	rexp, err := time.Parse(time.RFC3339, b.ExpiresAt)
	if err != nil || rexp.After(storeExpiry) {
		return storeErr("records[%d].binding.expires_at: invalid or after the store expiry", i)
	}
	d, err := r.Content.Digest()
	if err != nil || d != b.Digest {
		return storeErr("records[%d].binding.digest: does not match the content", i)
	}
	if b.CanonicalObject == "" || b.ResourceClass == "" {
		return storeErr("records[%d].binding: canonical_object and resource_class required", i)
	}
	return nil
}

// encode is the only serialization: RFC 8785 bytes of the Go value, so that the reader can
// demand a byte-exact round trip.
func (s *Store) encode() ([]byte, error) {
	b, err := canon.JSON(s)
	if err != nil {
		return nil, storeErr("encode: %v", err)
	}
	if len(b) > maxStoreBytes {
		return nil, storeErr("%d bytes, over the %d-byte bound", len(b), maxStoreBytes)
	}
	return b, nil
}

// checkDir demands an existing real directory owned by this user with mode 0700.
func checkDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return storeErr("directory: %v", err)
	}
	if fi.Mode()&os.ModeSymlink != 0 || !fi.IsDir() {
		return storeErr("directory: is %s; must be a real directory", inputfile.Kind(fi.Mode()))
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) != os.Getuid() {
		return storeErr("directory: not owned by this user")
	}
	if fi.Mode().Perm() != 0o700 {
		return storeErr("directory: mode %04o, must be 0700", fi.Mode().Perm())
	}
	return nil
}

// CheckStoreDir is the configuration check of a store directory, made before any request: an
// existing one must pass the rules CommitStore applies (a real directory owned by this user,
// mode 0700); a missing one needs an existing parent directory to be created in.
func CheckStoreDir(dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		parent, perr := os.Stat(filepath.Dir(dir))
		if perr != nil {
			return storeErr("directory: parent: %v", perr)
		}
		if !parent.IsDir() {
			return storeErr("directory: parent is %s, not a directory", inputfile.Kind(parent.Mode()))
		}
		return nil
	}
	return checkDir(dir)
}

// CommitStore validates s and writes it atomically into dir (created 0700 when missing):
// a fresh O_EXCL 0600 temporary file, fsync, rename onto storeFile, fsync of the directory.
// It then hostile-reads the file back and returns its identity.
func CommitStore(dir string, s *Store) (StoreIdentity, error) {
	if err := s.validate(); err != nil {
		return StoreIdentity{}, err
	}
	b, err := s.encode()
	if err != nil {
		return StoreIdentity{}, err
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return StoreIdentity{}, storeErr("directory: %v", err)
	}
	if err := checkDir(dir); err != nil {
		return StoreIdentity{}, err
	}
	tmpName, err := newRunID()
	if err != nil {
		return StoreIdentity{}, err
	}
	tmp := filepath.Join(dir, ".tmp-"+tmpName)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return StoreIdentity{}, storeErr("create: %v", err)
	}
	_, werr := f.Write(b)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(tmp)
		return StoreIdentity{}, storeErr("write: %v", werr)
	}
	if err := os.Rename(tmp, filepath.Join(dir, storeFile)); err != nil {
		os.Remove(tmp)
		return StoreIdentity{}, storeErr("rename: %v", err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	sum := sha256.Sum256(b)
	fi, err := os.Lstat(filepath.Join(dir, storeFile))
	if err != nil {
		return StoreIdentity{}, storeErr("stat: %v", err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	id := StoreIdentity{Dev: uint64(st.Dev), Ino: st.Ino, Size: int64(len(b)), SHA256: hex.EncodeToString(sum[:])}
	if _, err := LoadStore(dir, &id); err != nil {
		return StoreIdentity{}, err
	}
	return id, nil
}

// LoadStore is the hostile read-back: the directory must be a real 0700 directory owned by
// this user; the file is opened without following symlinks and must be a regular 0600 file
// owned by this user with exactly one link (a hardlink is refused), within maxStoreBytes; its
// bytes must be the exact canonical encoding of a valid ocr.context-store/v2 document (an
// unknown, missing, differently spelled or duplicated field fails). With want non-nil the
// device, inode, size and SHA-256 must equal what CommitStore wrote (a replaced file fails).
func LoadStore(dir string, want *StoreIdentity) (*Store, error) {
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, storeFile), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, storeErr("open: %v", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, storeErr("stat: %v", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.Mode().IsRegular():
		return nil, storeErr("file: not a regular file")
	case !ok || int(st.Uid) != os.Getuid():
		return nil, storeErr("file: not owned by this user")
	case fi.Mode().Perm() != 0o600:
		return nil, storeErr("file: mode %04o, must be 0600", fi.Mode().Perm())
	case st.Nlink != 1:
		return nil, storeErr("file: %d hard links, must be 1", st.Nlink)
	case fi.Size() > maxStoreBytes:
		return nil, storeErr("file: %d bytes, over the %d-byte bound", fi.Size(), maxStoreBytes)
	}
	if want != nil && (uint64(st.Dev) != want.Dev || st.Ino != want.Ino) {
		return nil, storeErr("file: replaced since commit (inode changed)")
	}
	b, err := io.ReadAll(io.LimitReader(f, maxStoreBytes+1))
	if err != nil {
		return nil, storeErr("read: %v", err)
	}
	if len(b) > maxStoreBytes {
		return nil, storeErr("file: over the %d-byte bound", maxStoreBytes)
	}
	if want != nil {
		sum := sha256.Sum256(b)
		if int64(len(b)) != want.Size || hex.EncodeToString(sum[:]) != want.SHA256 {
			return nil, storeErr("file: content changed since commit")
		}
	}
	if _, err := parseStrict(b); err != nil {
		return nil, storeErr("decode: %v", err)
	}
	var s Store
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, storeErr("decode: %v", err)
	}
	again, err := canon.JSON(&s)
	if err != nil || !bytes.Equal(again, b) {
		return nil, storeErr("decode: not the exact canonical encoding of %s", StoreSchema)
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// Lookup returns the record for handle after checking, before any record access, the
// handle form, the run, the policy digest and the expiry. Invalid, expired, wrong-run,
// wrong-policy, missing and non-minted handles all fail with ErrHandle.
func (s *Store) Lookup(handle, runID, policyDigest string, now time.Time) (*Record, error) {
	if !ValidHandle(handle) {
		return nil, fmt.Errorf("%w: not a ctx1_ handle", ErrHandle)
	}
	if runID != s.RunID {
		return nil, fmt.Errorf("%w: wrong run", ErrHandle)
	}
	if policyDigest != s.PolicyDigest {
		return nil, fmt.Errorf("%w: wrong policy", ErrHandle)
	}
	if exp, err := time.Parse(time.RFC3339, s.ExpiresAt); err != nil || !now.Before(exp) {
		return nil, fmt.Errorf("%w: store expired", ErrHandle)
	}
	for i := range s.Records {
		r := &s.Records[i]
		if r.Handle != handle {
			continue
		}
		if r.Binding.RunID != runID || r.Binding.PolicyDigest != policyDigest {
			return nil, fmt.Errorf("%w: binding mismatch", ErrHandle)
		}
		if exp, err := time.Parse(time.RFC3339, r.Binding.ExpiresAt); err != nil || !now.Before(exp) {
			return nil, fmt.Errorf("%w: record expired", ErrHandle)
		}
		return r, nil
	}
	return nil, fmt.Errorf("%w: not minted in this store", ErrHandle)
}

// Source returns the committed state of one source, and whether it was selected.
func (s *Store) Source(name string) (SourceState, bool) {
	for _, ss := range s.Sources {
		if ss.Source == name {
			return ss, true
		}
	}
	return SourceState{}, false
}

// RemoveStore deletes the store directory (part 2's cleanup); a missing directory is fine.
func RemoveStore(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return storeErr("remove: %v", err)
	}
	return nil
}
