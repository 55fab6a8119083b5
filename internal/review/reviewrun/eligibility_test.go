package reviewrun

import (
	"reflect"
	"testing"

	"github.com/forgectx/forgectx/internal/review/reviewctx"
)

// EligibilityRow is one row of the approval eligibility table (docs/review-context.md,
// "Approval"): a mutation of the eligible baseline and the expected decision. The end-to-end
// test replays the same rows against the fake GitLab.
type eligibilityRow struct {
	name string
	mut  func(in *EligibilityInput)
	want []string // nil: approve
}

func eligibleInput() EligibilityInput {
	r := protectedReceipt()
	r.Sources = append(r.Sources, ReceiptSource{Source: reviewctx.SourceRemediation, Completeness: reviewctx.Complete})
	return EligibilityInput{AutoApprove: "true", Receipt: r, ResultComplete: true, HeadUnchanged: true, PublicationValid: true}
}

func source(in *EligibilityInput, name string) *ReceiptSource {
	for i := range in.Receipt.Sources {
		if in.Receipt.Sources[i].Source == name {
			return &in.Receipt.Sources[i]
		}
	}
	in.Receipt.Sources = append(in.Receipt.Sources, ReceiptSource{Source: name, Completeness: reviewctx.Complete})
	return &in.Receipt.Sources[len(in.Receipt.Sources)-1]
}

var eligibilityRows = []eligibilityRow{
	{"complete enriched run, optional discussions partial", func(*EligibilityInput) {}, nil},
	{"private-sanitized keeps normal evaluation", func(in *EligibilityInput) { in.Receipt.PublicationDLP.Result = DLPPrivateSanitized }, nil},
	{"clean adapter records do not block", func(in *EligibilityInput) { source(in, reviewctx.SourceReferences).Records = 2 }, nil},
	{"remediation source selected with zero records", func(in *EligibilityInput) { source(in, reviewctx.SourceRemediation).Records = 0 }, nil},
	{"OCR_AUTO_APPROVE unset", func(in *EligibilityInput) { in.AutoApprove = "" }, []string{NotAutoApprove}},
	{"OCR_AUTO_APPROVE not exactly true", func(in *EligibilityInput) { in.AutoApprove = "TRUE" }, []string{NotAutoApprove}},
	{"degraded selected metadata", func(in *EligibilityInput) {
		source(in, reviewctx.SourceMetadata).Completeness = reviewctx.Partial
	}, []string{NotMetadata}},
	{"DLP-rejected optional source", func(in *EligibilityInput) {
		source(in, reviewctx.SourceDiscussions).Completeness = reviewctx.DLPRejected
	}, []string{NotDLPRejected}},
	{"degraded required source", func(in *EligibilityInput) {
		s := source(in, reviewctx.SourceReferences)
		s.Required, s.Completeness = true, reviewctx.Unavailable
	}, []string{NotRequiredDegraded}},
	{"admitted remediation record", func(in *EligibilityInput) { source(in, reviewctx.SourceRemediation).Records = 1 }, []string{NotRemediation}},
	{"unprotected target", func(in *EligibilityInput) {
		r := in.Receipt
		r.TargetState, r.ContextMode, r.PolicyDigest, r.ContextTools = TargetUnprotected, reviewctx.ModeMetadata, "", ContextToolUse{}
		r.Sources = r.Sources[:1]
	}, []string{NotProtected}},
	{"failed cleanup", func(in *EligibilityInput) { in.Receipt.Cleanup = CleanupFailed }, []string{NotCleanup}},
	{"publication-filtered", func(in *EligibilityInput) { in.Receipt.PublicationDLP.Result = DLPPublicationFiltered }, []string{NotPublication}},
	{"failed publication validation", func(in *EligibilityInput) { in.PublicationValid = false }, []string{NotPublicationInvalid}},
	{"no evidence summary call", func(in *EligibilityInput) { in.Receipt.EvidenceTools.EvidenceSummary = 0 }, []string{NotEvidenceSummary}},
	{"invalid receipt", func(in *EligibilityInput) { in.Receipt.Cleanup = "?" }, []string{NotReceiptInvalid}},
	{"no receipt", func(in *EligibilityInput) { in.Receipt = nil }, []string{NotReceiptInvalid}},
	{"findings", func(in *EligibilityInput) { in.Findings = 1 }, []string{NotFindings}},
	{"warnings", func(in *EligibilityInput) { in.Warnings = 2 }, []string{NotWarnings}},
	{"incomplete result", func(in *EligibilityInput) { in.ResultComplete = false }, []string{NotResultIncomplete}},
	{"head moved", func(in *EligibilityInput) { in.HeadUnchanged = false }, []string{NotHeadMoved}},
	{"self-authored", func(in *EligibilityInput) { in.SelfAuthored = true }, []string{NotSelfAuthored}},
	{"several gates at once, sorted", func(in *EligibilityInput) {
		in.Receipt.Cleanup = CleanupFailed
		source(in, reviewctx.SourceRemediation).Records = 3
		source(in, reviewctx.SourceDiscussions).Completeness = reviewctx.DLPRejected
	}, []string{NotCleanup, NotDLPRejected, NotRemediation}},
}

func TestApprovalEligibilityTable(t *testing.T) {
	for _, row := range eligibilityRows {
		t.Run(row.name, func(t *testing.T) {
			in := eligibleInput()
			row.mut(&in)
			d := Eligible(in)
			if row.want == nil {
				if !d.Approve || len(d.Reasons) != 0 {
					t.Fatalf("want approval, got %+v", d)
				}
				return
			}
			if d.Approve || !reflect.DeepEqual(d.Reasons, row.want) {
				t.Fatalf("got %+v, want reasons %v", d, row.want)
			}
		})
	}
}
