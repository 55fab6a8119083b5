package snapshot

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// forEach runs fn(0) … fn(n-1) on every available core and returns the error of the lowest
// index that failed (so the outcome does not depend on scheduling). fn must only touch state
// of its own index: the callers validate independent chunks and documents, whose results are
// combined afterwards in index order.
func forEach(n int, fn func(i int) error) error {
	workers := min(runtime.GOMAXPROCS(0), n)
	errs := make([]error, n)
	if workers <= 1 {
		for i := 0; i < n; i++ {
			if errs[i] = fn(i); errs[i] != nil {
				return errs[i]
			}
		}
		return nil
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for ; workers > 0; workers-- {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				errs[i] = fn(i)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
