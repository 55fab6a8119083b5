package reviewrun

import (
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/review/reviewctx"
	"github.com/forgectx/forgectx/internal/review/reviewpub"
	"github.com/forgectx/forgectx/internal/review/reviewresult"
)

func testProjection() *Projection {
	return &Projection{SchemaVersion: ProjectionSchema, Receipt: protectedReceipt(),
		Signal: reviewpub.Signal{SchemaVersion: reviewpub.SignalSchema, Result: reviewpub.DecisionClean},
		Result: &reviewresult.Result{Findings: []reviewresult.Finding{{Severity: "high", Path: "a.go", Line: 3, Message: "m", SuggestionCode: "x := \"```\""}}}}
}

// The remediation marker part 1 verifies is on its own line, exactly once, and parses back to
// the finding's fingerprint; a code block cannot close its fence.
func TestRenderFindingCarriesMarker(t *testing.T) {
	f := testProjection().Result.Findings[0]
	body := renderFinding(f, Fingerprint(f))
	fp, _, ok := reviewctx.ParseMarker(body)
	if !ok || fp != Fingerprint(f) || strings.Count(body, "ocr.remediation-marker/v1") != 1 {
		t.Fatalf("marker: %v %s", ok, body)
	}
	if !strings.Contains(body, "\n````\nx := \"```\"\n````\n") {
		t.Fatalf("fence: %s", body)
	}
	g := f
	g.Line = 99
	if Fingerprint(g) != Fingerprint(f) {
		t.Fatalf("the fingerprint must not depend on the line")
	}
	g.Message = "other"
	if Fingerprint(g) == Fingerprint(f) {
		t.Fatalf("the fingerprint must depend on the message")
	}
}

// The posting boundary refuses a projection it cannot render faithfully.
func TestValidRendering(t *testing.T) {
	if err := validRendering(testProjection()); err != nil {
		t.Fatal(err)
	}
	p := testProjection()
	p.Receipt.Cleanup = "?"
	if validRendering(p) == nil {
		t.Fatal("an invalid receipt rendered")
	}
	p = testProjection()
	p.Result.Findings[0].Message = "see " + reviewctx.FormatMarker(strings.Repeat("a", 64))
	if validRendering(p) == nil {
		t.Fatal("a finding smuggling a second marker rendered")
	}
}

// The unprotected limitation line appears exactly for an unprotected receipt.
func TestRenderSummaryLimitationLine(t *testing.T) {
	p := testProjection()
	body, err := renderSummary(p, Decision{Reasons: []string{NotAutoApprove}})
	if err != nil || strings.Contains(body, UnprotectedLimitation) {
		t.Fatalf("protected: %v", err)
	}
	r := p.Receipt
	r.TargetState, r.ContextMode, r.PolicyDigest, r.ContextTools, r.Sources = TargetUnprotected, reviewctx.ModeMetadata, "", ContextToolUse{}, r.Sources[:1]
	body, err = renderSummary(p, Decision{Reasons: []string{NotProtected}})
	if err != nil || strings.Count(body, UnprotectedLimitation) != 1 {
		t.Fatalf("unprotected: %v", err)
	}
}
