// Package testnotice makes a skipped group of tests visible in the plain output of
// `go test ./...`.
//
// `go test` in package-list mode prints nothing but the "ok" line of a passing package: a
// t.Skip message, and anything the test binary writes to its own stdout or stderr, is shown only
// with -v. A test that skips because this machine lacks something (a real-forge server, buildah,
// rsync, root) calls Skip instead of t.Skip: besides skipping, it prints one line per group and
// test process,
//
//	forgectx test notice: <package>: <group> skipped: <reason>
//
// to the stderr of the process that started the test binary — `go test` itself, whose stderr is
// the terminal or the CI log — when that stream is a pipe or a terminal (/dev/pts, /dev/tty; never another device) (Linux, through
// /proc/<ppid>/fd/2). A regular file is not written to, as `go test` writes it at its own
// offset and would overwrite the line; then, and off Linux, the line goes to the test binary's
// stderr, which `go test -v` shows. A cached package result replays without the line (nothing
// ran); `-count=1` reruns it.
package testnotice

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
)

var (
	mu      sync.Mutex
	printed = map[string]bool{}
	// out opens where notices go; tests replace it.
	out = parentStderr
)

// Skip prints the group's notice (once per group in this process) and skips t with the same
// reason.
func Skip(t testing.TB, group, reason string) {
	t.Helper()
	Notice(pkgOf(t), group, reason)
	t.Skip("SKIP: " + group + ": " + reason)
}

// Notice prints the notice line for group once per process.
func Notice(pkg, group, reason string) {
	mu.Lock()
	defer mu.Unlock()
	key := pkg + "\x00" + group
	if printed[key] {
		return
	}
	printed[key] = true
	w, closeW := out()
	defer closeW()
	fmt.Fprintf(w, "forgectx test notice: %s: %s skipped: %s\n", pkg, group, oneLine(reason))
}

// pkgOf names the package under test by the test binary's working directory, which `go test`
// sets to the package directory: the path below the module root (test/ship, internal/snapshot/stage).
func pkgOf(testing.TB) string {
	wd, err := os.Getwd()
	if err != nil {
		return "?"
	}
	for d := wd; ; {
		if _, err := os.Stat(d + "/go.mod"); err == nil {
			if rel := strings.TrimPrefix(strings.TrimPrefix(wd, d), "/"); rel != "" {
				return rel
			}
			return "."
		}
		parent := d[:max(strings.LastIndex(d, "/"), 0)]
		if parent == d || parent == "" {
			return wd
		}
		d = parent
	}
}

// parentStderr opens the parent process's stderr when it is a terminal or a pipe, else returns
// this process's own.
func parentStderr() (io.Writer, func()) {
	p := fmt.Sprintf("/proc/%d/fd/2", os.Getppid())
	fi, err := os.Stat(p)
	if err != nil || !(fi.Mode()&os.ModeNamedPipe != 0 || isTerminal(p, fi)) {
		return os.Stderr, func() {}
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		return os.Stderr, func() {}
	}
	return f, func() { _ = f.Close() }
}

// isTerminal reports whether the stream behind the /proc fd link p is a terminal: a character
// device that is a pseudo-terminal or a console. Any other device (/dev/null included) is never
// opened, so a test writes to no device but the terminal `go test` itself prints to.
func isTerminal(p string, fi os.FileInfo) bool {
	if fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	target, err := os.Readlink(p)
	return err == nil && (strings.HasPrefix(target, "/dev/pts/") || strings.HasPrefix(target, "/dev/tty"))
}

// oneLine keeps the notice to one line.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	return s
}
