package reviewrun

import (
	"context"
	"fmt"
	"os"

	"github.com/forgectx/forgectx/internal/review/reviewctx"
	"github.com/forgectx/forgectx/internal/review/reviewmcp"
	"github.com/forgectx/forgectx/internal/review/reviewpub"
	"github.com/forgectx/forgectx/internal/review/reviewresult"
)

// project validates the engine's raw result, applies the publication DLP, builds receipt v8
// and attaches both through one inode-checked atomic replacement of the result file. It runs
// after cleanup and is never cancelled.
func (r *runner) project(ctx context.Context) (*Projection, error) {
	path := r.s.resultPath()
	raw, id, err := readRawResult(path, r.s.resultOwner())
	if err != nil {
		return nil, err
	}
	res, err := reviewresult.Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrProjection, err)
	}
	out, err := reviewpub.Project(res, reviewpub.Inputs{Forbidden: r.context, Secrets: r.secrets})
	if err != nil {
		return nil, fmt.Errorf("%w: publication DLP: %w", ErrProjection, err)
	}
	sig := out.Signal
	rc := r.receipt(sig)
	p := &Projection{SchemaVersion: ProjectionSchema, Result: out.Private, Signal: sig, Receipt: rc}
	b, err := encodeProjection(p)
	if err != nil {
		return nil, err
	}
	r.at("replace")
	if err := replaceChecked(path, id, b); err != nil {
		return nil, err
	}
	// The DLP signal is also one telemetry line (counts only).
	r.o.Log.Info().Str("event", reviewpub.SignalSchema).RawJSON("signal", sig.JSON()).Msg("review-context run: publication DLP")
	r.res.Receipt = rc
	// Read the projection back the way posting sees it: a replaced file must parse.
	back, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: read-back", ErrProjection)
	}
	return ParseProjection(back)
}

// receipt assembles receipt v8 from the acquisition, the usage counters, the DLP signal and
// the cleanup result: closed values and counts only.
func (r *runner) receipt(sig reviewpub.Signal) *Receipt {
	a := r.acq
	rc := &Receipt{
		SchemaVersion: ReceiptSchema, SourceSHA: a.ReviewedHead, TargetSHA: a.TargetSHA, PolicyDigest: a.PolicyDigest,
		TargetState: TargetProtected, ContextMode: a.Mode, Sources: []ReceiptSource{},
		PublicationDLP: PublicationDLP{Result: string(sig.Result), Retained: sig.FindingsRetained + sig.WarningsRetained, Omitted: sig.PublicationFiltered},
		Cleanup:        r.res.Cleanup,
	}
	if !a.Protected {
		rc.TargetState = TargetUnprotected
	}
	if a.Store != nil {
		rc.AdmittedMutable = a.Store.AdmittedMutable
	}
	for _, s := range a.Sources {
		rc.Sources = append(rc.Sources, ReceiptSource{Source: s.Source, Required: s.Required, Completeness: s.Completeness,
			Records: s.Records, Omitted: s.Omitted, Degradations: len(s.Reasons)})
	}
	u := r.usage
	rc.EvidenceTools = EvidenceToolUse{Evidence: u.EvidenceSummary + u.EvidenceList + u.EvidenceGet, EvidenceSummary: u.EvidenceSummary,
		Search: u.EvidenceSearch, Coverage: u.EvidenceCoverage}
	if a.Mode == reviewctx.ModeEnriched {
		rc.ContextTools = ContextToolUse{List: u.ContextList, Get: u.ContextGet}
	}
	rc.FailedTool = failedTool(u, r.usageErr, a.Mode == reviewctx.ModeEnriched && a.StoreWritten)
	return rc
}

// failedTool is the closed failed-tool diagnostic state: absent (the server refused no call),
// verified (it counted refused calls; the aggregate is that count), invalid (no readable usage
// record), conflicting (the server ran in a mode other than the run's).
func failedTool(u reviewmcp.Usage, err error, enriched bool) FailedTool {
	switch {
	case err != nil:
		return FailedTool{State: FailedToolInvalid}
	case (u.Mode == reviewmcp.ModeEnriched) != enriched:
		return FailedTool{State: FailedToolConflicting}
	case u.Rejected > 0:
		n := u.Rejected
		return FailedTool{State: FailedToolVerified, Count: &n}
	}
	return FailedTool{State: FailedToolAbsent}
}
