// Package stage is the host-side staging lifecycle of an entity-context-snapshot v1 tree (docs/contracts.md,
// "Lifecycle and access" and "Canonical bytes":
// root index retention and verification/upload).
//
// The lifecycle `forgectx run` drives (and `forgectx stage` exposes to scripts):
//
//  1. Scavenge at start-up: remove trees whose owning process is gone (an earlier unclean exit).
//  2. Create (a tree in memory) or Build (a tree a builder writes, such as snapshot.AssembleTo):
//     write the host tree outside the repository, outside retained run output and outside
//     any artifacts directory, with directories 0700 and files 0600, and retain the
//     assembled root index digest in host-private state (a 0700 state directory outside the
//     tree). The pre-script runs against the host tree.
//  3. Seal, after the pre-script: compare the on-disk root index with the retained digest,
//     copy the host tree file by file into the sandbox copy (no symlink or special file
//     followed or copied, nothing held in memory), make the copy agent-immutable (root-owned
//     0555/0444 with the agent running unprivileged, or a read-only bind mount), then verify
//     that sealed copy — every child against the retained manifest, every rule — with
//     verify.Check: the agent reads exactly the bytes verified, and what the host tree holds
//     after the copy is irrelevant. If immutability cannot be enforced, Seal returns an
//     *ImmutabilityError and the agent must not be launched.
//  4. Cleanup on every controlled exit (success, skip, failure, cancellation): remove the
//     sandbox copy, the host tree and the state. Cleanup is idempotent.
//
// Signals: callers turn SIGINT/SIGTERM into context cancellation (signal.NotifyContext, as
// cmd/forgectx does), `defer st.Cleanup()` right after Create, and return when the context is
// done, so the deferred cleanup runs. A SIGKILL or crash leaves the state behind; the next
// start-up's Scavenge removes it because the owner process (PID plus kernel start time plus boot
// ID) is gone.
//
// Diagnostics (errors, logs) carry paths of the staging directories, counts, digests and rule
// codes — never file content.
package stage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/forgectx/forgectx/internal/platform/inputfile"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/snapshot/canon"
	"github.com/forgectx/forgectx/internal/snapshot/treefs"
	"github.com/forgectx/forgectx/internal/snapshot/verify"
)

// Source is a tree that already passed its checks — an assembled, self-validated
// snapshot.Tree or a verify.Snapshot — that writes itself into a directory that does not exist
// yet and gives the SHA-256 of its files, against which the written copy is checked.
type Source interface {
	WriteDir(dir string) error
	Sums() treefs.Sums
}

// Options place the staging directories.
type Options struct {
	// Base is the directory the host tree and the sandbox copy are created in; default
	// os.TempDir(). It must be searchable by the agent user (the sandbox copy lives in it) and
	// should not be writable by it: in ownership mode a copy under an agent-writable Base is
	// placed in os.TempDir() instead.
	Base string
	// StateDir is the host-private state root (0700, owned by this user); default
	// <os.TempDir()>/forgectx-stage-<euid>.
	StateDir string
	// Forbidden lists directories no staging path may be inside: the retained run output and
	// artifact directories. GITHUB_WORKSPACE, CI_PROJECT_DIR and the Git work tree containing
	// WorkDir are always added.
	Forbidden []string
	// WorkDir is where the Git work tree is looked for; default the current directory.
	WorkDir string
	// Getenv reads the CI environment; default os.Getenv.
	Getenv func(string) string
	// OwnerPID is the process whose death makes the staged trees abandoned; default this
	// process. `forgectx stage create` uses its parent (the calling script).
	OwnerPID int
	// Log receives counts, digests and codes; nil discards.
	Log *zerolog.Logger
}

func (o *Options) defaults() error {
	if o.Base == "" {
		o.Base = os.TempDir()
	}
	if o.StateDir == "" {
		o.StateDir = DefaultStateDir()
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.WorkDir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("stage: working directory: %w", err)
		}
		o.WorkDir = wd
	}
	if o.OwnerPID == 0 {
		o.OwnerPID = os.Getpid()
	}
	if o.Log == nil {
		nop := zerolog.Nop()
		o.Log = &nop
	}
	var err error
	if o.Base, err = filepath.Abs(o.Base); err != nil {
		return err
	}
	// Staging paths are built from the resolved base, so no path handed to the pre-script,
	// the agent or the cleanup goes through a symlink.
	if r, err := filepath.EvalSymlinks(o.Base); err == nil {
		o.Base = r
	}
	o.StateDir, err = filepath.Abs(o.StateDir)
	return err
}

// DefaultStateDir is the default host-private state root.
func DefaultStateDir() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("forgectx-stage-%d", os.Geteuid()))
}

// Phases recorded in the state file.
const (
	PhaseCreating = "creating"
	PhaseCreated  = "created"
	phaseSealed   = "sealed"
)

// stateFile is StateDir/<id>/state.json: everything needed to seal, clean up or scavenge.
type stateFile struct {
	Version     int    `json:"version"`
	ID          string `json:"id"`
	Phase       string `json:"phase"`
	OwnerPID    int    `json:"owner_pid"`
	OwnerStart  uint64 `json:"owner_start_ticks"`
	BootID      string `json:"boot_id"`
	HostDir     string `json:"host_dir"`
	SandboxDir  string `json:"sandbox_dir"`
	IndexSHA256 string `json:"index_sha256"`
	Mode        Mode   `json:"mode,omitempty"`
	// Mounted is set before a bind mount is attempted and cleared if it fails, so cleanup
	// (or the scavenger after a crash) knows to unmount.
	Mounted bool `json:"mounted,omitempty"`
}

// Stage is one staged tree.
type Stage struct {
	ID string
	// HostDir is the host tree the pre-script may read (0700/0600).
	HostDir string
	// SandboxDir is where Seal puts the agent-facing copy. In ownership mode Seal moves it to
	// the temporary directory when the agent could replace it under Base (see placeSandbox);
	// hand the agent Sealed.Dir, which is always the final path.
	SandboxDir string
	// IndexSHA256 is the retained root index digest (set once the host tree is built).
	IndexSHA256 string

	stateDir string // StateDir/<id>
	opts     Options
	log      *zerolog.Logger
	mu       sync.Mutex
	st       stateFile
	cleaned  bool
	// afterCopy runs once the host tree is copied to dir, before the copy is made read-only
	// and verified (tests use it to change the host tree, or the copy, in that window).
	afterCopy func(dir string)
}

// PlacementError: a staging path would be inside the repository, the run output or an
// artifacts directory, or the state directory is not private.
type PlacementError struct {
	Path   string
	Inside string
	Reason string
}

func (e *PlacementError) Error() string {
	if e.Inside != "" {
		return fmt.Sprintf("stage: %s is inside %s (%s); context trees must live outside it", e.Path, e.Inside, e.Reason)
	}
	return fmt.Sprintf("stage: %s: %s", e.Path, e.Reason)
}

func newID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("stage: random id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

func validID(id string) bool { return len(id) == 32 && canon.IsLowerHex(id) }

// ValidID reports whether id has the form Create gives stage ids (32 lowercase hexadecimal
// digits), so a command can reject a mistyped --id as a bad flag before touching any state.
func ValidID(id string) bool { return validID(id) }

// HostDirName and sandboxDirName are the directory names of a stage's trees under Base; the
// scavenger removes only directories with exactly these names.
func HostDirName(id string) string    { return "forgectx-ctx-" + id + "-host" }
func sandboxDirName(id string) string { return "forgectx-ctx-" + id + "-sandbox" }

// Builder writes a stage's host tree into dir, which does not exist yet (its parent does),
// and returns the SHA-256 of the root index.json it wrote (the digest to retain) and the
// SHA-256 of every other file by path, against which the written tree is checked. It may
// write through a staging directory beside dir that it renames to dir at the end, as
// snapshot.AssembleTo does: Cleanup and the scavenger remove such a directory
// (".<host dir name>.assembling-<digits>") when the builder never finished. On error it
// should leave nothing behind; Build cleans up whatever it left.
type Builder func(ctx context.Context, dir string) (indexSHA256 string, sums treefs.Sums, err error)

// Create writes src as the host tree and retains indexSHA256 (the assembler's digest of the
// root index.json) in host-private state. The returned Stage must be cleaned up by the caller
// on every exit path (defer st.Cleanup()). It is Build with a builder that writes src.
func Create(ctx context.Context, opts Options, src Source, indexSHA256 string) (*Stage, error) {
	// Checked before anything is created: a malformed digest is the caller's mistake, not a
	// tree that failed its check.
	if err := checkDigest(indexSHA256); err != nil {
		return nil, err
	}
	return Build(ctx, opts, func(_ context.Context, dir string) (string, treefs.Sums, error) {
		if err := src.WriteDir(dir); err != nil {
			return "", nil, err
		}
		return indexSHA256, src.Sums(), nil
	})
}

// CreateFromDir stages the tree at src, a directory anyone may have written (`forgectx stage
// create --from`), without holding it in memory: the builder copies src into the host
// directory file by file exactly as Seal copies the host tree (no symlink, hard link or
// special file followed or copied; bounded), then verifies the copy itself with verify.Check
// — the host directory is private (0700) and written only by this process, so the bytes
// verified are the bytes staged — and the digest retained is the copy's root index digest,
// which must equal indexSHA256 when that is given. A copy that does not verify fails with a
// *verify.Error carrying its report, and nothing is left behind.
func CreateFromDir(ctx context.Context, opts Options, src, indexSHA256 string) (*Stage, error) {
	if indexSHA256 != "" {
		if err := checkDigest(indexSHA256); err != nil {
			return nil, err
		}
	}
	return Build(ctx, opts, func(ctx context.Context, dir string) (string, treefs.Sums, error) {
		if err := copyTree(ctx, src, dir); err != nil {
			return "", nil, fmt.Errorf("copy the --from tree: %w", err)
		}
		rep, sums, err := verify.CheckSums(ctx, dir, verify.Options{IndexSHA256: indexSHA256})
		if err != nil {
			return "", nil, err
		}
		if !rep.OK() {
			return "", nil, &verify.Error{Report: rep}
		}
		return rep.IndexSHA256, sums, nil
	})
}

// checkDigest applies the rule of a retained root index digest.
func checkDigest(indexSHA256 string) error {
	if len(indexSHA256) != 64 || !canon.IsLowerHex(indexSHA256) {
		return fmt.Errorf("stage: index digest must be 64 lowercase hexadecimal digits")
	}
	return nil
}

// Build creates a stage whose host tree b writes, so a tree that is assembled straight to
// disk (snapshot.AssembleTo) is never held in memory whole. The state, naming the owner, is
// saved (phase creating, no digest yet) before b runs, so a crash during the build leaves
// something the scavenger attributes and removes; once b returns, the host tree's modes are
// enforced, the tree is compared with the returned digest and sums (verify.CheckCopy), and
// the digest is retained (phase created). The returned Stage must be cleaned up by the caller
// on every exit path (defer st.Cleanup()).
func Build(ctx context.Context, opts Options, b Builder) (*Stage, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkPlacement(&opts); err != nil {
		return nil, err
	}
	if err := ensurePrivateDir(opts.StateDir); err != nil {
		return nil, err
	}
	id, err := newID()
	if err != nil {
		return nil, err
	}
	start, boot := processIdentity(opts.OwnerPID)
	s := &Stage{
		ID:         id,
		HostDir:    filepath.Join(opts.Base, HostDirName(id)),
		SandboxDir: filepath.Join(opts.Base, sandboxDirName(id)),
		stateDir:   filepath.Join(opts.StateDir, id),
		opts:       opts,
		log:        opts.Log,
	}
	s.st = stateFile{Version: 1, ID: id, Phase: PhaseCreating, OwnerPID: opts.OwnerPID, OwnerStart: start, BootID: boot,
		HostDir: s.HostDir, SandboxDir: s.SandboxDir}
	if err := os.Mkdir(s.stateDir, 0o700); err != nil {
		return nil, fmt.Errorf("stage: state directory: %w", err)
	}
	// The state names the owner before any tree exists, so a crash from here on leaves
	// something the scavenger can attribute and remove.
	if err := s.saveState(); err != nil {
		os.RemoveAll(s.stateDir)
		return nil, err
	}
	fail := func(err error) (*Stage, error) {
		if cerr := s.Cleanup(); cerr != nil {
			err = errors.Join(err, cerr)
		}
		return nil, err
	}
	digest, sums, err := b(ctx, s.HostDir)
	if err != nil {
		return fail(fmt.Errorf("stage: write host tree: %w", err))
	}
	if err := checkDigest(digest); err != nil {
		return fail(err)
	}
	if err := enforceHostModes(s.HostDir); err != nil {
		return fail(err)
	}
	// The written tree must be the retained one, byte for byte. The builder's tree already
	// passed its checks, so the copy is compared by digest (verify.CheckCopy), not verified
	// again: the one full verification is Seal's, after the pre-script.
	rep, err := verify.CheckCopy(ctx, s.HostDir, digest, sums, verify.Options{})
	if err != nil {
		return fail(fmt.Errorf("stage: verify host tree: %w", err))
	}
	if !rep.OK() {
		return fail(fmt.Errorf("stage: host tree: %w", &verify.Error{Report: rep}))
	}
	s.IndexSHA256, s.st.IndexSHA256, s.st.Phase = digest, digest, PhaseCreated
	if err := s.saveState(); err != nil {
		return fail(err)
	}
	s.log.Info().Str("stage_id", id).Int("files", rep.Files).Int64("bytes", rep.Bytes).Str("index_sha256", digest).Msg("stage: host tree created")
	return s, nil
}

// Open loads an existing stage from its state (for `forgectx stage verify-copy` and
// `cleanup`, which run in later processes than `create`).
func Open(opts Options, id string) (*Stage, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	if !validID(id) {
		return nil, fmt.Errorf("stage: id must be 32 lowercase hexadecimal digits")
	}
	if err := checkPrivateDir(opts.StateDir); err != nil {
		return nil, err
	}
	dir := filepath.Join(opts.StateDir, id)
	st, err := readState(dir)
	if err != nil {
		return nil, err
	}
	if st.ID != id || filepath.Base(st.HostDir) != HostDirName(id) || filepath.Base(st.SandboxDir) != sandboxDirName(id) {
		return nil, fmt.Errorf("stage: state of %s does not name its own directories", id)
	}
	return &Stage{ID: id, HostDir: st.HostDir, SandboxDir: st.SandboxDir, IndexSHA256: st.IndexSHA256, stateDir: dir, opts: opts, log: opts.Log, st: st}, nil
}

// maxStateBytes bounds a state file read.
const maxStateBytes = 64 << 10

func readState(dir string) (stateFile, error) {
	var st stateFile
	p := filepath.Join(dir, "state.json")
	fi, err := os.Lstat(p)
	if err != nil {
		return st, fmt.Errorf("stage: state: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return st, fmt.Errorf("stage: state %s is not a regular file", p)
	}
	f, err := os.OpenFile(p, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return st, fmt.Errorf("stage: state: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxStateBytes+1))
	if err != nil {
		return st, fmt.Errorf("stage: state: %w", err)
	}
	if len(b) > maxStateBytes {
		return st, fmt.Errorf("stage: state %s is too large", p)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("stage: state %s is not valid JSON", p)
	}
	if st.Version != 1 || !validID(st.ID) || !filepath.IsAbs(st.HostDir) || !filepath.IsAbs(st.SandboxDir) {
		return st, fmt.Errorf("stage: state %s is not a v1 state", p)
	}
	return st, nil
}

// saveState writes the state atomically (temporary file, fsync, rename).
func (s *Stage) saveState() error {
	b, err := json.Marshal(s.st)
	if err != nil {
		return err
	}
	tmp := filepath.Join(s.stateDir, "state.json.tmp")
	_ = os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o600)
	if err != nil {
		return fmt.Errorf("stage: write state: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("stage: write state: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("stage: write state: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("stage: write state: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(s.stateDir, "state.json")); err != nil {
		return fmt.Errorf("stage: write state: %w", err)
	}
	return nil
}

// ensurePrivateDir creates dir (0700) if missing and checks it is private.
func ensurePrivateDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("stage: state directory: %w", err)
	}
	return checkPrivateDir(dir)
}

// checkPrivateDir: a real directory (not a symlink), owned by this user, with no group or
// other permission bits — otherwise another user could plant or read state.
func checkPrivateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("stage: state directory: %w", err)
	}
	if !fi.IsDir() {
		return &PlacementError{Path: dir, Reason: "the state directory must be a real directory, not " + inputfile.Kind(fi.Mode())}
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return &PlacementError{Path: dir, Reason: fmt.Sprintf("the state directory must be private (mode 0700), found %04o", fi.Mode().Perm())}
	}
	if uid, ok := ownerUID(fi); ok && uid != os.Geteuid() {
		return &PlacementError{Path: dir, Reason: fmt.Sprintf("the state directory is owned by uid %d, not by this user", uid)}
	}
	return nil
}
