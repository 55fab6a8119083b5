package lifecycle

import (
	"context"
	"sync"
)

// Phase is one named step of a lifecycle. Run returns done with the lifecycle's outcome when
// the lifecycle ends in this phase (a failure, a skip, an interruption); otherwise the next
// phase runs.
type Phase[O any] struct {
	Name string
	Run  func(ctx context.Context) (out O, done bool)
}

// Sequence is a lifecycle's phase list and the hooks around each phase. The hooks are where a
// command logs progress and checks for an interruption: the skeleton itself logs nothing, so
// each command's log lines stay its own.
type Sequence[O any] struct {
	Phases []Phase[O]
	// Before, when set, runs before each phase; done ends the lifecycle with out before the
	// phase starts (a signal or time-out that arrived during the previous phase).
	Before func(ctx context.Context, name string) (out O, done bool)
	// After, when set, runs after each phase with whether it ended the lifecycle.
	After func(name string, done bool)
	// Recover, when set, turns a panic in a phase (or in Before or After) into the lifecycle's
	// outcome, given the name of the phase that was running: the lifecycle ends there and the
	// command's finishing steps still run. Recover must not print the panic value: it may
	// carry content. Without it a panic propagates.
	Recover func(name string, p any) O
}

// Run runs the phases in order until one ends the lifecycle and returns its outcome and true;
// when every phase ran it returns the zero outcome and false.
func (s Sequence[O]) Run(ctx context.Context) (out O, done bool) {
	cur := ""
	if s.Recover != nil {
		defer func() {
			if p := recover(); p != nil {
				out, done = s.Recover(cur, p), true
			}
		}()
	}
	for _, p := range s.Phases {
		cur = p.Name
		if s.Before != nil {
			if out, done := s.Before(ctx, p.Name); done {
				return out, true
			}
		}
		out, done := p.Run(ctx)
		if s.After != nil {
			s.After(p.Name, done)
		}
		if done {
			return out, true
		}
	}
	var zero O
	return zero, false
}

// Protect runs one step; a panic in it is handed to report with the step's name and does not
// propagate, so the remaining finishing steps (status, receipt, cleanup) still run. report
// must not print the panic value: it may carry content.
func Protect(step string, f func(), report func(step string, p any)) {
	defer func() {
		if p := recover(); p != nil {
			report(step, p)
		}
	}()
	f()
}

// Cleanups are the removals of one run: each registered function runs exactly once, the last
// registered first (what was created last depends on what was created before it), whichever
// path the run ends on and however often Run is called (a deferred call and an early one on a
// cancellation).
type Cleanups struct {
	mu   sync.Mutex
	fns  []func()
	done bool
}

// Add registers f. After Run, f is not called.
func (c *Cleanups) Add(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.done {
		c.fns = append(c.fns, f)
	}
}

// Run calls every registered function, in reverse order of registration, the first time it is
// called; later calls do nothing.
func (c *Cleanups) Run() {
	c.mu.Lock()
	if c.done {
		c.mu.Unlock()
		return
	}
	c.done = true
	fns := c.fns
	c.fns = nil
	c.mu.Unlock()
	for i := len(fns) - 1; i >= 0; i-- {
		fns[i]()
	}
}
