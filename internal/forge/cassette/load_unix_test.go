//go:build unix

package cassette

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO, a directory or a device where a cassette file should be is refused at once, never
// read (a FIFO would block the replay before any signal could end it).
func TestLoadRefusesNonRegularFilesWithoutBlocking(t *testing.T) {
	for _, where := range []string{"cassette.json", "interactions/000001-GET-x.json"} {
		t.Run(where, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "interactions"), 0o700); err != nil {
				t.Fatal(err)
			}
			if where != "cassette.json" {
				if err := os.WriteFile(filepath.Join(dir, "cassette.json"), []byte(`{"cassette_version":1,"forge":"github","api_url":"https://api.github.com"}`), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := syscall.Mkfifo(filepath.Join(dir, where), 0o600); err != nil {
				t.Skip("no FIFOs here:", err)
			}
			done := make(chan error, 1)
			go func() { _, err := Load(dir); done <- err }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), "not a regular file") {
					t.Fatalf("Load = %v, want a refusal of the FIFO", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Load blocked on a FIFO")
			}
		})
	}
}
