package realforge

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/test/realforge/giteaserver"
	"github.com/forgectx/forgectx/test/testnotice"
)

const runAgent = `set -eu
cat "$FORGECTX_CONTEXT_DIR/history/agent-runs.json" > "$AGENT_OUT/agent-runs.json"
`

const runHarness = `version: 1
agent:
  name: triage
  category: observation
  command: ["bash", "{{DIR}}/agent.sh"]
  env: [PATH, AGENT_OUT]
  timeout: 60s
profiles:
  work_item:
    included_sources: [agent_runs, comments, entity]
    record_selection: oldest
    check_log_selection: none
    bounds:
      max_records_per_source: 200
      max_source_bytes: 1048576
      max_record_bytes: 65536
      max_log_bytes: 16384
      max_metadata_string_bytes: 256
      max_labels: 20
bots:
  - id: "{{BOT_ID}}"
    login: ci-bot
    bot_role: triage
`

// comment is an issue comment as Gitea lists it.
type comment struct {
	ID   int64  `json:"id"`
	Body string `json:"body"`
	User struct {
		ID int64 `json:"id"`
	} `json:"user"`
}

func listComments(t *testing.T, sc *scenario, number int64) []comment {
	t.Helper()
	var cs []comment
	sc.srv.MustDo(t, sc.srv.Admin.Token, "", "GET", fmt.Sprintf("/repos/%s/issues/%d/comments", sc.repo.FullName(), number), nil, &cs)
	return cs
}

// byBot returns the bot's comments whose first line starts with prefix.
func byBot(cs []comment, bot *giteaserver.User, prefix string) []comment {
	var out []comment
	for _, c := range cs {
		first, _, _ := strings.Cut(c.Body, "\n")
		if c.User.ID == bot.ID && strings.HasPrefix(first, prefix) {
			out = append(out, c)
		}
	}
	return out
}

// testRun drives `forgectx run --forge forgejo` twice on the issue with the bot's token (a
// repository admin, registered in the harness): the sticky status comment is created once and
// edited in place, each run posts a receipt, and the second run's agent reads the first run's
// receipt back as history.
func testRun(t *testing.T, sc *scenario) {
	if os.Geteuid() != 0 {
		// The agent's copy is made read-only by ownership or a bind mount; both need root.
		testnotice.Skip(t, "real-forge run tests (non-root)", "forgectx run needs root here (read-only staging of the agent's copy)")
	}
	dir := t.TempDir()
	for d := dir; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil { // the unprivileged agent must reach its script
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "agent-out")
	trees := filepath.Join(dir, "trees")
	for _, d := range []string{out, trees} {
		if err := os.Mkdir(d, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "agent.sh"), []byte(runAgent), 0o644); err != nil {
		t.Fatal(err)
	}
	h := strings.NewReplacer("{{DIR}}", dir, "{{BOT_ID}}", fmt.Sprint(sc.bot.ID)).Replace(runHarness)
	hp := filepath.Join(dir, "harness.yml")
	if err := os.WriteFile(hp, []byte(h), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(n int) []any {
		t.Helper()
		r := forgectx(t, map[string]string{"FORGECTX_TOKEN": sc.bot.Token, "AGENT_OUT": out},
			"run", "--harness", hp, "--forge", "forgejo", "--repo", sc.repo.FullName(), "--number", fmt.Sprint(sc.issue),
			"--kind", "work_item", "--api-url", sc.srv.APIURL, "--token-env", "FORGECTX_TOKEN",
			"--tree-dir", trees, "--state-dir", filepath.Join(dir, "state"),
			"--immutability", "bind-mount", "--agent-uid", "65534", "--agent-gid", "65534")
		if r.code != 0 {
			t.Fatalf("run %d: exit %d\n%s", n, r.code, tailStr(r.stderr, 3000))
		}
		if strings.Contains(r.stderr, sc.bot.Token) {
			t.Errorf("run %d: the token is in forgectx's log", n)
		}
		var hist struct {
			Runs []any `json:"runs"`
		}
		readJSON(t, filepath.Join(out, "agent-runs.json"), &hist)
		return hist.Runs
	}

	if runs := run(1); len(runs) != 0 {
		t.Fatalf("first run saw %d earlier runs, want 0", len(runs))
	}
	cs := listComments(t, sc, sc.issue)
	status1 := byBot(cs, sc.bot, "<!-- forgectx:status agent=triage -->")
	receipts1 := byBot(cs, sc.bot, "<!-- forgectx:receipt v1 -->")
	if len(status1) != 1 || len(receipts1) != 1 {
		t.Fatalf("after run 1: %d status comments and %d receipts by the bot, want 1 and 1", len(status1), len(receipts1))
	}

	runs := run(2)
	if len(runs) != 1 {
		t.Fatalf("second run saw %d earlier runs, want 1 (the first run's receipt)", len(runs))
	}
	raw, _ := json.Marshal(runs[0])
	if !strings.Contains(string(raw), fmt.Sprintf("%q", fmt.Sprint(receipts1[0].ID))) {
		t.Errorf("the history row %s does not name the receipt comment %d", raw, receipts1[0].ID)
	}
	cs = listComments(t, sc, sc.issue)
	status2 := byBot(cs, sc.bot, "<!-- forgectx:status agent=triage -->")
	receipts2 := byBot(cs, sc.bot, "<!-- forgectx:receipt v1 -->")
	if len(status2) != 1 || status2[0].ID != status1[0].ID {
		t.Errorf("after run 2: status comments %v, want the one comment %d edited in place", ids(status2), status1[0].ID)
	}
	if len(status2) == 1 && !strings.Contains(status2[0].Body, "succeeded") {
		t.Errorf("the status comment does not say the run succeeded")
	}
	if len(receipts2) != 2 {
		t.Errorf("after run 2: %d receipts, want 2", len(receipts2))
	}
}

func ids(cs []comment) []int64 {
	out := make([]int64, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}
