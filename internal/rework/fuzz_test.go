package rework

import (
	"errors"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/forge/forgejo"
)

// FuzzParseTarget: the target file is untrusted; the parser never panics, and anything it
// accepts satisfies every rule.
func FuzzParseTarget(f *testing.F) {
	f.Add([]byte(goodTarget))
	f.Add([]byte(`{"schema":"gitea-agent.rework-input/v1","target":{"owner":"a","repository":"b","issue":1,"pr":1},"head":"","contract_sha256":""}`))
	f.Add([]byte(`{"schema":1}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, b []byte) {
		tg, err := ParseTarget(b)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error is not an *InputError: %v", err)
			}
			return
		}
		if !ValidOwner(tg.Owner) || !ValidRepository(tg.Repository) || tg.Issue <= 0 || tg.PR <= 0 || tg.Issue == tg.PR || !isHex(tg.Head, 40) || !isHex(tg.ContractSHA256, 64) {
			t.Fatalf("accepted an invalid target %+v", tg)
		}
	})
}

// FuzzParseContract: the provider contract is untrusted input too.
func FuzzParseContract(f *testing.F) {
	f.Add([]byte(contractJSON()))
	f.Add([]byte(`{"schema":"gitea-agent.rework-provider-contract/v1"}`))
	f.Add([]byte(`{"roles":{"spec_reviewer":{"id":1e3}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseContract(b, implID)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error is not an *InputError: %v", err)
			}
			return
		}
		if c.SpecReviewer.ID <= 0 || c.CodeReviewer.ID <= 0 || c.SpecReviewer.ID == c.CodeReviewer.ID || c.SpecReviewer.ID == implID || c.CodeReviewer.ID == implID || len(c.Counters) != 3 {
			t.Fatalf("accepted an invalid contract %+v", c)
		}
	})
}

// FuzzParseMarker: review bodies are untrusted; marker parsing never panics and a marker
// without a problem has well-formed fields.
func FuzzParseMarker(f *testing.F) {
	w := baseWorld()
	f.Add(specBody(w, VerdictApproved, tHead))
	f.Add(codeBody(w, VerdictRequestChanges, tHead))
	f.Add("\n")
	f.Fuzz(func(t *testing.T, body string) {
		m := ParseMarker(body)
		if m.Problem == "" && m.Kind != "none" && (!isHex(m.Head, 40) || !isHex(m.Contract, 64)) {
			t.Fatalf("marker without a problem has malformed fields: %+v", m)
		}
	})
}

// FuzzTimeline: review rows come from the forge; decoding and the whole decision never panic
// and always end in one of the three decisions, with rework_review_ids only for rework.
func FuzzTimeline(f *testing.F) {
	w := reworkWorld()
	var rows []string
	for _, r := range w.Reviews {
		rows = append(rows, r.json())
	}
	f.Add([]byte("[" + strings.Join(rows, ",") + "]"))
	f.Add([]byte(`[{"id":1,"user":null,"state":"PENDING","body":"","commit_id":"","stale":false,"dismissed":false,"submitted_at":"2026-01-01T00:00:00Z"}]`))
	f.Add([]byte(`[{"id":1,"user":{"id":22,"login":"code-bot"},"state":"APPROVED","body":"<!-- gitea-agent:code-review/v1 ","commit_id":"x","stale":false,"dismissed":false,"submitted_at":"x"}]`))
	c, _ := ParseContract([]byte(contractJSON()), implID)
	tg := testTarget(w)
	f.Fuzz(func(t *testing.T, b []byte) {
		m := &model{inline: map[int64][]forgejo.ReviewCommentRecord{}}
		rows, err := forgejo.DecodeRows[forgejo.ReviewRecord](b)
		if err != nil {
			return
		}
		for _, r := range rows {
			m.reviews = append(m.reviews, r.Value)
		}
		for _, r := range m.reviews {
			if r.ID == nil {
				return // capture refuses such rows before the timeline
			}
		}
		_, _, d := timeline(tg, c, implID, m, nil)
		switch d.Decision {
		case DecisionRework:
		case DecisionNoOp, DecisionBlocked:
			if len(d.ReworkReviewIDs) != 0 {
				t.Fatalf("%s with rework_review_ids %v", d.Decision, d.ReworkReviewIDs)
			}
		default:
			t.Fatalf("decision %q", d.Decision)
		}
	})
}
