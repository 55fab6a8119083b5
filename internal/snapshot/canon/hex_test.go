package canon

import "testing"

// Canonical bytes: digests and record keys are lowercase hex; an uppercase or non-hex digit is
// refused, never folded.
func TestIsLowerHexAcceptsOnlyLowercaseHexDigits(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"", true},
		{"0123456789abcdef", true},
		{SHA256Hex([]byte("x")), true},
		{"ABCDEF", false},
		{"0123456789abcdeF", false},
		{"g", false},
		{"12 4", false},
		{"é", false},
	} {
		if got := IsLowerHex(tc.s); got != tc.want {
			t.Errorf("IsLowerHex(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
}
