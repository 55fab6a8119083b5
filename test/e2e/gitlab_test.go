package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/internal/forge/gitlab"
	"github.com/forgectx/forgectx/internal/run"
	"github.com/forgectx/forgectx/internal/run/harness"
	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/snapshot/canon"
	"github.com/forgectx/forgectx/internal/status"
	"github.com/forgectx/forgectx/test/httpfake"
)

const gitlabHarness = `version: 1
agent:
  name: triage
  category: observation
  command: ["bash", "{{DIR}}/agent.sh"]
  env: [PATH, HOME, AGENT_OUT]
profiles:
  change_proposal:
    included_sources: [agent_runs, check_logs, checks, comments, entity, reviews]
    record_selection: newest
    check_log_selection: failed
    bounds: {max_records_per_source: 100, max_source_bytes: 4096, max_record_bytes: 8192, max_log_bytes: 4096, max_metadata_string_bytes: 256, max_labels: 20}
`

// `forgectx run --forge gitlab` in a merge-request pipeline: defaults from the GitLab CI
// variables, the recorded merge request (test/fixtures/gitlab/cassettes/mr) served by the
// loopback API, the notes commenter (identity from GET /user, which access tokens may call),
// the decision relayed as a dotenv report, and the same lifecycle.
func TestRunGitLabMergeRequestPipelineProceed(t *testing.T) {
	w := newWorld(t, worldOpts{})
	hp := filepath.Join(w.dir, "gitlab.yml")
	must(t, os.WriteFile(hp, []byte(strings.ReplaceAll(gitlabHarness, "{{DIR}}", w.dir)), 0o600))
	h, err := harness.Load(hp)
	must(t, err)
	c, err := cassette.Load("../fixtures/gitlab/cassettes/mr")
	must(t, err)
	w.fake.ExpectCassette(c) // the precomputed assembly
	w.fake.ExpectCassette(c) // the run's acquisition
	api := w.fake.URL + "/api/v4"
	const glToken = "glpat-e2eGitLabToken0123456789"
	p, _ := h.ProfileFor("change_proposal")
	// The run reads receipts only by its own identity (GET /user: id 150); the recorded
	// receipts are by the project bot 104, so both are authorization_failed, not history.
	gc, err := gitlab.New(gitlab.Options{APIURL: api, Token: glToken, ReceiptAuthor: func(context.Context) (int64, error) { return 150, nil }})
	must(t, err)
	acq, err := gc.Acquire(context.Background(), forge.Ref{Forge: "gitlab", APIURL: api, Repo: "Acme/Platform/widgets", Number: 7}, p)
	must(t, err)
	if len(acq.AgentRuns) != 0 || !hasGap(acq.Outcomes.AgentRuns, "authorization_failed", 2) {
		t.Fatalf("test premise: agent_runs %d, gaps %+v; want none read and 2 authorization_failed", len(acq.AgentRuns), acq.Outcomes.AgentRuns)
	}
	tree, err := snapshot.Assemble(context.Background(), acq, snapshot.Config{Profile: p, Category: h.Agent.Category, Filter: filter.New(nil)})
	must(t, err)

	w.env = map[string]string{
		"PATH": os.Getenv("PATH"), "HOME": w.dir, "GITLAB_CI": "true", "CI_API_V4_URL": api, "CI_SERVER_URL": w.fake.URL,
		"CI_PROJECT_PATH": "Acme/Platform/widgets", "CI_MERGE_REQUEST_IID": "7", "CI_JOB_ID": "777",
		"CI_JOB_URL": "https://gitlab.example.com:8443/Acme/Platform/widgets/-/jobs/777", "CI_COMMIT_SHA": "8e0b45049b6253b8984cde9241830d2851168142",
		"GITLAB_TOKEN": glToken, "RUNNER_TEMP": w.env["RUNNER_TEMP"], "AGENT_OUT": w.out,
		"CI_PROJECT_DIR": filepath.Join(w.dir, "job"),
	}
	must(t, os.Mkdir(w.env["CI_PROJECT_DIR"], 0o755))
	link := w.env["CI_JOB_URL"]
	pipe := filter.New([]string{glToken})
	startBody, _ := status.Render(pipe, status.Status{Agent: agentName, State: status.Started, RunURL: link})
	tctx := treeContext(t, tree)
	failedCheckPremise(t, tree, tctx)
	finalBody, _ := status.Render(pipe, status.Status{Agent: agentName, State: status.Success, RunURL: link, Context: tctx})
	rcBody, err := status.RenderReceipt(status.Receipt{ID: "glci-777-1", Agent: agentName, Status: "success", InputRevision: tree.IndexSHA256,
		InputHeadSHA: "8e0b45049b6253b8984cde9241830d2851168142", ResultRecordKeys: []string{}, StartedAt: canon.FormatTime(clock), CompletedAt: canon.FormatTime(clock)})
	must(t, err)
	self := map[string]any{"id": 150, "username": "forgectx-bot", "name": "forgectx", "state": "active", "bot": true,
		"avatar_url": "https://gitlab.example.com:8443/uploads/-/system/user/avatar/150/avatar.png", "web_url": "https://gitlab.example.com:8443/forgectx-bot"}
	note := func(id int64, body string) httpfake.Reply {
		return httpfake.JSON(201, map[string]any{"id": id, "type": nil, "body": body, "attachment": nil, "author": self,
			"created_at": "2026-09-08T12:00:00.000Z", "updated_at": "2026-09-08T12:00:00.000Z", "system": false,
			"noteable_id": 1007, "noteable_type": "MergeRequest", "project_id": 42, "resolvable": false, "confidential": false,
			"internal": false, "noteable_iid": 7, "commands_changes": map[string]any{}})
	}
	notes := "/api/v4/projects/Acme%2FPlatform%2Fwidgets/merge_requests/7/notes"
	w.fake.Expect("GET", "/api/v4/user", httpfake.JSON(200, self))
	w.fake.Expect("GET", notes+"?order_by=created_at&per_page=100&sort=asc", httpfake.JSON(200, []any{}))
	w.fake.ExpectBody("POST", notes, sdkBody(t, startBody), note(5001, startBody))
	w.fake.ExpectBody("POST", notes, sdkBody(t, rcBody), note(5002, rcBody))
	w.fake.ExpectBody("PUT", notes+"/5001", sdkBody(t, finalBody), note(5001, finalBody))

	o := w.options()
	o.HarnessPath, o.Forge, o.DotenvPath = hp, "gitlab", filepath.Join(w.dir, "decision.env")
	res, err := run.Run(context.Background(), o)
	if err != nil || res.Status != run.StatusSuccess || res.ReceiptID != "glci-777-1" {
		t.Fatalf("run = %+v, %v\n%s", res, err, w.logBuf.String())
	}
	if got := strings.TrimSpace(readFile(t, filepath.Join(w.out, "index.sha"))); got != tree.IndexSHA256 {
		t.Errorf("agent index sha %s, want %s", got, tree.IndexSHA256)
	}
	var hist struct {
		Runs []any `json:"runs"`
	}
	must(t, json.Unmarshal([]byte(readFile(t, filepath.Join(w.out, "agent-runs.json"))), &hist))
	if len(hist.Runs) != 0 {
		t.Errorf("the agent was shown %d receipts by another identity as history", len(hist.Runs))
	}
	if res.ContextDir == "" {
		t.Error("Result.ContextDir is empty after the agent ran")
	}
	if got := readFile(t, o.DotenvPath); got != "skipped=false\nFORGECTX_STATUS=success\nFORGECTX_CONTEXT_DIR="+res.ContextDir+"\n" {
		t.Errorf("dotenv report = %q", got)
	}
	// GitLab has no step summary: the same table goes to the job log and to the report file
	// the component keeps under artifacts: (docs/run.md, "Job summary").
	report := readFile(t, filepath.Join(w.env["CI_PROJECT_DIR"], run.SummaryReportFile))
	if !strings.HasPrefix(report, "### ✅ forgectx run: agent `"+agentName+"` on #7 — success") || !strings.Contains(report, "| decision | proceed") {
		t.Errorf("summary report file:\n%s", report)
	}
	assertSummaryContext(t, report, tctx)
	if !strings.Contains(w.jobLog.String(), report) {
		t.Errorf("the job log lacks the summary table:\n%s", w.jobLog.String())
	}
	for _, ph := range []string{"scavenge", "status", "snapshot", "pre-script", "relay", "verify", "agent", "post-script"} {
		if !strings.Contains(w.logBuf.String(), `"phase":"`+ph+`","duration_ms":`) {
			t.Errorf("no phase-ended progress line with a duration for %s", ph)
		}
	}
	w.assertNoTrees()
}
