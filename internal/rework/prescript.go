package rework

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Pre-script output keys the gate writes besides the protocol's skipped and reason. They are
// prefixed, as the protocol asks of script outputs.
const (
	PrescriptKeyDecision  = "rework_decision"
	PrescriptKeyReceipt   = "rework_receipt_sha256"
	PrescriptKeyReviewIDs = "rework_review_ids"
)

// PrescriptLines maps a published decision onto the pre-script output protocol v1: rework
// proceeds (skipped=false); no_op and blocked skip with the reason. Every value is built from
// wire names and digits only, so it never carries a control character or a body.
func PrescriptLines(res *Result) []string {
	d := res.Decision
	ids := make([]string, 0, len(d.ReworkReviewIDs))
	for _, id := range d.ReworkReviewIDs {
		ids = append(ids, strconv.FormatInt(id, 10))
	}
	var skipped, reason string
	switch d.Decision {
	case DecisionRework:
		skipped, reason = "false", "rework input gate: rework: review "+strings.Join(ids, ", ")
	case DecisionNoOp:
		skipped, reason = "true", "rework input gate: no_op: the spec and code reviews approve the current head"
	default:
		var names []string
		seen := map[Reason]bool{}
		for _, b := range d.BlockingReasons {
			if !seen[b.Reason] {
				seen[b.Reason] = true
				names = append(names, string(b.Reason))
			}
		}
		skipped, reason = "true", "rework input gate: blocked: "+strings.Join(names, ", ")
		if d.Route == RouteDiscovery {
			reason += " (route to Discovery)"
		}
	}
	return []string{
		"skipped=" + skipped,
		"reason=" + reason,
		PrescriptKeyDecision + "=" + d.Decision,
		PrescriptKeyReceipt + "=" + res.ReceiptSHA256,
		PrescriptKeyReviewIDs + "=" + strings.Join(ids, ","),
	}
}

// ErrNoPrescriptOutput is returned when the pre-script output file is not provided.
var ErrNoPrescriptOutput = errors.New("FULLSEND_PRESCRIPT_OUTPUT is unset: not running as a pre-script under the pre-script output protocol v1 (refusing rather than letting the agent run)")

// AppendPrescriptOutput appends PrescriptLines to the protocol's output file, which the runner
// created: it is opened for appending only, never created, and must be a regular file.
func AppendPrescriptOutput(path string, res *Result) error {
	if path == "" {
		return ErrNoPrescriptOutput
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("FULLSEND_PRESCRIPT_OUTPUT: cannot open the output file (%s)", errnoText(err))
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return errors.New("FULLSEND_PRESCRIPT_OUTPUT: the output file is not a regular file")
	}
	if _, err := f.WriteString(strings.Join(PrescriptLines(res), "\n") + "\n"); err != nil {
		return fmt.Errorf("FULLSEND_PRESCRIPT_OUTPUT: write: %s", errnoText(err))
	}
	return f.Close()
}
