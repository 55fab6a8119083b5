package reviewrun

import (
	"strings"
	"testing"
	"time"
)

// A forge that stops answering while a failed run posts its failure note holds the run no
// longer than its finishing budget: the note is given up (and logged as not posted), cleanup
// is complete and the run fails with its closed state. Without the budget the request would
// wait for the HTTP client's own per-attempt timeout, and its retries, instead.
func TestReviewContextHungFailurePostingEndsWithinTheBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("builds forgectx and the stand-in engine")
	}
	const budget = time.Second
	page1 := fixture(t, "discussions_page1")
	sc := scenario{mode: "enriched", protected: true, approve: "true", script: "crash", policy: e2ePolicy(t, nil), pages: discussionsOK(page1), hungPosting: true}
	done := make(chan e2eRun, 1)
	var finished time.Time
	go func() {
		r := runScenarioWith(t, sc, func(p string) {
			if p == "cleanup:rules" {
				finished = time.Now() // the last cleanup step: finishing starts right after
			}
		}, func(o *Options) { o.FinishTimeout = budget })
		done <- r
	}()
	var r e2eRun
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the run still hangs in its failure posting 30s after starting; its finishing budget is 1s")
	}
	if took := time.Since(finished); finished.IsZero() || took > budget+5*time.Second {
		t.Fatalf("finishing took %s after cleanup, want about the %s budget", took, budget)
	}
	if r.err == nil || r.res.Status != StatusFailure || r.res.Detail != "failed: "+FailEngine || r.res.Cleanup != CleanupComplete {
		t.Fatalf("got %v %+v, want the engine failure after a complete cleanup", r.err, r.res)
	}
	if !strings.Contains(r.logs.String(), "the failure note could not be posted") {
		t.Fatalf("the abandoned failure note is not logged:\n%s", r.logs)
	}
	if len(r.fake.writes("notes")) != 0 {
		t.Fatal("a note was written although the forge never answered the lookup")
	}
	assertNoLeftovers(t, r.tmp)
}
