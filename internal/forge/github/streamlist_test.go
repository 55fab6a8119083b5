package github_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/forge/github"
	"github.com/forgectx/forgectx/test/httpfake"
)

const cmPath = "/repos/octo-org/Hello-World/issues/7/comments"

// A comment listing is decoded one comment at a time under a per-comment bound: a comment
// past 1 MiB fails the page while it is read (never decoded whole), naming the bound, and the
// lookup ends incomplete.
func TestFindCommentsRefusesAnOversizedComment(t *testing.T) {
	fake := httpfake.New(t)
	bot := cmUser("github-actions[bot]", "Bot", 41898282)
	fake.Expect("GET", cmPath+"?per_page=100", httpfake.JSON(200, []any{cmComment(1, bot, strings.Repeat("a", 2<<20))}))
	fake.Expect("GET", cmPath+"?page=2&per_page=100", httpfake.JSON(200, []any{}))
	_, cm := newCommenter(t, fake, github.ActionsBotLogin)
	_, err := cm.FindComments(context.Background(), cmRef, cmMarker)
	if err == nil || !errors.Is(err, forge.ErrIncomplete) || !strings.Contains(err.Error(), "a comment of the answer is over the 1048576-byte bound") {
		t.Fatalf("err %v; want an incomplete lookup naming the 1048576-byte comment bound", err)
	}
}

// A page holding more comments than the 100 asked for is refused (a server streaming small
// comments without end must not grow memory either).
func TestFindCommentsRefusesMoreCommentsThanAsked(t *testing.T) {
	fake := httpfake.New(t)
	var page []any
	for i := int64(1); i <= 101; i++ {
		page = append(page, cmComment(i, cmUser("alice", "User", 6), "hi"))
	}
	fake.Expect("GET", cmPath+"?per_page=100", httpfake.JSON(200, page))
	fake.Expect("GET", cmPath+"?page=2&per_page=100", httpfake.JSON(200, []any{}))
	_, cm := newCommenter(t, fake, github.ActionsBotLogin)
	_, err := cm.FindComments(context.Background(), cmRef, cmMarker)
	if err == nil || !strings.Contains(err.Error(), "more comments than the page size asked for") {
		t.Fatalf("err %v; want the page refused for holding more comments than asked", err)
	}
}

// The largest comment GitHub accepts (65,536 characters), at the worst JSON escaping (6 bytes
// a character), passes the bound with its body intact; 100 of them on one page are read.
func TestFindCommentsReadsTheLargestRealComments(t *testing.T) {
	fake := httpfake.New(t)
	bot := cmUser("github-actions[bot]", "Bot", 41898282)
	body := cmMarker + "\n" + strings.Repeat("\x01", 65536-len(cmMarker)-1)
	var page []any
	for i := int64(1); i <= 100; i++ {
		page = append(page, cmComment(i, bot, body))
	}
	fake.Expect("GET", cmPath+"?per_page=100", httpfake.JSON(200, page))
	_, cm := newCommenter(t, fake, github.ActionsBotLogin)
	got, err := cm.FindComments(context.Background(), cmRef, cmMarker)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 100 || got[99].ID != "100" || got[0].Body != body {
		t.Fatalf("found %d comments (want 100, bodies intact)", len(got))
	}
}
