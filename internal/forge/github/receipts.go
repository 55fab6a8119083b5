package github

import (
	"context"
	"errors"
	"strings"

	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/internal/status"
)

// ReceiptReader reads forge-observable Fullsend run receipts back from an entity (the
// history/agent-runs.json source).
type ReceiptReader interface {
	ReadReceipts(ctx context.Context, owner, repo string, number int) ([]acquisition.AgentRun, error)
}

// noReceipts is the ReceiptReader of a Client built without Options.Receipts: it reports no
// receipts and no gap. `forgectx run` always sets ReceiptsFromComments; the default stays
// empty so acquisitions recorded before receipts existed replay unchanged.
type noReceipts struct{}

func (noReceipts) ReadReceipts(context.Context, string, string, int) ([]acquisition.AgentRun, error) {
	return nil, nil
}

// commentReceipts is the receipt reader over the entity's conversation comments
// (docs/receipts.md). It needs the acquisition run (to register receipt authors as actors with
// GitHub's positive bot signal), so Acquire handles it itself; called directly it refuses.
// login, when set, is the only identity whose receipts are read (ReceiptsFromCommentsBy).
type commentReceipts struct{ login string }

// ReceiptsFromComments reads receipts (docs/receipts.md) from the issue or pull request's
// conversation comments: every comment whose first line is status.ReceiptMarker is parsed
// strictly. The agent run's ID is the receipt comment's node_id (the immutable forge record
// ID, unique per comment, so a forged copy can never collide with a genuine receipt); the
// receipt's own id field (gha-<run>-<attempt>) is the cross-forge run label shown in the
// comment. The comment's author becomes the run's Author and is registered as an actor (kind
// bot only when GitHub reports type Bot): the assembler admits only receipts by a registered
// bot identity and counts the rest as authorization_failed. A malformed receipt is an
// invalid_metadata gap. Set it as Options.Receipts.
var ReceiptsFromComments ReceiptReader = commentReceipts{}

// ReceiptsFromCommentsBy is ReceiptsFromComments restricted to the identity forgectx posts its
// receipts as (the commenter's login, matched like Commenter's own-identity rule: login
// case-insensitive, GitHub's type Bot for a "[bot]" login). A receipt-marked comment by anyone
// else — a human, another registered bot such as a dependency updater, a user account that
// merely carries the bot's login — is not read: it is counted as an agent_runs
// authorization_failed gap, and this reader does not register its author as an actor. The assembler's bot-registry admission still applies to what is read. `forgectx run`
// uses it with --comment-author.
func ReceiptsFromCommentsBy(login string) ReceiptReader { return commentReceipts{login: login} }

func (commentReceipts) ReadReceipts(context.Context, string, string, int) ([]acquisition.AgentRun, error) {
	return nil, errors.New("github: ReceiptsFromComments reads receipts only inside Client.Acquire")
}

// readReceipts is the agent_runs source hook: it calls the client's ReceiptReader.
func (r *run) readReceipts(ctx context.Context) ([]acquisition.AgentRun, gapList) {
	var gaps gapList
	rr := r.c.receipts
	if rr == nil {
		rr = noReceipts{}
	}
	if cr, ok := rr.(commentReceipts); ok {
		return r.readCommentReceipts(ctx, cr.login)
	}
	runs, err := rr.ReadReceipts(ctx, r.owner, r.name, r.number)
	if err != nil {
		gaps.add(acquisition.GapFetchFailed, 1)
		return nil, gaps
	}
	return runs, gaps
}

// readCommentReceipts is the agent_runs source when the comments source is not selected: it
// lists the entity's conversation comments (every page) for receipts alone. With both
// selected, Acquire lists once and hands the listing to receiptsFrom.
func (r *run) readCommentReceipts(ctx context.Context, login string) ([]acquisition.AgentRun, gapList) {
	return r.receiptsFrom(r.listComments(ctx, acquisition.SourceAgentRuns), login)
}

// receiptsFrom maps each receipt comment of a comments listing to an AgentRun. A listing that
// failed or is incomplete (pages shifted while read, fewer comments than GitHub reported) was
// recorded by listComments: the dependency map gives agent_runs its fetch_failed gap, the
// history is then incomplete and must not be taken for an empty one.
func (r *run) receiptsFrom(l commentList, login string) ([]acquisition.AgentRun, gapList) {
	var gaps gapList
	runs := []acquisition.AgentRun{}
	seen := map[string]bool{}
	for _, c := range l.items {
		if !isReceiptComment(c.GetBody()) || seen[c.GetNodeID()] {
			continue
		}
		seen[c.GetNodeID()] = true
		if login != "" && !isIdentity(c.User, login) {
			gaps.add(acquisition.GapAuthorizationFailed, 1)
			continue
		}
		rc, perr := status.ParseReceipt(c.GetBody())
		author, ok := r.refREST(c.User)
		if perr != nil || !ok || !validNodeID(c.GetNodeID()) {
			gaps.add(acquisition.GapInvalidMetadata, 1)
			continue
		}
		runs = append(runs, acquisition.AgentRun{
			ID: c.GetNodeID(), Author: author, Agent: rc.Agent, Status: rc.Status,
			InputRevision: rc.InputRevision, InputHeadSHA: rc.InputHeadSHA, ResultRecordKeys: rc.ResultRecordKeys,
			ResultingCommitSHA: rc.ResultingCommitSHA, StartedAt: rc.StartedAt, CompletedAt: rc.CompletedAt,
		})
	}
	return runs, gaps
}

// isReceiptComment reports whether body's first line is the receipt marker (the only place a
// marker counts).
func isReceiptComment(body string) bool {
	first, _, _ := strings.Cut(body, "\n")
	return strings.TrimSuffix(first, "\r") == status.ReceiptMarker
}
