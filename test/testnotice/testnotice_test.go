package testnotice

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A group's notice is one line, printed once per process however many tests of the group skip.
func TestNoticeOncePerGroup(t *testing.T) {
	var buf bytes.Buffer
	old := out
	t.Cleanup(func() { out = old })
	out = func() (io.Writer, func()) { return &buf, func() {} }
	Notice("test/ship", "buildah image tests", "buildah is not installed")
	Notice("test/ship", "buildah image tests", "buildah is not installed")
	Notice("test/ship", "shellcheck", "shellcheck is not installed\n(second line)")
	want := "forgectx test notice: test/ship: buildah image tests skipped: buildah is not installed\n" +
		"forgectx test notice: test/ship: shellcheck skipped: shellcheck is not installed …\n"
	if buf.String() != want {
		t.Fatalf("notices:\n%s\nwant:\n%s", buf.String(), want)
	}
}

// TestChildNotice is the child of TestNoticeReachesTheParentsStderr, not a test of its own.
func TestChildNotice(t *testing.T) {
	if os.Getenv("TESTNOTICE_CHILD") != "1" {
		t.Skip("helper process of TestNoticeReachesTheParentsStderr")
	}
	Notice("test/testnotice", "child group", "planted reason")
}

// The notice reaches the stderr of the process that started the test binary (as `go test`
// starts it) when that is a pipe — where `go test` does not swallow it — and never a regular
// file, which the parent writes at its own offset.
func TestNoticeReachesTheParentsStderr(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the parent's stderr is reached through /proc (Linux)")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// bash is the parent (it does not exec the child: `; true` follows, and it redirects in the
	// forked child, where dash would redirect its own descriptors around the fork); the child's
	// own stderr and stdout go to /dev/null, so only the parent's stderr can carry the line.
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	script := `"$0" -test.run='^TestChildNotice$' >/dev/null 2>&1; true`
	line := "forgectx test notice: test/testnotice: child group skipped: planted reason\n"

	cmd := exec.Command(bash, "-c", script, self)
	cmd.Env = append(os.Environ(), "TESTNOTICE_CHILD=1")
	var pipe bytes.Buffer
	cmd.Stderr = &pipe // a pipe: exec copies it from one
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if pipe.String() != line {
		t.Errorf("parent's stderr (a pipe) = %q, want the notice line", pipe.String())
	}

	file := filepath.Join(t.TempDir(), "stderr")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd = exec.Command(bash, "-c", script, self)
	cmd.Env = append(os.Environ(), "TESTNOTICE_CHILD=1")
	cmd.Stderr = f
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(file); strings.Contains(string(b), "notice") {
		t.Errorf("the notice was written into the parent's regular-file stderr: %q", b)
	}
}
