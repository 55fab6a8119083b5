package ship

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// root is the repository root (tests run in test/ship).
var root = func() string {
	r, err := filepath.Abs("../..")
	if err != nil {
		panic(err)
	}
	return r
}()

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
	binDir    string
)

// toolInstall serialises the tool look-ups that may install (npm, go install).
var toolInstall sync.Mutex

func TestMain(m *testing.M) {
	// The slow ship tests mostly wait on subprocesses (forgectx runs, gitlab-ci-local, buildah),
	// not on this process's CPU, so four at a time keep a 2-core machine busy where the default
	// (GOMAXPROCS: 2) leaves it idle; an explicit -parallel still wins.
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		_ = flag.Set("test.parallel", "4")
	}
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	if ciImageDir != "" {
		// vfs layers are plain directories; `buildah rm` first releases the shared container.
		_ = exec.Command("buildah", append(append([]string{}, ciStore...), "rm", "--all")...).Run()
		os.RemoveAll(ciImageDir)
	}
	os.Exit(code)
}

// shipVersion is the release version the tests build: the one release archive every test that
// needs a binary shares (the action installs it from a loopback release, the image stages it).
const shipVersion = "v0.0.1"

// forgectxBin is the static forgectx binary of the shared release build (shipRelease).
func forgectxBin(t testing.TB) string {
	t.Helper()
	shipRelease(t)
	return builtBin
}

// shipRelease builds the release once per test process with scripts/release-build.sh for this
// machine only — the archive and checksums.txt exactly as a release publishes them — and
// unpacks its binary for the tests that run forgectx directly. Building once is what keeps
// test/ship fast on a loaded 2-core machine: every other go build here was a 30 s+ link.
func shipRelease(t testing.TB) (dist string) {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "forgectx-ship-bin-")
		if buildErr != nil {
			return
		}
		dist := filepath.Join(binDir, "dist")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "scripts", "release-build.sh"), shipVersion, dist)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "FORGECTX_PLATFORMS="+runtime.GOOS+"/"+runtime.GOARCH, "SOURCE_DATE_EPOCH=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("release-build.sh: %v\n%s", err, out)
			return
		}
		builtBin = filepath.Join(binDir, "forgectx")
		archive := filepath.Join(dist, fmt.Sprintf("forgectx_%s_%s_%s.tar.gz", shipVersion, runtime.GOOS, runtime.GOARCH))
		if out, err := exec.Command("tar", "-xzf", archive, "-C", binDir, "forgectx").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("unpack %s: %v\n%s", archive, err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(binDir, "dist")
}

// flagLine is one flag in Go's flag.PrintDefaults output: "  -name type".
var flagLine = regexp.MustCompile(`(?m)^  -([a-z][a-z0-9-]*)`)

// runFlags returns the flags `forgectx run --help` lists, sorted.
func runFlags(t testing.TB) []string {
	t.Helper()
	return commandFlags(t, "run")
}

// commandFlags lists the flags of `forgectx ARGS... --help`.
func commandFlags(t testing.TB, args ...string) []string {
	t.Helper()
	bin := forgectxBin(t) // may build the shared binary: not inside the 30 s bound of the help call
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, append(args, "--help")...)
	cmd.Stderr = &stderr
	cmd.Stdout = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("forgectx %v --help: %v\n%s", args, err, stderr.String())
	}
	seen := map[string]bool{} // the usage may be printed more than once
	var flags []string
	for _, m := range flagLine.FindAllStringSubmatch(stderr.String(), -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			flags = append(flags, m[1])
		}
	}
	if len(flags) == 0 {
		t.Fatalf("forgectx %v --help lists no flags:\n%s", args, stderr.String())
	}
	sort.Strings(flags)
	return flags
}

// tool finds an executable: an environment override, PATH, then GOPATH/bin.
func tool(envName, name string) string {
	if p := os.Getenv(envName); p != "" {
		return p
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if gp, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		p := filepath.Join(strings.TrimSpace(string(gp)), "bin", name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// toolCache is a persistent directory for tools the tests install (npm packages).
func toolCache(t testing.TB) string {
	t.Helper()
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	d = filepath.Join(d, "forgectx-test-tools")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// run runs a command with a deadline and returns combined output and the exit code.
func runCmd(t testing.TB, timeout time.Duration, dir string, env []string, name string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = env
	}
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s %s: timed out after %s\n%s", name, strings.Join(args, " "), timeout, out)
	}
	code := 0
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return string(out), code
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func readFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	must(t, err)
	return string(b)
}

// unprivilegedUID is the identity agents run as when the tests run as root: forgectx refuses
// to launch an agent with UID 0 in every mode (docs/run.md, "Agent privileges").
const unprivilegedUID = 65534

// reachableByAgent makes dir and its parents up to the temporary directory searchable, and
// out writable, by an agent running as unprivilegedUID, when the tests run as root (t.TempDir
// directories are 0700).
func reachableByAgent(t testing.TB, dir, out string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	for d := dir; d != "/" && d != os.TempDir() && d != "."; d = filepath.Dir(d) {
		must(t, os.Chmod(d, 0o755))
	}
	must(t, os.Chmod(out, 0o777))
}

// goEnv is the environment a child `go build` needs to reuse this machine's caches.
func goEnv() []string {
	var out []string
	for _, k := range []string{"GOPATH", "GOCACHE", "GOMODCACHE", "GOPROXY", "GOFLAGS", "GOTOOLCHAIN"} {
		if v, err := exec.Command("go", "env", k).Output(); err == nil && strings.TrimSpace(string(v)) != "" {
			out = append(out, k+"="+strings.TrimSpace(string(v)))
		}
	}
	return out
}

// runnerOS/runnerArch name this machine as GitHub's RUNNER_OS and RUNNER_ARCH do.
func runnerOS() string {
	if runtime.GOOS == "darwin" {
		return "macOS"
	}
	return "Linux"
}

func runnerArch() string {
	if runtime.GOARCH == "arm64" {
		return "ARM64"
	}
	return "X64"
}
