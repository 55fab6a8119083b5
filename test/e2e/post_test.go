package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/forge/github"
	"github.com/forgectx/forgectx/internal/run"
	"github.com/forgectx/forgectx/internal/snapshot/canon"
	"github.com/forgectx/forgectx/internal/status"
	"github.com/forgectx/forgectx/test/ghscenario"
	"github.com/forgectx/forgectx/test/httpfake"
)

// The post-script runs on the host after the agent with only its listed variables plus the
// host tree and the agent's status; its failure fails the run with its last stderr line,
// redacted.
func TestRunPostScriptSeesHostTreeAndFailsTheRun(t *testing.T) {
	post := `env > "{{DIR}}/post-env"
test -f "$FORGECTX_SNAPSHOT_DIR/index.json" && echo present > "{{DIR}}/post-tree"
echo "publishing failed for ` + token + `" >&2
exit 4
`
	w := newWorld(t, worldOpts{post: post})
	want := w.expectedIndex()
	red, _ := filter.New([]string{token}).Redact("publishing failed for " + token)
	w.expectStartCreate()
	w.expectAcquisition()
	w.expectFinish(status.Failure, "the post-script exited with code 4: "+red, run.StatusFailure, want)
	res, err := w.run()
	if err == nil || res.Status != run.StatusFailure || !res.AgentRan {
		t.Fatalf("run = %+v, %v; want a failure after the agent ran", res, err)
	}
	env := readFile(t, filepath.Join(w.dir, "post-env"))
	if !strings.Contains(env, run.EnvAgentStatus+"=success\n") || !strings.Contains(env, run.EnvSnapshotDir+"=") || !strings.Contains(env, run.EnvResultFile+"=") ||
		strings.Contains(env, "GITHUB_TOKEN") || strings.Contains(env, "AGENT_OUT") || strings.Contains(env, "FULLSEND_PRESCRIPT_OUTPUT") {
		t.Errorf("post-script environment:\n%s", env)
	}
	if strings.TrimSpace(readFile(t, filepath.Join(w.dir, "post-tree"))) != "present" {
		t.Error("the post-script did not see the host tree")
	}
	w.assertNoTrees()
	w.assertLogHygiene()
}

// A run that ends before a snapshot exists (the entity is gone) still finishes the status
// comment and posts a failure receipt whose input_revision is the SHA-256 of zero bytes; no
// script or agent starts and nothing is relayed.
func TestRunAcquisitionFailureReceiptConsumedNothing(t *testing.T) {
	w := newWorld(t, worldOpts{pre: "echo must-not-run > \"{{DIR}}/pre-ran\"\n"})
	body, err := github.GraphQLRequestBody("Entity", map[string]any{"owner": "octo-org", "name": "Hello-World", "number": w.sc.Number, "labelsAfter": nil})
	must(t, err)
	w.expectStartCreate()
	w.fake.ExpectBody("POST", "/graphql", body, httpfake.JSON(200, `{"data":{"repository":{"id":"R_kgDOLq3Xzw","nameWithOwner":"octo-org/Hello-World","issueOrPullRequest":null}},"errors":[{"type":"NOT_FOUND","path":["repository","issueOrPullRequest"],"locations":[{"line":3,"column":5}],"message":"Could not resolve to an issue or pull request with the number of 7."}]}`))
	w.expectFinish(status.Failure, "reading the entity from the forge failed", run.StatusFailure,
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
	res, err := w.run()
	if err == nil || res.Status != run.StatusFailure || res.AgentRan || res.Decision != "" || exists(filepath.Join(w.dir, "pre-ran")) {
		t.Fatalf("run = %+v, %v", res, err)
	}
	if out := readFile(t, w.env["GITHUB_OUTPUT"]); out != runOutputs("failure", "") {
		t.Errorf("GITHUB_OUTPUT = %q, want only the run's status", out)
	}
	if !strings.Contains(readFile(t, w.env["GITHUB_STEP_SUMMARY"]), "No snapshot was assembled.") {
		t.Error("job summary does not say that no snapshot was assembled")
	}
}

// The post-script reports what the run produced through FORGECTX_RESULT_FILE; the receipt
// carries it (result_record_keys sorted and unique, resulting_commit_sha).
func TestRunPostScriptResultsReachTheReceipt(t *testing.T) {
	k1, k2 := strings.Repeat("f", 64), strings.Repeat("0", 63)+"1"
	sha := "9fceb02d0ae598e95dc970b74767f19372d61af8"
	post := "printf 'resulting_commit_sha=%s\\nresult_record_keys=%s,%s\\n' " + sha + " " + k1 + " " + k2 + " > \"$FORGECTX_RESULT_FILE\"\n"
	w := newWorld(t, worldOpts{post: post})
	want := w.expectedIndex()
	w.expectStartCreate()
	w.expectAcquisition()
	rb, err := status.RenderReceipt(status.Receipt{ID: receiptID, Agent: agentName, Status: "success", InputRevision: want,
		InputHeadSHA: headSHA, ResultRecordKeys: []string{k2, k1}, ResultingCommitSHA: sha,
		StartedAt: canon.FormatTime(clock), CompletedAt: canon.FormatTime(clock)})
	must(t, err)
	w.fake.ExpectBody("POST", w.commentsPath(), bodyJSON(t, rb), httpfake.JSON(201, w.restComment(receiptID1, receiptNode, ghscenario.Actions, rb, clock)))
	final := renderContext(t, status.Success, "", w.contexts[want])
	w.fake.ExpectBody("PATCH", fmt.Sprintf("/repos/octo-org/Hello-World/issues/comments/%d", statusID), bodyJSON(t, final), httpfake200(w, final))
	if res, err := w.run(); err != nil || res.Status != run.StatusSuccess {
		t.Fatalf("run = %+v, %v", res, err)
	}
	w.assertNoTrees()
}

// Spec "Lifecycle and access": the agent's sandbox copy is removed right after the agent
// exits — it is gone (and no longer mounted) while the post-script runs — and the host tree
// is removed after the post-script: it still exists then.
func TestRunSandboxCopyGoneDuringPostScriptHostTreeKept(t *testing.T) {
	post := `ctx=$(sed -n 's/^FORGECTX_CONTEXT_DIR=//p' "{{DIR}}/agent-out/env")
test -n "$ctx" || exit 9
if [ -e "$ctx" ]; then echo present; else echo gone; fi > "{{DIR}}/sandbox-during-post"
if grep -qF " $ctx " /proc/self/mountinfo 2>/dev/null; then echo mounted; else echo unmounted; fi > "{{DIR}}/mount-during-post"
if [ -f "$FORGECTX_SNAPSHOT_DIR/index.json" ]; then echo present; else echo gone; fi > "{{DIR}}/host-during-post"
`
	w := newWorld(t, worldOpts{post: post})
	want := w.expectedIndex()
	w.expectStartCreate()
	w.expectAcquisition()
	w.expectFinish(status.Success, "", run.StatusSuccess, want)
	res, err := w.run()
	if err != nil || res.Status != run.StatusSuccess || !res.AgentRan {
		t.Fatalf("run = %+v, %v", res, err)
	}
	if got := strings.TrimSpace(readFile(t, filepath.Join(w.out, "index.sha"))); got != want {
		t.Fatalf("test premise: the agent read its copy (index sha %q)", got)
	}
	for file, wantState := range map[string]string{"sandbox-during-post": "gone", "mount-during-post": "unmounted", "host-during-post": "present"} {
		if got := strings.TrimSpace(readFile(t, filepath.Join(w.dir, file))); got != wantState {
			t.Errorf("%s = %q, want %q", file, got, wantState)
		}
	}
	w.assertNoTrees()
}
