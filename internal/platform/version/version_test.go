package version

import "testing"

// A release build's link-time version wins; otherwise the build info's module version or "dev"
// (go test binaries report "(devel)", which is never printed).
func TestString(t *testing.T) {
	if got := String(); got == "" || got == "(devel)" {
		t.Fatalf("String() = %q without a link-time version", got)
	}
	old := Version
	t.Cleanup(func() { Version = old })
	Version = "v1.2.3"
	if got := String(); got != "v1.2.3" {
		t.Fatalf("String() = %q, want the link-time version", got)
	}
}
