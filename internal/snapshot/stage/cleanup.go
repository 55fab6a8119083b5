package stage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// removeAll removes a staging directory without following symlinks (os.RemoveAll unlinks
// entries relative to their parent and never descends through a link), first making its
// directories owner-writable so a non-root runner can empty 0555 directories.
func removeAll(dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	makeRemovable(dir)
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("stage: remove %s: %w", dir, err)
	}
	return nil
}

// removeSandbox unmounts (bind-mount mode) and removes the agent-facing copy and its private
// bind source.
func (s *Stage) removeSandbox() error {
	var errs []error
	if s.st.Mounted {
		if err := unmount(s.SandboxDir); err != nil {
			errs = append(errs, fmt.Errorf("stage: unmount %s: %w", s.SandboxDir, err))
			return errors.Join(errs...) // never remove through a still-mounted copy
		}
	}
	if err := removeAll(s.SandboxDir); err != nil {
		errs = append(errs, err)
	}
	if err := removeAll(s.bindSource()); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// RemoveSandbox removes the agent-facing copy — unmounting it first in bind-mount mode — and
// its private bind source, and leaves the host tree and the state. Spec "Lifecycle and
// access": the copy goes right after the runtime's last use (the agent has exited), the host
// tree after the post-script (Cleanup). It is idempotent, a no-op after Cleanup and before
// Seal; a failure is returned (naming staging paths only) and Cleanup retries it. Cleanup
// still removes everything, the copy included.
func (s *Stage) RemoveSandbox() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cleaned {
		return nil
	}
	if err := s.removeSandbox(); err != nil {
		s.log.Warn().Str("stage_id", s.ID).Msg("stage: sandbox copy not removed")
		return err
	}
	if s.st.Mounted {
		// Nothing is mounted any more: a scavenger reading the state has nothing to undo.
		s.st.Mounted = false
		if err := s.saveState(); err != nil {
			return err
		}
	}
	s.log.Info().Str("stage_id", s.ID).Msg("stage: sandbox copy removed")
	return nil
}

// Cleanup removes the sandbox copy, the host tree (with any staging directory a builder left
// half written beside it) and the stage's state, in that order (the
// state goes last so an interrupted cleanup is finished by the scavenger). It is idempotent
// and safe to call from a defer on every exit path; a second call after a partial failure
// retries what is left.
func (s *Stage) Cleanup() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cleaned {
		return nil
	}
	var errs []error
	if err := s.removeSandbox(); err != nil {
		errs = append(errs, err)
	}
	if err := removeAll(s.HostDir); err != nil {
		errs = append(errs, err)
	}
	if err := s.removeAssembling(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		if err := removeAll(s.stateDir); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		s.log.Warn().Str("stage_id", s.ID).Int("errors", len(errs)).Msg("stage: cleanup incomplete")
		return errors.Join(errs...)
	}
	s.cleaned = true
	s.log.Info().Str("stage_id", s.ID).Msg("stage: cleaned up")
	return nil
}

// assemblingName reports whether name is a staging directory a builder left beside the host
// tree of stage id: snapshot.AssembleTo writes into os.MkdirTemp(Base, ".<host dir
// name>.assembling-"), whose suffix is decimal digits, and renames it to the host tree when
// done. Only exactly that form for this id matches, so nothing of another stage (or anyone
// else's) is touched.
func assemblingName(id, name string) bool {
	rest, ok := strings.CutPrefix(name, "."+HostDirName(id)+".assembling-")
	if !ok || rest == "" || len(rest) > 20 {
		return false
	}
	for _, c := range rest {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// removeAssembling removes the staging directories a builder of this stage left half
// written beside the host tree (its process died mid-assembly, or cleanup interrupted its
// own removal). Entries that are not real directories are left alone.
func (s *Stage) removeAssembling() error {
	base := filepath.Dir(s.HostDir)
	ents, err := os.ReadDir(base)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("stage: list %s: %w", base, err)
	}
	var errs []error
	for _, e := range ents {
		if !assemblingName(s.ID, e.Name()) || !e.IsDir() {
			continue
		}
		if err := removeAll(filepath.Join(base, e.Name())); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// ScavengeReport counts what Scavenge found. Errors name staging paths only.
type ScavengeReport struct {
	Scanned int      `json:"scanned"` // state entries examined
	Live    int      `json:"live"`    // owned by a running process: left alone
	Removed int      `json:"removed"` // abandoned: trees and state removed
	Unknown int      `json:"unknown"` // entries without a readable v1 state: left alone
	Errors  []string `json:"errors"`
}

// Scavenge removes abandoned stages: every state entry whose owning process (PID, kernel
// start time and boot ID) is gone has its sandbox copy (unmounted first), host tree (or the
// half-written assembly staging directory of a build that never finished), private copy and
// state removed. `forgectx run` calls it at start-up, so an unclean termination
// (SIGKILL, OOM, power loss) leaves nothing behind after the next run. Only directories whose
// names the state derives from its own ID are removed.
func Scavenge(ctx context.Context, opts Options) (ScavengeReport, error) {
	rep := ScavengeReport{Errors: []string{}}
	if err := opts.defaults(); err != nil {
		return rep, err
	}
	if _, err := os.Lstat(opts.StateDir); errors.Is(err, os.ErrNotExist) {
		return rep, nil
	}
	if err := checkPrivateDir(opts.StateDir); err != nil {
		return rep, err
	}
	ents, err := os.ReadDir(opts.StateDir)
	if err != nil {
		return rep, fmt.Errorf("stage: list state: %w", err)
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		if !validID(name) {
			continue
		}
		rep.Scanned++
		dir := filepath.Join(opts.StateDir, name)
		st, err := readState(dir)
		if err != nil || st.ID != name || filepath.Base(st.HostDir) != HostDirName(name) || filepath.Base(st.SandboxDir) != sandboxDirName(name) {
			rep.Unknown++
			continue
		}
		if ownerAlive(st) {
			rep.Live++
			continue
		}
		s := &Stage{ID: st.ID, HostDir: st.HostDir, SandboxDir: st.SandboxDir, IndexSHA256: st.IndexSHA256, stateDir: dir, log: opts.Log, st: st}
		if err := s.Cleanup(); err != nil {
			rep.Errors = append(rep.Errors, dir)
			continue
		}
		rep.Removed++
	}
	opts.Log.Info().Int("scanned", rep.Scanned).Int("live", rep.Live).Int("removed", rep.Removed).Int("unknown", rep.Unknown).Int("errors", len(rep.Errors)).Msg("stage: scavenge")
	return rep, nil
}
