package forge_test

import (
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/forge"
)

// DriftCheck: a changed total, a repeated ID or a row newer than the first page is a move; a
// steady list, a row created in the very second of the first page, and rows without IDs or
// times are not.
func TestDriftCheck(t *testing.T) {
	t0 := time.Date(2026, 9, 10, 12, 0, 0, 0, time.UTC)
	old := t0.Add(-time.Hour)
	for _, tc := range []struct {
		name string
		feed func(d *forge.DriftCheck)
		want bool
	}{
		{"steady", func(d *forge.DriftCheck) {
			d.Page(t0, 4)
			d.Row("1", old)
			d.Row("2", old)
			d.Page(t0.Add(time.Second), 4)
			d.Row("3", old)
			d.Row("4", t0)
			d.Row("5", t0.Add(900*time.Millisecond)) // same second as the first page's Date
		}, false},
		{"no ids, no times, no totals", func(d *forge.DriftCheck) {
			d.Page(time.Time{}, -1)
			d.Row("", time.Time{})
			d.Row("", time.Time{})
		}, false},
		{"total changed", func(d *forge.DriftCheck) { d.Page(t0, 4); d.Page(t0, 3) }, true},
		{"id repeated", func(d *forge.DriftCheck) { d.Page(t0, 4); d.Row("1", old); d.Row("1", old) }, true},
		{"row newer than the read", func(d *forge.DriftCheck) { d.Page(t0, 4); d.Row("9", t0.Add(time.Second)) }, true},
	} {
		var d forge.DriftCheck
		tc.feed(&d)
		if d.Moved() != tc.want {
			t.Errorf("%s: moved %v, want %v", tc.name, d.Moved(), tc.want)
		}
	}
}
