package gitlab

import (
	"context"
	"strings"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/internal/status"
)

// Receipts reads forgectx run receipts (docs/receipts.md) back from the entity's notes: a
// non-system note whose first line is the receipt marker is parsed strictly; a malformed one
// is counted (invalid_metadata) and left out. The agent run's ID is the receipt note's global
// id, the forge record ID the GitLab mapping requires (the receipt's own id field is a
// cross-forge run label, not a GitLab record id); its Author is the note author, which the
// assembler checks against the bot registry. Whether to admit it is not decided here.
func Receipts(ds []*gl.Discussion) ([]acquisition.AgentRun, int) {
	runs, invalid, _ := receipts(ds, 0)
	return runs, invalid
}

// receiptsBy is Receipts restricted to the identity forgectx posts its receipts as: the user
// id self (> 0; the token's GET /user, as the Commenter's own-identity rule). A receipt note by
// anyone else — a human, another bot, an account that copied a receipt — is not read: it is
// counted in unauthorized (the caller records agent_runs authorization_failed), before it is
// parsed. `forgectx run` uses it through Options.ReceiptAuthor.
func receiptsBy(ds []*gl.Discussion, self int64) (runs []acquisition.AgentRun, invalid, unauthorized int) {
	return receipts(ds, self)
}

// receipts reads the receipt notes; self > 0 restricts them to that author.
func receipts(ds []*gl.Discussion, self int64) ([]acquisition.AgentRun, int, int) {
	runs := []acquisition.AgentRun{}
	invalid, unauthorized := 0, 0
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
			if self > 0 && n.Author.ID != self {
				unauthorized++
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
	return runs, invalid, unauthorized
}

// agentRuns fills the agent_runs source from the discussions already read for comments (one
// read serves both). With Options.ReceiptAuthor only that identity's receipts are read; when
// the identity cannot be established the history is unknown: a fetch_failed gap, never an
// empty history.
func (c *Client) agentRuns(ctx context.Context, ds []*gl.Discussion, a *acquisition.Acquisition) {
	if c.opts.ReceiptAuthor == nil {
		runs, invalid := Receipts(ds)
		a.AgentRuns = append(a.AgentRuns, runs...)
		a.Outcomes.Add(acquisition.ScopeAgentRuns, acquisition.GapInvalidMetadata, invalid)
		return
	}
	self, err := c.opts.ReceiptAuthor(ctx)
	if err != nil || self <= 0 {
		c.opts.Log.Warn().Msg("gitlab: receipt identity unknown; agent_runs not read")
		a.Outcomes.Add(acquisition.ScopeAgentRuns, acquisition.GapFetchFailed, 1)
		return
	}
	runs, invalid, unauthorized := receiptsBy(ds, self)
	a.AgentRuns = append(a.AgentRuns, runs...)
	a.Outcomes.Add(acquisition.ScopeAgentRuns, acquisition.GapInvalidMetadata, invalid)
	a.Outcomes.Add(acquisition.ScopeAgentRuns, acquisition.GapAuthorizationFailed, unauthorized)
}

// Self returns the token's own user id (GET /user, read once and cached): the identity the
// Commenter recognises its comments by and Options.ReceiptAuthor restricts receipts to.
func (m *Commenter) Self(ctx context.Context) (int64, error) { return m.whoami(ctx) }
