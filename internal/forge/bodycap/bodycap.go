// Package bodycap bounds a forge API response body for the adapters under internal/forge (docs/contracts.md,
// "Relationships, history and collection profiles": missing data from a selected
// source is a gap, never silently treated as an empty or shorter history). The forge SDKs decode a list page into
// memory whole, so each adapter wraps every API response body in a Reader: a hostile or broken
// server cannot make the process hold more than the limit of one answer, and a body longer
// than the limit fails the read instead of ending early, so a truncated JSON document never
// decodes as a shorter valid one.
package bodycap

import (
	"errors"
	"fmt"
	"io"
)

// ErrTooLarge is matched (errors.Is) by every read past a Reader's limit, whichever adapter
// sentinel it also carries: callers that only report a cause (retry.Cause) name the bound.
var ErrTooLarge = errors.New("response body over its bound")

// TooLargeError is the error of a read past the limit: it prints as the adapter's sentinel
// and matches both that sentinel and ErrTooLarge.
type TooLargeError struct {
	Limit int64
	Err   error
}

func (e *TooLargeError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("response body over the %d-byte bound", e.Limit)
	}
	return e.Err.Error()
}

// Unwrap returns the adapter's sentinel and ErrTooLarge.
func (e *TooLargeError) Unwrap() []error { return []error{e.Err, ErrTooLarge} }

// Reader is an io.ReadCloser that yields at most a fixed number of bytes of the wrapped body
// and returns its error on any byte past them.
type Reader struct {
	rc      io.ReadCloser
	left    int64
	limit   int64
	tooLong error
}

// New wraps rc so that reading more than limit bytes from it fails with tooLong (each adapter
// passes its own sentinel, which its callers and tests match with errors.Is, as they match
// ErrTooLarge).
func New(rc io.ReadCloser, limit int64, tooLong error) *Reader {
	return &Reader{rc: rc, left: limit, limit: limit, tooLong: tooLong}
}

// Read reads from the wrapped body up to the remaining allowance. Once the allowance is used
// it probes one more byte: end of body is the body's own answer (io.EOF), anything more is
// tooLong.
func (b *Reader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			return 0, &TooLargeError{Limit: b.limit, Err: b.tooLong}
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

// Close closes the wrapped body.
func (b *Reader) Close() error { return b.rc.Close() }
