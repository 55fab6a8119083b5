package snapshot

import "github.com/forgectx/forgectx/internal/platform/parallel"

// forEach runs fn(0) … fn(n-1) on every available core and returns the error of the lowest
// index that failed (so the outcome does not depend on scheduling). fn must only touch state
// of its own index: the callers validate independent chunks and documents, whose results are
// combined afterwards in index order.
func forEach(n int, fn func(i int) error) error { return parallel.Each(n, fn) }
