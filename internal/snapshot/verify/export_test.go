package verify

import (
	"bytes"
	"context"
	"maps"
	"reflect"
	"slices"
	"testing"
)

// LoadChecked is Load, and fails t unless Check (and so Dir) and Open report exactly the same
// for the same tree, and a snapshot from Open serves exactly the bytes of Load's: every test
// that verifies a tree with Load also proves the bounded-memory verification and the
// re-reading snapshot equivalent on it.
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
	osnap, orep, oerr := Open(ctx, dir, opts)
	if (err == nil) != (oerr == nil) || err != nil && err.Error() != oerr.Error() {
		t.Fatalf("Open error %v, Load error %v", oerr, err)
	}
	if !reflect.DeepEqual(normalize(rep), normalize(orep)) {
		t.Fatalf("Open reports %+v,\nLoad reports %+v", orep, rep)
	}
	if (snap == nil) != (osnap == nil) {
		t.Fatalf("Open snapshot %v, Load snapshot %v", osnap != nil, snap != nil)
	}
	if snap != nil {
		SameSnapshot(t, snap, osnap)
	}
	return snap, rep, err
}

// SameSnapshot fails t unless got serves exactly want's index, manifest, paths, digests and
// file bytes.
func SameSnapshot(t testing.TB, want, got *Snapshot) {
	t.Helper()
	if want.IndexSHA256 != got.IndexSHA256 || !reflect.DeepEqual(want.Manifest, got.Manifest) {
		t.Fatal("the snapshots differ in their index or manifest")
	}
	if !slices.Equal(want.Paths(), got.Paths()) || !maps.Equal(want.Sums(), got.Sums()) {
		t.Fatalf("the snapshots differ in their paths (%d, %d) or digests", len(want.Paths()), len(got.Paths()))
	}
	for _, p := range append(want.Paths(), "index.json") {
		w, werr := want.ReadFile(p)
		g, gerr := got.ReadFile(p)
		if werr != nil || gerr != nil || !bytes.Equal(w, g) || !got.Has(p) {
			t.Fatalf("%s: served %d bytes (%v), want %d (%v)", p, len(g), gerr, len(w), werr)
		}
	}
}

func normalize(r Report) Report {
	if len(r.Violations) == 0 {
		r.Violations = nil
	}
	return r
}
