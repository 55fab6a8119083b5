package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/forgectx/forgectx/test/testnotice"
)

// mkNullDevice makes the test's own character device 1:3 at path (never a system device), or
// skips with a notice when not root.
func mkNullDevice(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() != 0 {
		testnotice.Skip(t, "device-node cases (non-root)", "not root: cannot mknod a character device")
	}
	if err := syscall.Mknod(path, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		testnotice.Skip(t, "device-node cases (non-root)", fmt.Sprintf("mknod not permitted: %v", err))
	}
}

func stillCharDevice(t *testing.T, path string) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("%s is no longer a character device (%v, %v)", path, fi, err)
	}
}

// Regression, as reproduced: `mknod T c 1 3; forgectx prescript --none --dotenv T` turned T
// into a regular file. Now the flag is refused before anything runs (exit 2) and T stays.
func TestPrescriptDotenvNeverReplacesADeviceNode(t *testing.T) {
	dir := t.TempDir()
	dev := filepath.Join(dir, "T")
	mkNullDevice(t, dev)
	code, out, errOut := runCLI(t, nil, "", "prescript", "--none", "--dotenv", dev)
	if code != exitUsage || out != "" || !strings.Contains(errOut, "--dotenv "+dev+": is a character device") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 naming the flag, the target and the rule", code, out, errOut)
	}
	stillCharDevice(t, dev)
}

// Every file output refuses what it must not replace, with exit 2 and the flag, the target and
// the rule on stderr, before any work; the target is left as it was.
func TestOutputFlagsRefuseHostileTargets(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "adir")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink(filepath.Join(dir, "nowhere"), dangling); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "no", "such", "file")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"prescript --dotenv directory", []string{"prescript", "--none", "--dotenv", sub}, "--dotenv " + sub + ": is a directory"},
		{"prescript --dotenv FIFO", []string{"prescript", "--none", "--dotenv", fifo}, "--dotenv " + fifo + ": is a named pipe"},
		{"prescript --dotenv dangling symlink", []string{"prescript", "--none", "--dotenv", dangling}, "--dotenv " + dangling + ": is a dangling"},
		{"prescript --dotenv missing directory", []string{"prescript", "--none", "--dotenv", missing}, "--dotenv " + missing + ": its directory"},
		{"filter --report directory", []string{"filter", "--report", sub}, "--report " + sub + ": is a directory"},
		{"filter --report dangling symlink", []string{"filter", "--report", dangling}, "--report " + dangling + ": is a dangling"},
		{"filter --report missing directory", []string{"filter", "--report", missing}, "--report " + missing + ": its directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, nil, "text\n", c.args...)
			if code != exitUsage || out != "" || !strings.Contains(errOut, c.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 with %q", code, out, errOut, c.want)
			}
		})
	}
	if _, err := os.Lstat(filepath.Join(dir, "nowhere")); err == nil {
		t.Error("a file was created at the dangling symlink's target")
	}
	if fi, _ := os.Lstat(fifo); fi.Mode()&os.ModeNamedPipe == 0 {
		t.Error("the FIFO was replaced")
	}
}

// filter --report may name a character device (/dev/stdout in a job): the report is written
// through it and the node stays.
func TestFilterReportWritesThroughACharacterDevice(t *testing.T) {
	dev := filepath.Join(t.TempDir(), "null")
	mkNullDevice(t, dev)
	code, out, errOut := runCLI(t, nil, "plain text\n", "filter", "--report", dev)
	if code != exitOK || out != "plain text\n" || strings.Contains(errOut, "filter_version") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	stillCharDevice(t, dev)
}

// Regression: `demo --out /etc/passwd` exited 1 and `demo --out` to a symlink exited 1 or
// 2 depending on its target. Every --out that is not a real, empty directory (or a new one in
// an existing directory) is exit 2 naming the rule, whatever it points at.
func TestDemoOutIsAlwaysExit2WhenNotARealDirectory(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "passwd")
	if err := os.WriteFile(file, []byte("root:x:0:0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	emptyDir := filepath.Join(dir, "empty")
	if err := os.Mkdir(emptyDir, 0o700); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{"to-file": file, "to-empty-dir": emptyDir, "dangling": filepath.Join(dir, "nowhere")}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ out, want string }{
		{file, "is a regular file, not a directory"},
		{filepath.Join(dir, "to-file"), "is a symlink"},
		{filepath.Join(dir, "to-empty-dir"), "is a symlink"},
		{filepath.Join(dir, "dangling"), "is a symlink"},
		{filepath.Join(dir, "a", "b"), "its directory " + filepath.Join(dir, "a") + " does not exist"},
	} {
		code, out, errOut := runCLI(t, nil, "", "demo", "--out", c.out)
		if code != exitUsage || out != "" || !strings.Contains(errOut, "--out "+c.out+": "+c.want) {
			t.Errorf("demo --out %s: exit %d, stderr %q; want exit 2 with %q", c.out, code, errOut, c.want)
		}
	}
	if b, _ := os.ReadFile(file); string(b) != "root:x:0:0\n" {
		t.Error("the file named by --out was changed")
	}
}

// Regression: `snapshot --stats /nonexistent/s` and `--out /nonexistent/a/b` failed with
// exit 1 after the whole fetch. The outputs are checked before the first request: exit 2 and
// the loopback forge sees nothing.
func TestSnapshotOutputsCheckedBeforeAnyRequest(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.Error(w, "no", http.StatusInternalServerError)
	}))
	defer srv.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	profile := ghProfile(t, "work_item")
	base := []string{"snapshot", "--forge", "github", "--repo", "o/r", "--number", "7", "--api-url", srv.URL,
		"--profile", profile, "--category", "observation"}
	for _, c := range []struct {
		name  string
		extra []string
		want  string
	}{
		{"--out under a missing directory", []string{"--out", filepath.Join(dir, "nonexistent", "a", "b")}, "--out " + filepath.Join(dir, "nonexistent", "a", "b") + ": its directory"},
		{"--out is a file", []string{"--out", file}, "--out " + file + ": is a regular file, not a directory"},
		{"--stats under a missing directory", []string{"--out", filepath.Join(dir, "o1"), "--stats", filepath.Join(dir, "nonexistent", "s")}, "--stats " + filepath.Join(dir, "nonexistent", "s") + ": its directory"},
		{"--stats is a directory", []string{"--out", filepath.Join(dir, "o2"), "--stats", dir}, "--stats " + dir + ": is a directory"},
		{"--record is a file", []string{"--out", filepath.Join(dir, "o3"), "--record", file}, "--record " + file + ": is a regular file, not a directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, map[string]string{"GITHUB_TOKEN": "ghp_test_token_value_000"}, "", append(base, c.extra...)...)
			if code != exitUsage || !strings.Contains(errOut, c.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 with %q", code, errOut, c.want)
			}
		})
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests reached the forge before the outputs were checked", n)
	}
}

// Regression: `run --dotenv` naming a device node replaced it like prescript's did. It is
// now a configuration error (exit 2) before the harness is even read, so nothing is posted.
func TestRunDotenvDeviceNodeIsAConfigurationError(t *testing.T) {
	dir := t.TempDir()
	dev := filepath.Join(dir, "T")
	mkNullDevice(t, dev)
	code, _, errOut := runCLI(t, nil, "", "run", "--harness", filepath.Join(dir, "no-harness.yml"), "--dotenv", dev)
	if code != exitUsage || !strings.Contains(errOut, "--dotenv "+dev+": is a character device") {
		t.Errorf("exit %d, stderr %q; want exit 2 naming the target", code, errOut)
	}
	stillCharDevice(t, dev)
}

// Regression: `forgectx prescript` printed the script's live log unredacted ($MY_TOKEN
// verbatim), unlike `forgectx run`. The job log on stderr now carries the redaction marker.
func TestPrescriptLiveLogIsRedacted(t *testing.T) {
	const token = "my-token-value-0123456789abcdef"
	code, out, errOut := runCLI(t, map[string]string{"MY_TOKEN": token, "PATH": os.Getenv("PATH")}, "",
		"prescript", "--", "sh", "-c", `echo "token is $MY_TOKEN"`)
	if code != exitOK || !strings.Contains(out, `"skipped":false`) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if strings.Contains(errOut, token) || !strings.Contains(errOut, "token is [REDACTED:") {
		t.Errorf("live log not redacted: %q", errOut)
	}
}
