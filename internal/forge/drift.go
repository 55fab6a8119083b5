package forge

import (
	"errors"
	"time"
)

// ErrDrift is why a listing that moved while it was read, and moved again when read once
// more, is incomplete: an offset-paged list whose rows shift between two page reads skips or
// repeats rows, and no count shows it.
var ErrDrift = errors.New("pagination: the list changed while its pages were read, twice")

// DriftCheck detects an offset-paged listing that moved while it was read (Forgejo and
// GitLab page by offset: a row deleted before the offset shifts one row past the reader, a
// row inserted before it serves one twice). It costs no request; it looks at what the pages
// already say:
//
//   - every page declares the same total;
//   - no row ID is served twice;
//   - no row was created after the first page was served (its Date header): a delete plus
//     an add keeps the total, but the added row is newer than the read.
//
// Forge timestamps and Date have one-second resolution, so a row created in the very second
// the first page was served is not seen as new (strictly after): a delete plus an add inside
// that second is the one change the check cannot see.
//
// The caller feeds it every page (Page) and row (Row) of one read and, when Moved, reads the
// listing once more from the first page with a fresh check; a second move is ErrDrift.
type DriftCheck struct {
	started time.Time
	totals  map[int]bool
	ids     map[string]bool
	moved   bool
}

// Page records one answer: its Date header (zero when absent) and declared total (-1: none).
func (d *DriftCheck) Page(date time.Time, total int) {
	if d.started.IsZero() {
		d.started = date
	}
	if total >= 0 {
		if d.totals == nil {
			d.totals = map[int]bool{}
		}
		d.totals[total] = true
		d.moved = d.moved || len(d.totals) > 1
	}
}

// Row records one row of the last answer: its ID ("" when it has none) and creation time
// (zero when unknown).
func (d *DriftCheck) Row(id string, created time.Time) {
	if id != "" {
		if d.ids == nil {
			d.ids = map[string]bool{}
		}
		d.moved = d.moved || d.ids[id]
		d.ids[id] = true
	}
	// Date has one-second resolution: a row created earlier in the second the page was
	// served (GitLab's created_at has milliseconds) is not newer than the read.
	d.moved = d.moved || (!d.started.IsZero() && created.Truncate(time.Second).After(d.started))
}

// Moved reports whether the listing moved while read.
func (d *DriftCheck) Moved() bool { return d.moved }
