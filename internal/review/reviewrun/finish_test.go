package reviewrun

import (
	"os"
	"path/filepath"
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

// A panic in a finishing step is reported by the step's name alone and the remaining steps
// still run: a cleanup that panics counts as a failed cleanup, so the result is withheld (the
// summary with its receipt says so) instead of the process dying with nothing posted.
func TestReviewContextPanicInCleanupStillFinishes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds forgectx and the stand-in engine")
	}
	defer func(f func(string) error) { removeAll = f }(removeAll)
	removeAll = func(p string) error {
		if filepath.Base(p) == "home" {
			panic("secret-looking panic value " + p)
		}
		return os.RemoveAll(p)
	}
	page1 := fixture(t, "discussions_page1")
	sc := scenario{mode: "enriched", protected: true, approve: "true", script: "findings", policy: e2ePolicy(t, nil), pages: discussionsOK(page1), withheld: true}
	r := runScenario(t, sc, nil)
	r.fake.wantPosts = map[string]int{"POST notes": 1}
	if r.err == nil || r.res.Status != StatusFailure || r.res.Cleanup != CleanupFailed {
		t.Fatalf("want a failed run with a failed cleanup, got %v %+v", r.err, r.res)
	}
	body, rc := summaryNote(t, r)
	if rc.Cleanup != CleanupFailed || !strings.Contains(body, "result is withheld") || r.res.Approved {
		t.Fatalf("withheld summary wrong: cleanup %s, approved %v", rc.Cleanup, r.res.Approved)
	}
	logs := r.logs.String()
	if !strings.Contains(logs, `"step":"cleanup"`) || !strings.Contains(logs, "internal error in a finishing step") || strings.Contains(logs, "secret-looking") {
		t.Fatalf("the panic is not reported by its step alone:\n%s", logs)
	}
	assertNoLeftovers(t, r.tmp)
}
