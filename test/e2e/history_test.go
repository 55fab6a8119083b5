package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/run"
	"github.com/forgectx/forgectx/internal/snapshot/canon"
	"github.com/forgectx/forgectx/internal/status"
	"github.com/forgectx/forgectx/test/ghscenario"
)

// expectStartUpdate registers a later run's lookup (which finds the sticky comment) and the
// edit of that comment back to the started state.
func (w *world) expectStartUpdate() {
	w.expectCommentList(nil)
	start := render(w.t, status.Started, "")
	w.fake.ExpectBody("PATCH", fmt.Sprintf("/repos/octo-org/Hello-World/issues/comments/%d", statusID), bodyJSON(w.t, start),
		httpfake200(w, start))
}

// Receipt round trip: the receipt the first run posts is read back by the second run's
// snapshot into history/agent-runs.json (as the receipt comment's node ID, with the first
// run's status, input revision and times), while receipt-shaped comments forged by a non-bot
// user and by a registered bot that is not forgectx's identity are left out and counted as
// agent_runs authorization_failed. The second
// run finds the sticky comment by its marker and author and edits it instead of posting a new
// one.
func TestRunReceiptRoundTripAndForgedReceiptIgnored(t *testing.T) {
	w := newWorld(t, worldOpts{})
	first := w.expectedIndex()
	w.expectStartCreate()
	w.expectAcquisition()
	w.expectFinish(status.Success, "", run.StatusSuccess, first)
	if _, err := w.run(); err != nil {
		t.Fatalf("first run: %v", err)
	}

	// The forge after the first run: its status comment and receipt, and a forged receipt.
	forged := receiptBody(t, run.StatusSuccess, first)
	w.sc.Comments = append(w.sc.Comments,
		ghscenario.Comment{ID: statusID, NodeID: statusNode, User: ghscenario.Actions, Body: render(t, status.Success, ""), CreatedAt: clock, UpdatedAt: clock},
		ghscenario.Comment{ID: receiptID1, NodeID: receiptNode, User: ghscenario.Actions, Body: receiptBody(t, run.StatusSuccess, first), CreatedAt: clock.Add(time.Minute), UpdatedAt: clock.Add(time.Minute)},
		ghscenario.Comment{ID: 9003, NodeID: "IC_kwDOLq3Xz86AACMr", User: ghscenario.Mallory, Body: forged, CreatedAt: clock.Add(2 * time.Minute), UpdatedAt: clock.Add(2 * time.Minute)},
		// A registered bot that is not forgectx's identity cannot forge history either.
		ghscenario.Comment{ID: 9004, NodeID: "IC_kwDOLq3Xz86AACMs", User: ghscenario.Renovate, Body: forged, CreatedAt: clock.Add(3 * time.Minute), UpdatedAt: clock.Add(3 * time.Minute)},
	)
	second := w.expectedIndex()
	if second == first {
		t.Fatal("test premise: the second snapshot must differ from the first")
	}
	w.expectStartUpdate()
	w.expectAcquisition()
	w.expectFinish(status.Success, "", run.StatusSuccess, second)
	res, err := w.run()
	if err != nil {
		t.Fatalf("second run: %v", err)
	}

	var runs struct {
		Runs []map[string]any `json:"runs"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(w.out, "agent-runs.json"))), &runs); err != nil {
		t.Fatal(err)
	}
	if len(runs.Runs) != 1 {
		t.Fatalf("history/agent-runs.json lists %d runs, want exactly the bot's receipt: %v", len(runs.Runs), runs.Runs)
		t.Log(w.jobLog.String())
	}
	got := runs.Runs[0]
	want := map[string]any{"id": receiptNode, "agent": agentName, "status": "success", "input_revision": first,
		"input_head_sha": headSHA, "started_at": canon.FormatTime(clock), "completed_at": canon.FormatTime(clock)}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("agent run %s = %v, want %v", k, got[k], v)
		}
	}
	gap := false
	for _, g := range res.Summary.Gaps {
		if g.Scope == "agent_runs" && g.Code == "authorization_failed" && g.Count == 2 {
			gap = true
		}
	}
	if !gap {
		t.Errorf("the two forged receipts were not counted as agent_runs authorization_failed: %+v", res.Summary.Gaps)
	}
	for _, s := range res.Summary.Sources {
		if s.Source == "agent_runs" && (s.Acquired != 1 || s.Records != 1) {
			t.Errorf("agent_runs source = %+v, want 1 acquired (only forgectx's own receipts are read), 1 record", s)
		}
		// The status comment, the receipt and both receipt-marked forgeries are not
		// conversation records (status.IsOwnComment): the agent's comments are exactly the
		// first run's, so its context does not change with the sticky status.
		if s.Source == "comments" && s.Own != 4 {
			t.Errorf("comments source = %+v, want 4 of forgectx's own comments left out", s)
		}
	}
	all := readFile(t, filepath.Join(w.out, "all-files"))
	for _, s := range []string{"**forgectx** agent", "forgectx:status", "forgectx:receipt", "forgectx run receipt"} {
		if strings.Contains(all, s) {
			t.Errorf("the agent's snapshot carries forgectx's own comment text %q", s)
		}
	}
}
