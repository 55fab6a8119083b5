package safeout_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/forgectx/forgectx/internal/platform/safeout"
	"github.com/forgectx/forgectx/test/testnotice"
)

// mkCharDev makes a character device 1:3 (the null device's numbers) at path, or skips the test
// with a notice when not root. The node is the test's own: no test opens a system device.
func mkCharDev(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() != 0 {
		testnotice.Skip(t, "device-node cases (non-root)", "not root: cannot mknod a character device")
	}
	if err := syscall.Mknod(path, syscall.S_IFCHR|0o666, int(unixMkdev(1, 3))); err != nil {
		testnotice.Skip(t, "device-node cases (non-root)", fmt.Sprintf("mknod not permitted: %v", err))
	}
}

func unixMkdev(major, minor uint32) uint64 {
	return uint64(major)<<8 | uint64(minor&0xff) | uint64(minor&^0xff)<<12
}

func isCharDev(t *testing.T, path string) bool {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatalf("lstat %s: %v", path, err)
	}
	return fi.Mode()&fs.ModeCharDevice != 0
}

func refused(t *testing.T, err error, path, rule string) {
	t.Helper()
	if err == nil {
		t.Fatalf("write to %s succeeded; want it refused (%s)", path, rule)
	}
	if !errors.Is(err, safeout.ErrRefused) {
		t.Errorf("error %v is not a refusal", err)
	}
	if !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), rule) {
		t.Errorf("error %q does not name the target %s and the rule %q", err, path, rule)
	}
	if strings.Contains(err.Error(), ".forgectx-") {
		t.Errorf("error %q names a temporary file", err)
	}
}

func noTemps(t *testing.T, dir string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".forgectx-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriteFileCreatesAMissingPathWithThePerm(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.env")
	if err := safeout.WriteFile(p, []byte("a=1\n"), safeout.Options{Perm: 0o644}); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(p)
	if got := read(t, p); got != "a=1\n" || fi.Mode().Perm() != 0o644 {
		t.Errorf("content %q mode %v, want a=1 and 0644", got, fi.Mode().Perm())
	}
	noTemps(t, dir)
}

func TestWriteFileDefaultPermIs0600(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.json")
	if err := safeout.WriteFile(p, []byte("{}"), safeout.Options{}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestWriteFileReplacesARegularFileWhole(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out")
	if err := os.WriteFile(p, []byte(strings.Repeat("old", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := safeout.WriteFile(p, []byte("new"), safeout.Options{}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, p); got != "new" {
		t.Errorf("content %q, want new", got)
	}
	noTemps(t, dir)
}

func TestWriteFileThroughSymlinkToRegularUpdatesTheTargetAndKeepsTheLink(t *testing.T) {
	dir := t.TempDir()
	target, link := filepath.Join(dir, "real"), filepath.Join(dir, "link")
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := safeout.WriteFile(link, []byte("new"), safeout.Options{}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&fs.ModeSymlink == 0 {
		t.Error("the symlink was replaced by a file")
	}
	if got := read(t, target); got != "new" {
		t.Errorf("target content %q, want new", got)
	}
}

func TestWriteFileRefusals(t *testing.T) {
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
	toDir := filepath.Join(dir, "todir")
	if err := os.Symlink(sub, toDir); err != nil {
		t.Fatal(err)
	}
	loop := filepath.Join(dir, "loop")
	if err := os.Symlink(loop, loop); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	if fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0); err == nil {
		if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: sock}); err != nil {
			t.Fatal(err)
		}
		defer syscall.Close(fd)
	}
	fileAsDir := filepath.Join(dir, "plain")
	if err := os.WriteFile(fileAsDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path, rule string
	}{
		{"directory", sub, "is a directory"},
		{"symlink to a directory", toDir, "is a directory"},
		{"FIFO without Stream", fifo, "is a named pipe (FIFO)"},
		{"dangling symlink", dangling, "dangling"},
		{"symlink loop", loop, "dangling or looping"},
		{"socket", sock, "is a socket"},
		{"missing parent", filepath.Join(dir, "no", "such", "file"), "does not exist"},
		{"parent is a file", filepath.Join(fileAsDir, "x"), "is not a directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before, _ := os.Lstat(c.path)
			err := safeout.WriteFile(c.path, []byte("x"), safeout.Options{})
			refused(t, err, c.path, c.rule)
			if cerr := safeout.Check(c.path, safeout.Options{}); cerr == nil || cerr.Error() != err.Error() {
				t.Errorf("Check = %v, want the same refusal as WriteFile (%v)", cerr, err)
			}
			if after, _ := os.Lstat(c.path); before != nil && (after == nil || after.Mode() != before.Mode()) {
				t.Errorf("the target's kind changed from %v", before.Mode())
			}
		})
	}
	if _, err := os.Lstat(filepath.Join(dir, "nowhere")); err == nil {
		t.Error("a file was created at the dangling symlink's target")
	}
	noTemps(t, dir)
}

func TestWriteFileNeverReplacesADeviceNode(t *testing.T) {
	dir := t.TempDir()
	dev := filepath.Join(dir, "null")
	mkCharDev(t, dev)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(dev, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dev, link} {
		refused(t, safeout.WriteFile(p, []byte("x"), safeout.Options{}), p, "is a character device")
		refused(t, safeout.Append(p, []byte("x"), safeout.Options{}), p, "is a character device")
		refused(t, safeout.Check(p, safeout.Options{}), p, "is a character device")
	}
	if !isCharDev(t, dev) {
		t.Fatal("the device node was replaced")
	}
	// With Stream the bytes go through the node (1:3 discards them) and the node stays.
	if err := safeout.WriteFile(link, []byte("x"), safeout.Options{Stream: true}); err != nil {
		t.Fatalf("Stream write through a character device: %v", err)
	}
	if !isCharDev(t, dev) {
		t.Fatal("the device node was replaced by a Stream write")
	}
	noTemps(t, dir)
}

func TestStreamWritesThroughAFIFOWithAReader(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	refused(t, safeout.WriteFile(fifo, []byte("x"), safeout.Options{Stream: true}), fifo, "no reader")
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := safeout.WriteFile(fifo, []byte("report\n"), safeout.Options{Stream: true}); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := r.Read(buf)
	if string(buf[:n]) != "report\n" {
		t.Errorf("read %q from the FIFO, want report", buf[:n])
	}
	if fi, _ := os.Lstat(fifo); fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Error("the FIFO was replaced")
	}
}

func TestUnwritableParentIsRefusedBeforeWriting(t *testing.T) {
	if os.Geteuid() == 0 {
		testnotice.Skip(t, "unwritable-parent case (root)", "root can write into a mode-0500 directory; the case needs a non-root user")
	}
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "out")
	refused(t, safeout.Check(p, safeout.Options{}), p, "is not writable")
	refused(t, safeout.WriteFile(p, []byte("x"), safeout.Options{}), p, "is not writable")
}

func TestAppendKeepsContentAndCreates(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "summary.md")
	for _, s := range []string{"one\n", "two\n"} {
		if err := safeout.Append(p, []byte(s), safeout.Options{Perm: 0o644}); err != nil {
			t.Fatal(err)
		}
	}
	if got := read(t, p); got != "one\ntwo\n" {
		t.Errorf("content %q", got)
	}
	refused(t, safeout.Append(dir, []byte("x"), safeout.Options{}), dir, "is a directory")
}

func TestConcurrentWritersLeaveOneWholeFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out")
	const n = 16
	want := map[string]bool{}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		body := strings.Repeat(fmt.Sprintf("writer-%02d;", i), 2000)
		want[body] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = safeout.WriteFile(p, []byte(body), safeout.Options{})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", i, err)
		}
	}
	if got := read(t, p); !want[got] {
		t.Errorf("the file holds a mix of writers (%d bytes)", len(got))
	}
	noTemps(t, dir)
}

func TestCheckDir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "l")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	if err := safeout.CheckDir(dir); err != nil {
		t.Errorf("existing directory: %v", err)
	}
	if err := safeout.CheckDir(filepath.Join(dir, "new")); err != nil {
		t.Errorf("missing directory with a parent: %v", err)
	}
	refused(t, safeout.CheckDir(file), file, "is a regular file, not a directory")
	refused(t, safeout.CheckDir(link), link, "is a symlink")
	refused(t, safeout.CheckDir(filepath.Join(dir, "a", "b")), filepath.Join(dir, "a", "b"), "does not exist")
}

func TestCheckAppendJudgesTheTargetLikeAppend(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "github_output")
	if err := safeout.CheckAppend(p, safeout.Options{}); err != nil {
		t.Errorf("missing path: %v", err)
	}
	if err := os.WriteFile(p, []byte("a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := safeout.CheckAppend(p, safeout.Options{}); err != nil {
		t.Errorf("regular file: %v", err)
	}
	refused(t, safeout.CheckAppend(dir, safeout.Options{}), dir, "is a directory")
	refused(t, safeout.CheckAppend(filepath.Join(dir, "no", "x"), safeout.Options{}), filepath.Join(dir, "no", "x"), "does not exist")
}
