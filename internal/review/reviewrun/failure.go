package reviewrun

import (
	"context"
	"errors"

	"github.com/forgectx/forgectx/internal/review/reviewctx"
)

// Failure states of the summary note a run that fails before its projection posts: closed,
// value-free (docs/review-context.md, "Failure note").
const (
	FailAcquisition         = "acquisition_failed"
	FailSnapshot            = "snapshot_failed"
	FailCheckoutCredentials = "checkout_credentials"
	FailEngine              = "engine_failed"
	FailEngineTimedOut      = "engine_timed_out"
	FailNoEvidenceSummary   = "no_evidence_summary"
	FailUsage               = "mcp_usage_invalid"
	FailResult              = "invalid_result"
)

// failurePhrase is each state's fixed sentence.
var failurePhrase = map[string]string{
	FailAcquisition:         "the review context could not be acquired",
	FailSnapshot:            "the merge request's snapshot could not be assembled or verified",
	FailCheckoutCredentials: "the checkout's git configuration carries a credential that could not be stripped",
	FailEngine:              "the review engine failed",
	FailEngineTimedOut:      "the review engine timed out",
	FailNoEvidenceSummary:   "the review engine never read the evidence summary",
	FailUsage:               "the MCP server's usage record is unreadable",
	FailResult:              "the review result is invalid",
}

// IsConfigError reports whether err is a configuration, selector, policy, adapter-configuration,
// constrained-lifecycle or unprotected-target rejection (exit 2; nothing is posted).
func IsConfigError(err error) bool {
	for _, usage := range []error{ErrConfig, reviewctx.ErrSelector, reviewctx.ErrPolicy, reviewctx.ErrAdapterConfig, reviewctx.ErrConstrained, reviewctx.ErrUnprotectedTarget, reviewctx.ErrMREnvironment, reviewctx.ErrRules} {
		if errors.Is(err, usage) {
			return true
		}
	}
	return false
}

// failureBody is the summary note of a failed run: the marker, the ❌ outcome line with the
// state's fixed phrase and the state itself, no receipt (none exists), no approval.
func failureBody(state string) string {
	return SummaryMarker + "\n## Open Code Review\n\n❌ **Outcome:** failed — " + failurePhrase[state] +
		" (`" + state + "`). Nothing of this run is published and it cannot approve; the job log has the details.\n"
}

// postFailure updates (or creates) the sticky summary note with the failure state. A posting
// error is logged only: the run has already failed.
func (r *runner) postFailure(ctx context.Context, state string) {
	ps, err := r.newPoster()
	if err == nil {
		err = ps.sticky(ctx, failureBody(state))
	}
	if err != nil {
		r.o.Log.Error().Str("state", state).Msg("review-context run: the failure note could not be posted")
		return
	}
	r.o.Log.Info().Str("state", state).Msg("review-context run: failure note posted")
}
