package stage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/forgectx/forgectx/internal/snapshot/treefs"
	"github.com/forgectx/forgectx/internal/snapshot/verify"
)

// Mode is how the agent-facing copy is made immutable.
type Mode string

// Modes. Auto picks Ownership when this process is root and an unprivileged agent UID is
// given, else BindMount when a read-only bind mount can be made, else fails.
const (
	ModeAuto      Mode = "auto"
	ModeOwnership Mode = "ownership"  // root-owned, directories 0555, files 0444, agent unprivileged
	ModeBindMount Mode = "bind-mount" // a read-only bind mount of a private copy
)

// ParseMode parses a --mode value.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case ModeAuto, ModeOwnership, ModeBindMount:
		return Mode(s), nil
	case "":
		return ModeAuto, nil
	}
	return "", fmt.Errorf("stage: mode must be auto, ownership or bind-mount")
}

// ErrImmutability is wrapped by every *ImmutabilityError.
var ErrImmutability = errors.New("agent immutability cannot be enforced")

// ImmutabilityError: neither a root-owned read-only copy with an unprivileged agent nor a
// read-only bind mount can be enforced. The run must abort before launching the agent.
type ImmutabilityError struct {
	Mode   Mode
	Reason string
	Err    error
}

func (e *ImmutabilityError) Error() string {
	msg := fmt.Sprintf("stage: %v (mode %s): %s; aborting before the agent launches", ErrImmutability, e.Mode, e.Reason)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *ImmutabilityError) Unwrap() []error { return []error{ErrImmutability, e.Err} }

// IndexMismatchError: the on-disk root index no longer matches the retained digest (the
// pre-script, or anything else, rewrote it). The run aborts.
type IndexMismatchError struct {
	Retained string
	OnDisk   string
}

func (e *IndexMismatchError) Error() string {
	return fmt.Sprintf("stage: on-disk root index sha256 %s differs from the retained %s; aborting", e.OnDisk, e.Retained)
}

// SealOptions choose the immutability mechanism.
type SealOptions struct {
	Mode Mode
	// AgentUID and AgentGID are the unprivileged identity the agent will run as (ownership
	// mode); both must be non-zero. Zero means unset.
	AgentUID int
	AgentGID int
}

// Sealed describes the agent-facing copy.
type Sealed struct {
	Dir         string
	Mode        Mode
	Files       int
	Bytes       int64
	IndexSHA256 string
	AgentUID    int
	AgentGID    int
}

// SysProcAttr returns the process attributes the agent must be started with in ownership
// mode: the unprivileged credential with no supplementary groups (so the kernel clears every
// capability at execve) and its own process group (so the runner can signal it as a whole).
// Combine with procgroup.CheckExecutable before and procgroup.CheckProcess after starting
// it (procgroup.Run does both for a Spec with Identity and Unprivileged).
func (s *Sealed) SysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		Credential: &syscall.Credential{Uid: uint32(s.AgentUID), Gid: uint32(s.AgentGID), Groups: []uint32{}},
		Setpgid:    true,
	}
}

func (s *Stage) chooseMode(o SealOptions) (Mode, error) {
	mode := o.Mode
	if mode == "" {
		mode = ModeAuto
	}
	rootWithAgent := os.Geteuid() == 0 && o.AgentUID > 0 && o.AgentGID > 0
	switch mode {
	case ModeOwnership:
		if !rootWithAgent {
			return mode, &ImmutabilityError{Mode: mode, Reason: "a root-owned read-only copy needs this process to run as root and a non-zero agent UID and GID"}
		}
	case ModeBindMount:
	case ModeAuto:
		if rootWithAgent {
			return ModeOwnership, nil
		}
		return ModeBindMount, nil
	default:
		return mode, fmt.Errorf("stage: unknown mode %q", mode)
	}
	return mode, nil
}

// Seal runs after the pre-script (spec "Canonical bytes": verify child bytes into an
// immutable, digest-verified upload snapshot; the uploaded bytes are exactly the verified
// bytes). In order:
//
//  1. the root-index comparison: the host tree's index.json (opened without following a
//     symlink, a regular file, bounded) must have the retained SHA-256, else
//     *IndexMismatchError and nothing is copied;
//  2. the host tree is copied file by file into the sandbox copy (ownership mode: the
//     placeSandbox location; bind mode: the private copy in the 0700 state directory) — no
//     symlink or special file followed or copied (refused with a *verify.Error), directories
//     0700 and files O_EXCL 0600 while writing, nothing held in memory;
//  3. the copy is made immutable (root-owned 0555/0444, or a read-only bind mount);
//  4. the sealed copy itself — what the agent will read, no longer writable by anyone but
//     root — is verified (verify.Check, bounded memory) against the retained digest: every
//     child's bytes against the retained manifest and every rule of the spec. Whatever the
//     host tree holds from then on is irrelevant, and a writer that changed a host file
//     during the copy produces either a copy that fails here or one that holds exactly the
//     bytes verified;
//  5. the immutability mechanism is checked (checkReadOnly).
//
// On any failure no copy remains and the error is typed: *IndexMismatchError (the on-disk
// index, or the copy's, differs from the retained digest), *verify.Error (any other rule),
// *ImmutabilityError.
func (s *Stage) Seal(ctx context.Context, o SealOptions) (*Sealed, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cleaned {
		return nil, fmt.Errorf("stage %s: already cleaned up", s.ID)
	}
	if s.st.Phase == phaseSealed {
		return nil, fmt.Errorf("stage %s: already sealed", s.ID)
	}
	// A stage whose build never finished (its creator died: `forgectx stage` opens it from
	// the state) has no retained digest to verify against.
	if s.st.Phase != PhaseCreated {
		return nil, fmt.Errorf("stage %s: host tree not created (phase %s)", s.ID, s.st.Phase)
	}
	mode, err := s.chooseMode(o)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The root of trust first: a rewritten index is refused before anything is copied. An
	// index that cannot be read as a bounded regular file is left to the copy (a symlink is
	// refused) and its verification (missing_file, file_too_large), as verification of the
	// host tree would report it.
	if onDisk, ok := hostIndexDigest(s.HostDir); ok && onDisk != s.IndexSHA256 {
		return nil, &IndexMismatchError{Retained: s.IndexSHA256, OnDisk: onDisk}
	}
	s.st.Mode = mode
	if err := s.saveState(); err != nil {
		return nil, err
	}
	fail := func(err error) (*Sealed, error) {
		if rerr := s.removeSandbox(); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return nil, err
	}
	switch mode {
	case ModeOwnership:
		if err = s.placeSandbox(o.AgentUID, o.AgentGID); err != nil {
			return nil, err
		}
		err = s.sealOwnership(ctx)
	case ModeBindMount:
		err = s.sealBind(ctx)
	}
	if err != nil {
		return fail(err)
	}
	rep, err := verify.Check(ctx, s.SandboxDir, verify.Options{IndexSHA256: s.IndexSHA256})
	if err != nil {
		return fail(fmt.Errorf("stage %s: verify sandbox copy: %w", s.ID, err))
	}
	if !rep.OK() {
		for _, v := range rep.Violations {
			if v.Rule == verify.RuleIndexDigest {
				return fail(&IndexMismatchError{Retained: s.IndexSHA256, OnDisk: rep.IndexSHA256})
			}
		}
		return fail(fmt.Errorf("stage %s: host tree (as copied): %w", s.ID, &verify.Error{Report: rep}))
	}
	if err := checkReadOnly(s.SandboxDir, mode); err != nil {
		return fail(err)
	}
	s.st.Phase = phaseSealed
	if err := s.saveState(); err != nil {
		return nil, err
	}
	s.log.Info().Str("stage_id", s.ID).Str("mode", string(mode)).Int("files", rep.Files).Int64("bytes", rep.Bytes).Str("index_sha256", s.IndexSHA256).Msg("stage: sandbox copy sealed")
	return &Sealed{Dir: s.SandboxDir, Mode: mode, Files: rep.Files, Bytes: rep.Bytes, IndexSHA256: s.IndexSHA256, AgentUID: o.AgentUID, AgentGID: o.AgentGID}, nil
}

// hostIndexDigest returns the SHA-256 of dir/index.json, read without following a symlink
// (neither dir nor the file), only when it is a regular file within the index bound.
func hostIndexDigest(dir string) (string, bool) {
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", false
	}
	defer unix.Close(dfd)
	fd, err := unix.Openat(dfd, "index.json", unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", false
	}
	f := os.NewFile(uintptr(fd), "index.json")
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > treefs.MaxIndexBytes {
		return "", false
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, treefs.MaxIndexBytes+1))
	if err != nil || n > treefs.MaxIndexBytes {
		return "", false
	}
	return hex.EncodeToString(h.Sum(nil)), true
}

// makeReadOnly sets every directory to 0555 and every file to 0444 (and, as root, owner
// root:root), deepest entries first. The tree was just written by this process into a
// directory nobody else can enter, so no entry can have been swapped.
//
// Whether an entry is a directory comes from the walk's directory entries: a second lstat of
// each of 100k paths would only confirm it.
func makeReadOnly(dir string, chownRoot bool) error {
	type entry struct {
		path  string
		isDir bool
	}
	var entries []entry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !d.Type().IsRegular() {
			return fmt.Errorf("stage: unexpected entry %s in the sandbox copy", p)
		}
		entries = append(entries, entry{p, d.IsDir()})
		return nil
	})
	if err != nil {
		return err
	}
	for i := len(entries) - 1; i >= 0; i-- {
		p := entries[i].path
		if chownRoot {
			if err := os.Lchown(p, 0, 0); err != nil {
				return fmt.Errorf("stage: chown sandbox copy: %w", err)
			}
		}
		mode := os.FileMode(0o444)
		if entries[i].isDir {
			mode = 0o555
		}
		if err := os.Chmod(p, mode); err != nil {
			return fmt.Errorf("stage: chmod sandbox copy: %w", err)
		}
	}
	return nil
}

// placeSandbox keeps the ownership-mode copy where the agent cannot rename it away and put
// its own tree at the same path. When Base (or an ancestor) is replaceable by the agent — on a
// GitHub-hosted runner $RUNNER_TEMP belongs to the runner user, which is also the agent user
// when forgectx runs under sudo — the copy goes to the (symlink-resolved) temporary directory
// instead, typically the root-owned sticky /tmp; if that is replaceable too, or lies inside a
// forbidden root, Seal aborts with an *ImmutabilityError. The new path is saved in the state
// before anything is written there, so cleanup and the scavenger find it.
func (s *Stage) placeSandbox(uid, gid int) error {
	via, bad := agentReplaceable(s.SandboxDir, uid, gid)
	if !bad {
		return nil
	}
	tmp, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		return &ImmutabilityError{Mode: ModeOwnership, Reason: fmt.Sprintf("the agent (uid %d) could replace the sandbox copy through %s, and the temporary directory cannot be resolved", uid, via), Err: err}
	}
	alt := filepath.Join(tmp, sandboxDirName(s.ID))
	if via2, bad2 := agentReplaceable(alt, uid, gid); bad2 || alt == s.SandboxDir {
		return &ImmutabilityError{Mode: ModeOwnership, Reason: fmt.Sprintf("the agent (uid %d) could rename the sandbox copy away and replace it through %s (and through %s in the temporary directory); use a base directory the agent cannot write", uid, via, via2)}
	}
	for _, root := range forbiddenRoots(&s.opts) {
		if r, err := resolve(root.path); err != nil || within(alt, r) {
			return &ImmutabilityError{Mode: ModeOwnership, Reason: fmt.Sprintf("the agent (uid %d) could replace the sandbox copy through %s, and the temporary directory is inside %s", uid, via, root.reason)}
		}
	}
	s.log.Info().Str("stage_id", s.ID).Int("agent_uid", uid).Msg("stage: the base directory is replaceable by the agent; the sandbox copy goes to the temporary directory")
	s.SandboxDir, s.st.SandboxDir = alt, alt
	return s.saveState()
}

func (s *Stage) sealOwnership(ctx context.Context) error {
	if err := s.copyHostTree(ctx, s.SandboxDir); err != nil {
		return err
	}
	return makeReadOnly(s.SandboxDir, true)
}

// copyHostTree copies the host tree to dst and runs the afterCopy test hook.
func (s *Stage) copyHostTree(ctx context.Context, dst string) error {
	if err := copyTree(ctx, s.HostDir, dst); err != nil {
		var ve *verify.Error
		if errors.As(err, &ve) {
			return fmt.Errorf("stage %s: host tree: %w", s.ID, err)
		}
		return fmt.Errorf("stage %s: copy host tree: %w", s.ID, err)
	}
	if s.afterCopy != nil {
		s.afterCopy(dst)
	}
	return nil
}

// bindSource is the private copy a bind-mount seal mounts read-only at SandboxDir: it lives in
// the 0700 state directory, so only this user can reach the writable path.
func (s *Stage) bindSource() string { return filepath.Join(s.stateDir, "tree") }

func (s *Stage) sealBind(ctx context.Context) error {
	src := s.bindSource()
	if err := s.copyHostTree(ctx, src); err != nil {
		return err
	}
	if err := makeReadOnly(src, false); err != nil {
		return err
	}
	if err := os.Mkdir(s.SandboxDir, 0o555); err != nil {
		return fmt.Errorf("stage %s: create mount point: %w", s.ID, err)
	}
	s.st.Mounted = true
	if err := s.saveState(); err != nil {
		return err
	}
	if err := bindReadOnly(src, s.SandboxDir); err != nil {
		s.st.Mounted = false
		if serr := s.saveState(); serr != nil {
			return serr
		}
		return &ImmutabilityError{Mode: ModeBindMount, Reason: "a read-only bind mount is not available here (it needs CAP_SYS_ADMIN); run as root with an unprivileged agent UID instead", Err: err}
	}
	return nil
}

// checkReadOnly confirms the immutability mechanism actually holds on the sealed copy.
func checkReadOnly(dir string, mode Mode) error {
	if mode == ModeBindMount {
		ro, err := mountedReadOnly(dir)
		if err != nil || !ro {
			return &ImmutabilityError{Mode: mode, Reason: "the sandbox mount is not read-only", Err: err}
		}
		return nil
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := os.FileMode(0o444)
		if d.IsDir() {
			want = 0o555
		}
		if fi.Mode().Perm() != want || fi.Mode()&(os.ModeSetuid|os.ModeSetgid|os.ModeSticky) != 0 {
			return &ImmutabilityError{Mode: mode, Reason: fmt.Sprintf("%s has mode %04o, want %04o", p, fi.Mode().Perm(), want)}
		}
		if uid, ok := ownerUID(fi); !ok || uid != 0 {
			return &ImmutabilityError{Mode: mode, Reason: p + " is not owned by root"}
		}
		return nil
	})
}

// CheckMode is Seal's immutability-mode rule on its own (the same chooseMode), so that a
// mode this process can never enforce — ownership without root or without a non-zero agent
// UID and GID — is refused before anything is posted rather than after the snapshot.
func CheckMode(o SealOptions) error {
	_, err := (*Stage)(nil).chooseMode(o)
	return err
}
