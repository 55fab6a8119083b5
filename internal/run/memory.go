package run

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"

	"github.com/forgectx/forgectx/internal/snapshot"
)

// heapLive is the runtime metric acquisitionBytes sizes the acquisition by.
const heapLive = "/gc/heap/live:bytes"

// acquisitionBytes sizes the acquisition just read, for the soft memory limits of the
// snapshot and verify phases (snapshot.MemoryLimit, both), as `forgectx
// snapshot --from-acquisition FILE` sizes its limit by the file. A run's acquisition comes
// from the forge, not a file of known size: it is sized by the live heap right after it was
// read (one collection, tens of milliseconds at 100k records), which is within a few percent
// of its JSON file's size (219 MiB live for the 211 MiB file of the 100k-record scale corpus)
// and counts whatever else the run holds. It is 0 — no limit is set — when GOMEMLIMIT is set
// (the operator's choice wins) or the runtime does not report the metric.
func (r *runner) acquisitionBytes() int64 {
	if r.o.Getenv("GOMEMLIMIT") != "" {
		return 0
	}
	runtime.GC()
	s := []metrics.Sample{{Name: heapLive}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// memoryLimit sets the soft memory limit snapshot.MemoryLimit(r.acqBytes) unless no
// acquisition size is known (r.acqBytes is 0), and returns the limit set (0: none) and the
// function restoring the previous one.
func (r *runner) memoryLimit() (int64, func()) {
	if r.acqBytes <= 0 {
		return 0, func() {}
	}
	l := snapshot.MemoryLimit(r.acqBytes)
	prev := debug.SetMemoryLimit(l)
	return l, func() { debug.SetMemoryLimit(prev) }
}
