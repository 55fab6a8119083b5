package github_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/forge/github"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/internal/status"
	"github.com/forgectx/forgectx/test/ghscenario"
	"github.com/forgectx/forgectx/test/httpfake"
)

const cmMarker = "<!-- forgectx:status agent=triage -->"

var cmRef = forge.Ref{Forge: "github", Repo: "octo-org/Hello-World", Number: 7}

func cmUser(login, typ string, id int64) map[string]any {
	return map[string]any{"login": login, "id": id, "node_id": fmt.Sprintf("U_%d", id), "type": typ, "site_admin": false,
		"url": "https://api.github.com/users/" + login, "html_url": "https://github.com/" + login}
}

func cmComment(id int64, user map[string]any, body string) map[string]any {
	return map[string]any{"id": id, "node_id": fmt.Sprintf("IC_kwDOLq3Xz86A%04d", id), "body": body, "user": user,
		"url":        fmt.Sprintf("https://api.github.com/repos/octo-org/Hello-World/issues/comments/%d", id),
		"created_at": "2026-09-08T10:00:00Z", "updated_at": "2026-09-08T10:00:00Z", "author_association": "NONE"}
}

func cmBody(t *testing.T, body string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]string{"body": body}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func newCommenter(t *testing.T, fake *httpfake.Server, login string) (*github.Client, *github.Commenter) {
	t.Helper()
	c, err := github.New(fastOptions(fake.URL))
	if err != nil {
		t.Fatal(err)
	}
	cm, err := github.NewCommenter(c, login)
	if err != nil {
		t.Fatal(err)
	}
	return c, cm
}

// The lookup reads every page and accepts a comment only when its FIRST line is the marker
// and its author is the commenter's identity: the configured login (case-insensitive) with
// GitHub's type Bot for a [bot] login. No GET /user is ever made (GITHUB_TOKEN cannot).
func TestFindCommentsFirstLineMarkerOwnIdentityEveryPage(t *testing.T) {
	fake := httpfake.New(t)
	bot := cmUser("github-actions[bot]", "Bot", 41898282)
	page1 := []any{
		cmComment(1, bot, cmMarker+"\n⏳ started"),                              // ours
		cmComment(2, cmUser("mallory", "User", 7), cmMarker+"\n⏳ started"),     // a human copying the marker
		cmComment(3, cmUser("github-actions[bot]", "User", 8), cmMarker+"\nx"), // [bot] login without type Bot
		cmComment(4, bot, "quoting:\n"+cmMarker),                               // marker not on the first line
		cmComment(5, cmUser("other-app[bot]", "Bot", 9), cmMarker+"\nx"),       // another bot
		cmComment(6, bot, "<!-- forgectx:status agent=triage-2 -->\nx"),        // another agent's marker
	}
	page2 := []any{cmComment(7, cmUser("GitHub-Actions[bot]", "Bot", 41898282), cmMarker+"\r\n✅ done")}
	path := "/repos/octo-org/Hello-World/issues/7/comments"
	r1 := httpfake.JSON(200, page1)
	r1.Header.Set("Link", `<https://api.github.com`+path+`?page=2&per_page=100>; rel="next", <https://api.github.com`+path+`?page=2&per_page=100>; rel="last"`)
	fake.Expect("GET", path+"?per_page=100", r1)
	fake.Expect("GET", path+"?page=2&per_page=100", httpfake.JSON(200, page2))
	_, cm := newCommenter(t, fake, github.ActionsBotLogin)
	got, err := cm.FindComments(context.Background(), cmRef, cmMarker)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range got {
		ids = append(ids, c.ID)
	}
	if !reflect.DeepEqual(ids, []string{"1", "7"}) {
		t.Errorf("found %v, want [1 7]", ids)
	}
}

// A personal access token's identity is a human login: no Bot type is required then.
func TestFindCommentsHumanIdentity(t *testing.T) {
	fake := httpfake.New(t)
	fake.Expect("GET", "/repos/octo-org/Hello-World/issues/7/comments?per_page=100", httpfake.JSON(200, []any{
		cmComment(1, cmUser("release-bot-user", "User", 5), cmMarker+"\nx"),
		cmComment(2, cmUser("alice", "User", 6), cmMarker+"\nx"),
	}))
	_, cm := newCommenter(t, fake, "release-bot-user")
	got, err := cm.FindComments(context.Background(), cmRef, cmMarker)
	if err != nil || len(got) != 1 || got[0].ID != "1" {
		t.Fatalf("found %v, %v; want comment 1", got, err)
	}
}

// Creation is retried only when GitHub refused it with a rate limit (nothing was created);
// never after a 5xx, where the comment may exist and a retry would post it twice.
func TestCreateCommentRetriesOnlyRateLimits(t *testing.T) {
	bot := cmUser("github-actions[bot]", "Bot", 41898282)
	created := httpfake.JSON(201, cmComment(9001, bot, "hello"))
	permission := httpfake.JSON(403, `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest/issues/comments#create-an-issue-comment","status":"403"}`)
	cases := []struct {
		name    string
		replies []httpfake.Reply
		ok      bool
	}{
		{"created", []httpfake.Reply{created}, true},
		{"500 is not retried", []httpfake.Reply{httpfake.ServerError()}, false},
		{"502 is not retried", []httpfake.Reply{httpfake.BadGateway()}, false},
		{"permission 403 is not retried", []httpfake.Reply{permission}, false},
		{"429 then created", []httpfake.Reply{httpfake.TooManyRequests(1), created}, true},
		{"secondary limit then created", []httpfake.Reply{httpfake.SecondaryRateLimit(1), created}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := httpfake.New(t)
			fake.ExpectBody("POST", "/repos/octo-org/Hello-World/issues/7/comments", cmBody(t, "hello"), tc.replies...)
			_, cm := newCommenter(t, fake, github.ActionsBotLogin)
			start := time.Now()
			c, err := cm.CreateComment(context.Background(), cmRef, "hello")
			if tc.ok != (err == nil) || (tc.ok && (c.ID != "9001" || c.AuthorID != "U_41898282")) {
				t.Fatalf("create = %+v, %v", c, err)
			}
			if len(tc.replies) > 1 && time.Since(start) < time.Second {
				t.Error("Retry-After was not honoured")
			}
			if err != nil && strings.Contains(err.Error(), "Resource not accessible") {
				t.Error("the error echoes the response body")
			}
		})
	}
}

func TestUpdateCommentIDRule(t *testing.T) {
	fake := httpfake.New(t)
	fake.ExpectBody("PATCH", "/repos/octo-org/Hello-World/issues/comments/9001", cmBody(t, "x"),
		httpfake.JSON(200, cmComment(9001, cmUser("github-actions[bot]", "Bot", 41898282), "x")))
	_, cm := newCommenter(t, fake, github.ActionsBotLogin)
	for _, bad := range []string{"", "0", "01", "-1", "abc", "1/../2"} {
		if err := cm.UpdateComment(context.Background(), cmRef, bad, "x"); err == nil {
			t.Errorf("id %q accepted", bad)
		}
	}
	if err := cm.UpdateComment(context.Background(), cmRef, "9001", "x"); err != nil {
		t.Fatal(err)
	}
}

func TestWorkflowRunState(t *testing.T) {
	fake := httpfake.New(t)
	fake.Expect("GET", "/repos/octo-org/Hello-World/actions/runs/1", httpfake.JSON(200, map[string]any{"id": 1, "status": "completed", "conclusion": "cancelled"}))
	fake.Expect("GET", "/repos/octo-org/Hello-World/actions/runs/2", httpfake.JSON(200, map[string]any{"id": 2, "status": "in_progress", "conclusion": nil}))
	fake.Expect("GET", "/repos/octo-org/Hello-World/actions/runs/3", httpfake.JSON(404, `{"message":"Not Found"}`))
	c, _ := newCommenter(t, fake, github.ActionsBotLogin)
	want := map[int64]github.RunState{1: {Found: true, Completed: true, Status: "completed"}, 2: {Found: true, Status: "in_progress"}, 3: {}}
	for id, w := range want {
		got, err := c.WorkflowRunState(context.Background(), "octo-org/Hello-World", id)
		if err != nil || got != w {
			t.Errorf("run %d = %+v, %v; want %+v", id, got, err, w)
		}
	}
}

// ReceiptsFromComments reads every receipt comment back as an agent run whose ID is the
// comment's node ID and whose Author is the comment author — registered as an actor with
// GitHub's bot signal, so the assembler can admit the bot's and refuse a human's. A
// malformed receipt is invalid_metadata.
func TestReceiptsFromCommentsReadsEveryReceiptWithItsAuthor(t *testing.T) {
	rc := status.Receipt{ID: "gha-1-1", Agent: "triage", Status: "success", InputRevision: strings.Repeat("a", 64),
		ResultRecordKeys: []string{}, CompletedAt: "2026-09-08T12:00:00.000000000Z"}
	body, err := status.RenderReceipt(rc)
	if err != nil {
		t.Fatal(err)
	}
	s := ghscenario.Issue()
	at := s.UpdatedAt
	s.Comments = append(s.Comments,
		ghscenario.Comment{ID: 3001, NodeID: "IC_kwDOLq3Xz86AAAr1", User: ghscenario.Actions, Body: body, CreatedAt: at, UpdatedAt: at},
		ghscenario.Comment{ID: 3002, NodeID: "IC_kwDOLq3Xz86AAAr2", User: ghscenario.Mallory, Body: body, CreatedAt: at, UpdatedAt: at},
		ghscenario.Comment{ID: 3003, NodeID: "IC_kwDOLq3Xz86AAAr3", User: ghscenario.Actions, Body: status.ReceiptMarker + "\nnot json", CreatedAt: at, UpdatedAt: at},
		ghscenario.Comment{ID: 3004, NodeID: "IC_kwDOLq3Xz86AAAr4", User: ghscenario.Actions, Body: "quoted:\n" + body, CreatedAt: at, UpdatedAt: at},
	)
	c := build(t, s)
	fake := httpfake.New(t)
	fake.ExpectCassette(c)
	// comments and agent_runs are both selected: the receipts come from the comments
	// listing — one listing; the fake fails on a second.
	o := fastOptions(fake.URL)
	o.Receipts = github.ReceiptsFromComments
	cl, err := github.New(o)
	if err != nil {
		t.Fatal(err)
	}
	acq, err := cl.Acquire(context.Background(), refOf(s), testProfile(acquisition.KindWorkItem))
	if err != nil {
		t.Fatal(err)
	}
	if len(acq.AgentRuns) != 2 {
		t.Fatalf("agent runs = %+v, want the bot's and the human's receipt", acq.AgentRuns)
	}
	authors := map[string]string{}
	for _, r := range acq.AgentRuns {
		if r.Agent != "triage" || r.Status != "success" || r.InputRevision != rc.InputRevision || r.CompletedAt != rc.CompletedAt {
			t.Errorf("agent run %s = %+v", r.ID, r)
		}
		authors[r.ID] = *r.Author.ID
	}
	if authors["IC_kwDOLq3Xz86AAAr1"] != ghscenario.Actions.NodeID || authors["IC_kwDOLq3Xz86AAAr2"] != ghscenario.Mallory.NodeID {
		t.Errorf("authors = %v", authors)
	}
	if !reflect.DeepEqual(acq.Outcomes.AgentRuns, []acquisition.Gap{{Code: acquisition.GapInvalidMetadata, Count: 1}}) {
		t.Errorf("agent_runs outcomes = %+v, want one invalid_metadata", acq.Outcomes.AgentRuns)
	}
	kinds := map[string]string{}
	for _, a := range acq.Actors {
		kinds[a.ID] = a.Kind
	}
	if kinds[ghscenario.Actions.NodeID] != acquisition.ActorBot || kinds[ghscenario.Mallory.NodeID] != acquisition.ActorHuman {
		t.Errorf("actor kinds = %v", kinds)
	}
	if _, err := github.ReceiptsFromComments.ReadReceipts(context.Background(), "o", "r", 1); err == nil {
		t.Error("ReceiptsFromComments read outside Acquire")
	}
}

// No comment request can be steered off the entity's comment paths: a reference with a "."
// or ".." segment, an extra segment or a character outside GitHub's alphabet is refused
// before any request (the fake fails on any request at all).
func TestCommenterRefusesSteeringReferences(t *testing.T) {
	fake := httpfake.New(t)
	c, cm := newCommenter(t, fake, github.ActionsBotLogin)
	for _, repo := range []string{"../..", "octo-org/..", "./x", "o/r/issues", "o/r?x=1", "o%2Fr/x", ""} {
		ref := forge.Ref{Forge: "github", Repo: repo, Number: 7}
		if _, err := cm.FindComments(context.Background(), ref, cmMarker); err == nil {
			t.Errorf("FindComments %q accepted", repo)
		}
		if _, err := cm.CreateComment(context.Background(), ref, "x"); err == nil {
			t.Errorf("CreateComment %q accepted", repo)
		}
		if err := cm.UpdateComment(context.Background(), ref, "1", "x"); err == nil {
			t.Errorf("UpdateComment %q accepted", repo)
		}
		if _, err := c.WorkflowRunState(context.Background(), repo, 1); err == nil {
			t.Errorf("WorkflowRunState %q accepted", repo)
		}
	}
}

// ReceiptsFromCommentsBy reads only the receipts of forgectx's own identity: a receipt-marked
// comment by a human, by another (even registered) bot or by a user account that merely
// carries the bot's login is counted as authorization_failed and is not an agent run.
func TestReceiptsFromCommentsByReadsOnlyTheOwnIdentity(t *testing.T) {
	rc := status.Receipt{ID: "gha-1-1", Agent: "triage", Status: "success", InputRevision: strings.Repeat("a", 64),
		ResultRecordKeys: []string{}, CompletedAt: "2026-09-08T12:00:00.000000000Z"}
	body, err := status.RenderReceipt(rc)
	if err != nil {
		t.Fatal(err)
	}
	s := ghscenario.Issue()
	at := s.UpdatedAt
	impostor := &ghscenario.User{Login: "github-actions[bot]", ID: 99, NodeID: "U_kgDOImpost", Bot: false}
	s.Comments = append(s.Comments,
		ghscenario.Comment{ID: 3001, NodeID: "IC_kwDOLq3Xz86AAAr1", User: ghscenario.Actions, Body: body, CreatedAt: at, UpdatedAt: at},
		ghscenario.Comment{ID: 3002, NodeID: "IC_kwDOLq3Xz86AAAr2", User: ghscenario.Bob, Body: body, CreatedAt: at, UpdatedAt: at},
		ghscenario.Comment{ID: 3003, NodeID: "IC_kwDOLq3Xz86AAAr3", User: ghscenario.Renovate, Body: body, CreatedAt: at, UpdatedAt: at},
		ghscenario.Comment{ID: 3004, NodeID: "IC_kwDOLq3Xz86AAAr4", User: ghscenario.Actions, Body: status.ReceiptMarker + "\nnot json", CreatedAt: at, UpdatedAt: at},
		ghscenario.Comment{ID: 3005, NodeID: "IC_kwDOLq3Xz86AAAr5", User: impostor, Body: body, CreatedAt: at, UpdatedAt: at},
	)
	c := build(t, s)
	fake := httpfake.New(t)
	fake.ExpectCassette(c)
	// One comments listing serves comments and agent_runs (the fake fails on a second).
	o := fastOptions(fake.URL)
	o.Receipts = github.ReceiptsFromCommentsBy(github.ActionsBotLogin)
	cl, err := github.New(o)
	if err != nil {
		t.Fatal(err)
	}
	acq, err := cl.Acquire(context.Background(), refOf(s), testProfile(acquisition.KindWorkItem))
	if err != nil {
		t.Fatal(err)
	}
	if len(acq.AgentRuns) != 1 || acq.AgentRuns[0].ID != "IC_kwDOLq3Xz86AAAr1" {
		t.Fatalf("agent runs = %+v, want only the own identity's receipt", acq.AgentRuns)
	}
	gaps := map[string]int{}
	for _, g := range acq.Outcomes.AgentRuns {
		gaps[g.Code] += g.Count
	}
	if want := map[string]int{acquisition.GapAuthorizationFailed: 3, acquisition.GapInvalidMetadata: 1}; !reflect.DeepEqual(gaps, want) {
		t.Errorf("agent_runs outcomes = %v, want %v", gaps, want)
	}
}
