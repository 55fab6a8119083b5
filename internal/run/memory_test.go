package run

import (
	"runtime/debug"
	"testing"

	"github.com/forgectx/forgectx/internal/snapshot"
)

// The snapshot and verify phases run under soft memory limits of the acquisition's size, the
// live heap once it is read, restored afterwards; GOMEMLIMIT in the environment wins and
// nothing is set.
func TestPhaseMemoryLimits(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	// A live allocation of 64 MiB stands in for the acquisition: the size must count it.
	held := make([]byte, 64<<20)
	r := &runner{o: Options{Getenv: func(string) string { return "" }}}
	if r.acqBytes = r.acquisitionBytes(); r.acqBytes < 64<<20 {
		t.Fatalf("acquisition sized %d bytes with 64 MiB held", r.acqBytes)
	}
	limit, restore := r.memoryLimit()
	if limit != snapshot.MemoryLimit(r.acqBytes) {
		t.Fatalf("limit %d, want %d", limit, snapshot.MemoryLimit(r.acqBytes))
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
	if r.acqBytes = r.acquisitionBytes(); r.acqBytes != 0 {
		t.Fatalf("GOMEMLIMIT set, yet the acquisition was sized for a limit (%d)", r.acqBytes)
	}
	limit, restore = r.memoryLimit()
	restore()
	if limit != 0 || debug.SetMemoryLimit(-1) != prev {
		t.Fatalf("GOMEMLIMIT set, yet a limit of %d was applied", limit)
	}
}
