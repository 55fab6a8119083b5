package snapshot_test

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/test/acqcorpus"
)

// peakHeap samples live heap bytes every millisecond until stop is called and returns the
// maximum observed.
func peakHeap() (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 { close(done); wg.Wait(); return peak.Load() }
}

// BenchmarkAssemble assembles 1k, 10k and 100k-record acquisitions (comments in threads,
// reviews, checks with failed logs) and reports time, allocations and peak live heap.
func BenchmarkAssemble(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			acq := acqcorpus.Make(n)
			cfg := snapshot.Config{Profile: acqcorpus.Profile(n), Category: snapshot.CategoryObservation, Filter: filter.New(nil)}
			runtime.GC()
			stop := peakHeap()
			cpu0 := cpuTime()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				tree, err := snapshot.Assemble(context.Background(), acq, cfg)
				if err != nil {
					b.Fatal(err)
				}
				if len(tree.Files) < n {
					b.Fatalf("only %d files for %d records", len(tree.Files), n)
				}
			}
			b.StopTimer()
			// Process CPU time (user+system, GC included) per op: on a shared, loaded machine it
			// shows the linear cost more faithfully than wall time.
			b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(stop())/(1<<20), "peak-heap-MB")
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Performance: assembly cost grows linearly. Wall time on a shared CI machine is noisy, so the
// test bounds the deterministic proxies — allocation count and bytes — at 10k ≤ 11 × 1k;
// BenchmarkAssemble reports time, CPU and peak heap.
func TestAssembleCostGrowsLinearly(t *testing.T) {
	if testing.Short() {
		t.Skip("assembles 11k records")
	}
	cost := func(n int) (allocs, bytes uint64) {
		acq := acqcorpus.Make(n)
		cfg := snapshot.Config{Profile: acqcorpus.Profile(n), Category: snapshot.CategoryObservation, Filter: filter.New(nil)}
		if _, err := snapshot.Assemble(context.Background(), acq, cfg); err != nil { // warm-up (schema bundle)
			t.Fatal(err)
		}
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		if _, err := snapshot.Assemble(context.Background(), acq, cfg); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&m1)
		return m1.Mallocs - m0.Mallocs, m1.TotalAlloc - m0.TotalAlloc
	}
	a1, b1 := cost(1000)
	a10, b10 := cost(10000)
	if a10 > 11*a1 || b10 > 11*b1 {
		t.Fatalf("10k records: %d allocs / %d bytes; 1k: %d / %d — more than 11x", a10, b10, a1, b1)
	}
	t.Logf("allocs x%.2f, bytes x%.2f", float64(a10)/float64(a1), float64(b10)/float64(b1))
}
