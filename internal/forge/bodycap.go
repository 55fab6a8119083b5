package forge

import (
	"errors"
	"fmt"
	"io"
)

// ErrBodyTooLarge is matched (errors.Is) by every read past a CapBody limit, whichever adapter
// sentinel it also carries.
var ErrBodyTooLarge = errors.New("response body over its bound")

// BodyTooLargeError is the error of a read past a CapBody limit: it prints as the adapter's
// sentinel and matches both that sentinel and ErrBodyTooLarge.
type BodyTooLargeError struct {
	Limit int64
	Err   error
}

func (e *BodyTooLargeError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("response body over the %d-byte bound", e.Limit)
	}
	return e.Err.Error()
}

// Unwrap returns the adapter's sentinel and ErrBodyTooLarge.
func (e *BodyTooLargeError) Unwrap() []error { return []error{e.Err, ErrBodyTooLarge} }

// BodyLimit is the bound that was exceeded. The retry policy names a failure's cause by this
// method (it cannot import this package, which uses it).
func (e *BodyTooLargeError) BodyLimit() int64 { return e.Limit }

// CapBody bounds one forge API response body (docs/hardening.md): the forge SDKs decode a list
// page into memory whole, so each adapter wraps every response body in it, and a hostile or
// broken server cannot make the process hold more than limit bytes of one answer. A body
// longer than limit fails the read with tooLong (each adapter's own sentinel, which its
// callers and tests match with errors.Is) instead of ending early, so a truncated JSON
// document never decodes as a shorter valid one: missing data is a gap, never a shorter
// history.
func CapBody(rc io.ReadCloser, limit int64, tooLong error) io.ReadCloser {
	return &cappedBody{rc: rc, left: limit, limit: limit, tooLong: tooLong}
}

// cappedBody yields at most limit bytes of the wrapped body and fails on any byte past them.
type cappedBody struct {
	rc      io.ReadCloser
	left    int64
	limit   int64
	tooLong error
}

// Read reads from the wrapped body up to the remaining allowance. Once the allowance is used
// it probes one more byte: end of body is the body's own answer (io.EOF), anything more is
// tooLong.
func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			return 0, &BodyTooLargeError{Limit: b.limit, Err: b.tooLong}
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
func (b *cappedBody) Close() error { return b.rc.Close() }
