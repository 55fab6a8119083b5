package run

import (
	"context"
	"sort"

	"github.com/forgectx/forgectx/internal/snapshot/checkdigest"
	"github.com/forgectx/forgectx/internal/snapshot/verify"
	"github.com/forgectx/forgectx/internal/status"
)

// failedConclusions are the check conclusions the status comment and the job summary list as
// failed checks of the head (cancelled, skipped, neutral and action_required are not failures).
var failedConclusions = map[string]bool{"failure": true, "timed_out": true}

// contextReport reads what the final status comment and the job summary tell a human about the
// agent's context, from the tree the run just staged: the gaps of its index and its failed
// checks, each with the digest of its log when the tree holds the log. It runs right after staging — before the
// pre-script, which receives the host tree, and long before cleanup removes it — and reads
// the tree through verify.Open against the retained index digest, so only verified bytes are
// digested. A tree that cannot be opened or digested is logged (counts and rules, no content)
// and the report keeps the assembler's gaps with no failed checks.
func (r *runner) contextReport(ctx context.Context) *status.Context {
	c := &status.Context{}
	snap, rep, err := verify.Open(ctx, r.treeDir, verify.Options{IndexSHA256: r.retained})
	if err != nil || snap == nil {
		r.log.Warn().Err(err).Int("violations", len(rep.Violations)).Msg("forgectx run: staged tree not readable for the failed-check digest")
		if s := r.res.Summary; s != nil {
			for _, g := range s.Gaps {
				c.Gaps = append(c.Gaps, status.Gap{Scope: g.Scope, Code: g.Code, Count: g.Count})
			}
		}
		return c
	}
	for _, g := range snap.Manifest.Gaps {
		c.Gaps = append(c.Gaps, status.Gap{Scope: g.Scope, Code: g.Code, Count: g.Count})
	}
	checks, err := checkdigest.FromSnapshot(snap, checkdigest.Limits{})
	if err != nil {
		r.log.Warn().Err(err).Msg("forgectx run: failed-check digest not computed")
		return c
	}
	type failed struct {
		path string
		fc   status.FailedCheck
	}
	var list []failed
	for _, ch := range checks {
		if failedConclusions[ch.Conclusion] {
			list = append(list, failed{ch.Path, status.FailedCheck{Name: ch.Name, Category: string(ch.Digest.Category), FirstError: ch.Digest.FirstError}})
		}
	}
	// A failed check whose log is not in the tree is still listed, by name: what failed
	// matters to a human even when the agent could not read why (the gaps say why not).
	for _, rec := range snap.Manifest.Records {
		if rec.Kind != "check" || rec.LogPath != "" || rec.MetadataPath == "" {
			continue
		}
		name, conclusion, err := checkdigest.Metadata(snap, rec.MetadataPath)
		if err != nil {
			r.log.Warn().Err(err).Msg("forgectx run: a check's metadata not read for the failed-check list")
			continue
		}
		if failedConclusions[conclusion] {
			list = append(list, failed{rec.MetadataPath, status.FailedCheck{Name: name, NoLog: true}})
		}
	}
	// By name, then path (unique): the tree's order is by record key, which a human cannot
	// follow.
	sort.Slice(list, func(i, j int) bool {
		if list[i].fc.Name != list[j].fc.Name {
			return list[i].fc.Name < list[j].fc.Name
		}
		return list[i].path < list[j].path
	})
	for _, f := range list {
		c.Failed = append(c.Failed, f.fc)
	}
	return c
}
