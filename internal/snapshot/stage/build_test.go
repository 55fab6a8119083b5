package stage_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/snapshot/demo"
	"github.com/forgectx/forgectx/internal/snapshot/stage"
	"github.com/forgectx/forgectx/internal/snapshot/treefs"
	"github.com/forgectx/forgectx/internal/snapshot/verify"
	"github.com/forgectx/forgectx/test/verifytest"
)

// stateOf reads a stage's state file as JSON.
func stateOf(t *testing.T, stateDir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(stateDir, "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// stagingDir creates a staging directory beside dir exactly as snapshot.AssembleTo names it
// (os.MkdirTemp(parent, ".<base>.assembling-")) and writes one record file into it.
func stagingDir(dir string) (string, error) {
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".assembling-")
	if err != nil {
		return "", err
	}
	if err := os.Mkdir(filepath.Join(tmp, "records"), 0o700); err != nil {
		return "", err
	}
	return tmp, os.WriteFile(filepath.Join(tmp, commentPath), []byte("half written"), 0o600)
}

// helperAbandonAssembling builds a stage whose builder dies mid-assembly: the staging
// directory holds a record file and the process exits without any cleanup.
func helperAbandonAssembling() int {
	_, err := stage.Build(context.Background(), helperOpts(), func(_ context.Context, dir string) (string, treefs.Sums, error) {
		tmp, err := stagingDir(dir)
		if err != nil {
			return "", nil, err
		}
		ents, _ := os.ReadDir(os.Getenv("STAGE_STATE"))
		if len(ents) != 1 {
			return "", nil, fmt.Errorf("%d state entries", len(ents))
		}
		fmt.Println("ready", tmp, filepath.Join(os.Getenv("STAGE_STATE"), ents[0].Name()), dir)
		os.Exit(0) // the owner dies mid-assembly
		return "", nil, nil
	})
	fmt.Println("error", err)
	return 1
}

// The path `forgectx run` takes: the host tree assembled straight to disk by AssembleTo,
// the state (naming the owner, no digest yet) saved before the first tree byte, the digest
// retained once the builder returns.
func TestBuildFromAssembleTo(t *testing.T) {
	o := testOpts(t)
	acq, prof, bots, err := demo.Inputs()
	if err != nil {
		t.Fatal(err)
	}
	var digest string
	st, err := stage.Build(context.Background(), o, func(ctx context.Context, dir string) (string, treefs.Sums, error) {
		ents, _ := os.ReadDir(o.StateDir)
		if len(ents) != 1 {
			t.Fatalf("%d state entries before the tree is written", len(ents))
		}
		m := stateOf(t, filepath.Join(o.StateDir, ents[0].Name()))
		if m["phase"] != stage.PhaseCreating || m["owner_pid"] != float64(os.Getpid()) || m["index_sha256"] != "" || m["host_dir"] != dir {
			t.Fatalf("state before the build: %v", m)
		}
		if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("host dir exists before the build: %v", err)
		}
		tree, err := snapshot.AssembleTo(ctx, acq, snapshot.Config{Profile: prof, Category: demo.Category, Bots: bots, Filter: filter.New(nil), ReleaseBodies: true}, dir)
		if err != nil {
			return "", nil, err
		}
		digest = tree.IndexSHA256
		return tree.IndexSHA256, tree.Sums(), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Cleanup()
	if st.IndexSHA256 != digest || digest != verifytest.IndexSHA256[verifytest.Demo] {
		t.Fatalf("retained %s, assembled %s", st.IndexSHA256, digest)
	}
	m := stateOf(t, st.StateDirOf())
	if m["phase"] != stage.PhaseCreated || m["index_sha256"] != digest {
		t.Fatalf("state after the build: %v", m)
	}
	dirs, files, _ := modes(t, st.HostDir)
	if len(dirs) != 1 || dirs[0o700] == 0 || len(files) != 1 || files[0o600] != 33 {
		t.Fatalf("host tree modes: dirs %v files %v", dirs, files)
	}
	if rep, err := verify.Dir(context.Background(), st.HostDir, verify.Options{IndexSHA256: digest}); err != nil || !rep.OK() {
		t.Fatalf("%v %v", err, rep.Violations)
	}
	re, err := stage.Open(o, st.ID)
	if err != nil || re.IndexSHA256 != digest {
		t.Fatalf("reopen: %v %s", err, re.IndexSHA256)
	}
}

// Build refuses what its builder returns unless the tree on disk is the one it names: a
// malformed digest, a digest or sums that do not match the written tree, a builder error.
// Each refusal leaves no host tree, no staging directory and no state.
func TestBuildRefusals(t *testing.T) {
	snap := demoSnapshot(t)
	good := snap.IndexSHA256
	cases := []struct {
		name  string
		build stage.Builder
		want  string
	}{
		{"uppercase digest", func(_ context.Context, dir string) (string, treefs.Sums, error) {
			return strings.ToUpper(good), snap.Sums(), snap.WriteDir(dir)
		}, "64 lowercase hexadecimal"},
		{"short digest", func(_ context.Context, dir string) (string, treefs.Sums, error) {
			return good[:63], snap.Sums(), snap.WriteDir(dir)
		}, "64 lowercase hexadecimal"},
		{"digest of another index", func(_ context.Context, dir string) (string, treefs.Sums, error) {
			return strings.Repeat("0", 64), snap.Sums(), snap.WriteDir(dir)
		}, "index_digest_mismatch"},
		{"sums of another tree", func(_ context.Context, dir string) (string, treefs.Sums, error) {
			sums := snap.Sums()
			sums[commentPath] = [32]byte{1}
			return good, sums, snap.WriteDir(dir)
		}, "sha256_mismatch"},
		{"builder failed mid-assembly", func(_ context.Context, dir string) (string, treefs.Sums, error) {
			if _, err := stagingDir(dir); err != nil {
				return "", nil, err
			}
			return "", nil, errors.New("abort")
		}, "write host tree: abort"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := testOpts(t)
			var host string
			_, err := stage.Build(context.Background(), o, func(ctx context.Context, dir string) (string, treefs.Sums, error) {
				host = dir
				return tc.build(ctx, dir)
			})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
			gone(t, host)
			if ents, _ := os.ReadDir(o.Base); len(ents) != 0 {
				t.Fatalf("left in base: %v", ents)
			}
			if ents, _ := os.ReadDir(o.StateDir); len(ents) != 0 {
				t.Fatalf("left in state: %v", ents)
			}
		})
	}
}

// An owner that died mid-assembly leaves its state (phase creating, no digest) and the
// builder's half-written staging directory: that stage cannot be sealed, and the scavenger
// removes both — and nothing else whose name merely resembles it.
func TestScavengeRemovesAHalfWrittenAssembly(t *testing.T) {
	o := testOpts(t)
	out := runHelper(t, os.Args[0], "abandon-assembling", nil, "STAGE_BASE="+o.Base, "STAGE_STATE="+o.StateDir)
	f := strings.Fields(out)
	if len(f) != 4 || f[0] != "ready" {
		t.Fatalf("helper: %q", out)
	}
	staging, stateDir, host := f[1], f[2], f[3]
	if _, err := os.Stat(filepath.Join(staging, commentPath)); err != nil {
		t.Fatalf("half-written staging directory not left behind: %v", err)
	}
	gone(t, host)
	m := stateOf(t, stateDir)
	if m["phase"] != stage.PhaseCreating || m["index_sha256"] != "" {
		t.Fatalf("abandoned state: %v", m)
	}
	id := filepath.Base(stateDir)
	abandoned, err := stage.Open(o, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := abandoned.Seal(context.Background(), stage.SealOptions{Mode: stage.ModeOwnership, AgentUID: nobody, AgentGID: nobody}); err == nil || !strings.Contains(err.Error(), "not created") {
		t.Fatalf("a stage whose build never finished was sealed: %v", err)
	}
	// Look-alikes: another stage's staging directory, a suffix that is not MkdirTemp's, a
	// symlink with the exact name (to a directory outside, whose content must survive).
	outside := t.TempDir()
	keep := filepath.Join(outside, "keep")
	os.WriteFile(keep, []byte("keep"), 0o600)
	prefix := "." + stage.HostDirName(id) + ".assembling-"
	alike := []string{
		filepath.Join(o.Base, "."+stage.HostDirName(strings.Repeat("b", 32))+".assembling-123"),
		filepath.Join(o.Base, prefix+"12x"),
		filepath.Join(o.Base, prefix),
		filepath.Join(o.Base, strings.TrimPrefix(prefix, ".")+"123"),
	}
	for _, p := range alike {
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(o.Base, prefix+"4242")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	rep, err := stage.Scavenge(context.Background(), o)
	if err != nil || rep.Scanned != 1 || rep.Removed != 1 || len(rep.Errors) != 0 {
		t.Fatalf("%+v %v", rep, err)
	}
	gone(t, staging, stateDir, host)
	for _, p := range append(alike, link, keep) {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
}

// Cleanup of a live stage removes a staging directory beside its host tree too (a builder
// that failed without removing it, or a second build attempt's leftovers).
func TestCleanupRemovesTheStagingDirectory(t *testing.T) {
	o := testOpts(t)
	st := create(t, o)
	staging, err := stagingDir(st.HostDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Cleanup(); err != nil {
		t.Fatal(err)
	}
	gone(t, staging, st.HostDir, st.StateDirOf())
}
