package gitlab

import (
	"strings"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/forgectx/forgectx/pkg/acquisition"
	"github.com/forgectx/forgectx/pkg/status"
)

// Receipts reads forgectx run receipts (docs/receipts.md) back from the entity's notes: a
// non-system note whose first line is the receipt marker is parsed strictly; a malformed one
// is counted (invalid_metadata) and left out. The agent run's ID is the receipt note's global
// id, the forge record ID the GitLab mapping requires (the receipt's own id field is a
// cross-forge run label, not a GitLab record id); its Author is the note author, which the
// assembler checks against the bot registry. Whether to admit it is not decided here.
func Receipts(ds []*gl.Discussion) ([]acquisition.AgentRun, int) {
	runs := []acquisition.AgentRun{}
	invalid := 0
	for _, d := range ds {
		if d == nil {
			continue
		}
		for _, n := range d.Notes {
			if n == nil || n.System {
				continue
			}
			first, _, _ := strings.Cut(n.Body, "\n")
			if strings.TrimSuffix(first, "\r") != status.ReceiptMarker {
				continue
			}
			id, ok := idString(n.ID)
			r, err := status.ParseReceipt(n.Body)
			if !ok || err != nil {
				invalid++
				continue
			}
			runs = append(runs, acquisition.AgentRun{
				ID: id, Author: actorRef(n.Author.ID, n.Author.Username), Agent: r.Agent, Status: r.Status,
				InputRevision: r.InputRevision, InputHeadSHA: r.InputHeadSHA, ResultRecordKeys: r.ResultRecordKeys,
				ResultingCommitSHA: r.ResultingCommitSHA, StartedAt: r.StartedAt, CompletedAt: r.CompletedAt,
			})
		}
	}
	return runs, invalid
}
