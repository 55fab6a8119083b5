// Package acqcorpus makes synthetic, realistic acquisitions of any size for the snapshot
// assembler's benchmarks: a GitHub pull request whose n records are spread over comments (with
// review threads of three), formal reviews and checks with logs, as a busy real PR would be.
// Output is deterministic for a given n.
package acqcorpus

import (
	"fmt"
	"strings"
	"time"

	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// Head is the captured head SHA of every corpus pull request.
const Head = "0123456789abcdef0123456789abcdef01234567"

const paragraph = "The retry loop now re-reads the budget after each attempt, so a slow upstream cannot " +
	"starve the other workers. I measured p99 on the staging replay: 412ms before, 409ms after. " +
	"See `internal/httpclient/retry.go` lines 80-120; the jitter is applied before the cap.\n"

var logLine = "2026-09-03T14:02:41.5000001Z     retry_test.go:57: delay after 8 attempts = 41.2s, want <= 30s\n"

// Make returns an acquisition with n non-entity records (n >= 10): 80% comments (every third
// one in a review thread), 10% reviews, 10% checks (every fourth failed, with a log).
func Make(n int) *acquisition.Acquisition { return make1(n, 1) }

// MakeBusy is Make with the body sizes of a busy real pull request: comment and review bodies
// of 1 to 13 paragraphs (about 400 B to 5 KB, 2.6 KB on average), which makes the 100k-record
// acquisition document about 230 MB — the corpus of the scale benchmarks (test/scale).
func MakeBusy(n int) *acquisition.Acquisition { return make1(n, 13) }

// make1 builds the corpus; comment i and review i carry 1 + i%spread paragraphs.
func make1(n, spread int) *acquisition.Acquisition {
	base := time.Date(2026, 9, 1, 9, 0, 0, 0, time.UTC)
	at := func(i int) string { return base.Add(time.Duration(i) * time.Second).Format(time.RFC3339Nano) }
	actors := []acquisition.Actor{}
	refs := make([]acquisition.ActorRef, 20)
	for i := range refs {
		id, login := fmt.Sprintf("U_kgDOUser%04d", i), fmt.Sprintf("user-%d", i)
		refs[i] = acquisition.ActorRef{ID: &id, Login: &login}
		role := []string{"write", "maintain", "admin", "triage"}[i%4]
		actors = append(actors, acquisition.Actor{ID: id, Login: &login, Kind: "human", Role: &role, RoleVerified: true})
	}
	a := &acquisition.Acquisition{
		Version: acquisition.Version,
		Source:  acquisition.Source{Forge: "github", Host: "github.com", RepositoryID: "R_kgDOBench01", Repository: "acme/bench"},
		Entity: acquisition.Entity{Kind: "change_proposal", ID: "PR_kwDOBench01", Number: 1, Title: "Bench pull request",
			State: "open", Author: refs[0], Labels: []string{"perf", "bench"}, Body: strings.Repeat(paragraph, 3),
			CreatedAt: at(0), UpdatedAt: at(n + 1), HeadSHA: Head},
		Actors: actors,
	}
	nComments, nReviews := n*8/10, n/10
	nChecks := n - nComments - nReviews
	var thread *acquisition.Thread
	for i := 0; i < nComments; i++ {
		id := fmt.Sprintf("IC_kwDOBench%08d", i)
		a.Comments = append(a.Comments, acquisition.Comment{ID: id, Author: refs[i%len(refs)], CreatedAt: at(i + 1),
			Body: fmt.Sprintf("Comment %d.\n\n%s", i, strings.Repeat(paragraph, 1+i%spread))})
		if i%3 == 0 {
			if thread != nil {
				a.Threads = append(a.Threads, *thread)
			}
			thread = &acquisition.Thread{ID: fmt.Sprintf("PRRT_kwDOBench%08d", i), CreatedAt: at(i + 1), Replies: []acquisition.Reply{},
				Path: "internal/httpclient/retry.go", Line: 80 + i%40, Side: "right", Resolved: i%2 == 0, Outdated: i%5 == 0,
				ReviewID: fmt.Sprintf("PRR_kwDOBench%08d", (i/3)%max(nReviews, 1))}
			if thread.Resolved {
				thread.ResolvedBy = &refs[1]
			}
		} else {
			thread.Replies = append(thread.Replies, acquisition.Reply{ID: id, ParentID: thread.CommentIDs[0]})
		}
		thread.CommentIDs = append(thread.CommentIDs, id)
	}
	if thread != nil {
		a.Threads = append(a.Threads, *thread)
	}
	for i := 0; i < nReviews; i++ {
		state := []string{"commented", "approved", "changes_requested"}[i%3]
		a.Reviews = append(a.Reviews, acquisition.Review{ID: fmt.Sprintf("PRR_kwDOBench%08d", i), Author: refs[(i+2)%len(refs)],
			State: state, SubmittedAt: at(i*7 + 2), Body: "Review notes.\n\n" + strings.Repeat(paragraph, 1+i%spread), ReviewedSHA: Head})
	}
	f := false
	for i := 0; i < nChecks; i++ {
		c := acquisition.Check{ID: fmt.Sprintf("CR_kwDOBench%08d", i), Name: fmt.Sprintf("test (shard %d)", i), Status: "completed",
			Conclusion: "success", CreatedAt: at(i*5 + 3), StartedAt: at(i*5 + 4), CompletedAt: at(i*5 + 60), NeverStarted: &f, HeadSHA: Head}
		if i%4 == 0 {
			c.Conclusion = "failure"
			c.Log = &acquisition.Log{Outcome: acquisition.LogFetched, Content: []byte(strings.Repeat(logLine, 40))}
		}
		a.Checks = append(a.Checks, c)
	}
	return a
}

// Profile selects every source with bounds that keep all n records.
func Profile(n int) acquisition.Profile {
	return acquisition.Profile{
		EntityKind: "change_proposal", IncludedSources: []string{"entity", "comments", "reviews", "checks", "check_logs", "agent_runs"},
		RecordSelection: "newest", CheckLogSelection: "failed",
		Bounds: acquisition.Bounds{MaxRecordsPerSource: n, MaxSourceBytes: 1 << 20, MaxRecordBytes: 64 << 10, MaxLogBytes: 16 << 10,
			MaxMetadataStringBytes: 256, MaxLabels: 20},
	}
}
