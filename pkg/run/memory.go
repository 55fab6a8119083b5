package run

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"

	"github.com/forgectx/forgectx/pkg/snapshot"
)

// heapLive is the runtime metric memoryLimit sizes the acquisition by.
const heapLive = "/gc/heap/live:bytes"

// memoryLimit sets the Go soft memory limit of the snapshot phase as `forgectx snapshot
// --from-acquisition FILE` does (snapshot.MemoryLimit, issue #23's bound of twice the
// acquisition plus 128 MiB), unless GOMEMLIMIT is set (the operator's choice wins). A run's
// acquisition comes from the forge, not a file of known size: it is sized by the live heap
// right after it was read (one collection, tens of milliseconds at 100k records), which is
// within a few percent of its JSON file's size (219 MiB live for the 211 MiB file of the
// 100k-record scale corpus) and counts whatever else the run holds. It returns the limit set
// (0: none) and the function that restores the previous one.
func (r *runner) memoryLimit() (int64, func()) {
	if r.o.Getenv("GOMEMLIMIT") != "" {
		return 0, func() {}
	}
	runtime.GC()
	s := []metrics.Sample{{Name: heapLive}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0, func() {}
	}
	limit := snapshot.MemoryLimit(int64(s[0].Value.Uint64()))
	prev := debug.SetMemoryLimit(limit)
	return limit, func() { debug.SetMemoryLimit(prev) }
}
