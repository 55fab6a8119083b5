package cassette

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Regression: a cassette file that already exists as something other than a regular
// file (here a FIFO, which os.WriteFile would block on or write into) is refused by the
// safe-output rule, naming it, and left in place.
func TestWriteRefusesANonRegularCassetteFile(t *testing.T) {
	dir := t.TempDir()
	meta := filepath.Join(dir, "cassette.json")
	if err := syscall.Mkfifo(meta, 0o600); err != nil {
		t.Fatal(err)
	}
	err := Write(dir, &Cassette{})
	if err == nil || !strings.Contains(err.Error(), meta+": is a named pipe") {
		t.Fatalf("err = %v, want a refusal naming %s", err, meta)
	}
	if fi, _ := os.Lstat(meta); fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatal("the FIFO was replaced")
	}
}
