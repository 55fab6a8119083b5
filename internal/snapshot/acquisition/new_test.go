package acquisition

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestNewEncodesEveryListAsAnArray: an adapter that read a source and found nothing hands on
// an empty array, never null, and the empty acquisition is a valid interchange document.
func TestNewEncodesEveryListAsAnArray(t *testing.T) {
	a := New()
	if a.Version != Version {
		t.Fatalf("Version = %d, want %d", a.Version, Version)
	}
	raw, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"comments", "reviews", "threads", "checks", "agent_runs", "actors"} {
		if got := string(doc[k]); got != "[]" {
			t.Errorf("%s = %s, want []", k, got)
		}
	}
	var b bytes.Buffer
	if err := Write(&b, a); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(&b); err != nil {
		t.Fatalf("the empty acquisition does not read back: %v", err)
	}
}
