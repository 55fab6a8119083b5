package reviewctx

import (
	"context"
	"time"
)

// The broker views below are provider-neutral: a forge edge (gitlab.go) fills them and the
// common commit path (acquire.go, store.go) never imports a provider.

// Target is what the forge reported about the review: the protection state of the target
// branch (never inferred), the captured target SHA (the policy's only authority) and the
// reviewed head.
type Target struct {
	Protected    bool
	TargetBranch string
	TargetSHA    string
	ReviewedHead string
	// ProjectID and IID are the merge request's numeric project ID and IID as the API
	// answered them (the enriched merge-request environment is checked against them).
	ProjectID, IID int64
}

// Metadata is the merge-request metadata projection before DLP.
type Metadata struct {
	Title        string
	Description  string
	Labels       []string
	SourceBranch string
}

// Draft is one record before DLP and commit.
type Draft struct {
	Source          string
	ResourceClass   string
	CanonicalObject string
	Version         string
	Mutable         bool
	Adapter, Tenant string
	Projections     Projections
	Content         Content
	// Discoverable marks text that may feed reference discovery (admitted metadata and
	// generic discussion bodies only; never remediation).
	Discoverable bool
	// Expiry, when set, is the upstream expiry (adapter records); it is capped by the store's.
	Expiry time.Time
}

// SourceResult is one source's drafts and state.
type SourceResult struct {
	State  SourceState
	Drafts []Draft
}

// Forge is the provider edge acquisition needs. Every method reads the exact validated
// project and merge request only.
type Forge interface {
	// Target reads the merge request and the target branch: protection, target SHA, head.
	Target(ctx context.Context) (Target, error)
	// PolicyBlob reads policyPath as a bounded regular Git blob at sha; a missing, symlink,
	// submodule or oversized entry is an ErrPolicy.
	PolicyBlob(ctx context.Context, sha string) ([]byte, error)
	// Metadata returns the metadata projection of the merge request as first read.
	Metadata(ctx context.Context) (Metadata, error)
	// BotUsername returns the live authenticated bot's username (the token's own user), whose
	// mentions anywhere in a line are lifecycle commands.
	BotUsername(ctx context.Context) (string, error)
	// Identities returns the display identities read so far, for the context DLP.
	Identities() Identities
	// Discussions acquires generic discussions and remediation threads (either selector may
	// be nil), each read twice.
	Discussions(ctx context.Context, generic, remediation *Discussions, head string) (SourceResult, SourceResult)
	// CIOutcomes acquires same-revision CI outcomes for head, read twice.
	CIOutcomes(ctx context.Context, sel *CIOutcomes, head string) SourceResult
	// Recheck re-reads the merge request: the head and the metadata must be unchanged.
	Recheck(ctx context.Context, t Target, m Metadata) (headSame, metadataSame bool, err error)
}

func addReason(s *SourceState, r string) {
	for _, x := range s.Reasons {
		if x == r {
			return
		}
	}
	s.Reasons = append(s.Reasons, r)
	// keep sorted unique
	for i := len(s.Reasons) - 1; i > 0 && s.Reasons[i] < s.Reasons[i-1]; i-- {
		s.Reasons[i], s.Reasons[i-1] = s.Reasons[i-1], s.Reasons[i]
	}
}

// degrade records reason and lowers the completeness to at least c.
func degrade(s *SourceState, c Completeness, reason string) {
	s.Completeness = worse(s.Completeness, c)
	addReason(s, reason)
}

func newState(source string, required bool) SourceState {
	return SourceState{Source: source, Required: required, Completeness: Complete, Reasons: []string{}}
}
