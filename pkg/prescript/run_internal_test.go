//go:build unix

package prescript

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// The open after Lstat neither follows a symlink nor blocks on a FIFO, so a background child
// that swaps the output file between the check and the read cannot redirect or hang the read.
func TestOpenNoFollowRefusesSymlinksAndNeverBlocks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("skipped=true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := openNoFollow(link); !isSymlinkErr(err) {
		t.Fatalf("symlink opened: %v", err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	done := make(chan error, 1)
	go func() {
		f, err := openNoFollow(fifo)
		if err == nil {
			f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("fifo: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("opening a FIFO blocked")
	}
	// readOutput on either is a hard error, never a read.
	for _, p := range []string{link, fifo} {
		_, err := readOutput(p)
		var pe *ProtocolError
		if !errors.As(err, &pe) || pe.Rule != RuleNotRegular {
			t.Errorf("%s: %v", filepath.Base(p), err)
		}
	}
}
