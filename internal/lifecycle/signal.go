package lifecycle

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// SignalGuard turns SIGTERM and SIGINT into a cancellation of the lifecycle's context instead
// of process termination, so that cleanup, failure posting and the receipt always run to their
// end. It is the one way a lifecycle learns of a signal: the guarded context is cancelled by a
// signal or by its parent (the command's context, which main cancels on the same signals).
type SignalGuard struct {
	ch     chan os.Signal
	done   chan struct{}
	cancel context.CancelFunc
	once   sync.Once
	mu     sync.Mutex
	sig    os.Signal
}

// WatchSignals starts the guard: the returned context ends on the first SIGTERM or SIGINT
// (or with parent). Stop restores the previous signal disposition.
func WatchSignals(parent context.Context) (context.Context, *SignalGuard) {
	ctx, cancel := context.WithCancel(parent)
	g := &SignalGuard{ch: make(chan os.Signal, 2), done: make(chan struct{}), cancel: cancel}
	signal.Notify(g.ch, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		for {
			select {
			case s := <-g.ch:
				g.mu.Lock()
				if g.sig == nil {
					g.sig = s
				}
				g.mu.Unlock()
				g.cancel()
			case <-g.done:
				return
			}
		}
	}()
	return ctx, g
}

// Signal returns the first signal received, or nil.
func (g *SignalGuard) Signal() os.Signal {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.sig
}

// Stop stops watching (after cleanup and the finishing steps) and releases the guarded
// context. It may be called more than once.
func (g *SignalGuard) Stop() {
	if g == nil {
		return
	}
	g.once.Do(func() {
		signal.Stop(g.ch)
		close(g.done)
		g.cancel()
	})
}
