package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/internal/lifecycle"
	"github.com/forgectx/forgectx/internal/run"
	"github.com/forgectx/forgectx/internal/snapshot/canon"
	"github.com/forgectx/forgectx/internal/snapshot/stage"
	"github.com/forgectx/forgectx/internal/status"
	"github.com/forgectx/forgectx/test/ghscenario"
)

var update = flag.Bool("update", false, "regenerate examples/replay/github-issue")

// exampleCassette is the committed example of `forgectx run --replay` (docs/getting-started.md, docs/run.md).
const exampleCassette = "../../examples/replay/github-issue"

// runCassette is a whole run's forge reads for the scenario, as a recording of the run against
// the loopback fake records them: the status comment lookup (one listing of every comment
// page), then the acquisition (entity, comment pages, permissions). The run's writes are not
// in it: a replay sends them to the offline sink.
func runCassette(t *testing.T, sc *ghscenario.Scenario) *cassette.Cassette {
	t.Helper()
	acq, err := ghscenario.Build(sc)
	must(t, err)
	c := &cassette.Cassette{Meta: acq.Meta}
	commentsPath := "/repos/" + sc.Owner + "/" + sc.Repo + "/issues/"
	for _, in := range acq.Interactions {
		if in.Request.Method == "GET" && strings.Contains(in.Request.URL, commentsPath) && strings.Contains(in.Request.URL, "/comments") {
			c.Interactions = append(c.Interactions, in)
		}
	}
	if len(c.Interactions) == 0 {
		t.Fatal("scenario has no comment pages")
	}
	c.Interactions = append(c.Interactions, acq.Interactions...)
	return c
}

// The committed example cassette is exactly the generated one (go test ./test/e2e -run
// TestReplayExampleCassetteIsCurrent -update rewrites it): recorded from the loopback fake's
// scenario, credential-free by construction and by the recorder's rules.
func TestReplayExampleCassetteIsCurrent(t *testing.T) {
	c := runCassette(t, ghscenario.Issue())
	if *update {
		must(t, os.RemoveAll(exampleCassette))
		must(t, cassette.Write(exampleCassette, c))
	}
	tmp := filepath.Join(t.TempDir(), "c")
	must(t, cassette.Write(tmp, c))
	for _, rel := range cassetteFiles(t, tmp) {
		want := readFile(t, filepath.Join(tmp, rel))
		got, err := os.ReadFile(filepath.Join(exampleCassette, rel))
		if err != nil || string(got) != want {
			t.Errorf("%s differs from the generated cassette (run with -update): %v", rel, err)
		}
	}
	if a, b := cassetteFiles(t, exampleCassette), cassetteFiles(t, tmp); strings.Join(a, ",") != strings.Join(b, ",") {
		t.Errorf("example cassette files %v, generated %v", a, b)
	}
	all := ""
	for _, rel := range cassetteFiles(t, exampleCassette) {
		all += readFile(t, filepath.Join(exampleCassette, rel))
	}
	for _, bad := range []string{"Authorization", "PRIVATE-TOKEN", "ghp_", "ghs_", token} {
		if strings.Contains(all, bad) {
			t.Errorf("example cassette contains %q", bad)
		}
	}
}

func cassetteFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	must(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	}))
	return out
}

// `forgectx run --replay` runs the whole job offline against the example cassette, outside any
// CI system and with no token: the recorded forge and API URL are the defaults, the snapshot
// is assembled and staged, the reference harness's pre-script and agent run, every tree is
// removed — and the three comment writes (⏳ started, the completion edit, the receipt) are
// the offline sink's JSON lines, with exactly the bodies a live run would post. Every recorded
// response is used and nothing is sent anywhere (the API URL is the public one, unreachable
// here: a request that escaped the cassette would fail the acquisition).
func TestRunReplayExampleCassetteOffline(t *testing.T) {
	dir := t.TempDir()
	treeDir := filepath.Join(dir, "trees")
	must(t, os.Mkdir(treeDir, 0o755))
	if os.Geteuid() == 0 {
		for d := dir; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
			must(t, os.Chmod(d, 0o755))
		}
	}
	env := map[string]string{"PATH": os.Getenv("PATH"), "HOME": dir}
	var posts, jobLog, logBuf syncBuffer
	o := run.Options{
		HarnessPath: "../../examples/harness/triage.yml", Replay: exampleCassette,
		Repo: "octo-org/Hello-World", Number: 7, Kind: "work_item", CommentAuthor: ghscenario.Actions.Login,
		TreeDir: treeDir, StateDir: filepath.Join(dir, "state"),
		Getenv: func(k string) string { return env[k] }, Posts: &posts,
		Common: lifecycle.Common{Environ: func() []string { return []string{"PATH=" + env["PATH"], "HOME=" + dir} },
			Stdout: &jobLog, Stderr: &jobLog, Log: zerolog.New(&logBuf),
			Now: func() time.Time { return clock },
		},
	}
	if os.Geteuid() == 0 {
		o.Immutability, o.AgentUID, o.AgentGID = stage.ModeBindMount, agentUID, agentUID
	}
	res, err := run.Run(context.Background(), o)
	if err != nil || res.Status != run.StatusSuccess || !res.ReceiptPosted || !res.StatusPosted || !res.AgentRan {
		t.Fatalf("replayed run = %+v, %v\nlog:\n%s\njob log:\n%s", res, err, logBuf.String(), jobLog.String())
	}
	if !strings.Contains(jobLog.String(), "triaged") {
		t.Errorf("the reference agent did not run: job log %q", jobLog.String())
	}
	if strings.Contains(logBuf.String(), "unused_responses") {
		t.Errorf("the replay left recorded responses unused:\n%s", logBuf.String())
	}
	got := readPosts(t, posts.String())
	pipe := filter.New(nil)
	started, err := status.Render(pipe, status.Status{Agent: "triage", State: status.Started})
	must(t, err)
	// The example is a work item without checks: the final comment adds the partial-context
	// line of the replayed tree's gaps (Result.Summary lists the gaps its index lists).
	rc := &status.Context{}
	for _, g := range res.Summary.Gaps {
		rc.Gaps = append(rc.Gaps, status.Gap{Scope: g.Scope, Code: g.Code, Count: g.Count})
	}
	if len(rc.Gaps) == 0 {
		t.Fatal("test premise: the replayed tree has gaps")
	}
	done, err := status.Render(pipe, status.Status{Agent: "triage", State: status.Success, Context: rc})
	must(t, err)
	receipt, err := status.RenderReceipt(status.Receipt{ID: res.ReceiptID, Agent: "triage", Status: run.StatusSuccess, InputRevision: res.InputRevision,
		ResultRecordKeys: []string{}, StartedAt: canon.FormatTime(clock), CompletedAt: canon.FormatTime(clock)})
	must(t, err)
	want := []run.Post{{Op: "create", ID: "offline-1", Body: started}, {Op: "update", ID: "offline-1", Body: done}, {Op: "create", ID: "offline-2", Body: receipt}}
	if len(got) != len(want) {
		t.Fatalf("posts = %+v, want %d", got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("post %d = %+v\nwant %+v", i, got[i], want[i])
		}
	}
	if !strings.HasPrefix(res.ReceiptID, "local-") || res.InputRevision == "" || res.InputRevision == canon.SHA256Hex(nil) {
		t.Errorf("receipt id %q, input revision %q: want a local run over the replayed snapshot", res.ReceiptID, res.InputRevision)
	}
	ents, err := os.ReadDir(treeDir)
	must(t, err)
	for _, e := range ents {
		t.Errorf("replayed run left %s", e.Name())
	}
}

// readPosts decodes the offline sink's JSON lines.
func readPosts(t *testing.T, s string) []run.Post {
	t.Helper()
	var out []run.Post
	sc := bufio.NewScanner(bytes.NewReader([]byte(s)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var p run.Post
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		must(t, dec.Decode(&p))
		out = append(out, p)
	}
	return out
}
