package forgejo

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/test/httpfake"
)

var _ forge.Commenter = (*Client)(nil)
var _ forge.Acquirer = (*Client)(nil)

const marker = "<!-- forgectx:status -->"

// TestFindCommentsOnlyOwnMarkedAcrossPages: across every page, only comments whose first line
// is the marker AND that were written by the token's own identity are returned; a marker
// planted by someone else, or quoted below the first line, is ignored.
func TestFindCommentsOnlyOwnMarkedAcrossPages(t *testing.T) {
	fake := httpfake.New(t)
	me := user(150, "release-bot")
	fake.Expect("GET", "/api/v1/user", httpfake.JSON(200, me))
	fake.Expect("GET", "/api/v1/repos/Acme/Widgets/issues/7/comments?limit=2&page=1", withHeader(httpfake.JSON(200, []any{
		comment(1, me, marker+"\nold status", "2026-09-08T11:00:00Z", "2026-09-08T11:00:00Z"),
		comment(2, bob, marker+"\nplanted by bob", "2026-09-08T11:01:00Z", "2026-09-08T11:01:00Z"),
	}), "X-Total-Count", "5"))
	fake.Expect("GET", "/api/v1/repos/Acme/Widgets/issues/7/comments?limit=2&page=2", withHeader(httpfake.JSON(200, []any{
		comment(3, me, "no marker here", "2026-09-08T11:02:00Z", "2026-09-08T11:02:00Z"),
		comment(4, me, "quoted:\n"+marker, "2026-09-08T11:03:00Z", "2026-09-08T11:03:00Z"),
		comment(5, me, marker+"\r\nnew status", "2026-09-08T11:04:00Z", "2026-09-08T11:04:00Z"),
	}), "X-Total-Count", "5"))
	cl := fakeClient(t, fake, 2)
	got, err := cl.FindComments(context.Background(), forge.Ref{Repo: "Acme/Widgets", Number: 7}, marker)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "1" || got[1].ID != "5" || got[0].AuthorID != "150" {
		t.Fatalf("found %+v, want comments 1 and 5 by 150 (4 quotes the marker below its first line)", got)
	}
}

func TestFindCommentsRejectsEmptyMarker(t *testing.T) {
	cl, _ := New(Options{APIURL: fixtureAPI})
	if _, err := cl.FindComments(context.Background(), forge.Ref{Repo: "a/b", Number: 1}, ""); err == nil {
		t.Fatal("empty marker accepted")
	}
}

func TestFindCommentsFailsWhenIdentityUnknown(t *testing.T) {
	fake := httpfake.New(t)
	fake.Expect("GET", "/api/v1/user", httpfake.JSON(401, `{"message":"token is required"}`))
	cl := fakeClient(t, fake, 0)
	if _, err := cl.FindComments(context.Background(), forge.Ref{Repo: "Acme/Widgets", Number: 7}, marker); err == nil {
		t.Fatal("found comments without knowing whose they are")
	}
}

func TestCreateCommentPostsOnceAndIsNotRetried(t *testing.T) {
	fake := httpfake.New(t)
	// The SDK marshals with encoding/json, which escapes "<" and ">" in the marker.
	body, _ := json.Marshal(map[string]string{"body": "hello " + marker})
	fake.ExpectBody("POST", "/api/v1/repos/Acme/Widgets/issues/7/comments", body,
		httpfake.JSON(201, comment(77, releaseBot, "hello "+marker, "2026-09-08T11:00:00Z", "2026-09-08T11:00:00Z")))
	cl := fakeClient(t, fake, 0)
	c, err := cl.CreateComment(context.Background(), forge.Ref{Repo: "Acme/Widgets", Number: 7}, "hello "+marker)
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != "77" || c.AuthorID != "150" {
		t.Errorf("created %+v", c)
	}

	// A 502 on POST is reported, not retried: a retry could post the comment twice.
	fake2 := httpfake.New(t)
	fake2.ExpectBody("POST", "/api/v1/repos/Acme/Widgets/issues/7/comments", body, httpfake.BadGateway())
	cl2 := fakeClient(t, fake2, 0)
	if _, err := cl2.CreateComment(context.Background(), forge.Ref{Repo: "Acme/Widgets", Number: 7}, "hello "+marker); err == nil {
		t.Fatal("502 reported as success")
	}
	if st := cl2.Stats(); st.Requests != 1 || st.Retries != 0 {
		t.Errorf("stats = %+v, want exactly one POST", st)
	}
}

func TestUpdateComment(t *testing.T) {
	fake := httpfake.New(t)
	fake.ExpectBody("PATCH", "/api/v1/repos/Acme/Widgets/issues/comments/77", []byte(`{"body":"new"}`),
		httpfake.JSON(200, comment(77, releaseBot, "new", "2026-09-08T11:00:00Z", "2026-09-08T12:00:00Z")))
	cl := fakeClient(t, fake, 0)
	if err := cl.UpdateComment(context.Background(), forge.Ref{Repo: "Acme/Widgets", Number: 7}, "77", "new"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "0", "-1", "07", "1e3", "abc"} {
		if err := cl.UpdateComment(context.Background(), forge.Ref{Repo: "Acme/Widgets", Number: 7}, bad, "x"); err == nil {
			t.Errorf("comment id %q accepted", bad)
		}
	}
}

func TestUpdateCommentReportsForbidden(t *testing.T) {
	fake := httpfake.New(t)
	fake.ExpectBody("PATCH", "/api/v1/repos/Acme/Widgets/issues/comments/78", []byte(`{"body":"new"}`),
		httpfake.JSON(403, `{"message":"user should be the comment poster"}`))
	cl := fakeClient(t, fake, 0)
	err := cl.UpdateComment(context.Background(), forge.Ref{Repo: "Acme/Widgets", Number: 7}, "78", "new")
	if statusOf(err) != 403 {
		t.Fatalf("err = %v, want an APIError with status 403", err)
	}
}

// TestFindCommentsWithConfiguredSelfID: with Options.SelfID (the Actions pseudo-user here) no
// GET /user is made and that id decides ownership.
func TestFindCommentsWithConfiguredSelfID(t *testing.T) {
	fake := httpfake.New(t)
	fake.Expect("GET", "/api/v1/repos/Acme/Widgets/issues/7/comments?limit=50&page=1", withHeader(httpfake.JSON(200, []any{
		comment(1, actionsBot, marker+"\nstatus", "2026-09-08T11:00:00Z", "2026-09-08T11:00:00Z"),
		comment(2, releaseBot, marker+"\nstatus", "2026-09-08T11:01:00Z", "2026-09-08T11:01:00Z"),
	}), "X-Total-Count", "2"))
	cl, err := New(Options{APIURL: fake.URL + "/api/v1", SelfID: -2})
	if err != nil {
		t.Fatal(err)
	}
	got, err := cl.FindComments(context.Background(), forge.Ref{Repo: "Acme/Widgets", Number: 7}, marker)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != "1" || got[0].AuthorID != "-2" {
		t.Fatalf("found %+v, want comment 1 by -2", got)
	}
}
