package forge

import (
	"fmt"
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

// gate is a set of tasks that report when they start and end only when released.
type gate struct {
	started chan int
	release chan struct{}
}

func newGate() *gate { return &gate{started: make(chan int, 64), release: make(chan struct{})} }

func (g *gate) task(i int) func() {
	return func() {
		g.started <- i
		<-g.release
	}
}

// expectStarted waits for n task starts and returns them in start order.
func (g *gate) expectStarted(t *testing.T, n int) []int {
	t.Helper()
	var got []int
	for range n {
		select {
		case i := <-g.started:
			got = append(got, i)
		case <-time.After(5 * time.Second):
			t.Fatalf("only %d of %d tasks started: %v", len(got), n, got)
		}
	}
	return got
}

// expectNoStart fails when a task starts within a short wait.
func (g *gate) expectNoStart(t *testing.T, why string) {
	t.Helper()
	select {
	case i := <-g.started:
		t.Fatalf("task %d started %s", i, why)
	case <-time.After(50 * time.Millisecond):
	}
}

// GoAll never runs a task in the caller (which goes on with its own reads at once), starts
// every task a free slot allows, and hands each released slot to the next queued task, so no
// slot stays idle while a task waits.
func TestGoAllQueuesInsteadOfRunningInTheCaller(t *testing.T) {
	f := NewFanout(4)
	g := newGate()
	b := f.Batch()
	returned := make(chan struct{})
	go func() {
		tasks := make([]func(), 6)
		for i := range tasks {
			tasks[i] = g.task(i)
		}
		b.GoAll(tasks)
		close(returned)
	}()
	select {
	case <-returned:
	case <-time.After(5 * time.Second):
		t.Fatal("GoAll ran a task in the caller: it did not return while every task was blocked")
	}
	// The caller holds one of the four slots: three tasks run, in queue order.
	if got := g.expectStarted(t, 3); got[0]+got[1]+got[2] != 0+1+2 {
		t.Fatalf("first tasks %v, want 0, 1, 2", got)
	}
	g.expectNoStart(t, "beyond the three free slots")
	// One task ends: its slot goes to the next queued task at once.
	g.release <- struct{}{}
	if got := g.expectStarted(t, 1); got[0] != 3 {
		t.Fatalf("after a slot was released task %d started, want 3", got[0])
	}
	// The caller waits: its slot is lent to the queue too.
	waited := make(chan struct{})
	go func() { b.Wait(); close(waited) }()
	if got := g.expectStarted(t, 1); got[0] != 4 {
		t.Fatalf("with the caller's slot lent task %d started, want 4", got[0])
	}
	close(g.release)
	g.expectStarted(t, 1)
	<-waited
}

// At width 1 GoAll and StartAll run every task in the caller, in order, before they return:
// a concurrency-1 run keeps the sequential request order.
func TestGoAllSequentialRunsInOrder(t *testing.T) {
	f := NewFanout(1)
	var order []int
	b := f.Batch()
	tasks := make([]func(), 5)
	for i := range tasks {
		tasks[i] = func() { order = append(order, i) }
	}
	b.GoAll(tasks)
	fs := []*Future[int]{NewFuture(func() int { order = append(order, 5); return 5 }), nil,
		NewFuture(func() int { order = append(order, 6); return 6 })}
	StartAll(b, fs)
	if len(order) != 7 {
		t.Fatalf("%d tasks ran before GoAll and StartAll returned, want 7", len(order))
	}
	for i, v := range order {
		if v != i {
			t.Fatalf("order %v", order)
		}
	}
	b.Wait()
}

// Queued lookups (StartAll) and queued reads (GoAll) take turns for released slots: reads
// that lead to more requests are not stuck behind a long run of lookups, nor lookups behind
// the reads.
func TestQueuedReadsAndLookupsTakeTurns(t *testing.T) {
	f := NewFanout(2) // the caller and one task
	g := newGate()
	b := f.Batch()
	b.GoAll([]func(){g.task(0)})
	g.expectStarted(t, 1)
	lookups := make([]*Future[int], 3)
	for i := range lookups {
		lookups[i] = NewFuture(func() int { g.task(10 + i)(); return i })
	}
	StartAll(b, lookups)
	b.GoAll([]func(){g.task(1), g.task(2)})
	var got []int
	for range 5 {
		g.release <- struct{}{}
		got = append(got, g.expectStarted(t, 1)[0])
	}
	// Either queue may have the first turn; after it they alternate while both wait.
	a, c := fmt.Sprint(got), []string{fmt.Sprint([]int{10, 1, 11, 2, 12}), fmt.Sprint([]int{1, 10, 2, 11, 12})}
	if a != c[0] && a != c[1] {
		t.Fatalf("start order %v, want %s or %s", got, c[0], c[1])
	}
	close(g.release)
	b.Wait()
}

// Await runs a lookup still queued in the caller, and waits for one running elsewhere with
// the caller's slot lent to the queue.
func TestAwaitLendsTheSlotOrRunsTheLookup(t *testing.T) {
	f := NewFanout(2)
	g := newGate()
	b := f.Batch()
	running := NewFuture(func() int { g.task(0)(); return 7 })
	StartAll(b, []*Future[int]{running})
	g.expectStarted(t, 1)
	queued := NewFuture(func() int { return 8 })
	StartAll(b, []*Future[int]{queued}) // no slot free: it waits in the queue
	if v := Await(f, queued); v != 8 {
		t.Fatalf("queued lookup %d", v)
	}
	other := NewFuture(func() int { g.task(1)(); return 9 })
	StartAll(b, []*Future[int]{other}) // queued behind the running lookup
	done := make(chan int)
	go func() { done <- Await(f, running) }()
	// The caller's lent slot starts the queued lookup while the caller waits.
	if got := g.expectStarted(t, 1); got[0] != 1 {
		t.Fatalf("task %d started, want 1", got[0])
	}
	close(g.release)
	if v := <-done; v != 7 {
		t.Fatalf("running lookup %d", v)
	}
	b.Wait()
}
