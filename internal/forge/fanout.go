package forge

import (
	"sync"
	"sync/atomic"

	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// Fanout bounds the goroutines one acquisition reads with: its independent sources and the
// per-item lookups those sources feed (docs/adapters.md, "What is read in parallel"). It is sized
// from Options.Concurrency, so an adapter never has more goroutines issuing requests than the
// run may keep in flight, whether or not a transport pools requests too.
//
// The goroutine that made the Fanout holds one of its slots. Batch.Go runs a task on a new
// goroutine when a slot is free and in the calling goroutine otherwise (the caller already
// holds a slot), so Go never blocks and nested fan-out (a source that starts lookups) cannot
// deadlock. Batch.Wait gives the caller's slot back while it waits. At concurrency 1 every task
// runs in the caller at the moment it is submitted: a concurrency-1 run makes its requests in
// exactly the order the tasks were submitted, the adapters' sequential order.
//
// Per-item work (lookups, a source's per-item lists) goes through Batch.GoAll and StartAll
// instead: it waits in the Fanout's queue for the next slot released, so the submitter goes on
// with its own reads and a freed slot never stays idle while work waits.
//
// Fanout decides where work runs, never what it produces: callers give every task its own
// result slot and combine the slots in a fixed order, so results never depend on scheduling.
type Fanout struct {
	sem chan struct{}

	// mu orders queuing a task (GoAll) against a slot's release, so a queued task is never
	// left waiting while a slot is free.
	mu      sync.Mutex
	pending []fanTask // GoAll's tasks (reads that lead to more reads)
	leaves  []fanTask // StartAll's lookups (nothing waits on them to send more)
	// leafTurn is whose turn it is when both queues wait.
	leafTurn bool
}

// fanTask is a GoAll task waiting for a slot, with the batch that waits for it.
type fanTask struct {
	b    *Batch
	task func()
}

// NewFanout returns a Fanout for concurrency (Options.Concurrency: 0 takes
// DefaultConcurrency, larger than MaxConcurrency takes MaxConcurrency).
func NewFanout(concurrency int) *Fanout {
	n := FanoutWidth(concurrency)
	f := &Fanout{sem: make(chan struct{}, n)}
	f.sem <- struct{}{} // the creating goroutine's slot
	return f
}

// FanoutWidth is the number of goroutines a Fanout for concurrency allows.
func FanoutWidth(concurrency int) int {
	switch {
	case concurrency <= 0:
		return DefaultConcurrency
	case concurrency > MaxConcurrency:
		return MaxConcurrency
	}
	return concurrency
}

// Sequential reports a Fanout of width 1: every task runs when it is submitted, in the
// caller. Adapters use it to keep a concurrency-1 run's request order (a lookup that would
// start early is then made where the sequential read makes it).
func (f *Fanout) Sequential() bool { return cap(f.sem) == 1 }

// Batch is a set of tasks a caller waits for together. Batches of one Fanout share its slots.
type Batch struct {
	f  *Fanout
	wg sync.WaitGroup
}

// Batch starts an empty batch.
func (f *Fanout) Batch() *Batch { return &Batch{f: f} }

// Go runs task: on a new goroutine when a slot is free, else in the caller. task must write
// only state of its own.
func (b *Batch) Go(task func()) {
	select {
	case b.f.sem <- struct{}{}:
		b.wg.Add(1)
		go func() {
			task()
			b.wg.Done()
			b.f.release()
		}()
	default:
		task()
	}
}

// GoAll queues tasks on the Fanout, in their order: each starts on a new goroutine when a slot
// is free, else when the next slot is released (a task ending, a caller waiting in Wait or
// Await), before any later queued task; queued tasks and queued lookups (StartAll) take turns
// for released slots while both wait. Unlike Go, a
// task never runs in the caller, so a caller that starts work ahead goes on with its own
// reads, and no freed slot stays idle while a task waits. At width 1 the caller runs the
// tasks at once, in their order, as Go does.
func (b *Batch) GoAll(tasks []func()) { b.queue(tasks, false) }

// queue is GoAll; leaf tasks (StartAll's lookups, whose answers start no further request) wait
// in a queue of their own, which takes turns with the other (Fanout.next): the reads a longer
// chain of requests hangs on are not stuck behind a long run of lookups.
func (b *Batch) queue(tasks []func(), leaf bool) {
	if b.f.Sequential() {
		for _, t := range tasks {
			t()
		}
		return
	}
	f := b.f
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, t := range tasks {
		b.wg.Add(1)
		if len(f.pending)+len(f.leaves) == 0 {
			select {
			case f.sem <- struct{}{}:
				go f.work(fanTask{b, t})
				continue
			default:
			}
		}
		if leaf {
			f.leaves = append(f.leaves, fanTask{b, t})
		} else {
			f.pending = append(f.pending, fanTask{b, t})
		}
	}
}

// next takes the next queued task (f.mu held): GoAll's and StartAll's queues take turns
// while both wait, so reads that lead to more go first without holding back every lookup.
func (f *Fanout) next() (fanTask, bool) {
	leafTurn := f.leafTurn
	f.leafTurn = !f.leafTurn
	switch {
	case leafTurn && len(f.leaves) > 0:
		q := f.leaves[0]
		f.leaves = f.leaves[1:]
		return q, true
	case len(f.pending) > 0:
		q := f.pending[0]
		f.pending = f.pending[1:]
		return q, true
	case len(f.leaves) > 0:
		q := f.leaves[0]
		f.leaves = f.leaves[1:]
		return q, true
	}
	return fanTask{}, false
}

// work runs q holding a slot, then every queued task while some wait, then frees the slot.
func (f *Fanout) work(q fanTask) {
	for {
		q.task()
		q.b.wg.Done()
		f.mu.Lock()
		var ok bool
		if q, ok = f.next(); !ok {
			<-f.sem
			f.mu.Unlock()
			return
		}
		f.mu.Unlock()
	}
}

// release gives up a held slot: to the first queued task when one waits, else to the Fanout.
func (f *Fanout) release() {
	f.mu.Lock()
	q, ok := f.next()
	if !ok {
		<-f.sem
		f.mu.Unlock()
		return
	}
	f.mu.Unlock()
	go f.work(q)
}

// Wait waits for every task the batch started, lending the caller's slot to other tasks of
// the Fanout meanwhile.
func (b *Batch) Wait() {
	b.f.release()
	b.wg.Wait()
	b.f.sem <- struct{}{}
}

// Future is one deduplicated lookup's result: the first Start runs it (through a Batch, so
// it is bounded like every other task), every Get waits for it. Get without a Start runs the
// lookup in the caller.
type Future[T any] struct {
	started atomic.Bool
	claimed atomic.Bool // the lookup has begun (on a goroutine or in a caller)
	done    chan struct{}
	val     T
	run     func() T
}

// NewFuture wraps lookup; nothing runs until Start or Get.
func NewFuture[T any](lookup func() T) *Future[T] {
	return &Future[T]{done: make(chan struct{}), run: lookup}
}

// do runs the lookup unless it has begun elsewhere; it returns without waiting.
func (f *Future[T]) do() {
	if f.claimed.CompareAndSwap(false, true) {
		f.val = f.run()
		close(f.done)
	}
}

// Start begins the lookup on b unless it has begun already.
func (f *Future[T]) Start(b *Batch) {
	if f.started.CompareAndSwap(false, true) {
		b.Go(f.do)
	}
}

// StartAll begins the lookups not begun yet on b, queued as GoAll queues tasks but in the
// lookups' own queue, which takes turns with GoAll's for released slots: a lookup's answer
// starts no further request, so it must not hold back the reads a longer chain hangs on. A
// lookup still queued when Get or Await asks for it runs in the asking goroutine.
func StartAll[T any](b *Batch, fs []*Future[T]) {
	var tasks []func()
	for _, f := range fs {
		if f != nil && f.started.CompareAndSwap(false, true) {
			tasks = append(tasks, f.do)
		}
	}
	b.queue(tasks, true)
}

// Get returns the lookup's result, running it in the caller if nothing started it.
func (f *Future[T]) Get() T {
	f.do() // runs the lookup unless it has begun elsewhere
	<-f.done
	return f.val
}

// Await is f's result for a caller holding one of fan's slots. A lookup that has not begun
// (never started, or queued by GoAll and waiting for a slot) runs in the caller, on the
// caller's slot; one running on another goroutine is waited for with the caller's slot lent
// meanwhile, as Batch.Wait does, so a goroutine taking lookups in order never holds a slot
// idle while requests could be sent. At width 1 every started lookup has already run, and
// Await is Get.
func Await[T any](fan *Fanout, f *Future[T]) T {
	select {
	case <-f.done:
		return f.val
	default:
	}
	if f.claimed.CompareAndSwap(false, true) {
		f.val = f.run()
		close(f.done)
		return f.val
	}
	fan.release()
	<-f.done
	fan.sem <- struct{}{}
	return f.val
}

// MergePart appends part's records and outcomes to a (the entity and actors of part are not
// taken). Parts are read concurrently into acquisitions of their own and merged in the
// sequential read's order: adding each scope's gaps in their order gives exactly the outcomes
// (codes in first-seen order, counts summed) the sequential read added directly.
func MergePart(a, part *acquisition.Acquisition) {
	a.Comments = append(a.Comments, part.Comments...)
	a.Reviews = append(a.Reviews, part.Reviews...)
	a.Threads = append(a.Threads, part.Threads...)
	a.Checks = append(a.Checks, part.Checks...)
	a.AgentRuns = append(a.AgentRuns, part.AgentRuns...)
	o := part.Outcomes
	for _, s := range []struct {
		scope string
		gaps  []acquisition.Gap
	}{
		{acquisition.ScopeComments, o.Comments}, {acquisition.ScopeReviews, o.Reviews},
		{acquisition.ScopeChecks, o.Checks}, {acquisition.ScopeCheckLogs, o.CheckLogs},
		{acquisition.ScopeAgentRuns, o.AgentRuns}, {acquisition.ScopeActors, o.Actors},
	} {
		for _, g := range s.gaps {
			a.Outcomes.Add(s.scope, g.Code, g.Count)
		}
	}
}
