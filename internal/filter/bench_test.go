package filter_test

import (
	"context"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/test/corpus"
)

// benchApply runs the full pipeline over c; b.SetBytes makes `go test -bench` report MB/s, and
// allocs/MB and B-alloc/MB say how the allocations scale with the input. The pipeline is single
// stream: run with -cpu 1 (GOMAXPROCS=1) for the figures. On a shared machine the
// wall-clock MB/s swings with the load; cpu-MB/s divides by the CPU time the process used
// (user+sys, every thread, so the garbage collector too) and is the steadier figure.
func benchApply(b *testing.B, c corpus.Corpus, role filter.Role) {
	p := filter.New(c.RunCredentials)
	ctx := context.Background()
	b.SetBytes(int64(len(c.Text)))
	b.ReportAllocs()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		r, err := p.Apply(ctx, c.Text, filter.Options{Role: role, MaxBytes: 1 << 30})
		if err != nil || r.Status == filter.StatusRejected {
			b.Fatalf("status %s err %v findings %v", r.Status, err, r.Findings)
		}
	}
	b.StopTimer()
	cpu := cpuTime() - cpu0
	runtime.ReadMemStats(&m1)
	mb := float64(len(c.Text)) / 1e6 * float64(b.N)
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/mb, "allocs/MB")
	b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/mb, "B-alloc/MB")
	if cpu > 0 {
		b.ReportMetric(mb/cpu.Seconds(), "cpu-MB/s")
	}
}

// cpuTime is the user+sys CPU time of the whole process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkApplyCILog measures GitHub-Actions-style logs (ANSI colours, CR progress lines).
func BenchmarkApplyCILog(b *testing.B) { benchApply(b, corpus.CILog(1, 8<<20), filter.RoleLog) }

// BenchmarkApplyThread measures markdown threads (prose, template comments, code blocks).
func BenchmarkApplyThread(b *testing.B) { benchApply(b, corpus.Thread(2, 4<<20), filter.RoleBody) }

// BenchmarkApplyMixed is the throughput target (>= 60 MB/s single stream): CI logs
// and markdown threads alternating.
func BenchmarkApplyMixed(b *testing.B) { benchApply(b, corpus.Mixed(3, 8<<20), filter.RoleBody) }

// BenchmarkApplyHostile is the linear-time target (>= half of BenchmarkApplyMixed): the
// mixed corpus with no line in NFKC, CJK-heavy markdown and long combining-mark runs.
func BenchmarkApplyHostile(b *testing.B) { benchApply(b, corpus.Hostile(3, 8<<20), filter.RoleBody) }
