package run

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/forgectx/forgectx/pkg/snapshot"
	"github.com/forgectx/forgectx/pkg/verify"
)

// Staging (spec "Lifecycle and access"). Every run owns one private run directory under the
// state root:
//
//	<state>/run-<pid>-<random>/      mode 0700
//	  owner                          "<pid>\n": who owns the directory (scavenging)
//	  tree/                          host tree (0700 dirs, 0600 files): the pre- and post-script see it
//	  context/                       verified read-only copy (0555 dirs, 0444 files): the agent sees it
//	  prescript-*.out                the pre-script output file (pkg/prescript)
//
// The state root is outside the repository checkout and outside any output directory a
// workflow uploads; Run refuses one inside the workspace.

const runDirPrefix = "run-"

// abandonAfter is how old a run directory without a readable owner must be before it is
// scavenged (a run that crashed between creating the directory and writing its owner file).
const abandonAfter = 24 * time.Hour

// stateRoot picks the state root: Options.StateDir, else $RUNNER_TEMP/forgectx (GitHub
// Actions' per-job temporary directory, outside the workspace and emptied between jobs), else
// <os.TempDir>/forgectx-<uid>.
func stateRoot(dir string, getenv func(string) string) string {
	if dir != "" {
		return dir
	}
	if t := getenv("RUNNER_TEMP"); t != "" {
		return filepath.Join(t, "forgectx")
	}
	return filepath.Join(os.TempDir(), "forgectx-"+strconv.Itoa(os.Getuid()))
}

// within reports whether p is dir or inside it (both cleaned, absolute).
func within(p, dir string) bool {
	if dir == "" {
		return false
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// ensureRoot creates the state root (0700) and refuses a symlink or a non-directory.
func ensureRoot(root string) error {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	fi, err := os.Lstat(root)
	if err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir() {
		return fmt.Errorf("state directory %s: must be a real directory", root)
	}
	return nil
}

// scavenge removes run directories left by runs that terminated uncleanly: the owner process
// is gone, or the owner file is missing and the directory is older than abandonAfter. It
// returns how many it removed and how many it could not.
func scavenge(root string, alive func(pid int) bool, now time.Time) (removed, failed int) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return 0, 0
	}
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), runDirPrefix) {
			continue
		}
		dir := filepath.Join(root, e.Name())
		abandoned := false
		if b, err := os.ReadFile(filepath.Join(dir, "owner")); err == nil {
			pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
			abandoned = perr != nil || pid <= 0 || (pid != os.Getpid() && !alive(pid))
		} else if fi, serr := e.Info(); serr == nil && now.Sub(fi.ModTime()) > abandonAfter {
			abandoned = true
		}
		if !abandoned {
			continue
		}
		if err := removeTree(dir); err != nil {
			failed++
			continue
		}
		removed++
	}
	return removed, failed
}

// newRunDir creates this run's private directory and its owner file.
func newRunDir(root string) (string, error) {
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", fmt.Errorf("run directory: %w", err)
	}
	dir := filepath.Join(root, fmt.Sprintf("%s%d-%s", runDirPrefix, os.Getpid(), hex.EncodeToString(rnd[:])))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", fmt.Errorf("run directory: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "owner"), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("run directory: %w", err)
	}
	return dir, nil
}

// removeTree deletes dir. Directories of a read-only copy are made writable first; symlinks
// are removed, never followed.
func removeTree(dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Type()&fs.ModeSymlink == 0 {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

// writeReadOnlyCopy writes the verified bytes of snap into dir (which must not exist) and then
// makes every file 0444 and every directory 0555. The bytes come from the verifier's
// in-memory copy, never from a second read of the host tree.
func writeReadOnlyCopy(snap *verify.Snapshot, dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fmt.Errorf("read-only copy: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("read-only copy: %w", err)
	}
	defer root.Close()
	var dirs []string
	made := map[string]bool{".": true}
	paths := append(snap.Paths(), "index.json")
	for _, p := range paths {
		data, _ := snap.File(p)
		var parents []string
		for d := path.Dir(p); !made[d]; d = path.Dir(d) {
			parents = append(parents, d)
		}
		for i := len(parents) - 1; i >= 0; i-- {
			if err := root.Mkdir(parents[i], 0o700); err != nil {
				return fmt.Errorf("read-only copy: %w", err)
			}
			made[parents[i]] = true
			dirs = append(dirs, parents[i])
		}
		f, err := root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return fmt.Errorf("read-only copy: %w", err)
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			return fmt.Errorf("read-only copy: %w", err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("read-only copy: %w", err)
		}
		if err := root.Chmod(p, 0o444); err != nil {
			return fmt.Errorf("read-only copy: %w", err)
		}
	}
	// Deepest directories first, the root last, so no chmod locks out a later one.
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := root.Chmod(dirs[i], 0o555); err != nil {
			return fmt.Errorf("read-only copy: %w", err)
		}
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		return fmt.Errorf("read-only copy: %w", err)
	}
	return nil
}

// stageTree writes the assembled tree into dir (0700/0600, pkg/snapshot) — the host tree.
func stageTree(t *snapshot.Tree, dir string) error { return t.WriteDir(dir) }
