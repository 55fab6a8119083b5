package gitlab

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/test/httpfake"
)

// offsetPage is a list answer with GitLab's offset pagination headers (X-Page, X-Per-Page,
// X-Next-Page, X-Total, X-Total-Pages and the Link rel="next" GitLab sends beside them);
// next 0 is the last page.
func offsetPage(f *httpfake.Server, body string, path string, page, next, perPage, total int) httpfake.Reply {
	r := httpfake.JSON(200, body)
	r.Header.Set("X-Page", strconv.Itoa(page))
	r.Header.Set("X-Per-Page", strconv.Itoa(perPage))
	r.Header.Set("X-Total", strconv.Itoa(total))
	r.Header.Set("X-Total-Pages", strconv.Itoa((total+perPage-1)/perPage))
	if next > 0 {
		r.Header.Set("X-Next-Page", strconv.Itoa(next))
		r.Header.Set("Link", `<`+f.URL+strings.Replace(path, "page="+strconv.Itoa(page), "page="+strconv.Itoa(next), 1)+`>; rel="next"`)
	}
	return r
}

func treeRows(names ...string) string {
	var rows []string
	for _, n := range names {
		rows = append(rows, `{"id":"a1b2c3d4e5f60718293a4b5c6d7e8f9012345678","name":"`+n+`","type":"blob","path":"d/`+n+`","mode":"100644"}`)
	}
	return "[" + strings.Join(rows, ",") + "]"
}

const treePath = "/api/v4/projects/42/repository/tree?page=1&path=d&per_page=2&ref=main"

func treeOpt() *gl.ListTreeOptions {
	return &gl.ListTreeOptions{ListOptions: gl.ListOptions{Page: 1, PerPage: 2}, Path: gl.Ptr("d"), Ref: gl.Ptr("main")}
}

// A bounded read stops at its page bound before a declared next page: the page is never
// requested (the fake fails on it), the omission is visible (NextDeclared), and a bound that
// is not reached reads the listing to its end by X-Next-Page.
func TestServicesListPageBound(t *testing.T) {
	f := httpfake.New(t)
	p2 := strings.Replace(treePath, "page=1", "page=2", 1)
	f.Expect("GET", treePath, offsetPage(f, treeRows("a.md", "b.md"), treePath, 1, 2, 2, 3), offsetPage(f, treeRows("a.md", "b.md"), treePath, 1, 2, 2, 3))
	f.Expect("GET", p2, offsetPage(f, treeRows("c.md"), p2, 2, 0, 2, 3))
	repo := testClient(t, f).Services().Repository
	l, err := repo.Tree(context.Background(), "42", treeOpt(), ListOptions[*gl.TreeNode]{MaxPages: 1})
	if err != nil || len(l.Rows) != 2 || l.Pages != 1 || !l.NextDeclared || l.Lost != 1 {
		t.Fatalf("bound 1: %d rows, %d pages, next declared %v, lost %d, %v; want 2, 1, true, 1, nil", len(l.Rows), l.Pages, l.NextDeclared, l.Lost, err)
	}
	l, err = repo.Tree(context.Background(), "42", treeOpt(), ListOptions[*gl.TreeNode]{MaxPages: 2})
	if err != nil || len(l.Rows) != 3 || l.Pages != 2 || l.NextDeclared || l.Rows[2].Name != "c.md" {
		t.Fatalf("bound 2: %d rows, %d pages, next declared %v, %v; want 3 rows in 2 pages read whole", len(l.Rows), l.Pages, l.NextDeclared, err)
	}
}

// Enough ends a read once the caller has what its own bounds admit, before a declared next
// page, with the rows read so far.
func TestServicesListEnough(t *testing.T) {
	f := httpfake.New(t)
	path := "/api/v4/projects/42/merge_requests/7/discussions?page=1&per_page=2"
	f.Expect("GET", path, offsetPage(f, `[{"id":"d1","notes":[]},{"id":"d2","notes":[]}]`, path, 1, 2, 2, 4))
	var asked []int
	enough := func(rows []*gl.Discussion) bool { asked = append(asked, len(rows)); return len(rows) >= 2 }
	l, err := testClient(t, f).Services().Discussions.ListMergeRequest(context.Background(), "42", 7,
		&gl.ListMergeRequestDiscussionsOptions{ListOptions: gl.ListOptions{Page: 1, PerPage: 2}},
		ListOptions[*gl.Discussion]{MaxPages: 5, Enough: enough})
	if err != nil || len(l.Rows) != 2 || l.Rows[1].ID != "d2" || !l.NextDeclared || len(asked) != 1 || asked[0] != 2 {
		t.Fatalf("enough: %d rows, next declared %v, asked %v, %v; want 2 rows, true, [2], nil", len(l.Rows), l.NextDeclared, asked, err)
	}
}

// Without Complete the read counts pages by X-Next-Page: a next page that is not the one
// after is an error, and the page it names is never requested. X-Total does not bind such a
// read (a shortfall is only Lost); a complete read of the same answer is ErrIncomplete.
func TestServicesListOffsetRules(t *testing.T) {
	f := httpfake.New(t)
	f.Expect("GET", treePath, offsetPage(f, treeRows("a.md", "b.md"), treePath, 1, 3, 2, 6))
	repo := testClient(t, f).Services().Repository
	_, err := repo.Tree(context.Background(), "42", treeOpt(), ListOptions[*gl.TreeNode]{MaxPages: 5})
	if err == nil || !strings.Contains(err.Error(), "next page 3 after page 1") {
		t.Fatalf("skipping next page: %v; want an error naming pages 3 and 1", err)
	}

	short := offsetPage(f, treeRows("a.md"), treePath, 1, 0, 2, 2)
	f.Expect("GET", treePath, short, short)
	l, err := repo.Tree(context.Background(), "42", treeOpt(), ListOptions[*gl.TreeNode]{MaxPages: 5})
	if err != nil || len(l.Rows) != 1 || l.Lost != 1 {
		t.Fatalf("bounded read short of X-Total: %d rows, lost %d, %v; want 1, 1, nil", len(l.Rows), l.Lost, err)
	}
	if _, err := repo.Tree(context.Background(), "42", treeOpt(), ListOptions[*gl.TreeNode]{Complete: true}); !errors.Is(err, forge.ErrIncomplete) {
		t.Fatalf("complete read short of X-Total: %v; want ErrIncomplete", err)
	}
}

// A raw blob read stops at its byte bound while reading: exactly the bound is read whole,
// one byte more is ErrOverBound with no bytes.
func TestServicesBlobBound(t *testing.T) {
	f := httpfake.New(t)
	path := "/api/v4/projects/group%2Fproj/repository/blobs/a1b2c3d4e5f60718293a4b5c6d7e8f9012345678/raw"
	raw := httpfake.Reply{Status: 200, Header: http.Header{"Content-Type": {"text/plain"}}, Body: []byte("12345")}
	f.Expect("GET", path, raw, raw)
	repo := testClient(t, f).Services().Repository
	b, err := repo.Blob(context.Background(), "group/proj", "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678", 5)
	if err != nil || string(b) != "12345" {
		t.Fatalf("at the bound: %q, %v", b, err)
	}
	b, err = repo.Blob(context.Background(), "group/proj", "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678", 4)
	if !errors.Is(err, ErrOverBound) || b != nil {
		t.Fatalf("over the bound: %q, %v; want nil, ErrOverBound", b, err)
	}
}

// Writes that may have taken effect are sent once: a server error on a discussion create or
// an approval is not retried (the fake fails on a second request), though the client retries
// reads; the create's answer comes back so that a refused position (400) can be told apart.
func TestServicesWritesSentOnce(t *testing.T) {
	f := httpfake.New(t)
	f.ExpectBody("POST", "/api/v4/projects/42/merge_requests/7/discussions", []byte(`{"body":"x"}`), httpfake.ServerError())
	f.ExpectBody("POST", "/api/v4/projects/42/merge_requests/7/approve", []byte(`{"sha":"`+strings.Repeat("a", 40)+`"}`), httpfake.ServerError())
	f.Expect("GET", "/api/v4/projects/42/merge_requests/7", httpfake.ServerError(), httpfake.JSON(200, `{"id":1,"iid":7,"project_id":42}`))
	s := testClient(t, f).Services()
	_, resp, err := s.Discussions.CreateMergeRequest(context.Background(), int64(42), 7, &gl.CreateMergeRequestDiscussionOptions{Body: gl.Ptr("x")})
	if err == nil || resp == nil || resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("create: %v, %v; want the 500 answer", resp, err)
	}
	if _, err := s.MergeRequests.Approve(context.Background(), int64(42), 7, strings.Repeat("a", 40)); err == nil {
		t.Fatal("approve: no error on a 500")
	}
	if mr, _, err := s.MergeRequests.Get(context.Background(), int64(42), 7); err != nil || mr.IID != 7 {
		t.Fatalf("get after a 500: %v, %v; want the retried read", mr, err)
	}
}
