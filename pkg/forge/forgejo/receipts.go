package forgejo

import (
	"strconv"

	"code.gitea.io/sdk/gitea"

	"github.com/forgectx/forgectx/pkg/acquisition"
	"github.com/forgectx/forgectx/pkg/status"
)

// IsReceiptComment reports whether body's first line is the receipt marker (docs/receipts.md:
// the only place a marker counts).
func IsReceiptComment(body string) bool { return firstLine(body) == status.ReceiptMarker }

// receiptRuns maps the receipt comments among an entity's issue comments to agent runs
// (history/agent-runs.json source). The run ID is the receipt comment's numeric id (the
// immutable forge record ID, so a forged copy can never collide with a genuine receipt); the
// comment's author is the run's Author. Whether a receipt is trusted is the assembler's
// decision: it admits only receipts by a registered bot identity, and on Forgejo no actor is
// a bot unless the operator's registry says so. A receipt that does not parse is
// invalid_metadata, never a silent omission.
func receiptRuns(comments []*gitea.Comment) ([]acquisition.AgentRun, int) {
	runs := []acquisition.AgentRun{}
	invalid := 0
	seen := map[int64]bool{}
	for _, c := range comments {
		if c == nil || !IsReceiptComment(c.Body) || seen[c.ID] {
			continue
		}
		seen[c.ID] = true
		rc, err := status.ParseReceipt(c.Body)
		if err != nil || c.ID <= 0 {
			invalid++
			continue
		}
		runs = append(runs, acquisition.AgentRun{
			ID: strconv.FormatInt(c.ID, 10), Author: actorRef(c.Poster), Agent: rc.Agent, Status: rc.Status,
			InputRevision: rc.InputRevision, InputHeadSHA: rc.InputHeadSHA, ResultRecordKeys: rc.ResultRecordKeys,
			ResultingCommitSHA: rc.ResultingCommitSHA, StartedAt: rc.StartedAt, CompletedAt: rc.CompletedAt,
		})
	}
	return runs, invalid
}
