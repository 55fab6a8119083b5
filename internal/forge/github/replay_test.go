package github_test

import (
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/test/ghscenario"
)

// Determinism: the same cassette gives the same acquisition bytes, whether replayed twice,
// with its interactions in another order (concurrent readers may record in any order), or
// served by the fake server; and a replay uses every recorded exchange.
func TestSameCassetteSameAcquisitionBytes(t *testing.T) {
	for _, name := range sortedScenarios() {
		t.Run(name, func(t *testing.T) {
			s := ghscenario.Small()[name]()
			c := loadFixture(t, name)
			a1, _, rp := acquireReplay(t, s, c)
			if un := rp.Unused(); len(un) != 0 {
				t.Errorf("replay left recorded exchanges unused: %v", un)
			}
			first := acqBytes(t, a1)
			golden := filepath.Join(fixturesDir, name, "acquisition.golden.json")
			if *update {
				if err := os.WriteFile(golden, first, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if want, err := os.ReadFile(golden); err != nil || !bytes.Equal(first, want) {
				t.Errorf("acquisition differs from %s (%v); review and regenerate with -update", golden, err)
			}
			a2, _, _ := acquireReplay(t, s, loadFixture(t, name))
			if !bytes.Equal(first, acqBytes(t, a2)) {
				t.Error("second replay differs")
			}
			shuffled := &cassette.Cassette{Meta: c.Meta, Interactions: append([]cassette.Interaction(nil), c.Interactions...)}
			rnd := rand.New(rand.NewSource(int64(len(name))))
			rnd.Shuffle(len(shuffled.Interactions), func(i, j int) {
				shuffled.Interactions[i], shuffled.Interactions[j] = shuffled.Interactions[j], shuffled.Interactions[i]
			})
			a3, _, _ := acquireReplay(t, s, shuffled)
			if !bytes.Equal(first, acqBytes(t, a3)) {
				t.Error("replay of the shuffled cassette differs")
			}
			a4, _, err := acquireFake(t, s, c, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(first, acqBytes(t, a4)) {
				t.Error("fake-server run differs from the replay")
			}
		})
	}
}

// The large scenario: complete, only the captured head's checks, and within the request
// ratio. The other head revision's 20 recorded check runs are never requested.
func TestLargeScenarioIsCompleteAndNearTheRequestLowerBound(t *testing.T) {
	s := ghscenario.Large()
	c := build(t, s)
	a, st, rp := acquireReplay(t, s, c)
	threadComments := 0
	for _, th := range s.Threads {
		threadComments += len(th.Comments)
	}
	if len(a.Comments) != 1000+threadComments || len(a.Reviews) != 120 || len(a.Threads) != 300 || len(a.Checks) != 20 {
		t.Fatalf("comments %d (want %d) reviews %d threads %d checks %d", len(a.Comments), 1000+threadComments, len(a.Reviews), len(a.Threads), len(a.Checks))
	}
	if len(a.Threads[0].CommentIDs) != 150 {
		t.Errorf("thread 0 has %d comments, want 150 (second page via ThreadComments)", len(a.Threads[0].CommentIDs))
	}
	for _, ck := range a.Checks {
		if ck.HeadSHA != s.HeadSHA {
			t.Errorf("check %s for %s", ck.ID, ck.HeadSHA)
		}
	}
	un := rp.Unused()
	if len(un) != 1 || !strings.Contains(un[0], s.OtherSHA) {
		t.Errorf("unused = %v, want only the other revision's check-run listing", un)
	}
	if a.Outcomes.Comments != nil || a.Outcomes.Reviews != nil || a.Outcomes.Checks != nil {
		t.Errorf("gaps = %+v", a.Outcomes)
	}
	// The lower bound computed from the scenario itself, independently of the adapter's own
	// accounting: pages strictly needed per list plus one permission lookup per distinct human.
	pages := func(n int) int { return max(1, (n+99)/100) }
	runs := map[int64]bool{}
	logs := 0
	for _, ck := range s.Checks {
		runs[ck.RunID] = true
		if ck.Conclusion == "failure" {
			logs++
		}
	}
	humans := map[string]bool{}
	for _, c := range s.Comments {
		if !c.User.Bot {
			humans[c.User.Login] = true
		}
	}
	for _, r := range s.Reviews {
		humans[r.User.Login] = true
	}
	independent := 1 + pages(len(s.Comments)) + pages(len(s.Reviews)) + 1 + pages(len(s.Threads)) + (pages(150) - 1) +
		pages(len(s.Checks)) + 1 + len(runs) + 2*logs + len(humans)
	if ratio := float64(st.Requests) / float64(independent); ratio > 1.2 {
		t.Errorf("requests %d / independent lower bound %d = %.3f > 1.2", st.Requests, independent, ratio)
	}
	if st.LowerBound != independent {
		t.Errorf("adapter's lower bound %d != independent %d", st.LowerBound, independent)
	}
	if st.Ratio > 1.2 {
		t.Errorf("request ratio %.3f > 1.2 (requests %d, lower bound %d: %v)", st.Ratio, st.Requests, st.LowerBound, st.LowerBoundParts)
	}
	t.Logf("large: requests %d, lower bound %d, ratio %.3f, parts %v", st.Requests, st.LowerBound, st.Ratio, st.LowerBoundParts)
}

// BenchmarkLargeReplay measures a replayed acquisition of the large scenario (wall time per
// op) and reports its request count and request ratio.
func BenchmarkLargeReplay(b *testing.B) {
	s := ghscenario.Large()
	c := build(b, s)
	var requests, bound int
	for b.Loop() {
		_, st, _ := acquireReplay(b, s, c)
		requests, bound = st.Requests, st.LowerBound
	}
	b.ReportMetric(float64(requests), "requests/op")
	b.ReportMetric(float64(bound), "lower-bound/op")
	b.ReportMetric(float64(requests)/float64(bound), "ratio")
}
