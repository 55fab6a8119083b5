package forge

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// busy counts tasks running at once.
type busy struct {
	now, most atomic.Int64
}

func (b *busy) work() {
	n := b.now.Add(1)
	for {
		m := b.most.Load()
		if n <= m || b.most.CompareAndSwap(m, n) {
			break
		}
	}
	time.Sleep(2 * time.Millisecond)
	b.now.Add(-1)
}

// Nested fan-out (sources that start lookups) never has more goroutines working than the
// width, the caller included, and never deadlocks.
func TestFanoutBoundsNestedWork(t *testing.T) {
	for _, width := range []int{1, 2, 4, 8} {
		f := NewFanout(width)
		var b busy
		top := f.Batch()
		for range 6 {
			top.Go(func() {
				b.work()
				inner := f.Batch()
				for range 5 {
					inner.Go(b.work)
				}
				inner.Wait()
				b.work()
			})
		}
		top.Wait()
		if got := b.most.Load(); got > int64(width) {
			t.Errorf("width %d: %d tasks at once", width, got)
		}
		if width >= 4 && b.most.Load() < 2 {
			t.Errorf("width %d: nothing ran in parallel", width)
		}
	}
}

// At width 1 every task runs in the caller when submitted: the submission order is the order.
func TestFanoutSequentialRunsInSubmissionOrder(t *testing.T) {
	f := NewFanout(1)
	if !f.Sequential() {
		t.Fatal("width 1 is not sequential")
	}
	var order []int
	b := f.Batch()
	for i := range 10 {
		b.Go(func() { order = append(order, i) })
	}
	b.Wait()
	for i, v := range order {
		if v != i {
			t.Fatalf("order %v", order)
		}
	}
}

func TestFanoutWidth(t *testing.T) {
	for in, want := range map[int]int{0: DefaultConcurrency, -3: DefaultConcurrency, 1: 1, 5: 5, MaxConcurrency + 1: MaxConcurrency} {
		if got := FanoutWidth(in); got != want {
			t.Errorf("FanoutWidth(%d) = %d, want %d", in, got, want)
		}
	}
}

// A future runs once however many start or get it.
func TestFutureRunsOnce(t *testing.T) {
	f := NewFanout(4)
	var calls atomic.Int64
	fu := NewFuture(func() int { calls.Add(1); time.Sleep(time.Millisecond); return 7 })
	b := f.Batch()
	var wg sync.WaitGroup
	for range 8 {
		fu.Start(b)
		wg.Add(1)
		go func() { defer wg.Done(); _ = fu.Get() }()
	}
	wg.Wait()
	b.Wait()
	if fu.Get() != 7 || calls.Load() != 1 {
		t.Fatalf("value %d after %d calls", fu.Get(), calls.Load())
	}
	lazy := NewFuture(func() string { return "x" })
	if lazy.Get() != "x" {
		t.Fatal("Get without Start")
	}
}
