package reviewmcp

import (
	"errors"
	"fmt"
	"io"
	"sync"
)

// errFrame is the session-ending error of an inbound frame the server refuses to read: a
// JSON-RPC batch, or a frame over maxMessage.
var errFrame = errors.New("reviewmcp: inbound frame refused")

// frameGuard sits between stdin and the SDK's transport and tracks the top-level JSON values
// of the stream with a small scanner (string, escape and nesting state only; the SDK still
// parses). It refuses, ending the session before the SDK sees the frame:
//
//   - a JSON-RPC batch (a top-level array). Protocol versions 2024-11-05 and 2025-03-26
//     allow batching and the SDK answers a batch with one combined response frame, which
//     the per-answer bound cannot bound: a 64 KiB batch of get calls would produce a
//     response of megabytes. Refusing batches keeps every response frame within maxMessage;
//   - a frame over maxMessage bytes, counted exactly from the value's first byte to its last
//     (the SDK's own limit counts bytes read per decode, which a pipelined client can
//     stretch by the decoder's read-ahead).
//
// Bytes before the refused value are passed on (so earlier complete frames are answered);
// every later Read returns the error.
type frameGuard struct {
	r io.Reader
	// mu guards err: the SDK's reader goroutine sets it, Serve reads it after Run returns
	// (the goroutine may still be blocked in a read then).
	mu    sync.Mutex
	err   error
	depth int
	inStr bool
	esc   bool
	size  int // bytes of the current top-level value so far; 0 between values
}

// refused returns the refusal, if any.
func (g *frameGuard) refused() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

func (g *frameGuard) Read(p []byte) (int, error) {
	if err := g.refused(); err != nil {
		return 0, err
	}
	n, err := g.r.Read(p)
	for i := 0; i < n; i++ {
		if ferr := g.step(p[i]); ferr != nil {
			g.mu.Lock()
			g.err = ferr
			g.mu.Unlock()
			if i == 0 {
				return 0, ferr
			}
			return i, nil
		}
	}
	return n, err
}

// step advances the scanner by one byte.
func (g *frameGuard) step(c byte) error {
	if g.size == 0 {
		switch c {
		case ' ', '\t', '\n', '\r':
			return nil
		case '[':
			return fmt.Errorf("%w: JSON-RPC batches are not served (one request per frame)", errFrame)
		}
	}
	g.size++
	if g.size > maxMessage {
		return fmt.Errorf("%w: frame over the %d-byte request bound", errFrame, maxMessage)
	}
	switch {
	case g.inStr:
		switch {
		case g.esc:
			g.esc = false
		case c == '\\':
			g.esc = true
		case c == '"':
			g.inStr = false
		}
	case c == '"':
		g.inStr = true
	case c == '{' || c == '[':
		g.depth++
	case c == '}' || c == ']':
		g.depth--
	}
	if g.depth <= 0 && !g.inStr && (c == '}' || c == ']') {
		// a top-level object ended; a malformed stream (a stray closer) is the SDK's to refuse
		g.depth, g.size = 0, 0
	}
	return nil
}

// frameWriter refuses to write an outbound frame over maxMessage (plus its newline): the
// per-answer bound leaves room for a small envelope, but the envelope echoes the client's
// request ID and, for an unknown tool, its name, either of which a hostile client can make
// nearly 64 KiB long. The SDK writes each frame with one Write, so the frame is dropped
// whole and the session ends with errFrame instead of sending an oversized response.
type frameWriter struct {
	w   io.Writer
	mu  sync.Mutex
	err error
}

func (f *frameWriter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return 0, f.err
	}
	if len(p) > maxMessage+1 {
		f.err = fmt.Errorf("%w: response frame over the %d-byte bound (an oversized request id or name)", errFrame, maxMessage)
		return 0, f.err
	}
	return f.w.Write(p)
}

func (f *frameWriter) refused() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}
