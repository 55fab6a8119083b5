package forgejo

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"code.gitea.io/sdk/gitea"

	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/internal/status"
)

// IsReceiptComment reports whether body's first line is the receipt marker (docs/receipts.md:
// the only place a marker counts).
func IsReceiptComment(body string) bool { return firstLine(body) == status.ReceiptMarker }

// anyAuthor is the receiptRuns author filter that reads every author's receipts.
const anyAuthor = 0

// receiptRuns maps the receipt comments among an entity's issue comments to agent runs
// (history/agent-runs.json source). The run ID is the receipt comment's numeric id (the
// immutable forge record ID, so a forged copy can never collide with a genuine receipt); the
// comment's author is the run's Author. Whether a receipt is trusted is the assembler's
// decision: it admits only receipts by a registered bot identity, and on Forgejo no actor is
// a bot unless the operator's registry says so. A receipt that does not parse is
// invalid_metadata, never a silent omission.
//
// self, unless anyAuthor, is the only poster id whose receipts are read (forgectx's own
// comment identity, Options.ReceiptsBySelf — the Actions pseudo-user -2 included): a receipt
// comment by anyone else is counted in unauthorized before it is parsed.
func receiptRuns(comments []*gitea.Comment, self int64) (runs []acquisition.AgentRun, invalid, unauthorized int) {
	runs = []acquisition.AgentRun{}
	seen := map[int64]bool{}
	for _, c := range comments {
		if c == nil || !IsReceiptComment(c.Body) || seen[c.ID] {
			continue
		}
		seen[c.ID] = true
		if self != anyAuthor && (c.Poster == nil || c.Poster.ID != self) {
			unauthorized++
			continue
		}
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
	return runs, invalid, unauthorized
}

// addReceipts maps the receipts of the (complete) issue comments list into agent_runs. With
// Options.ReceiptsBySelf only the token's own identity's receipts are read; when that identity
// cannot be established the history is unknown: a fetch_failed gap, never an empty history.
func (r *run) addReceipts() {
	self := int64(anyAuthor)
	if r.c.receiptsBySelf {
		id, err := r.self()
		if err != nil {
			r.c.log.Warn().Int("status", statusOf(err)).Msg("forgejo: receipt identity unknown; agent_runs not read")
			r.a.Outcomes.Add(acquisition.ScopeAgentRuns, acquisition.GapFetchFailed, 1)
			return
		}
		self = id
	}
	runs, invalid, unauthorized := receiptRuns(r.issueComments, self)
	r.a.AgentRuns = append(r.a.AgentRuns, runs...)
	r.a.Outcomes.Add(acquisition.ScopeAgentRuns, acquisition.GapInvalidMetadata, invalid)
	r.a.Outcomes.Add(acquisition.ScopeAgentRuns, acquisition.GapAuthorizationFailed, unauthorized)
}

// self is Options.SelfID, else the token's GET /user.
func (r *run) self() (int64, error) {
	if r.c.selfID != 0 {
		return r.c.selfID, nil
	}
	me, err := r.c.reader.Me(r.ctx)
	if err != nil {
		return 0, err
	}
	if me.ID == 0 {
		return 0, errors.New("forgejo: GET /user returned no id")
	}
	return me.ID, nil
}

// Self returns the token's own user id: Options.SelfID when set, else GET /user. `forgectx
// run` resolves it once and builds its client with it as SelfID, so the status comment lookup
// and the receipt reader share one identity and one request.
func (c *Client) Self(ctx context.Context) (int64, error) {
	if c.selfID != 0 {
		return c.selfID, nil
	}
	me, err := c.reader.Me(ctx)
	if err != nil {
		return 0, fmt.Errorf("forgejo: token identity: %w", err)
	}
	if me.ID == 0 {
		return 0, errors.New("forgejo: token identity: GET /user returned no id")
	}
	return me.ID, nil
}
