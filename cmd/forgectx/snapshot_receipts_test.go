package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/status"
	"github.com/forgectx/forgectx/test/ghscenario"
	"github.com/forgectx/forgectx/test/httpfake"
)

// Spec: agent_runs is never silently an empty history. `forgectx snapshot --forge github`
// reads receipts from the comments listing it already makes (no extra request: the fake
// fails on any request it does not expect): the registered bot's receipt becomes
// history/agent-runs.json, a human's copy is refused as authorization_failed.
func TestSnapshotGitHubReadsReceiptsFromTheCommentsListing(t *testing.T) {
	body, err := status.RenderReceipt(status.Receipt{ID: "gha-1-1", Agent: "triage", Status: "success", InputRevision: strings.Repeat("a", 64),
		ResultRecordKeys: []string{}, CompletedAt: "2026-09-08T12:00:00.000000000Z"})
	if err != nil {
		t.Fatal(err)
	}
	s := ghscenario.Issue()
	at := s.UpdatedAt
	s.Comments = append(s.Comments,
		ghscenario.Comment{ID: 3001, NodeID: "IC_kwDOLq3Xz86AAAr1", User: ghscenario.Actions, Body: body, CreatedAt: at, UpdatedAt: at},
		ghscenario.Comment{ID: 3002, NodeID: "IC_kwDOLq3Xz86AAAr2", User: ghscenario.Mallory, Body: body, CreatedAt: at, UpdatedAt: at})
	c, err := ghscenario.Build(s)
	if err != nil {
		t.Fatal(err)
	}
	fake := httpfake.New(t)
	fake.ExpectCassette(c)
	out := filepath.Join(t.TempDir(), "context")
	code, _, stderr := runCLI(t, map[string]string{"GITHUB_TOKEN": "ghp_receipttoken1234567890abcdefghijklm"}, "",
		"snapshot", "--forge", "github", "--repo", "octo-org/Hello-World", "--number", "7", "--api-url", fake.URL,
		"--profile", ghProfile(t, "work_item"), "--category", "observation", "--bots", ghBots(t), "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	listings := 0
	for _, r := range fake.Served() {
		if strings.Contains(r, "/issues/7/comments") {
			listings++
		}
	}
	if listings != 1 {
		t.Errorf("comments listed %d times, want once", listings)
	}
	b, err := os.ReadFile(filepath.Join(out, "history", "agent-runs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var runs struct {
		Runs []struct {
			ID string `json:"id"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b, &runs); err != nil || len(runs.Runs) != 1 || runs.Runs[0].ID != "IC_kwDOLq3Xz86AAAr1" {
		t.Errorf("agent-runs.json = %s (%v), want exactly the bot's receipt", b, err)
	}
	idx, err := os.ReadFile(filepath.Join(out, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(idx), `"authorization_failed"`) {
		t.Errorf("the human's receipt is not counted as authorization_failed: %s", idx)
	}
}
