package bodycap

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// A read past the limit is a *TooLargeError that prints as the adapter's sentinel, carries the
// limit and matches both the sentinel and ErrTooLarge.
func TestTooLargeIsNamed(t *testing.T) {
	sentinel := errors.New("github: response body larger than 4 bytes")
	_, err := io.ReadAll(New(io.NopCloser(strings.NewReader("12345")), 4, sentinel))
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Limit != 4 || !errors.Is(err, sentinel) || !errors.Is(err, ErrTooLarge) || err.Error() != sentinel.Error() {
		t.Fatalf("err = %v (%T); want a *TooLargeError of limit 4 matching the sentinel and ErrTooLarge", err, err)
	}
}
