package forgejo

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/test/httpfake"
)

// replayScenario acquires a scenario from its on-disk cassette (offline) and fails the test on
// any recorded response left unused.
func replayScenario(t *testing.T, s scenarioDef, logw *bytes.Buffer) (*acquisition.Acquisition, *Client) {
	t.Helper()
	c, err := cassette.Load(filepath.Join(fixtureRoot, s.name))
	if err != nil {
		t.Fatal(err)
	}
	rp, err := cassette.NewReplayer(c)
	if err != nil {
		t.Fatal(err)
	}
	log := zerolog.Nop()
	if logw != nil {
		log = zerolog.New(logw)
	}
	cl, err := New(Options{APIURL: c.Meta.APIURL, Token: "fixture-token-value", Transport: rp, Log: log, RetryWaitMin: time.Millisecond, RetryWaitMax: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := cl.Acquire(ctx, s.ref, s.profile)
	if err != nil {
		t.Fatalf("%s: Acquire: %v", s.name, err)
	}
	if u := rp.Unused(); len(u) > 0 {
		t.Errorf("%s: recorded responses never requested: %q", s.name, u)
	}
	return a, cl
}

func encode(t *testing.T, a *acquisition.Acquisition) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := acquisition.Write(&b, a); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestScenarioGolden: each replayed scenario's acquisition equals its golden file
// (test/fixtures/forgejo/<scenario>/acquisition.golden.json; -update rewrites it), reads back
// through the strict interchange reader, and is byte-identical on a second run (determinism).
func TestScenarioGolden(t *testing.T) {
	for _, s := range scenarios() {
		t.Run(s.name, func(t *testing.T) {
			a1, _ := replayScenario(t, s, nil)
			a2, _ := replayScenario(t, s, nil)
			b1, b2 := encode(t, a1), encode(t, a2)
			if !bytes.Equal(b1, b2) {
				t.Fatal("two replays of the same responses produced different acquisitions")
			}
			if _, err := acquisition.Read(bytes.NewReader(b1)); err != nil {
				t.Fatalf("acquisition does not read back: %v", err)
			}
			golden := filepath.Join(fixtureRoot, s.name, "acquisition.golden.json")
			if *update {
				if err := os.WriteFile(golden, b1, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if !bytes.Equal(b1, want) {
				t.Errorf("acquisition differs from %s (run with -update after checking):\n%s", golden, b1)
			}
		})
	}
}

// TestScenarioAgainstExpectedRequestRegistry runs each scenario against httpfake loaded with
// the cassette: an unexpected request or an expected request never made fails the test.
func TestScenarioAgainstExpectedRequestRegistry(t *testing.T) {
	for _, s := range scenarios() {
		t.Run(s.name, func(t *testing.T) {
			fake := httpfake.New(t)
			fake.ExpectCassette(cassetteOf(t, s))
			cl, err := New(Options{APIURL: fake.URL + "/api/v1", Token: "t", Log: zerolog.Nop()})
			if err != nil {
				t.Fatal(err)
			}
			a, err := cl.Acquire(context.Background(), s.ref, s.profile)
			if err != nil {
				t.Fatal(err)
			}
			if a.Source.RepositoryID != "1042" {
				t.Errorf("repository_id = %q", a.Source.RepositoryID)
			}
		})
	}
}

func strp(s string) *string { return &s }

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func TestSourceUsesNumericIDAndLowercaseFullName(t *testing.T) {
	a, _ := replayScenario(t, issueScenario(), nil)
	want := acquisition.Source{Forge: "forgejo", Host: "forgejo.example", RepositoryID: "1042", Repository: "acme/widgets"}
	if a.Source != want {
		t.Errorf("source = %+v, want %+v", a.Source, want)
	}
	if a.Entity.ID != "5007" || a.Entity.Number != 7 || a.Entity.Kind != "work_item" || a.Entity.State != "open" {
		t.Errorf("entity = %+v", a.Entity)
	}
	if a.Entity.HeadSHA != "" {
		t.Errorf("work item has head_sha %q", a.Entity.HeadSHA)
	}
	if got := strings.Join(a.Entity.Labels, ","); got != "Triage,bug" {
		t.Errorf("labels = %q, want sorted names", got)
	}
}

func TestPseudoUsersHaveNullActorReferences(t *testing.T) {
	a, _ := replayScenario(t, issueScenario(), nil)
	byID := map[string]acquisition.Comment{}
	for _, c := range a.Comments {
		byID[c.ID] = c
	}
	for _, id := range []string{"9002", "9004"} { // Ghost (-1), forgejo-actions (-2)
		c, ok := byID[id]
		if !ok {
			t.Fatalf("comment %s missing", id)
		}
		if c.Author.ID != nil || c.Author.Login != nil {
			t.Errorf("comment %s author = %s/%s, want null/null", id, deref(c.Author.ID), deref(c.Author.Login))
		}
	}
	if got := deref(byID["9001"].Author.ID); got != "102" {
		t.Errorf("comment 9001 author id = %s", got)
	}
}

// TestActorsRoleVocabulary: owner→admin, admin→admin, write→write, read→read; a collaborator
// 404 is role null, unverified, with no actors gap; every actor is kind human (the registered
// bot account included: Forgejo has no positive bot flag).
func TestActorsRoleVocabulary(t *testing.T) {
	a, _ := replayScenario(t, pullScenario(), nil)
	want := map[string]struct {
		login, role string
		verified    bool
	}{
		"101": {"alice", "admin", true}, // owner
		"102": {"bob", "write", true},
		"103": {"carol", "read", true},
		"104": {"dave", "", false}, // 404
		"105": {"erin", "admin", true},
	}
	if len(a.Actors) != len(want) {
		t.Fatalf("actors = %d, want %d", len(a.Actors), len(want))
	}
	for i, ac := range a.Actors {
		if i > 0 && a.Actors[i-1].ID >= ac.ID {
			t.Errorf("actors not sorted by id")
		}
		w, ok := want[ac.ID]
		if !ok {
			t.Errorf("unexpected actor %s", ac.ID)
			continue
		}
		if deref(ac.Login) != w.login || ac.Kind != "human" || ac.RoleVerified != w.verified {
			t.Errorf("actor %s = %+v", ac.ID, ac)
		}
		if w.verified && deref(ac.Role) != w.role {
			t.Errorf("actor %s role = %s, want %s", ac.ID, deref(ac.Role), w.role)
		}
		if !w.verified && ac.Role != nil {
			t.Errorf("actor %s role = %s, want null", ac.ID, deref(ac.Role))
		}
	}
	if len(a.Outcomes.Actors) != 0 {
		t.Errorf("actors gaps = %+v, want none (a 404 is an unverified role, not a gap)", a.Outcomes.Actors)
	}
	b, _ := replayScenario(t, issueScenario(), nil)
	for _, ac := range b.Actors {
		if ac.Kind != "human" {
			t.Errorf("actor %s kind %s: Forgejo offers no positive bot flag", ac.ID, ac.Kind)
		}
	}
}

// TestReviewStateTableOnScenario: the fixture's review rows map per the spec's Forgejo table.
func TestReviewStateTableOnScenario(t *testing.T) {
	a, _ := replayScenario(t, pullScenario(), nil)
	got := map[string]acquisition.Review{}
	var order []string
	for _, r := range a.Reviews {
		got[r.ID] = r
		order = append(order, r.ID)
	}
	want := map[string]string{"301": "approved", "302": "changes_requested", "303": "dismissed", "304": "dismissed", "307": "commented"}
	if len(got) != len(want) {
		t.Fatalf("reviews %v, want %v (PENDING 305 and REQUEST_REVIEW 306 omitted)", order, want)
	}
	for id, st := range want {
		if got[id].State != st {
			t.Errorf("review %s state = %q, want %q", id, got[id].State, st)
		}
	}
	if got["307"].SubmittedAt != "2026-09-09T12:00:00Z" {
		t.Errorf("review 307 without submitted_at: submitted = %q, want its created_at", got["307"].SubmittedAt)
	}
	if got["301"].SubmittedAt != "2026-09-09T10:00:00Z" || got["301"].ReviewedSHA != headSHA {
		t.Errorf("review 301 = %+v", got["301"])
	}
	for _, id := range []string{"303", "304"} {
		r := got[id]
		if r.DismissedBy == nil || r.DismissedBy.ID != nil || r.DismissedAt != nil {
			t.Errorf("review %s: dismissal should be exposed with unknown actor and time: %+v", id, r)
		}
	}
	if got["301"].DismissedBy != nil {
		t.Errorf("approved review carries a dismissal")
	}
	if strings.Join(order, ",") != "303,304,301,302,307" {
		t.Errorf("review order = %v, want by submitted_at then id", order)
	}
	if len(a.Outcomes.Reviews) != 0 {
		t.Errorf("reviews gaps = %+v", a.Outcomes.Reviews)
	}
}

// TestThreadRuleOnScenario: threads group by path+side+line+commit, are identified by their
// first comment, order comments by created_at then id, resolve from the first comment's
// resolver and are never outdated.
func TestThreadRuleOnScenario(t *testing.T) {
	a, _ := replayScenario(t, pullScenario(), nil)
	if len(a.Threads) != 2 {
		t.Fatalf("threads = %+v", a.Threads)
	}
	t1, t2 := a.Threads[0], a.Threads[1]
	if t1.ID != "9201" || strings.Join(t1.CommentIDs, ",") != "9201,9203" || t1.Path != "src/export.go" ||
		t1.Side != "right" || t1.Line != 42 || t1.ReviewID != "301" || t1.ReviewedSHA != headSHA {
		t.Errorf("thread 1 = %+v", t1)
	}
	if !t1.Resolved || t1.ResolvedBy == nil || deref(t1.ResolvedBy.ID) != "105" {
		t.Errorf("thread 1 should be resolved by erin (105): %+v", t1)
	}
	if len(t1.Replies) != 1 || t1.Replies[0] != (acquisition.Reply{ID: "9203", ParentID: "9201"}) {
		t.Errorf("thread 1 replies = %+v", t1.Replies)
	}
	if t2.ID != "9202" || strings.Join(t2.CommentIDs, ",") != "9202,9204" || t2.Side != "left" || t2.Line != 5 || t2.Resolved || t2.ResolvedBy != nil {
		t.Errorf("thread 2 = %+v", t2)
	}
	for _, th := range a.Threads {
		if th.Outdated {
			t.Errorf("thread %s outdated: Forgejo exposes no outdated observation", th.ID)
		}
	}
	ids := map[string]bool{}
	for _, c := range a.Comments {
		ids[c.ID] = true
	}
	for _, id := range []string{"9101", "9201", "9202", "9203", "9204"} {
		if !ids[id] {
			t.Errorf("comment record %s missing", id)
		}
	}
}

// TestChecksOnScenario: only tasks for the captured head are checks; every mapped status row
// appears; failed checks' selected logs are unsupported.
func TestChecksOnScenario(t *testing.T) {
	a, _ := replayScenario(t, pullScenario(), nil)
	type row struct {
		status, conclusion string
		never              string // "", "true", "false"
		started, completed string
		log                string
	}
	want := map[string]row{
		"501": {status: "queued"},
		"502": {status: "queued"},
		"503": {status: "queued"},
		"504": {status: "in_progress", started: "2026-09-10T08:00:10Z"},
		"505": {"completed", "success", "false", "2026-09-10T08:00:11Z", "2026-09-10T08:09:00Z", ""},
		"506": {"completed", "failure", "false", "2026-09-10T08:00:12Z", "2026-09-10T08:07:00Z", "unsupported"},
		"507": {"completed", "failure", "false", "2026-09-10T08:00:13Z", "2026-09-10T08:03:00Z", "unsupported"},
		"508": {"completed", "neutral", "false", "2026-09-10T08:00:14Z", "2026-09-10T08:04:00+02:00", ""},
		"509": {"completed", "cancelled", "true", "", "2026-09-10T08:01:00Z", ""},
		"510": {"completed", "cancelled", "false", "2026-09-10T08:00:15Z", "2026-09-10T08:06:00Z", ""},
		"511": {"completed", "skipped", "true", "", "2026-09-10T08:00:10Z", ""},
		"512": {"completed", "skipped", "false", "2026-09-10T08:00:16Z", "2026-09-10T08:02:00Z", ""},
	}
	if len(a.Checks) != len(want) {
		t.Fatalf("checks = %d, want %d (task 490 is for another revision)", len(a.Checks), len(want))
	}
	for _, c := range a.Checks {
		w, ok := want[c.ID]
		if !ok {
			t.Errorf("unexpected check %s", c.ID)
			continue
		}
		never := ""
		if c.NeverStarted != nil {
			never = "false"
			if *c.NeverStarted {
				never = "true"
			}
		}
		log := ""
		if c.Log != nil {
			log = c.Log.Outcome
		}
		got := row{c.Status, c.Conclusion, never, c.StartedAt, c.CompletedAt, log}
		if got != w {
			t.Errorf("check %s = %+v, want %+v", c.ID, got, w)
		}
		if c.HeadSHA != headSHA {
			t.Errorf("check %s head_sha = %s", c.ID, c.HeadSHA)
		}
	}
	if len(a.Outcomes.Checks) != 0 || len(a.Outcomes.CheckLogs) != 0 {
		t.Errorf("check gaps = %+v %+v", a.Outcomes.Checks, a.Outcomes.CheckLogs)
	}
}

// TestLogsNeverContainTokenOrBodies: the structured log carries counts and IDs only.
func TestLogsNeverContainTokenOrBodies(t *testing.T) {
	var logs bytes.Buffer
	replayScenario(t, pullScenario(), &logs)
	if logs.Len() == 0 {
		t.Fatal("no log output")
	}
	for _, secret := range []string{"fixture-token-value", "LGTM", "Nit: name this", "Fixes #7", "Thanks, looking now"} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("log contains %q", secret)
		}
	}
}

func TestStatsCountRequestsByEndpoint(t *testing.T) {
	_, cl := replayScenario(t, pullScenario(), nil)
	st := cl.Stats()
	if st.Requests != len(pullScenario().exchanges) || st.Retries != 0 || st.Failures != 1 {
		t.Errorf("stats = %+v, want %d requests, 0 retries, 1 failure (the 404)", st, len(pullScenario().exchanges))
	}
	if st.RequestsByEndpoint["GET /repos/{owner}/{repo}/pulls/{n}/reviews/{n}/comments"] != 5 {
		t.Errorf("by endpoint = %v", st.RequestsByEndpoint)
	}
	if st.LowerBound != st.Requests || st.Ratio != 1 {
		t.Errorf("lower bound %d, ratio %v: a clean replay makes exactly the needed requests", st.LowerBound, st.Ratio)
	}
	if st.Pages["reviews"] != 1 || st.Pages["tasks"] != 1 || st.Records["threads"] != 2 || st.Records["check_logs_unsupported"] != 2 {
		t.Errorf("pages %v records %v", st.Pages, st.Records)
	}
	for k := range st.RequestsByEndpoint {
		if strings.Contains(k, "Acme") || strings.Contains(k, "alice") {
			t.Errorf("endpoint class %q names an owner or user", k)
		}
	}
	b, err := json.Marshal(st)
	if err != nil || !strings.Contains(string(b), `"forge":"forgejo"`) {
		t.Errorf("stats JSON = %s, %v", b, err)
	}
}

func TestRefValidation(t *testing.T) {
	cl, err := New(Options{APIURL: fixtureAPI})
	if err != nil {
		t.Fatal(err)
	}
	p := acquisition.Profile{EntityKind: "work_item"}
	for name, ref := range map[string]forge.Ref{
		"repo without owner":  {Repo: "widgets", Number: 1},
		"repo with subgroups": {Repo: "a/b/c", Number: 1},
		"zero number":         {Repo: "a/b", Number: 0},
		"other forge":         {Forge: "github", Repo: "a/b", Number: 1},
		"other API URL":       {APIURL: "https://elsewhere.example/api/v1", Repo: "a/b", Number: 1},
	} {
		if _, err := cl.Acquire(context.Background(), ref, p); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := cl.Acquire(context.Background(), forge.Ref{Repo: "a/b", Number: 1}, acquisition.Profile{EntityKind: "conversation"}); err == nil {
		t.Error("entity_kind conversation accepted")
	}
}

func TestNewValidatesAPIURL(t *testing.T) {
	for _, bad := range []string{"", "forgejo.example/api/v1", "ftp://forgejo.example/api/v1", "https://forgejo.example", "https://forgejo.example/api/v1?x=1", "https://forgejo.example:443/api/v1x"} {
		if _, err := New(Options{APIURL: bad}); err == nil {
			t.Errorf("APIURL %q accepted", bad)
		}
	}
	for url, host := range map[string]string{
		"https://forgejo.example/api/v1":          "forgejo.example",
		"https://Forgejo.Example:443/api/v1/":     "forgejo.example",
		"https://git.example:3000/forgejo/api/v1": "git.example:3000",
	} {
		cl, err := New(Options{APIURL: url})
		if err != nil {
			t.Errorf("%s: %v", url, err)
			continue
		}
		if cl.Host() != host {
			t.Errorf("%s: host %q, want %q", url, cl.Host(), host)
		}
	}
}

// strp is used by table tests in other files.
var _ = strp

func TestRepoNameValidation(t *testing.T) {
	for repo, ok := range map[string]bool{
		"Acme/Widgets": true, "a-b/c_d.e": true, "../x": false, "a/..": false, "./b": false,
		"a/b c": false, "a/b%2F": false, "a/": false, "/b": false, "a/b/c": false, "ä/b": false,
	} {
		_, _, err := splitRepo(repo)
		if (err == nil) != ok {
			t.Errorf("splitRepo(%q) err = %v, want ok=%v", repo, err, ok)
		}
	}
}
