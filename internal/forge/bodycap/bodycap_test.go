package bodycap

import (
	"errors"
	"io"
	"strings"
	"testing"
)

var errTooLarge = errors.New("too large")

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
		{name: "one byte over", body: "[1,2,3]", limit: 6, wantErr: errTooLarge},
		{name: "far over", body: strings.Repeat("x", 1<<16), limit: 10, wantErr: errTooLarge},
		{name: "empty body", body: "", limit: 0, want: ""},
		{name: "zero limit, any byte", body: "x", limit: 0, wantErr: errTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New(io.NopCloser(strings.NewReader(tt.body)), tt.limit, errTooLarge)
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
