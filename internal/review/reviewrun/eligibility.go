package reviewrun

import (
	"sort"

	"github.com/forgectx/forgectx/internal/review/reviewctx"
)

// EnvAutoApprove is the operator switch: only the exact value "true" enables approval.
const EnvAutoApprove = "OCR_AUTO_APPROVE"

// Ineligibility reasons (closed codes, logged and shown in the summary; never a value).
const (
	NotAutoApprove        = "auto_approve_disabled"
	NotProtected          = "unprotected_target"
	NotMetadata           = "metadata_degraded"
	NotDLPRejected        = "dlp_rejected_source"
	NotRequiredDegraded   = "required_source_degraded"
	NotRemediation        = "remediation_admitted"
	NotCleanup            = "cleanup_failed"
	NotPublication        = "publication_filtered"
	NotResultIncomplete   = "result_incomplete"
	NotFindings           = "findings_present"
	NotWarnings           = "warnings_present"
	NotHeadMoved          = "source_sha_moved"
	NotSelfAuthored       = "self_authored"
	NotEvidenceSummary    = "evidence_summary_missing"
	NotReceiptInvalid     = "receipt_invalid"
	NotPublicationInvalid = "publication_validation_failed"
)

// EligibilityInput is everything the approval decision reads: the receipt (sources, target
// state, DLP and cleanup results) and the existing result gates.
type EligibilityInput struct {
	// AutoApprove is OCR_AUTO_APPROVE; only "true" enables approval.
	AutoApprove string
	Receipt     *Receipt
	// ResultComplete: the validated result's outcome is completed with complete coverage and
	// no manifest failure.
	ResultComplete bool
	Findings       int
	Warnings       int
	// HeadUnchanged: the merge request head still equals the receipt's source SHA.
	HeadUnchanged bool
	// SelfAuthored: the merge request author is the approving identity.
	SelfAuthored bool
	// PublicationValid: the posting boundary validated the projection it rendered.
	PublicationValid bool
}

// Decision is the approval decision: Approve, or the sorted closed reasons it is withheld.
type Decision struct {
	Approve bool
	Reasons []string
}

// Eligible decides approval. Degraded selected metadata, a DLP-rejected selected source, a
// degraded required source, any admitted remediation record, an unprotected target and a
// failed cleanup or publication validation each make the run ineligible, on top of every
// existing gate (findings, warnings, incomplete result, moved head, self-authorship). DLP-clean
// generic discussions and adapter records, and optional non-DLP degradation, do not block.
func Eligible(in EligibilityInput) Decision {
	var why []string
	add := func(r string) { why = append(why, r) }
	if in.AutoApprove != "true" {
		add(NotAutoApprove)
	}
	r := in.Receipt
	if r == nil || r.Validate() != nil {
		add(NotReceiptInvalid)
	} else {
		why = append(why, receiptReasons(r)...)
	}
	if !in.ResultComplete {
		add(NotResultIncomplete)
	}
	if in.Findings > 0 {
		add(NotFindings)
	}
	if in.Warnings > 0 {
		add(NotWarnings)
	}
	if !in.HeadUnchanged {
		add(NotHeadMoved)
	}
	if in.SelfAuthored {
		add(NotSelfAuthored)
	}
	if !in.PublicationValid {
		add(NotPublicationInvalid)
	}
	sort.Strings(why)
	why = dedup(why)
	return Decision{Approve: len(why) == 0, Reasons: why}
}

// receiptReasons are the review-context gates read from a valid receipt.
func receiptReasons(r *Receipt) []string {
	var why []string
	if r.TargetState != TargetProtected {
		why = append(why, NotProtected)
	}
	if r.Cleanup != CleanupComplete {
		why = append(why, NotCleanup)
	}
	if r.PublicationDLP.Result == DLPPublicationFiltered {
		why = append(why, NotPublication)
	}
	if r.EvidenceTools.EvidenceSummary < 1 {
		why = append(why, NotEvidenceSummary)
	}
	for _, s := range r.Sources {
		if s.Completeness == reviewctx.DLPRejected {
			why = append(why, NotDLPRejected)
		}
		if s.Source == reviewctx.SourceMetadata && s.Completeness != reviewctx.Complete {
			why = append(why, NotMetadata)
		}
		if s.Required && s.Completeness != reviewctx.Complete {
			why = append(why, NotRequiredDegraded)
		}
		if s.Source == reviewctx.SourceRemediation && s.Records > 0 {
			why = append(why, NotRemediation)
		}
	}
	return why
}

func dedup(l []string) []string {
	out := l[:0]
	for i, s := range l {
		if i == 0 || s != l[i-1] {
			out = append(out, s)
		}
	}
	return out
}
