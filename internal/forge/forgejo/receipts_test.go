package forgejo

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"code.gitea.io/sdk/gitea"
	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

func outcomeCount(gaps []acquisition.Gap, code string) int {
	for _, g := range gaps {
		if g.Code == code {
			return g.Count
		}
	}
	return 0
}

// Like GitHub's ReceiptsFromCommentsBy, forgectx run reads only receipts posted as its own
// comment identity: a receipt comment by anyone else is agent_runs authorization_failed and
// not parsed; the Actions pseudo-user -2 is an identity like any other; anyAuthor reads all.
func TestReceiptsOnlyByOwnIdentity(t *testing.T) {
	body := "<!-- forgectx:receipt v1 -->\nnot a valid receipt"
	cs := []*gitea.Comment{
		{ID: 1, Poster: &gitea.User{ID: 150}, Body: body},
		{ID: 2, Poster: &gitea.User{ID: 7}, Body: body},
		{ID: 3, Poster: &gitea.User{ID: -2}, Body: body},
		{ID: 4, Poster: nil, Body: body},
		{ID: 5, Poster: &gitea.User{ID: 7}, Body: "plain comment"},
	}
	cases := []struct {
		self                  int64
		invalid, unauthorized int
	}{
		{150, 1, 3},
		{-2, 1, 3},
		{anyAuthor, 4, 0},
	}
	for _, tc := range cases {
		runs, invalid, unauthorized := receiptRuns(cs, tc.self)
		if len(runs) != 0 || invalid != tc.invalid || unauthorized != tc.unauthorized {
			t.Errorf("self %d: runs %d invalid %d unauthorized %d; want 0 %d %d", tc.self, len(runs), invalid, unauthorized, tc.invalid, tc.unauthorized)
		}
	}
}

// Against the recorded issue (release-bot 150's receipt 9006, bob's forged copy 9007): with
// ReceiptsBySelf and the identity 150 only 9006 is read and 9007 is authorization_failed
// before the assembler sees it; with another identity neither is read. Same requests as
// without the restriction (SelfID given: no GET /user).
func TestReceiptsBySelfAgainstRecordedIssue(t *testing.T) {
	s := issueScenario()
	for _, tc := range []struct {
		self         int64
		wantRuns     []string
		unauthorized int
	}{
		{150, []string{"9006"}, 1},
		{-2, nil, 2},
	} {
		c, err := cassette.Load(filepath.Join(fixtureRoot, s.name))
		if err != nil {
			t.Fatal(err)
		}
		rp, err := cassette.NewReplayer(c)
		if err != nil {
			t.Fatal(err)
		}
		cl, err := New(Options{APIURL: c.Meta.APIURL, Token: "fixture-token-value", Transport: rp, Log: zerolog.Nop(),
			SelfID: tc.self, ReceiptsBySelf: true, RetryWaitMin: time.Millisecond, RetryWaitMax: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		a, err := cl.Acquire(context.Background(), s.ref, s.profile)
		if err != nil {
			t.Fatal(err)
		}
		if u := rp.Unused(); len(u) > 0 {
			t.Errorf("self %d: recorded responses never requested: %q", tc.self, u)
		}
		var ids []string
		for _, r := range a.AgentRuns {
			ids = append(ids, r.ID)
		}
		if len(ids) != len(tc.wantRuns) || len(ids) > 0 && ids[0] != tc.wantRuns[0] {
			t.Errorf("self %d: runs %v, want %v", tc.self, ids, tc.wantRuns)
		}
		if got := outcomeCount(a.Outcomes.AgentRuns, acquisition.GapAuthorizationFailed); got != tc.unauthorized {
			t.Errorf("self %d: authorization_failed %d, want %d", tc.self, got, tc.unauthorized)
		}
	}
}

// When the identity cannot be established (no SelfID and GET /user fails: the recording has
// no such response) the history is unknown: agent_runs fetch_failed, never an empty history.
func TestReceiptsBySelfUnknownIdentityIsAGap(t *testing.T) {
	s := issueScenario()
	c, err := cassette.Load(filepath.Join(fixtureRoot, s.name))
	if err != nil {
		t.Fatal(err)
	}
	rp, err := cassette.NewReplayer(c)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := New(Options{APIURL: c.Meta.APIURL, Token: "fixture-token-value", Transport: rp, Log: zerolog.Nop(),
		ReceiptsBySelf: true, RetryMax: -1})
	if err != nil {
		t.Fatal(err)
	}
	a, err := cl.Acquire(context.Background(), s.ref, s.profile)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.AgentRuns) != 0 || outcomeCount(a.Outcomes.AgentRuns, acquisition.GapFetchFailed) != 1 {
		t.Errorf("runs %d, gaps %+v; want none and one fetch_failed", len(a.AgentRuns), a.Outcomes.AgentRuns)
	}
}
