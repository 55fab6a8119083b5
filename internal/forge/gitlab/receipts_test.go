package gitlab

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"
	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// Like GitHub's ReceiptsFromCommentsBy, forgectx run reads only receipts posted as its own
// comment identity: a receipt note by anyone else is counted (authorization_failed) and not
// parsed; Receipts reads every author's.
func TestReceiptsByOnlyOwnIdentity(t *testing.T) {
	body := "<!-- forgectx:receipt v1 -->\nnot a valid receipt"
	ds := []*gl.Discussion{{Notes: []*gl.Note{
		{ID: 1, Body: body, Author: gl.NoteAuthor{ID: 150}},
		{ID: 2, Body: body, Author: gl.NoteAuthor{ID: 7}},
		{ID: 3, Body: body, Author: gl.NoteAuthor{ID: 150}, System: true},
		{ID: 4, Body: "plain", Author: gl.NoteAuthor{ID: 7}},
	}}}
	if runs, invalid, unauthorized := receiptsBy(ds, 150); len(runs) != 0 || invalid != 1 || unauthorized != 1 {
		t.Errorf("ReceiptsBy(150) = %d runs, %d invalid, %d unauthorized; want 0, 1, 1", len(runs), invalid, unauthorized)
	}
	if runs, invalid := Receipts(ds); len(runs) != 0 || invalid != 2 {
		t.Errorf("Receipts = %d runs, %d invalid; want 0, 2", len(runs), invalid)
	}
}

// Against the recorded merge request (two receipts by the project bot 104, one malformed):
// with ReceiptAuthor 104 they are read, with forgectx's own 150 neither (2 authorization_failed),
// and an identity that cannot be read is an agent_runs fetch_failed gap, never an empty
// history. The requests are the same in every case (the identity comes from the caller).
func TestReceiptAuthorAgainstRecordedMergeRequest(t *testing.T) {
	for _, tc := range []struct {
		name                           string
		author                         func(context.Context) (int64, error)
		runs, unauthorized, fetchFails int
	}{
		// One of the two is malformed (invalid_metadata): one run is read.
		{"unrestricted", nil, 1, 0, 0},
		{"the receipts' author", func(context.Context) (int64, error) { return 104, nil }, 1, 0, 0},
		{"another identity", func(context.Context) (int64, error) { return 150, nil }, 0, 2, 0},
		{"identity unknown", func(context.Context) (int64, error) { return 0, errors.New("401") }, 0, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := cassette.Load(filepath.Join(fixtureDir(t), "cassettes", "mr"))
			if err != nil {
				t.Fatal(err)
			}
			rp, err := cassette.NewReplayer(c)
			if err != nil {
				t.Fatal(err)
			}
			cl, err := New(Options{APIURL: "https://gitlab.example.com:8443/api/v4", HTTPClient: &http.Client{Transport: rp}, Log: zerolog.Nop(), ReceiptAuthor: tc.author})
			if err != nil {
				t.Fatal(err)
			}
			a := acquireMR(t, cl)
			if u := rp.Unused(); len(u) != 0 {
				t.Errorf("recorded responses never requested: %q", u)
			}
			if len(a.AgentRuns) != tc.runs || gapCount(a.Outcomes.AgentRuns, acquisition.GapAuthorizationFailed) != tc.unauthorized ||
				gapCount(a.Outcomes.AgentRuns, acquisition.GapFetchFailed) != tc.fetchFails {
				t.Errorf("runs %d, gaps %+v; want %d runs, %d authorization_failed, %d fetch_failed", len(a.AgentRuns), a.Outcomes.AgentRuns, tc.runs, tc.unauthorized, tc.fetchFails)
			}
		})
	}
}
