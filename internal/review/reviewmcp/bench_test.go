package reviewmcp

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/forgectx/forgectx/test/verifytest"
)

// BenchmarkStartup: verify the demo tree, index it, write the usage file.
func BenchmarkStartup(b *testing.B) {
	dir := verifytest.Write(b, verifytest.Demo)
	usage := filepath.Join(b.TempDir(), "u.json")
	for range b.N {
		if _, err := newServer(context.Background(), Config{Mode: ModeConstrained, SnapshotDir: dir, UsagePath: usage}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearch: one literal search over the demo tree (no usage write).
func BenchmarkSearch(b *testing.B) {
	s, err := newServer(context.Background(), Config{Mode: ModeConstrained, SnapshotDir: verifytest.Write(b, verifytest.Demo), UsagePath: filepath.Join(b.TempDir(), "u.json")})
	if err != nil {
		b.Fatal(err)
	}
	raw := json.RawMessage(`{"query":"backoff cap test"}`)
	for range b.N {
		if _, _, err := s.searchCall(raw); err != nil {
			b.Fatal(err)
		}
	}
}
