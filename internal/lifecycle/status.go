package lifecycle

// Statuses a lifecycle ends with: one vocabulary for both lifecycles' results and receipts
// (review-context run uses success, failure and cancelled).
const (
	StatusSuccess   = "success"
	StatusFailure   = "failure"
	StatusSkipped   = "skipped"
	StatusCancelled = "cancelled"
	StatusTimedOut  = "timed_out"
)

// Exit codes of a lifecycle command (docs/exit-codes.md).
const (
	ExitOK     = 0 // success or skip
	ExitFailed = 1 // failure, cancellation, time-out, internal error
	ExitConfig = 2 // configuration error: nothing was posted
)
