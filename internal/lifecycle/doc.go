// Package lifecycle is the one skeleton of forgectx's CI lifecycles: `forgectx run` and
// `forgectx review-context run` are each a list of phases run by it.
//
// It holds what both share and nothing else: the option fields and their defaults (Common),
// the phase list and its loop (Sequence), the panic guard of a finishing step (Protect),
// cleanup that runs once, in reverse order of registration, on every path (Cleanups), and the
// signal guard that turns SIGTERM and SIGINT into a cancellation so that cleanup, failure
// posting and the receipt still run (WatchSignals). What a phase does, what a failure posts
// and what the receipt says stay with each command (docs/lifecycle.md).
package lifecycle
