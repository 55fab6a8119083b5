// Package parallel is the one worker loop the assembler (internal/snapshot) and the verifier
// (internal/snapshot/verify) spread independent work over the cores with. It serves no spec section of its
// own: the spec's determinism rule is kept by the callers, which give every index its own
// result slot and combine the slots in index order, so output never depends on scheduling.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Do runs fn(0) … fn(n-1) on up to GOMAXPROCS goroutines (in the caller's goroutine when one
// would do). fn must only touch state of its own index.
func Do(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := 0; i < n; i++ {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for ; workers > 0; workers-- {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				fn(i)
			}
		}()
	}
	wg.Wait()
}

// Each is Do for work that can fail: it returns the error of the lowest index that failed,
// so the outcome does not depend on scheduling. On one core it stops at the first failure.
func Each(n int, fn func(i int) error) error {
	if min(runtime.GOMAXPROCS(0), n) <= 1 {
		for i := 0; i < n; i++ {
			if err := fn(i); err != nil {
				return err
			}
		}
		return nil
	}
	errs := make([]error, n)
	Do(n, func(i int) { errs[i] = fn(i) })
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
