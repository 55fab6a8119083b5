package stage_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/platform/procgroup"
	"github.com/forgectx/forgectx/internal/snapshot/demo"
	"github.com/forgectx/forgectx/internal/snapshot/stage"
	"github.com/forgectx/forgectx/internal/snapshot/verify"
	"github.com/forgectx/forgectx/test/testnotice"
	"github.com/forgectx/forgectx/test/verifytest"
)

const (
	nobody      = 65534
	commentPath = "records/20260901T101200000000000Z-a91e751b2dfb1023c38cfa127324fca5a42377ffee15c3db69f68545949f6b74.md"
)

// Helper processes (the os.Args[0] re-exec pattern): FORGECTX_STAGE_HELPER selects one.
func TestMain(m *testing.M) {
	switch os.Getenv("FORGECTX_STAGE_HELPER") {
	case "":
		os.Exit(m.Run())
	case "hold":
		os.Exit(helperHold())
	case "abandon":
		os.Exit(helperAbandon())
	case "attempt-writes":
		os.Exit(helperAttemptWrites())
	case "seal-unprivileged":
		os.Exit(helperSealUnprivileged())
	case "cleanup-locked":
		os.Exit(helperCleanupLocked())
	case "abandon-assembling":
		os.Exit(helperAbandonAssembling())
	}
	os.Exit(3)
}

func helperOpts() stage.Options {
	return stage.Options{Base: os.Getenv("STAGE_BASE"), StateDir: os.Getenv("STAGE_STATE"), WorkDir: os.Getenv("STAGE_BASE"), Getenv: func(string) string { return "" }}
}

func helperSource(ctx context.Context) (*verify.Snapshot, error) {
	snap, rep, err := verify.Load(ctx, os.Getenv("STAGE_SRC"), verify.Options{})
	if err != nil {
		return nil, err
	}
	if !rep.OK() {
		return nil, &verify.Error{Report: rep}
	}
	return snap, nil
}

// helperHold stages and seals a tree, reports its paths, and waits for SIGINT/SIGTERM, which
// cancel the context; the deferred Cleanup then runs — the pattern `forgectx run` follows.
func helperHold() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	snap, err := helperSource(ctx)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	st, err := stage.Create(ctx, helperOpts(), snap, snap.IndexSHA256)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	defer st.Cleanup()
	sealed, err := st.Seal(ctx, stage.SealOptions{Mode: stage.ModeOwnership, AgentUID: nobody, AgentGID: nobody})
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println("ready", st.HostDir, sealed.Dir, st.StateDirOf())
	<-ctx.Done()
	return 0
}

// helperAbandon stages a tree and exits without cleaning up (an unclean termination).
func helperAbandon() int {
	ctx := context.Background()
	snap, err := helperSource(ctx)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	st, err := stage.Create(ctx, helperOpts(), snap, snap.IndexSHA256)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println("ready", st.HostDir, st.SandboxDir, st.StateDirOf())
	return 0
}

// helperAttemptWrites runs as the unprivileged agent and tries every way of changing the
// sandbox copy; it prints one line per attempt.
func helperAttemptWrites() int {
	dir := os.Getenv("STAGE_DIR")
	file := filepath.Join(dir, commentPath)
	try := func(name string, err error) {
		if err == nil {
			fmt.Println(name, "ALLOWED")
		} else {
			fmt.Println(name, "denied")
		}
	}
	if b, err := os.ReadFile(file); err == nil && len(b) > 0 {
		fmt.Println("read ok")
	} else {
		fmt.Println("read failed")
	}
	f, err := os.OpenFile(file, os.O_WRONLY, 0)
	if err == nil {
		f.Close()
	}
	try("open-write", err)
	f, err = os.OpenFile(file, os.O_WRONLY|os.O_TRUNC, 0)
	if err == nil {
		f.Close()
	}
	try("truncate", err)
	try("create", os.WriteFile(filepath.Join(dir, "records", "planted.md"), []byte("x"), 0o644))
	try("create-root", os.WriteFile(filepath.Join(dir, "planted"), []byte("x"), 0o644))
	try("chmod", os.Chmod(file, 0o666))
	try("chmod-dir", os.Chmod(filepath.Join(dir, "records"), 0o777))
	try("unlink", os.Remove(file))
	try("rename", os.Rename(file, file+".x"))
	try("symlink", os.Symlink("/etc/passwd", filepath.Join(dir, "records", "link.md")))
	try("chown", os.Chown(file, nobody, nobody))
	try("utimes", os.Chtimes(file, time.Unix(0, 0), time.Unix(0, 0)))
	// Renaming the copy away (and planting another tree at its path) needs write access to
	// the directory that holds it.
	try("rename-copy", os.Rename(dir, dir+".moved"))
	if err := procgroup.CheckProcess(os.Getpid()); err != nil {
		fmt.Println("caps", err)
	} else {
		fmt.Println("caps ok")
	}
	return 0
}

// helperSealUnprivileged tries to seal as a non-root user, where neither mechanism exists.
func helperSealUnprivileged() int {
	ctx := context.Background()
	snap, err := helperSource(ctx)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	st, err := stage.Create(ctx, helperOpts(), snap, snap.IndexSHA256)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	defer st.Cleanup()
	_, err = st.Seal(ctx, stage.SealOptions{Mode: stage.ModeAuto})
	var ie *stage.ImmutabilityError
	switch {
	case errors.As(err, &ie) && errors.Is(err, stage.ErrImmutability):
		if _, serr := os.Lstat(st.SandboxDir); serr == nil {
			fmt.Println("sandbox-left-behind")
			return 1
		}
		fmt.Println("aborted", ie.Mode)
	case err == nil:
		fmt.Println("sealed")
	default:
		fmt.Println("other", err)
	}
	return 0
}

// helperCleanupLocked runs as an unprivileged user: it stages a tree, then acts as a pre-script
// that locks directories (mode 0, 0500) and plants a symlink to a directory outside, and
// cleans up. Owner permission bits bind a non-root user, so this proves makeRemovable.
func helperCleanupLocked() int {
	ctx := context.Background()
	snap, err := helperSource(ctx)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	st, err := stage.Create(ctx, helperOpts(), snap, snap.IndexSHA256)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	os.Symlink(os.Getenv("STAGE_OUTSIDE"), filepath.Join(st.HostDir, "records", "escape"))
	for _, l := range []struct {
		p string
		m os.FileMode
	}{{"threads", 0}, {"records", 0o500}, {"views/reviews", 0}, {".", 0}} { // the root last
		if err := os.Chmod(filepath.Join(st.HostDir, l.p), l.m); err != nil {
			fmt.Println("error", err)
			return 1
		}
	}
	if err := os.WriteFile(filepath.Join(st.HostDir, "records", "probe"), nil, 0o600); err == nil {
		fmt.Println("not-locked")
		return 1
	}
	if err := st.Cleanup(); err != nil {
		fmt.Println("cleanup-error", err)
		return 1
	}
	for _, p := range []string{st.HostDir, st.SandboxDir, st.StateDirOf()} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			fmt.Println("left", p)
			return 1
		}
	}
	fmt.Println("gone")
	return 0
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		testnotice.Skip(t, "ownership-mode and unprivileged-agent tests (non-root)", "needs root (CI and the dev container run as root)")
	}
}

// sharedBase is a Base directory the unprivileged agent can traverse (0755), outside any Git
// work tree.
func sharedBase(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "forgectx-stage-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Unmount anything a failed test left, then remove.
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			_ = syscall.Unmount(filepath.Join(d, e.Name()), syscall.MNT_DETACH)
		}
		_ = os.RemoveAll(d)
	})
	return d
}

func testOpts(t *testing.T) stage.Options {
	return stage.Options{
		Base:     sharedBase(t),
		StateDir: filepath.Join(t.TempDir(), "state"),
		WorkDir:  t.TempDir(),
		Getenv:   func(string) string { return "" },
	}
}

func demoSnapshot(t *testing.T) *verify.Snapshot {
	t.Helper()
	dir := verifytest.Write(t, verifytest.Demo)
	snap, rep, err := verify.Load(context.Background(), dir, verify.Options{IndexSHA256: verifytest.IndexSHA256[verifytest.Demo]})
	if err != nil || snap == nil {
		t.Fatalf("%v %v", err, rep.Violations)
	}
	return snap
}

func create(t *testing.T, o stage.Options) *stage.Stage {
	t.Helper()
	snap := demoSnapshot(t)
	st, err := stage.Create(context.Background(), o, snap, snap.IndexSHA256)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Cleanup() })
	return st
}

func modes(t *testing.T, root string) (dirs, files map[os.FileMode]int, owners map[uint32]int) {
	t.Helper()
	dirs, files, owners = map[os.FileMode]int{}, map[os.FileMode]int{}, map[uint32]int{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		owners[fi.Sys().(*syscall.Stat_t).Uid]++
		if fi.IsDir() {
			dirs[fi.Mode().Perm()]++
		} else {
			files[fi.Mode()]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return
}

func gone(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s still exists (%v)", p, err)
		}
	}
}

// Spec "Lifecycle and access": host tree 0700/0600, retained digest in private state.
func TestHostTreeIsPrivateAndDigestRetained(t *testing.T) {
	o := testOpts(t)
	st := create(t, o)
	dirs, files, _ := modes(t, st.HostDir)
	if len(dirs) != 1 || dirs[0o700] == 0 || len(files) != 1 || files[0o600] != 33 {
		t.Fatalf("host tree modes: dirs %v files %v", dirs, files)
	}
	if st.IndexSHA256 != verifytest.IndexSHA256[verifytest.Demo] {
		t.Fatalf("retained digest %s", st.IndexSHA256)
	}
	fi, err := os.Lstat(o.StateDir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("state dir mode: %v %v", fi.Mode(), err)
	}
	state, err := os.ReadFile(filepath.Join(st.StateDirOf(), "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{st.IndexSHA256, `"owner_pid":` + strconv.Itoa(os.Getpid()), `"phase":"created"`, `"owner_start_ticks":`} {
		if !bytes.Contains(state, []byte(want)) {
			t.Errorf("state lacks %s", want)
		}
	}
	if strings.HasPrefix(st.StateDirOf(), st.HostDir) || strings.HasPrefix(st.HostDir, o.StateDir) {
		t.Error("state must live outside the tree")
	}
	re, err := stage.Open(o, st.ID)
	if err != nil || re.HostDir != st.HostDir || re.IndexSHA256 != st.IndexSHA256 {
		t.Fatalf("reopen: %v", err)
	}
}

// Spec "Lifecycle and access": the host tree is created outside the repository and the
// retained run output.
func TestPlacementOutsideRepositoryAndRunOutput(t *testing.T) {
	ws := t.TempDir()
	gitTree := t.TempDir()
	if err := os.Mkdir(filepath.Join(gitTree, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	artifacts := t.TempDir()
	linkIntoWS := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(ws, linkIntoWS); err != nil {
		t.Fatal(err)
	}
	env := func(k, v string) func(string) string {
		return func(n string) string {
			if n == k {
				return v
			}
			return ""
		}
	}
	cases := []struct {
		name string
		o    stage.Options
	}{
		{"base inside GITHUB_WORKSPACE", stage.Options{Base: ws, Getenv: env("GITHUB_WORKSPACE", ws)}},
		{"base below CI_PROJECT_DIR", stage.Options{Base: filepath.Join(ws, "sub"), Getenv: env("CI_PROJECT_DIR", ws)}},
		{"base inside the git work tree", stage.Options{Base: filepath.Join(gitTree, "x"), WorkDir: filepath.Join(gitTree)}},
		{"base inside an artifacts dir", stage.Options{Base: artifacts, Forbidden: []string{artifacts}}},
		{"state inside the workspace", stage.Options{StateDir: filepath.Join(ws, "state"), Getenv: env("GITHUB_WORKSPACE", ws)}},
		{"base reached through a symlink into the workspace", stage.Options{Base: linkIntoWS, Getenv: env("GITHUB_WORKSPACE", ws)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			if o.Base == "" {
				o.Base = t.TempDir()
			}
			if o.StateDir == "" {
				o.StateDir = filepath.Join(t.TempDir(), "state")
			}
			if o.WorkDir == "" {
				o.WorkDir = t.TempDir()
			}
			if o.Getenv == nil {
				o.Getenv = func(string) string { return "" }
			}
			snap := demoSnapshot(t)
			_, err := stage.Create(context.Background(), o, snap, snap.IndexSHA256)
			var pe *stage.PlacementError
			if !errors.As(err, &pe) {
				t.Fatalf("want a PlacementError, got %v", err)
			}
		})
	}
}

func TestStateDirMustBePrivate(t *testing.T) {
	o := testOpts(t)
	if err := os.Mkdir(o.StateDir, 0o755); err != nil {
		t.Fatal(err)
	}
	snap := demoSnapshot(t)
	var pe *stage.PlacementError
	if _, err := stage.Create(context.Background(), o, snap, snap.IndexSHA256); !errors.As(err, &pe) {
		t.Fatalf("group/world-accessible state dir: got %v", err)
	}
	if os.Geteuid() == 0 {
		os.Chmod(o.StateDir, 0o700)
		os.Chown(o.StateDir, nobody, nobody)
		if _, err := stage.Create(context.Background(), o, snap, snap.IndexSHA256); !errors.As(err, &pe) {
			t.Fatalf("state dir owned by another user: got %v", err)
		}
	}
}

// unprivilegedBinary copies the test binary where uid 65534 can execute it.
func unprivilegedBinary(t *testing.T, base string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst := filepath.Join(base, "stage.test")
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, src); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}

func runHelper(t *testing.T, bin, mode string, cred *syscall.Credential, env ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run=^$")
	cmd.Env = append([]string{"FORGECTX_STAGE_HELPER=" + mode, "PATH=/usr/bin:/bin", "TMPDIR=/tmp"}, env...)
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	cmd.Dir = "/"
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper %s: %v\n%s", mode, err, out)
	}
	return string(out)
}

// Spec "Lifecycle and access": root-owned 0555/0444 copy; the unprivileged agent can read
// but not change it in any way, and holds no write-overriding capability.
func TestOwnershipSealIsAgentImmutable(t *testing.T) {
	requireRoot(t)
	o := testOpts(t)
	st := create(t, o)
	sealed, err := st.Seal(context.Background(), stage.SealOptions{Mode: stage.ModeOwnership, AgentUID: nobody, AgentGID: nobody})
	if err != nil {
		t.Fatal(err)
	}
	if sealed.Mode != stage.ModeOwnership || sealed.Files != 33 || sealed.IndexSHA256 != verifytest.IndexSHA256[verifytest.Demo] {
		t.Fatalf("sealed %+v", sealed)
	}
	dirs, files, owners := modes(t, sealed.Dir)
	if len(dirs) != 1 || dirs[0o555] == 0 || len(files) != 1 || files[0o444] != 33 || len(owners) != 1 || owners[0] == 0 {
		t.Fatalf("sandbox: dirs %v files %v owners %v", dirs, files, owners)
	}
	if attr := sealed.SysProcAttr(); attr.Credential.Uid != nobody || len(attr.Credential.Groups) != 0 {
		t.Fatalf("agent credential %+v", attr.Credential)
	}
	bin := unprivilegedBinary(t, o.Base)
	out := runHelper(t, bin, "attempt-writes", sealed.SysProcAttr().Credential, "STAGE_DIR="+sealed.Dir)
	if !strings.Contains(out, "read ok") {
		t.Errorf("the agent cannot read the copy:\n%s", out)
	}
	if strings.Contains(out, "ALLOWED") {
		t.Errorf("the agent changed the copy:\n%s", out)
	}
	if n := strings.Count(out, " denied"); n != 12 {
		t.Errorf("%d denied attempts, want 12:\n%s", n, out)
	}
	if !strings.Contains(out, "caps ok") {
		t.Errorf("agent capability check:\n%s", out)
	}
	// The copy still verifies against the retained digest.
	if rep, err := verify.Dir(context.Background(), sealed.Dir, verify.Options{IndexSHA256: st.IndexSHA256}); err != nil || !rep.OK() {
		t.Fatalf("sealed copy: %v %v", err, rep.Violations)
	}
}

// A root-owned 0555/0444 copy is not agent-immutable if the agent can rename it away and put
// its own tree at the same path: when Base is replaceable by the agent (owned by it, or
// writable by it without the sticky bit — e.g. $RUNNER_TEMP when the agent is the runner
// user), the copy goes to the temporary directory; when that is replaceable too, Seal aborts.
func TestOwnershipSealOutOfReachOfAnAgentWritableBase(t *testing.T) {
	requireRoot(t)
	tmp, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		setup func(base string) error
		moved bool
	}{
		{"base owned by the agent", func(b string) error { return os.Chown(b, nobody, nobody) }, true},
		{"base world-writable", func(b string) error { return os.Chmod(b, 0o777) }, true},
		{"base group-writable by the agent's group", func(b string) error {
			if err := os.Chown(b, 0, nobody); err != nil {
				return err
			}
			return os.Chmod(b, 0o775)
		}, true},
		{"base world-writable with the sticky bit", func(b string) error { return os.Chmod(b, 0o777|os.ModeSticky) }, false},
		{"base root-owned 0755", func(string) error { return nil }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := testOpts(t)
			if err := tc.setup(o.Base); err != nil {
				t.Fatal(err)
			}
			st := create(t, o)
			sealed, err := st.Seal(context.Background(), stage.SealOptions{Mode: stage.ModeOwnership, AgentUID: nobody, AgentGID: nobody})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := filepath.Dir(sealed.Dir), map[bool]string{true: tmp, false: o.Base}[tc.moved]; got != want {
				t.Fatalf("sandbox copy in %s, want %s", got, want)
			}
			state, _ := os.ReadFile(filepath.Join(st.StateDirOf(), "state.json"))
			if !bytes.Contains(state, []byte(`"sandbox_dir":"`+sealed.Dir+`"`)) {
				t.Fatalf("the state does not record the copy's path %s", sealed.Dir)
			}
			bin := unprivilegedBinary(t, sharedBase(t))
			out := runHelper(t, bin, "attempt-writes", sealed.SysProcAttr().Credential, "STAGE_DIR="+sealed.Dir)
			if strings.Contains(out, "ALLOWED") || !strings.Contains(out, "read ok") {
				t.Fatalf("the agent could change or replace the copy:\n%s", out)
			}
			if err := st.Cleanup(); err != nil {
				t.Fatal(err)
			}
			gone(t, sealed.Dir, st.HostDir, st.StateDirOf())
		})
	}
	t.Run("temporary directory replaceable too", func(t *testing.T) {
		o := testOpts(t)
		if err := os.Chown(o.Base, nobody, nobody); err != nil {
			t.Fatal(err)
		}
		st := create(t, o)
		agentTmp := t.TempDir()
		if err := os.Chown(agentTmp, nobody, nobody); err != nil {
			t.Fatal(err)
		}
		t.Setenv("TMPDIR", agentTmp)
		_, err := st.Seal(context.Background(), stage.SealOptions{Mode: stage.ModeOwnership, AgentUID: nobody, AgentGID: nobody})
		var ie *stage.ImmutabilityError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), "could rename the sandbox copy away") {
			t.Fatalf("want an ImmutabilityError, got %v", err)
		}
		gone(t, st.SandboxDir, filepath.Join(agentTmp, filepath.Base(st.SandboxDir)))
	})
}

// Spec: if neither mechanism can be enforced, Fullsend aborts before launching the agent.
func TestSealAbortsWhenImmutabilityCannotBeEnforced(t *testing.T) {
	o := testOpts(t)
	st := create(t, o)
	for _, so := range []stage.SealOptions{
		{Mode: stage.ModeOwnership},                           // no agent identity
		{Mode: stage.ModeOwnership, AgentUID: 0, AgentGID: 0}, // the agent would be root
	} {
		_, err := st.Seal(context.Background(), so)
		var ie *stage.ImmutabilityError
		if !errors.As(err, &ie) || !errors.Is(err, stage.ErrImmutability) {
			t.Fatalf("%+v: want an ImmutabilityError, got %v", so, err)
		}
		gone(t, st.SandboxDir)
	}
	// As an unprivileged runner, neither a root-owned copy nor a bind mount is possible.
	requireRoot(t)
	base := sharedBase(t)
	work := filepath.Join(base, "work")
	src := filepath.Join(work, "src")
	verifytest.WriteFiles(t, src, verifytest.Files(t, verifytest.Demo))
	filepath.WalkDir(work, func(p string, d fs.DirEntry, err error) error { return os.Lchown(p, nobody, nobody) })
	bin := unprivilegedBinary(t, base)
	out := runHelper(t, bin, "seal-unprivileged", &syscall.Credential{Uid: nobody, Gid: nobody, Groups: []uint32{}},
		"STAGE_BASE="+work, "STAGE_STATE="+filepath.Join(work, "state"), "STAGE_SRC="+src)
	if strings.TrimSpace(out) != "aborted bind-mount" {
		t.Fatalf("unprivileged seal: %s", out)
	}
}

func TestBindMountSeal(t *testing.T) {
	requireRoot(t)
	o := testOpts(t)
	st := create(t, o)
	sealed, err := st.Seal(context.Background(), stage.SealOptions{Mode: stage.ModeBindMount})
	var ie *stage.ImmutabilityError
	if errors.As(err, &ie) {
		testnotice.Skip(t, "bind-mount tests", fmt.Sprintf("read-only bind mounts are not available in this environment: %v", err))
	}
	if err != nil {
		t.Fatal(err)
	}
	// Even root cannot write through a read-only mount.
	err = os.WriteFile(filepath.Join(sealed.Dir, commentPath), []byte("x"), 0o644)
	if !errors.Is(err, syscall.EROFS) {
		t.Fatalf("write through the read-only mount: %v", err)
	}
	if err := st.Cleanup(); err != nil {
		t.Fatal(err)
	}
	gone(t, sealed.Dir, st.HostDir, st.StateDirOf())
}

// Spec "Canonical bytes": Fullsend compares the on-disk root index with the retained value
// and aborts on any difference; it never treats a rewritten index as the root of trust.
func TestSealRefusesARewrittenIndex(t *testing.T) {
	st := create(t, testOpts(t))
	// A pre-script rewrites a body and the index consistently.
	p := filepath.Join(st.HostDir, commentPath)
	b, _ := os.ReadFile(p)
	os.WriteFile(p, bytes.Replace(b, []byte("Thanks"), []byte("Thx"), 1), 0o600)
	idx, _ := os.ReadFile(filepath.Join(st.HostDir, "index.json"))
	os.WriteFile(filepath.Join(st.HostDir, "index.json"), bytes.Replace(idx, []byte(`"gaps":[{`), []byte(`"gaps":[ {`), 1), 0o600)
	_, err := st.Seal(context.Background(), stage.SealOptions{Mode: stage.ModeOwnership, AgentUID: nobody, AgentGID: nobody})
	var ime *stage.IndexMismatchError
	if !errors.As(err, &ime) || ime.Retained != st.IndexSHA256 {
		t.Fatalf("want IndexMismatchError, got %v", err)
	}
	gone(t, st.SandboxDir)
}

func TestSealRefusesATamperedChild(t *testing.T) {
	st := create(t, testOpts(t))
	p := filepath.Join(st.HostDir, commentPath)
	b, _ := os.ReadFile(p)
	b[len(b)-2] ^= 1
	os.WriteFile(p, b, 0o600)
	_, err := st.Seal(context.Background(), stage.SealOptions{Mode: stage.ModeOwnership, AgentUID: nobody, AgentGID: nobody})
	var ve *verify.Error
	if !errors.As(err, &ve) || ve.Report.Violations[0].Rule != verify.RuleSHA256 {
		t.Fatalf("want a verify.Error with sha256_mismatch, got %v", err)
	}
	gone(t, st.SandboxDir)
}

// Spec "Canonical bytes": the uploaded bytes MUST be the exact bytes verified; no-follow
// handles alone are insufficient because an open file can still be overwritten in place. A
// writer that changes the host tree after it was copied does not change the copy (which is
// what is verified).
func TestCopyOnVerifyHandsOnExactlyTheVerifiedBytes(t *testing.T) {
	requireRoot(t)
	st := create(t, testOpts(t))
	host := filepath.Join(st.HostDir, commentPath)
	orig, _ := os.ReadFile(host)
	st.SetAfterCopy(func(string) {
		// Overwrite in place (same inode, same size) and add a file, after verification.
		f, err := os.OpenFile(host, os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			return
		}
		f.WriteAt(bytes.Repeat([]byte("X"), len(orig)), 0)
		f.Close()
		os.WriteFile(filepath.Join(st.HostDir, "records", "late.md"), []byte("late\n"), 0o600)
	})
	sealed, err := st.Seal(context.Background(), stage.SealOptions{Mode: stage.ModeOwnership, AgentUID: nobody, AgentGID: nobody})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(sealed.Dir, commentPath))
	if !bytes.Equal(got, orig) {
		t.Fatal("the sandbox copy holds bytes written to the host tree after the copy")
	}
	if now, _ := os.ReadFile(host); bytes.Equal(now, orig) {
		t.Fatal("the writer did not run: the test proves nothing")
	}
	gone(t, filepath.Join(sealed.Dir, "records", "late.md"))
}

// The copy itself is what is verified: a change to it before it is sealed (a writer that
// reached the copy, a faulty copy) fails the seal with the host-tree error types, and no copy
// remains. Both modes: ownership (the sandbox copy) and bind mount (the private copy).
func TestSealVerifiesTheCopyNotTheHostTree(t *testing.T) {
	requireRoot(t)
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, dir string)
		check  func(t *testing.T, err error)
	}{
		{"child", func(t *testing.T, dir string) {
			p := filepath.Join(dir, commentPath)
			b, _ := os.ReadFile(p)
			b[len(b)-2] ^= 1
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, err error) {
			var ve *verify.Error
			if !errors.As(err, &ve) || ve.Report.Violations[0].Rule != verify.RuleSHA256 || ve.Report.Violations[0].Path != commentPath {
				t.Fatalf("want a verify.Error with sha256_mismatch at %s, got %v", commentPath, err)
			}
		}},
		{"extra file", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "records", "late.md"), []byte("late\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, err error) {
			var ve *verify.Error
			if !errors.As(err, &ve) || ve.Report.Violations[0].Rule != verify.RuleExtraFile {
				t.Fatalf("want a verify.Error with extra_file, got %v", err)
			}
		}},
		{"index", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "index.json")
			b, _ := os.ReadFile(p)
			if err := os.WriteFile(p, bytes.Replace(b, []byte(`"gaps":[{`), []byte(`"gaps":[ {`), 1), 0o600); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, err error) {
			var ime *stage.IndexMismatchError
			if !errors.As(err, &ime) || ime.OnDisk == ime.Retained {
				t.Fatalf("want IndexMismatchError, got %v", err)
			}
		}},
	} {
		for _, so := range []stage.SealOptions{{Mode: stage.ModeOwnership, AgentUID: nobody, AgentGID: nobody}, {Mode: stage.ModeBindMount}} {
			t.Run(tc.name+"/"+string(so.Mode), func(t *testing.T) {
				st := create(t, testOpts(t))
				var copied string
				st.SetAfterCopy(func(dir string) { copied = dir; tc.tamper(t, dir) })
				_, err := st.Seal(context.Background(), so)
				var ie *stage.ImmutabilityError
				if errors.As(err, &ie) {
					t.Skipf("mode %s unavailable here: %v", so.Mode, err)
				}
				tc.check(t, err)
				gone(t, st.SandboxDir, copied)
				// The host tree is untouched, so a second seal (not tampered) succeeds.
				st.SetAfterCopy(nil)
				sealed, err := st.Seal(context.Background(), so)
				if err != nil {
					t.Fatalf("seal after a rejected copy: %v", err)
				}
				if sealed.Files == 0 {
					t.Fatal("no files sealed")
				}
				st.Cleanup()
			})
		}
	}
}

// A symlink, special file or hard link anywhere the tree is read is refused by the copy, not
// followed or reproduced: the same *verify.Error rule verification of the host tree reports.
func TestSealRefusesLinksAndSpecialFilesInTheHostTree(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, rule string
		plant            func(p string) error
	}{
		{"symlinked record", commentPath, verify.RuleSymlink, func(p string) error { os.Remove(p); return os.Symlink(outside, p) }},
		{"symlinked directory", "records", verify.RuleSymlink, func(p string) error {
			if err := os.RemoveAll(p); err != nil {
				return err
			}
			return os.Symlink(filepath.Dir(outside), p)
		}},
		{"fifo", "records/x.md", verify.RuleSpecialFile, func(p string) error { return syscall.Mkfifo(p, 0o600) }},
		{"hard link", commentPath, verify.RuleHardLink, func(p string) error { return os.Link(p, p+".link") }},
		// A name with a terminal escape and a newline is reported escaped, never raw.
		{"escaped name", "records/\x1b[31m\nok.md", verify.RuleSymlink, func(p string) error { return os.Symlink(outside, p) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := create(t, testOpts(t))
			if err := tc.plant(filepath.Join(st.HostDir, tc.path)); err != nil {
				t.Fatal(err)
			}
			_, err := st.Seal(context.Background(), stage.SealOptions{Mode: stage.ModeBindMount})
			var ve *verify.Error
			if !errors.As(err, &ve) || ve.Report.Violations[0].Rule != tc.rule {
				t.Fatalf("want a verify.Error with %s, got %v", tc.rule, err)
			}
			p := ve.Report.Violations[0].Path
			if p != tc.path && !strings.HasPrefix(p, "records/") {
				t.Fatalf("violation at %s, want %s", p, tc.path)
			}
			for i := 0; i < len(p); i++ {
				if p[i] < 0x20 || p[i] > 0x7e {
					t.Fatalf("violation path %q is not escaped", p)
				}
			}
			gone(t, st.SandboxDir, filepath.Join(st.StateDirOf(), "tree"))
		})
	}
}

// A concurrent writer racing the seal: either verification fails, or the copy holds exactly
// the bytes that were verified (the original ones) — never a mix.
func TestConcurrentWriterNeverReachesTheCopy(t *testing.T) {
	requireRoot(t)
	for i := 0; i < 5; i++ {
		st := create(t, testOpts(t))
		host := filepath.Join(st.HostDir, commentPath)
		orig, _ := os.ReadFile(host)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				f, err := os.OpenFile(host, os.O_WRONLY, 0)
				if err != nil {
					return
				}
				f.WriteAt(bytes.Repeat([]byte("Y"), len(orig)), 0)
				f.WriteAt(orig, 0)
				f.Close()
			}
		}()
		sealed, err := st.Seal(context.Background(), stage.SealOptions{Mode: stage.ModeOwnership, AgentUID: nobody, AgentGID: nobody})
		close(stop)
		wg.Wait()
		if err != nil {
			var ve *verify.Error
			if !errors.As(err, &ve) {
				t.Fatalf("unexpected error: %v", err)
			}
			continue
		}
		got, _ := os.ReadFile(filepath.Join(sealed.Dir, commentPath))
		if !bytes.Equal(got, orig) {
			t.Fatal("the copy holds bytes that were not verified")
		}
		st.Cleanup()
	}
}

func TestCleanupIsIdempotentAndNeverFollowsLinks(t *testing.T) {
	o := testOpts(t)
	st := create(t, o)
	if os.Geteuid() == 0 {
		if _, err := st.Seal(context.Background(), stage.SealOptions{Mode: stage.ModeOwnership, AgentUID: nobody, AgentGID: nobody}); err != nil {
			t.Fatal(err)
		}
	}
	// A pre-script plants a symlink to a directory outside and locks a directory.
	outside := t.TempDir()
	keep := filepath.Join(outside, "keep")
	os.WriteFile(keep, []byte("keep"), 0o600)
	os.Symlink(outside, filepath.Join(st.HostDir, "records", "escape"))
	os.Chmod(filepath.Join(st.HostDir, "threads"), 0)
	if err := st.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if err := st.Cleanup(); err != nil {
		t.Fatalf("second cleanup: %v", err)
	}
	gone(t, st.HostDir, st.SandboxDir, st.StateDirOf())
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("cleanup followed a symlink out of the tree: %v", err)
	}
}

// The same as an unprivileged runner, where locked directories really bind the owner.
func TestCleanupAsUnprivilegedRunnerEmptiesLockedDirectories(t *testing.T) {
	requireRoot(t)
	base := sharedBase(t)
	work := filepath.Join(base, "work")
	src := filepath.Join(work, "src")
	verifytest.WriteFiles(t, src, verifytest.Files(t, verifytest.Demo))
	outside := filepath.Join(work, "outside")
	os.Mkdir(outside, 0o700)
	keep := filepath.Join(outside, "keep")
	os.WriteFile(keep, []byte("keep"), 0o600)
	filepath.WalkDir(work, func(p string, d fs.DirEntry, err error) error { return os.Lchown(p, nobody, nobody) })
	bin := unprivilegedBinary(t, base)
	out := runHelper(t, bin, "cleanup-locked", &syscall.Credential{Uid: nobody, Gid: nobody, Groups: []uint32{}},
		"STAGE_BASE="+work, "STAGE_STATE="+filepath.Join(work, "state"), "STAGE_SRC="+src, "STAGE_OUTSIDE="+outside)
	if strings.TrimSpace(out) != "gone" {
		t.Fatalf("unprivileged cleanup: %s", out)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("cleanup followed a symlink out of the tree: %v", err)
	}
}

func readyLine(t *testing.T, r io.Reader) []string {
	t.Helper()
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatalf("helper gave no ready line: %v %q", err, line)
	}
	f := strings.Fields(line)
	if len(f) != 4 || f[0] != "ready" {
		t.Fatalf("helper: %q", line)
	}
	return f[1:]
}

// Cleanup on every controlled exit, including cancellation by SIGTERM mid-run.
func TestSIGTERMMidRunCleansUp(t *testing.T) {
	requireRoot(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			base := sharedBase(t)
			src := verifytest.Write(t, verifytest.Demo)
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "FORGECTX_STAGE_HELPER=hold", "STAGE_BASE="+base, "STAGE_STATE="+filepath.Join(t.TempDir(), "state"), "STAGE_SRC="+src)
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			paths := readyLine(t, stdout)
			for _, p := range paths {
				if _, err := os.Lstat(p); err != nil {
					t.Fatalf("%s missing while the run holds it", p)
				}
			}
			cmd.Process.Signal(sig)
			if err := cmd.Wait(); err != nil {
				t.Fatalf("helper exit: %v", err)
			}
			gone(t, paths...)
		})
	}
}

// Scavenging at start-up removes trees whose owner died without cleaning up, and leaves live
// owners' trees and unknown entries alone.
func TestScavengeRemovesAbandonedTrees(t *testing.T) {
	o := testOpts(t)
	src := verifytest.Write(t, verifytest.Demo)
	out := runHelper(t, os.Args[0], "abandon", nil, "STAGE_BASE="+o.Base, "STAGE_STATE="+o.StateDir, "STAGE_SRC="+src)
	abandoned := strings.Fields(out)[1:]
	for _, p := range []string{abandoned[0], abandoned[2]} {
		if _, err := os.Lstat(p); err != nil {
			t.Fatalf("abandoned %s not left behind: %v", p, err)
		}
	}
	live := create(t, o)
	// PID reuse: a state naming this (live) PID with another start time is abandoned.
	reused := create(t, o)
	sf := filepath.Join(reused.StateDirOf(), "state.json")
	b, _ := os.ReadFile(sf)
	b = bytes.Replace(b, []byte(`"owner_start_ticks":`), []byte(`"owner_start_ticks":1`), 1)
	os.WriteFile(sf, b, 0o600)
	// An entry with no readable state is left alone.
	os.Mkdir(filepath.Join(o.StateDir, strings.Repeat("a", 32)), 0o700)

	rep, err := stage.Scavenge(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Scanned != 4 || rep.Removed != 2 || rep.Live != 1 || rep.Unknown != 1 || len(rep.Errors) != 0 {
		t.Fatalf("report %+v", rep)
	}
	gone(t, abandoned...)
	gone(t, reused.HostDir, reused.StateDirOf())
	if _, err := os.Lstat(live.HostDir); err != nil {
		t.Fatalf("live stage scavenged: %v", err)
	}
}

func TestScavengeAfterSIGKILL(t *testing.T) {
	requireRoot(t)
	base := sharedBase(t)
	state := filepath.Join(t.TempDir(), "state")
	src := verifytest.Write(t, verifytest.Demo)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FORGECTX_STAGE_HELPER=hold", "STAGE_BASE="+base, "STAGE_STATE="+state, "STAGE_SRC="+src)
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	paths := readyLine(t, stdout)
	cmd.Process.Kill()
	cmd.Wait()
	for _, p := range paths {
		if _, err := os.Lstat(p); err != nil {
			t.Fatalf("%s vanished without cleanup", p)
		}
	}
	rep, err := stage.Scavenge(context.Background(), stage.Options{Base: base, StateDir: state, Getenv: func(string) string { return "" }})
	if err != nil || rep.Removed != 1 {
		t.Fatalf("%+v %v", rep, err)
	}
	gone(t, paths...)
}

// The path `forgectx run` takes: the assembler's in-memory tree and its retained digest.
func TestCreateFromAssembledTree(t *testing.T) {
	o := testOpts(t)
	res, err := demo.Run(context.Background(), demo.Options{Out: filepath.Join(t.TempDir(), "demo")})
	if err != nil {
		t.Fatal(err)
	}
	st, err := stage.Create(context.Background(), o, res.Tree, res.Tree.IndexSHA256)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Cleanup()
	if rep, err := verify.Dir(context.Background(), st.HostDir, verify.Options{IndexSHA256: res.Tree.IndexSHA256}); err != nil || !rep.OK() {
		t.Fatalf("%v %v", err, rep.Violations)
	}
	// A digest that is not the tree's is refused at creation.
	if _, err := stage.Create(context.Background(), o, res.Tree, strings.Repeat("0", 64)); err == nil {
		t.Fatal("a tree that does not match the retained digest was staged")
	}
	ents, _ := os.ReadDir(o.StateDir)
	if len(ents) != 1 {
		t.Fatalf("a refused create left state behind: %d entries", len(ents))
	}
}

func BenchmarkCreateSealCleanup(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root for the ownership seal")
	}
	dir := verifytest.Write(b, verifytest.Demo)
	snap, rep, err := verify.Load(context.Background(), dir, verify.Options{})
	if err != nil || snap == nil {
		b.Fatal(err, rep.Violations)
	}
	base := b.TempDir()
	o := stage.Options{Base: base, StateDir: filepath.Join(b.TempDir(), "state"), WorkDir: base, Getenv: func(string) string { return "" }}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st, err := stage.Create(context.Background(), o, snap, snap.IndexSHA256)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := st.Seal(context.Background(), stage.SealOptions{Mode: stage.ModeOwnership, AgentUID: nobody, AgentGID: nobody}); err != nil {
			b.Fatal(err)
		}
		if err := st.Cleanup(); err != nil {
			b.Fatal(err)
		}
	}
}

func TestStagingPathsAreSymlinkFree(t *testing.T) {
	o := testOpts(t)
	link := filepath.Join(t.TempDir(), "base-link")
	if err := os.Symlink(o.Base, link); err != nil {
		t.Fatal(err)
	}
	o.Base = link
	st := create(t, o)
	real, _ := filepath.EvalSymlinks(link)
	if filepath.Dir(st.HostDir) != real || filepath.Dir(st.SandboxDir) != real {
		t.Fatalf("staging paths %s, %s are not under the resolved base %s", st.HostDir, st.SandboxDir, real)
	}
}

// Spec "Lifecycle and access": the sandbox copy is removed right after the runtime's last use
// and the host tree after the post-script. RemoveSandbox removes the copy (unmounted first in
// bind-mount mode) and leaves the host tree and the state; it is idempotent, and Cleanup still
// removes everything.
func TestRemoveSandboxLeavesTheHostTree(t *testing.T) {
	requireRoot(t)
	for _, so := range []stage.SealOptions{
		{Mode: stage.ModeOwnership, AgentUID: nobody, AgentGID: nobody},
		{Mode: stage.ModeBindMount},
	} {
		t.Run(string(so.Mode), func(t *testing.T) {
			o := testOpts(t)
			st := create(t, o)
			if err := st.RemoveSandbox(); err != nil {
				t.Fatalf("RemoveSandbox before Seal: %v", err)
			}
			sealed, err := st.Seal(context.Background(), so)
			var ie *stage.ImmutabilityError
			if errors.As(err, &ie) {
				t.Skipf("%s is not available here: %v", so.Mode, err)
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(sealed.Dir, "index.json")); err != nil {
				t.Fatalf("test premise: sealed copy: %v", err)
			}
			for i := 0; i < 2; i++ {
				if err := st.RemoveSandbox(); err != nil {
					t.Fatalf("RemoveSandbox #%d: %v", i+1, err)
				}
			}
			gone(t, sealed.Dir)
			if mi, err := os.ReadFile("/proc/self/mountinfo"); err == nil && strings.Contains(string(mi), " "+sealed.Dir+" ") {
				t.Errorf("the copy is still mounted after RemoveSandbox")
			}
			for _, p := range []string{filepath.Join(st.HostDir, "index.json"), st.StateDirOf()} {
				if _, err := os.Stat(p); err != nil {
					t.Errorf("RemoveSandbox removed %s: %v", p, err)
				}
			}
			if err := st.Cleanup(); err != nil {
				t.Fatal(err)
			}
			gone(t, sealed.Dir, st.HostDir, st.StateDirOf())
			if err := st.RemoveSandbox(); err != nil {
				t.Errorf("RemoveSandbox after Cleanup: %v", err)
			}
		})
	}
}
