package verify

import (
	"context"
	"reflect"
	"testing"
)

// LoadChecked is Load, and fails t unless Check (and so Dir) reports exactly the same for
// the same tree: every test that verifies a tree with Load also proves the bounded-memory
// verification equivalent on it.
func LoadChecked(t testing.TB, ctx context.Context, dir string, opts Options) (*Snapshot, Report, error) {
	t.Helper()
	snap, rep, err := Load(ctx, dir, opts)
	crep, cerr := Check(ctx, dir, opts)
	if (err == nil) != (cerr == nil) || err != nil && err.Error() != cerr.Error() {
		t.Fatalf("Check error %v, Load error %v", cerr, err)
	}
	if !reflect.DeepEqual(normalize(rep), normalize(crep)) {
		t.Fatalf("Check reports %+v,\nLoad reports %+v", crep, rep)
	}
	return snap, rep, err
}

func normalize(r Report) Report {
	if len(r.Violations) == 0 {
		r.Violations = nil
	}
	return r
}
