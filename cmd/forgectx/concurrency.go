package main

import (
	"flag"
	"fmt"

	"github.com/forgectx/forgectx/internal/forge"
)

// concurrencyFlag registers --concurrency, the one request-pool flag of every command that
// reads a forge (docs/request-pool.md): how many requests to one host are in flight at once.
func concurrencyFlag(fs *flag.FlagSet, v *int) {
	fs.IntVar(v, "concurrency", forge.DefaultConcurrency, fmt.Sprintf("requests in flight per forge host, %d..%d (1: one request at a time, in order; a rate limit drops a host to 1)", 1, forge.MaxConcurrency))
}

// checkConcurrency refuses a --concurrency outside 1..forge.MaxConcurrency (exit 2).
func checkConcurrency(v int) error {
	if v < 1 || v > forge.MaxConcurrency {
		return usagef("--concurrency: must be an integer from 1 to %d (got %d)", forge.MaxConcurrency, v)
	}
	return nil
}
