package reviewctx

import (
	"errors"
	"testing"
)

func TestModeSelectorIsClosed(t *testing.T) {
	cases := []struct {
		in   string
		want Mode
		ok   bool
	}{
		{"", ModeOff, true}, {"off", ModeOff, true}, {"metadata", ModeMetadata, true}, {"enriched", ModeEnriched, true},
		{"OFF", "", false}, {" enriched", "", false}, {"enriched\n", "", false}, {"full", "", false}, {"true", "", false},
	}
	for _, c := range cases {
		got, err := ParseMode(c.in)
		if c.ok != (err == nil) || got != c.want {
			t.Errorf("ParseMode(%q) = %q, %v", c.in, got, err)
		}
		if err != nil && !errors.Is(err, ErrSelector) {
			t.Errorf("ParseMode(%q) error not ErrSelector", c.in)
		}
	}
}

func TestProtectionSelectorIsClosed(t *testing.T) {
	if m, err := ParseProtectionMode("", false); err != nil || m != protectionRequired {
		t.Fatalf("unset: %v %v", m, err)
	}
	if m, err := ParseProtectionMode("unprotected", true); err != nil || m != protectionUnprotected {
		t.Fatalf("unprotected: %v %v", m, err)
	}
	for _, v := range []string{"", "required", "Unprotected", "unprotected ", "protected", "off"} {
		if _, err := ParseProtectionMode(v, true); !errors.Is(err, ErrSelector) {
			t.Errorf("set %q accepted: %v", v, err)
		}
	}
}

func TestLifecycleDecision(t *testing.T) {
	cases := []struct {
		rule        string
		mode        Mode
		prot        ProtectionMode
		protected   bool
		adapters    bool
		wantErr     error
		constrained bool
	}{
		{"protected target keeps normal lifecycle under required", ModeEnriched, protectionRequired, true, true, nil, false},
		{"protected target keeps normal lifecycle under unprotected", ModeEnriched, protectionUnprotected, true, false, nil, false},
		{"unprotected target rejected under required", ModeOff, protectionRequired, false, false, ErrUnprotectedTarget, false},
		{"unprotected opt-in allows off", ModeOff, protectionUnprotected, false, false, nil, true},
		{"unprotected opt-in allows metadata", ModeMetadata, protectionUnprotected, false, false, nil, true},
		{"unprotected opt-in rejects enriched", ModeEnriched, protectionUnprotected, false, false, ErrConstrained, false},
		{"unprotected opt-in rejects any adapter setting", ModeMetadata, protectionUnprotected, false, true, ErrConstrained, false},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			l, err := Decide(c.mode, c.prot, c.protected, c.adapters)
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("err %v, want %v", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if l.Constrained != c.constrained || l.Protected != c.protected {
				t.Fatalf("lifecycle %+v", l)
			}
			if l.Constrained && (l.UsesPolicy() || l.UsesStore()) {
				t.Fatalf("constrained lifecycle uses policy or store")
			}
			if !l.Constrained && c.mode == ModeEnriched && !l.UsesPolicy() {
				t.Fatalf("enriched protected run skips policy")
			}
		})
	}
}

// UsesStore reports whether the run commits a private context store.
func (l Lifecycle) UsesStore() bool { return !l.Constrained && l.Mode != ModeOff }
