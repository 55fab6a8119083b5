package forge

import (
	"errors"
	"io"
	"strings"
	"testing"
)

var errCapTooLarge = errors.New("too large")

// TestBodyLargerThanLimitFailsNotTruncates proves the "fetch_failed, never a shorter record
// set" rule at the byte level: a body within the limit reads whole, a longer one fails with
// the adapter's sentinel instead of ending early.
func TestBodyLargerThanLimitFailsNotTruncates(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		limit   int64
		want    string
		wantErr error
	}{
		{name: "shorter than limit", body: "[1,2]", limit: 6, want: "[1,2]"},
		{name: "exactly the limit", body: "[1,2,]", limit: 6, want: "[1,2,]"},
		{name: "one byte over", body: "[1,2,3]", limit: 6, wantErr: errCapTooLarge},
		{name: "far over", body: strings.Repeat("x", 1<<16), limit: 10, wantErr: errCapTooLarge},
		{name: "empty body", body: "", limit: 0, want: ""},
		{name: "zero limit, any byte", body: "x", limit: 0, wantErr: errCapTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := CapBody(io.NopCloser(strings.NewReader(tt.body)), tt.limit, errCapTooLarge)
			got, err := io.ReadAll(r)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
			if err := r.Close(); err != nil {
				t.Fatalf("close: %v", err)
			}
		})
	}
}

// A read past the limit is a *BodyTooLargeError that prints as the adapter's sentinel, carries the
// limit and matches both the sentinel and ErrBodyTooLarge.
func TestTooLargeIsNamed(t *testing.T) {
	sentinel := errors.New("github: response body larger than 4 bytes")
	_, err := io.ReadAll(CapBody(io.NopCloser(strings.NewReader("12345")), 4, sentinel))
	var tl *BodyTooLargeError
	if !errors.As(err, &tl) || tl.Limit != 4 || !errors.Is(err, sentinel) || !errors.Is(err, ErrBodyTooLarge) || err.Error() != sentinel.Error() {
		t.Fatalf("err = %v (%T); want a *BodyTooLargeError of limit 4 matching the sentinel and ErrBodyTooLarge", err, err)
	}
}
