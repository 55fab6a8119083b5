package run

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/lifecycle"
	"github.com/forgectx/forgectx/internal/run/harness"
	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/internal/status"
	"github.com/forgectx/forgectx/pkg/prescript"
)

// The documented input_revision of a run that consumed no index is the SHA-256 of zero bytes.
func TestNoInputRevisionIsTheDigestOfNothing(t *testing.T) {
	if noInput != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Fatalf("noInput = %s", noInput)
	}
	r := &runner{}
	if r.inputRevision() != noInput {
		t.Error("a run without a staged snapshot must report the digest of nothing")
	}
	r.retained = strings.Repeat("a", 64)
	if r.inputRevision() != r.retained {
		t.Error("a staged run must report the retained index digest")
	}
}

func TestExitCodes(t *testing.T) {
	for st, want := range map[string]int{StatusSuccess: 0, StatusSkipped: 0, StatusFailure: 1, StatusCancelled: 1, StatusTimedOut: 1} {
		if got := (&Result{Status: st}).ExitCode(); got != want {
			t.Errorf("%s: exit %d, want %d", st, got, want)
		}
	}
	if !IsConfigError(&ConfigError{Field: "x", Rule: "y"}) || !IsConfigError(&harness.Error{Field: "a", Rule: "b"}) || IsConfigError(&RunError{Status: StatusFailure}) {
		t.Error("IsConfigError misclassifies")
	}
}

// A cancelled parent is a cancellation; the run's own deadline is a time-out.
func TestInterruptedClassification(t *testing.T) {
	parent, cancel := context.WithCancel(context.Background())
	ctx, c2 := context.WithTimeout(parent, time.Hour)
	defer c2()
	if _, ok := interrupted(parent, ctx); ok {
		t.Fatal("a live context is not interrupted")
	}
	cancel()
	if o, _ := interrupted(parent, ctx); o.status != StatusCancelled {
		t.Errorf("cancelled parent: %s", o.status)
	}
	parent2 := context.Background()
	ctx2, c3 := context.WithTimeout(parent2, time.Nanosecond)
	defer c3()
	<-ctx2.Done()
	if o, _ := interrupted(parent2, ctx2); o.status != StatusTimedOut {
		t.Errorf("expired run deadline: %s", o.status)
	}
}

// The agent environment holds only listed variables, minus any carrying the token or a
// registered secret (short values compared whole, so "1" does not knock out "10").
func TestAgentEnvironmentIsScrubbed(t *testing.T) {
	environ := []string{"PATH=/bin", "HOME=/h", "GITHUB_TOKEN=ghs_secret_token_value", "COPY=Bearer ghs_secret_token_value",
		"NUM=10", "SHORT=1", "MODEL_KEY=sk-model"}
	env := pickEnv(environ, []string{"PATH", "COPY", "NUM", "SHORT", "MODEL_KEY", "UNSET"})
	env, dropped := scrub(env, []string{"ghs_secret_token_value", "1"})
	want := []string{"PATH=/bin", "NUM=10", "MODEL_KEY=sk-model"}
	if !reflect.DeepEqual(env, want) || dropped != 2 {
		t.Errorf("env = %v (dropped %d), want %v (dropped 2)", env, dropped, want)
	}
}

// Job-log streams are redacted line by line, also when a secret arrives split across writes.
func TestJobLogStreamsAreRedacted(t *testing.T) {
	const secret = "registered-secret-value-123456"
	var out bytes.Buffer
	w := prescript.NewRedactingLog(&out, filter.New([]string{secret}))
	w.Write([]byte("first line\nleak: registered-secr"))
	w.Write([]byte("et-value-123456 end\nunterminated " + secret))
	w.Flush()
	if strings.Contains(out.String(), secret) || !strings.Contains(out.String(), "first line\n") || !strings.Contains(out.String(), "unterminated ") {
		t.Errorf("job log = %q", out.String())
	}
}

func TestLastLineKeepsTheLastNonEmptyLine(t *testing.T) {
	l := newLastLine(nil, 8)
	l.Write([]byte("one\n\n  two-is-long  \n   \n"))
	if got := l.Last(); got != "two-is" { // 8 bytes kept, then trimmed
		t.Errorf("last = %q", got)
	}
	l.Write([]byte("tail"))
	if got := l.Last(); got != "tail" {
		t.Errorf("last = %q", got)
	}
}

// memCommenter is an in-memory forge.Commenter for the status-comment logic.
type memCommenter struct {
	comments []forge.Comment
	findErr  error
	calls    []string
}

func (m *memCommenter) FindComments(_ context.Context, _ forge.Ref, marker string) ([]forge.Comment, error) {
	m.calls = append(m.calls, "find")
	if m.findErr != nil {
		err := m.findErr
		m.findErr = nil
		return nil, err
	}
	var out []forge.Comment
	for _, c := range m.comments {
		if strings.HasPrefix(c.Body, marker+"\n") {
			out = append(out, c)
		}
	}
	return out, nil
}

func (m *memCommenter) CreateComment(_ context.Context, _ forge.Ref, body string) (forge.Comment, error) {
	m.calls = append(m.calls, "create")
	c := forge.Comment{ID: string(rune('1' + len(m.comments))), Body: body}
	m.comments = append(m.comments, c)
	return c, nil
}

func (m *memCommenter) UpdateComment(_ context.Context, _ forge.Ref, id, body string) error {
	m.calls = append(m.calls, "update "+id)
	for i := range m.comments {
		if m.comments[i].ID == id {
			m.comments[i].Body = body
			return nil
		}
	}
	return errors.New("no such comment")
}

// The sticky comment is looked up once: found → edited, not found → created; every later
// write edits the remembered ID. When the first lookup failed, the final write looks again.
func TestStatusCommentLookupOnceThenEditByID(t *testing.T) {
	mk := func(m *memCommenter) *statusComment {
		return &statusComment{c: m, agent: "triage", runURL: "https://github.com/o/r/actions/runs/1", pipe: filter.New(nil), log: zerolog.Nop()}
	}
	m := &memCommenter{}
	s := mk(m)
	if err := s.start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.finish(context.Background(), StatusSkipped, "labelled"); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m.calls, []string{"find", "create", "update 1"}) {
		t.Errorf("calls = %v", m.calls)
	}
	if p, ok := status.ParseStatus(m.comments[0].Body); !ok || p.State != status.Skipped {
		t.Errorf("final comment = %q", m.comments[0].Body)
	}

	m2 := &memCommenter{comments: []forge.Comment{{ID: "7", Body: status.Marker("triage") + "\nold"}}, findErr: errors.New("HTTP 502")}
	s2 := mk(m2)
	if err := s2.start(context.Background()); err == nil {
		t.Fatal("start must report the failed lookup")
	}
	if err := s2.finish(context.Background(), StatusSuccess, ""); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m2.calls, []string{"find", "find", "update 7"}) {
		t.Errorf("calls = %v", m2.calls)
	}
}

// The job summary shows decision, agent, gaps and findings, and keeps a hostile detail in one
// table cell.
func TestJobSummaryCountsAndCodesOnly(t *testing.T) {
	r := &runner{c: &config{h: &harness.Harness{Agent: harness.Agent{Name: "triage"}}, ref: forge.Ref{Number: 7}}, pipe: filter.New(nil),
		res: &Result{Decision: "proceed", AgentRan: true, AgentDuration: 1500 * time.Millisecond, ReceiptID: "gha-1-1", ReceiptPosted: true,
			InputRevision: noInput, Summary: &snapshot.Summary{EntityKind: "work_item", EntityNumber: 7,
				Sources:  []snapshot.SourceSummary{{Source: "comments", Acquired: 5, Records: 1, WithContent: 1, Omitted: 4}},
				Gaps:     []snapshot.Gap{{Scope: "comments", Code: "authorization_failed", Usability: "unusable", Count: 4}},
				Findings: []filter.Finding{{Code: "unicode.zero_width", Count: 2}}}},
		agentStatus: StatusFailure}
	var b bytes.Buffer
	if err := r.renderSummary(&b, outcome{StatusFailure, "the agent exited with code 3 | `x` <b>"}); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, want := range []string{"### ❌ forgectx run: agent `triage` on #7 — failure", "| decision | proceed |", "| agent | failure in 1.5s |",
		"| comments | 5 | 1 | 1 | 0 | 4 |", "| comments | authorization_failed | unusable | 4 |", "| unicode.zero_width | 2 |",
		"| detail | `the agent exited with code 3 ¦ 'x' ‹b›` |"} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
}

// Reconcile reads the run link only from the rendered start line.
func TestParseRunLink(t *testing.T) {
	body, _ := status.Render(nil, status.Status{Agent: "a", State: status.Started, RunURL: "https://github.com/o/r/actions/runs/99"})
	if link, id := parseRunLink(body); link != "https://github.com/o/r/actions/runs/99" || id != 99 {
		t.Errorf("link %q id %d", link, id)
	}
	for _, b := range []string{"", "https://github.com/o/r/actions/runs/99", "([CI run](https://x/actions/runs/99999999999999999999))"} {
		if _, id := parseRunLink(b); id != 0 {
			t.Errorf("%q: id %d", b, id)
		}
	}
}

// Trees are never placed in the workspace or a named artifacts directory: a configuration
// error before anything is posted.
func TestTreesOutsideWorkspaceAndArtifacts(t *testing.T) {
	dir := t.TempDir()
	h := &harness.Harness{Agent: harness.Agent{Name: "triage", Category: "observation", Command: []string{"true"}},
		Profiles: map[string]acquisition.Profile{acquisition.KindWorkItem: {EntityKind: acquisition.KindWorkItem}}}
	env := map[string]string{"GITHUB_TOKEN": "x", "GITHUB_ACTIONS": "true", "RUNNER_TEMP": filepath.Join(dir, "out", "tmp")}
	getenv := func(k string) string { return env[k] }
	base := Options{Common: lifecycle.Common{Harness: h}, Repo: "o/r", Number: 1, Getenv: getenv}
	if _, err := resolve(&base, time.Now()); err != nil {
		t.Fatalf("a placement outside every forbidden directory was refused: %v", err)
	}
	o := base
	o.ArtifactDirs = []string{filepath.Join(dir, "out")}
	if _, err := resolve(&o, time.Now()); !IsConfigError(err) || !strings.Contains(err.Error(), "--artifacts-dir") {
		t.Errorf("trees inside an artifacts directory: %v", err)
	}
	env["GITHUB_WORKSPACE"] = dir
	if _, err := resolve(&base, time.Now()); !IsConfigError(err) || !strings.Contains(err.Error(), "$GITHUB_WORKSPACE") {
		t.Errorf("trees inside the workspace: %v", err)
	}
}

// The post-script's result file: the pre-script grammar, two keys, strict values.
func TestReadResults(t *testing.T) {
	k1, k2 := strings.Repeat("b", 64), strings.Repeat("a", 64)
	sha := strings.Repeat("c", 40)
	cases := []struct {
		name, body string
		want       runResults
		bad        bool
	}{
		{"empty", "", runResults{}, false},
		{"both", "# results\nresulting_commit_sha=" + sha + "\nresult_record_keys=" + k1 + ", " + k2 + " " + k1 + "\n", runResults{commit: sha, keys: []string{k2, k1}}, false},
		{"uppercase sha", "resulting_commit_sha=" + strings.ToUpper(sha) + "\n", runResults{}, true},
		{"short key", "result_record_keys=abc\n", runResults{}, true},
		{"unknown key", "pr=12\n", runResults{}, true},
		{"skip directive", "skipped=true\n", runResults{}, true},
		{"not key=value", "resulting commit\n", runResults{}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "result")
			if err := os.WriteFile(p, []byte(tc.body), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := readResults(p)
			var re *ResultError
			if tc.bad != errors.As(err, &re) || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("readResults = %+v, %v", got, err)
			}
			if err != nil && (strings.Contains(err.Error(), sha) || strings.Contains(err.Error(), "abc")) {
				t.Error("the error repeats a value")
			}
		})
	}
	if got, err := readResults(filepath.Join(t.TempDir(), "missing")); err != nil || !reflect.DeepEqual(got, runResults{}) {
		t.Errorf("a missing file must report nothing: %+v %v", got, err)
	}
}

// forgectx run applies harness.CheckAgentEnv itself, with the token variable it actually
// reads: a Harness built in code cannot hand the agent the token variable, a forge credential
// name or a registered secret either (exit 2 before anything is posted).
func TestResolveRefusesCredentialsInAgentEnv(t *testing.T) {
	mk := func(env ...string) *harness.Harness {
		return &harness.Harness{Agent: harness.Agent{Name: "triage", Category: "observation", Command: []string{"true"}, Env: env},
			Profiles: map[string]acquisition.Profile{acquisition.KindWorkItem: {EntityKind: acquisition.KindWorkItem}},
			Secrets:  []string{"MODEL_SECRET"}}
	}
	env := map[string]string{"GITHUB_TOKEN": "x", "BOT_PAT": "y", "GITHUB_ACTIONS": "true", "RUNNER_TEMP": t.TempDir()}
	getenv := func(k string) string { return env[k] }
	for _, tc := range []struct {
		name, tokenEnv string
		agentEnv       []string
	}{
		{"token variable", "BOT_PAT", []string{"PATH", "BOT_PAT"}},
		{"GH_TOKEN", "", []string{"GH_TOKEN"}},
		{"INPUT_TOKEN", "", []string{"INPUT_TOKEN"}},
		{"ACTIONS_ID_TOKEN_REQUEST_URL", "", []string{"ACTIONS_ID_TOKEN_REQUEST_URL"}},
		{"registered secret", "", []string{"MODEL_SECRET"}},
	} {
		o := Options{Common: lifecycle.Common{Harness: mk(tc.agentEnv...), TokenEnv: tc.tokenEnv}, Repo: "o/r", Number: 1, Getenv: getenv}
		_, err := resolve(&o, time.Now())
		if !IsConfigError(err) || !strings.Contains(err.Error(), "agent.env[") {
			t.Errorf("%s: err = %v, want a configuration error naming agent.env", tc.name, err)
		}
	}
	o := Options{Common: lifecycle.Common{Harness: mk("PATH", "HOME")}, Repo: "o/r", Number: 1, Getenv: getenv}
	if _, err := resolve(&o, time.Now()); err != nil {
		t.Errorf("ordinary agent.env refused: %v", err)
	}
}

// The agent is denied the values of the token variable, the registered secrets and every
// forge credential variable of the environment, under whatever name a listed variable
// carries a copy.
func TestWithheldValuesCoverEveryForgeCredentialVariable(t *testing.T) {
	environ := []string{"GITHUB_TOKEN=ghs_token_value_0001", "GH_TOKEN=ghp_other_pat_0002", "INPUT_GITHUB-TOKEN=ghs_input_copy_0003",
		"ACTIONS_RUNTIME_TOKEN=runtime_token_0004", "ACTIONS_ID_TOKEN_REQUEST_URL=https://token.example/req_0005",
		"CI_JOB_TOKEN=glcbt-job-token-0006", "FORGEJO_TOKEN=forgejo_token_0007", "MODEL_SECRET=model_secret_0008",
		"PATH=/bin", "INPUT_HARNESS=.github/forgectx/triage.yml",
		"A=ghp_other_pat_0002", "B=x ghs_input_copy_0003 y", "C=runtime_token_0004", "D=https://token.example/req_0005",
		"E=glcbt-job-token-0006", "F=forgejo_token_0007", "G=model_secret_0008", "H=ghs_token_value_0001", "I=keep",
		"DEPLOY_KEY=-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0B\n-----END KEY-----", "J=MIIEvQIBADANBgkqhkiG9w0B"}
	names := withheldNames(environ, "GITHUB_TOKEN", []string{"MODEL_SECRET", "DEPLOY_KEY"})
	withheld := pickValues(environ, names)
	env, dropped := scrub(pickEnv(environ, []string{"PATH", "A", "B", "C", "D", "E", "F", "G", "H", "I", "J"}), withheld)
	if want := []string{"PATH=/bin", "I=keep"}; !reflect.DeepEqual(env, want) || dropped != 9 {
		t.Errorf("agent env = %v (dropped %d), want %v (dropped 9: J carries one line of a multi-line secret)", env, dropped, want)
	}
	for _, v := range withheld {
		if v == ".github/forgectx/triage.yml" {
			t.Error("an ordinary action input is withheld (and would be redacted from the snapshot)")
		}
	}
}

// A repository argument (or $GITHUB_REPOSITORY) cannot steer a request path: "." and ".."
// segments and anything outside GitHub's owner/name alphabet are configuration errors.
func TestRepoCannotSteerRequestPaths(t *testing.T) {
	h := &harness.Harness{Agent: harness.Agent{Name: "triage", Category: "observation", Command: []string{"true"}},
		Profiles: map[string]acquisition.Profile{acquisition.KindWorkItem: {EntityKind: acquisition.KindWorkItem}}}
	env := map[string]string{"GITHUB_TOKEN": "x", "GITHUB_ACTIONS": "true", "RUNNER_TEMP": t.TempDir(), "FORGEJO_TOKEN": "y"}
	getenv := func(k string) string { return env[k] }
	for _, repo := range []string{"../..", "o/..", "./r", "o/r/x", "o/r?x=1", "o/r#x", "o%2F/r", "o /r", "o/", "/r"} {
		for _, fg := range []string{"github", "forgejo"} {
			o := Options{Common: lifecycle.Common{Harness: h, APIURL: "https://forge.example/api/v1"}, Forge: fg, Repo: repo, Number: 1, Getenv: getenv}
			if _, err := resolve(&o, time.Now()); !IsConfigError(err) || !strings.Contains(err.Error(), "--repo") {
				t.Errorf("%s --repo %q: err = %v, want a --repo configuration error", fg, repo, err)
			}
		}
		_, err := Reconcile(context.Background(), ReconcileOptions{Agent: "triage", Repo: repo, Number: 1, Getenv: getenv})
		if !IsConfigError(err) {
			t.Errorf("reconcile --repo %q: err = %v", repo, err)
		}
	}
}

// An explicit --head-sha is a Git object ID in either hex case (recorded lowercase); anything
// else is a configuration error. A CI default that is not one is omitted.
func TestHeadSHARule(t *testing.T) {
	h := &harness.Harness{Agent: harness.Agent{Name: "triage", Category: "observation", Command: []string{"true"}},
		Profiles: map[string]acquisition.Profile{acquisition.KindWorkItem: {EntityKind: acquisition.KindWorkItem}}}
	env := map[string]string{"GITHUB_TOKEN": "x", "GITHUB_ACTIONS": "true", "RUNNER_TEMP": t.TempDir(), "GITHUB_SHA": "not-a-sha"}
	getenv := func(k string) string { return env[k] }
	o := Options{Common: lifecycle.Common{Harness: h}, Repo: "o/r", Number: 1, Getenv: getenv, HeadSHA: strings.Repeat("AB", 20)}
	c, err := resolve(&o, time.Now())
	if err != nil || c.headSHA != strings.Repeat("ab", 20) {
		t.Errorf("upper-case head sha: %v, %q", err, c.headSHA)
	}
	o.HeadSHA = "abc123"
	if _, err := resolve(&o, time.Now()); !IsConfigError(err) || !strings.Contains(err.Error(), "--head-sha") {
		t.Errorf("malformed head sha: %v", err)
	}
	o.HeadSHA = ""
	if c, err := resolve(&o, time.Now()); err != nil || c.headSHA != "" {
		t.Errorf("malformed $GITHUB_SHA: %v, %q (want omitted)", err, c.headSHA)
	}
}

// The post-script's result file is untrusted: whatever it holds, readResults never panics, a
// refusal names a rule and never the file's text, and what it accepts is strict.
func FuzzReadResults(f *testing.F) {
	f.Add("resulting_commit_sha=" + strings.Repeat("a", 40) + "\nresult_record_keys=" + strings.Repeat("b", 64) + "\n")
	f.Add("skipped=true\n")
	f.Add("result_record_keys=x,,y\r\n")
	f.Add("\ufeffa=b")
	dir := f.TempDir()
	p := filepath.Join(dir, "result")
	f.Fuzz(func(t *testing.T, body string) {
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		res, err := readResults(p)
		if err != nil {
			var re *ResultError
			if !errors.As(err, &re) {
				t.Fatalf("error %T is not a *ResultError", err)
			}
			if len(body) >= 12 && strings.Contains(err.Error(), body) {
				t.Fatalf("the refusal echoes the file: %v", err)
			}
			return
		}
		if res.commit != "" && !gitOID.MatchString(res.commit) {
			t.Fatalf("accepted commit %q", res.commit)
		}
		for i, k := range res.keys {
			if !recordKey.MatchString(k) || (i > 0 && res.keys[i-1] >= k) {
				t.Fatalf("accepted keys %v", res.keys)
			}
		}
	})
}

// A result file swapped for a FIFO or a symlink is refused without blocking or following it.
func TestReadResultsRefusesFIFOAndSymlink(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := mkfifo(fifo); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := readResults(fifo); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a FIFO was accepted")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("readResults blocked on a FIFO")
	}
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("resulting_commit_sha="+strings.Repeat("a", 40)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := readResults(link); err == nil {
		t.Error("a symlink was followed")
	}
}

func FuzzParseRunLink(f *testing.F) {
	body, _ := status.Render(nil, status.Status{Agent: "a", State: status.Started, RunURL: "https://github.com/o/r/actions/runs/99"})
	f.Add(body)
	f.Add("([CI run](http://x/actions/runs/1))")
	f.Fuzz(func(t *testing.T, body string) {
		link, id := parseRunLink(body)
		if id < 0 || (id > 0 && !strings.HasSuffix(link, "/actions/runs/"+strings.TrimLeft(link[strings.LastIndex(link, "/")+1:], "0"))) {
			t.Fatalf("link %q id %d", link, id)
		}
		if link != "" && !strings.HasPrefix(link, "http") {
			t.Fatalf("link %q", link)
		}
	})
}
