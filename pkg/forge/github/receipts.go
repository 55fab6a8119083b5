package github

import (
	"context"

	"github.com/forgectx/forgectx/pkg/acquisition"
)

// ReceiptReader reads forge-observable Fullsend run receipts back from an entity (the
// history/agent-runs.json source). The receipt format is a later issue; until it lands the
// adapter uses noReceipts.
type ReceiptReader interface {
	ReadReceipts(ctx context.Context, owner, repo string, number int) ([]acquisition.AgentRun, error)
}

// noReceipts is the placeholder ReceiptReader: no receipt format exists yet, so there is
// nothing to read back. It reports no receipts and no gap — an honest empty history only
// because no receipt can have been written by this build.
type noReceipts struct{}

func (noReceipts) ReadReceipts(context.Context, string, string, int) ([]acquisition.AgentRun, error) {
	return nil, nil
}

// readReceipts is the agent_runs source hook: it calls the client's ReceiptReader.
func (r *run) readReceipts(ctx context.Context) ([]acquisition.AgentRun, gapList) {
	var gaps gapList
	rr := r.c.receipts
	if rr == nil {
		rr = noReceipts{}
	}
	runs, err := rr.ReadReceipts(ctx, r.owner, r.name, r.number)
	if err != nil {
		gaps.add(acquisition.GapFetchFailed, 1)
		return nil, gaps
	}
	return runs, gaps
}
