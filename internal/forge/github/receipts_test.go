package github_test

import (
	"context"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/forge/github"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/internal/status"
	"github.com/forgectx/forgectx/test/ghscenario"
	"github.com/forgectx/forgectx/test/httpfake"
)

// The comment receipt reader shares the comments listing: with comments and agent_runs both
// selected the conversation comments are listed once (not twice); agent_runs alone lists them
// for receipts alone; comments alone reads no receipts. Each case makes exactly one
// GET …/issues/7/comments (the fake fails on any request it does not expect).
func TestReceiptsShareTheCommentsListing(t *testing.T) {
	rc := status.Receipt{ID: "gha-1-1", Agent: "triage", Status: "success", InputRevision: strings.Repeat("a", 64),
		ResultRecordKeys: []string{}, CompletedAt: "2026-09-08T12:00:00.000000000Z"}
	body, err := status.RenderReceipt(rc)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		sources  []string
		runs     int
		comments bool
	}{
		{"comments and agent_runs", []string{"entity", "comments", "agent_runs"}, 1, true},
		{"agent_runs alone", []string{"entity", "agent_runs"}, 1, false},
		{"comments alone", []string{"entity", "comments"}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ghscenario.Issue()
			at := s.UpdatedAt
			s.Comments = append(s.Comments, ghscenario.Comment{ID: 3001, NodeID: "IC_kwDOLq3Xz86AAAr1", User: ghscenario.Actions, Body: body, CreatedAt: at, UpdatedAt: at})
			c := build(t, s)
			if !tc.comments {
				// Without comment records only the entity author's permission is looked up.
				kept := c.Interactions[:0]
				for _, in := range c.Interactions {
					if !strings.Contains(in.Request.URL, "/collaborators/") || strings.Contains(in.Request.URL, "/collaborators/"+s.Author.Login+"/") {
						kept = append(kept, in)
					}
				}
				c.Interactions = kept
			}
			fake := httpfake.New(t)
			fake.ExpectCassette(c)
			o := fastOptions(fake.URL)
			o.Receipts = github.ReceiptsFromCommentsBy(github.ActionsBotLogin)
			cl, err := github.New(o)
			if err != nil {
				t.Fatal(err)
			}
			p := testProfile(acquisition.KindWorkItem)
			p.IncludedSources = tc.sources
			acq, err := cl.Acquire(context.Background(), refOf(s), p)
			if err != nil {
				t.Fatal(err)
			}
			listings := 0
			for _, r := range fake.Served() {
				if strings.Contains(r, "/issues/7/comments") {
					listings++
				}
			}
			if listings != 1 {
				t.Errorf("comments listings = %d, want 1 (served: %v)", listings, fake.Served())
			}
			if len(acq.AgentRuns) != tc.runs || (len(acq.Comments) > 0) != tc.comments {
				t.Errorf("agent runs %d (want %d), comments %d", len(acq.AgentRuns), tc.runs, len(acq.Comments))
			}
			if len(acq.Outcomes.AgentRuns) != 0 {
				t.Errorf("agent_runs gaps %+v", acq.Outcomes.AgentRuns)
			}
		})
	}
}
