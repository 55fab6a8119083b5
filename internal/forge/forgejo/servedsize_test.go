package forgejo

import (
	"context"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/test/httpfake"
)

// TestLowerBoundWhenOnlyTheHidingListingPages: the server serves 2 rows a page whatever limit is
// asked (MAX_RESPONSE_ITEMS 2; the client asks 50), and the review listing, the only one long
// enough to need a second page, hides one row on each of its first 3 pages (another user's
// pending review, counted in X-Total-Count). No listing shows the server's page size, and the reader asks on
// past the server's last page until its one-row pages could hold the 7 declared reviews. A
// perfect run at the server's page size needs 4 review pages: the bound counts those (the
// pages that held a row), not the 3 empty pages past the end.
func TestLowerBoundWhenOnlyTheHidingListingPages(t *testing.T) {
	run := func(hide bool) *forge.Stats {
		d := httpfake.ForgejoPaging
		d.MaxSize = 2
		f := httpfake.NewFaults(t, d)
		if hide {
			for p := 1; p <= 3; p++ {
				f.HidePage("/api/v1/repos/{owner}/{repo}/pulls/{n}/reviews", p, 1)
			}
		}
		w := matrixWorld()
		w.comments, w.tasks = w.comments[:1], w.tasks[:1]
		w.statuses = actionsStatuses(w.tasks, headSHA)
		cl, err := New(Options{APIURL: w.serve(t, f) + "/api/v1", Token: "secret-token", PageSize: 50,
			RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cl.Acquire(context.Background(), forge.Ref{Forge: Forge, Repo: "Acme/Widgets", Number: 12}, matrixProfile); err != nil {
			t.Fatal(err)
		}
		return cl.Stats()
	}
	clean := run(false)
	if clean.Requests != clean.LowerBound || clean.Pages["reviews"] != 4 || clean.Pages["comments"] != 1 || clean.Pages["tasks"] != 1 {
		t.Fatalf("no hidden rows: %d requests, lower bound %d, pages %v: want every request needed, reviews in 4 pages, the others in 1", clean.Requests, clean.LowerBound, clean.Pages)
	}
	hidden := run(true)
	if hidden.Pages["reviews"] != 7 {
		t.Fatalf("reviews read in %d pages, want 7 (one row each, then empty, until one-row pages could hold the total)", hidden.Pages["reviews"])
	}
	// 3 of the 7 reviews are hidden, so their 3 conversations are never requested; the review
	// listing needs its 4 pages at 2 a page, as in the clean run; the 3 empty pages are over it.
	if want := clean.LowerBound - 3; hidden.LowerBound != want || hidden.Requests != want+3 {
		t.Errorf("hidden rows: %d requests, lower bound %d; want a bound of %d and 3 requests over it", hidden.Requests, hidden.LowerBound, want)
	}
}
