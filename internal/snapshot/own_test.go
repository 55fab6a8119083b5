package snapshot_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/internal/status"
)

func commentsSummary(t *snapshot.Tree) snapshot.SourceSummary {
	for _, s := range t.Summary.Sources {
		if s.Source == acquisition.SourceComments {
			return s
		}
	}
	return snapshot.SourceSummary{}
}

// TestOwnStatusAndReceiptCommentsAreNotConversation: a comment whose first line is a forgectx
// status or receipt marker is left out of the comments source (whoever wrote it), adds no gap,
// and leaves the tree byte-identical to the tree without it.
func TestOwnStatusAndReceiptCommentsAreNotConversation(t *testing.T) {
	base, cfg := demo(t)
	want, err := snapshot.Assemble(context.Background(), base, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := acquisition.Write(&buf, base); err != nil {
		t.Fatal(err)
	}
	withOwn, err := acquisition.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	author := withOwn.Comments[0].Author
	statusBody, err := status.Render(filter.New(nil), status.Status{Agent: "triage", State: status.Started})
	if err != nil {
		t.Fatal(err)
	}
	withOwn.Comments = append(withOwn.Comments,
		acquisition.Comment{ID: "IC_kwDOOwnStatus1", Author: author, CreatedAt: "2026-09-04T00:00:00Z", Body: statusBody},
		acquisition.Comment{ID: "IC_kwDOOwnReceipt1", Author: author, CreatedAt: "2026-09-04T00:00:01Z", Body: status.ReceiptMarker + "\nanything\n"},
		// A marker that is not on the first line does not make a comment forgectx's own.
		acquisition.Comment{ID: "IC_kwDOQuoted1", Author: author, CreatedAt: "2026-09-04T00:00:02Z", Body: "quoting:\n" + statusBody},
	)
	got, err := snapshot.Assemble(context.Background(), withOwn, cfg)
	if err != nil {
		t.Fatal(err)
	}
	gs, ws := commentsSummary(got), commentsSummary(want)
	if gs.Own != 2 || gs.Records != ws.Records+1 || gs.Omitted != ws.Omitted {
		b, _ := json.Marshal(gs)
		t.Errorf("comments summary %s; want own_comments 2, one more record, same omitted (%d)", b, ws.Omitted)
	}
	var idxGot, idxWant struct {
		Gaps json.RawMessage `json:"gaps"`
	}
	_ = json.Unmarshal(got.Index, &idxGot)
	_ = json.Unmarshal(want.Index, &idxWant)
	if !bytes.Equal(idxGot.Gaps, idxWant.Gaps) {
		t.Errorf("own comments changed the gaps: %s, want %s", idxGot.Gaps, idxWant.Gaps)
	}
}
