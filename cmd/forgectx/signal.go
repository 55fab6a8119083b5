package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// signalGrace is how long a command has, after SIGTERM or SIGINT cancelled its context, to
// finish what it does on cancellation (run: stop the agent within 3 s, post the cancelled
// status and the receipt within FinishTimeout, 5 s) before the process exits anyway. Further
// signals change nothing: GitHub Actions follows its SIGINT with a SIGTERM 7.5 s later, which
// must not cut the status update short.
const signalGrace = 15 * time.Second

// interruptedError is the cancellation cause of the command context when a signal arrived.
type interruptedError struct{ sig os.Signal }

func (i *interruptedError) Error() string { return "interrupted by " + signalName(i.sig) }

func signalName(s os.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "SIGTERM"
	case os.Interrupt:
		return "SIGINT"
	}
	return s.String()
}

// interruptedBy returns the signal that cancelled ctx, or nil.
func interruptedBy(ctx context.Context) os.Signal {
	var ie *interruptedError
	if errors.As(context.Cause(ctx), &ie) {
		return ie.sig
	}
	return nil
}

// watchSignals is the one signal rule of every command: the first signal cancels the command
// context (with an *interruptedError cause); if the command is still running after grace,
// exit(1) ends the process. Later signals are absorbed. It returns when done is closed.
func watchSignals(sigs <-chan os.Signal, cancel context.CancelCauseFunc, done <-chan struct{}, stderr io.Writer, grace time.Duration, exit func(int)) {
	var first os.Signal
	select {
	case first = <-sigs:
	case <-done:
		return
	}
	cancel(&interruptedError{sig: first})
	timer := time.NewTimer(grace)
	defer timer.Stop()
	for {
		select {
		case <-done:
			return
		case <-sigs:
		case <-timer.C:
			fmt.Fprintf(stderr, "forgectx: interrupted by %s; the command did not stop within %s: exiting now\n", signalName(first), grace)
			exit(exitFailed)
			return
		}
	}
}

// interruptibleReader makes a blocking stream (stdin on a pipe or a terminal) give up when
// ctx is done: each Read waits for the underlying read or the context, whichever comes first.
// An abandoned read stays pending and its bytes are delivered by the next Read.
type interruptibleReader struct {
	ctx     context.Context
	r       io.Reader
	pending chan readResult
	left    []byte
	err     error
}

type readResult struct {
	b   []byte
	err error
}

// interruptible wraps r unless it is a regular file, whose reads never block.
func interruptible(ctx context.Context, r io.Reader) io.Reader {
	if f, ok := r.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			return r
		}
	}
	return &interruptibleReader{ctx: ctx, r: r}
}

func (ir *interruptibleReader) Read(p []byte) (int, error) {
	if len(ir.left) > 0 {
		n := copy(p, ir.left)
		ir.left = ir.left[n:]
		return n, nil
	}
	if ir.err != nil {
		return 0, ir.err
	}
	if ir.pending == nil {
		if err := ir.ctx.Err(); err != nil {
			return 0, context.Cause(ir.ctx)
		}
		buf := make([]byte, len(p))
		ch := make(chan readResult, 1)
		go func() {
			n, err := ir.r.Read(buf)
			ch <- readResult{buf[:n], err}
		}()
		ir.pending = ch
	}
	select {
	case res := <-ir.pending:
		ir.pending = nil
		n := copy(p, res.b)
		ir.left = res.b[n:]
		if len(ir.left) == 0 {
			return n, res.err
		}
		ir.err = res.err
		return n, nil
	case <-ir.ctx.Done():
		return 0, context.Cause(ir.ctx)
	}
}
