package run

import (
	"runtime/debug"
	"testing"

	"github.com/forgectx/forgectx/pkg/snapshot"
)

// The snapshot phase runs under snapshot.MemoryLimit of the live heap (the acquisition),
// restored afterwards; GOMEMLIMIT in the environment wins and nothing is set.
func TestSnapshotMemoryLimit(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	// A live allocation of 64 MiB stands in for the acquisition: the limit must count it.
	held := make([]byte, 64<<20)
	r := &runner{o: Options{Getenv: func(string) string { return "" }}}
	limit, restore := r.memoryLimit()
	if limit < snapshot.MemoryLimit(64<<20) {
		t.Fatalf("limit %d does not cover the 64 MiB held (at least %d)", limit, snapshot.MemoryLimit(64<<20))
	}
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Fatalf("memory limit in force %d, reported %d", got, limit)
	}
	restore()
	if got := debug.SetMemoryLimit(-1); got != prev {
		t.Fatalf("limit not restored: %d, was %d", got, prev)
	}
	held[len(held)-1] = 1 // live until here

	r.o.Getenv = func(k string) string {
		if k == "GOMEMLIMIT" {
			return "1GiB"
		}
		return ""
	}
	limit, restore = r.memoryLimit()
	restore()
	if limit != 0 || debug.SetMemoryLimit(-1) != prev {
		t.Fatalf("GOMEMLIMIT set, yet a limit of %d was applied", limit)
	}
}
