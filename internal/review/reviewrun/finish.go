package reviewrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/forgectx/forgectx/internal/lifecycle"
	"github.com/forgectx/forgectx/internal/review/reviewctx"
	"github.com/forgectx/forgectx/internal/review/reviewmcp"
	"github.com/forgectx/forgectx/internal/review/reviewpub"
	"github.com/forgectx/forgectx/internal/review/reviewresult"
)

// DefaultFinishTimeout is the finishing steps' budget when Options.FinishTimeout is unset: the
// ordinary finishing budget of forgectx run, ample for a summary note, the finding
// discussions and the approval, and short enough that a hung forge fails the job instead of
// holding it until the CI system's own timeout.
const DefaultFinishTimeout = 2 * time.Minute

// outcome is how a review ended (Result.Status and Detail) and, for a failure that posts a
// note, its closed failure state.
type outcome struct {
	status, detail string
	note           string
}

// statusPosting is the outcome between the decision and the result step: nothing failed, the
// result is posted next (or withheld). It never reaches a Result.
const statusPosting = "posting"

// finishing is the review's finishing on every path but preservation (lifecycle.Finish), in
// order: cleanup; the projection with receipt v8; the decision (a signal cancels the run and
// nothing is posted; the signal guard stops there); the failure note of a run that failed
// before its projection; the result with its receipt, or the withheld summary.
func (r *runner) finishing(guard *lifecycle.SignalGuard) lifecycle.Finish[outcome] {
	return lifecycle.Finish[outcome]{
		Budget: func(outcome) time.Duration { return r.o.FinishTimeout },
		Report: r.logPanic,
		Steps: []lifecycle.FinishStep[outcome]{
			{Name: "cleanup", Run: func(_ context.Context, out outcome) outcome {
				r.res.Cleanup = CleanupFailed // should cleanup panic, it did not complete
				r.res.Cleanup = r.cleanup()
				return out
			}},
			{Name: "projection", Run: r.projectStep},
			{Name: "decision", Run: func(context.Context, outcome) outcome {
				sig := guard.Signal()
				guard.Stop()
				return r.decide(sig)
			}},
			{Name: "failure", Run: func(ctx context.Context, out outcome) outcome {
				if out.note != "" {
					r.postFailure(ctx, out.note)
				}
				return out
			}},
			{Name: "result", Run: r.resultStep},
		},
	}
}

// projectStep projects a run whose phases all succeeded. Should the projection panic, the
// run stays failed with a projection error (and posts its failure note).
func (r *runner) projectStep(ctx context.Context, out outcome) outcome {
	if r.err == nil {
		r.err = fmt.Errorf("%w: incomplete", ErrProjection)
		r.proj, r.err = r.project(ctx)
	}
	return out
}

// decide is the run's outcome once cleanup and the projection are done: a signal received
// until now cancels it (nothing is posted); an error fails it, with a failure note when a
// closed failure state applies; otherwise the result is posted.
func (r *runner) decide(sig os.Signal) outcome {
	switch {
	case sig != nil:
		r.err = fmt.Errorf("reviewrun: interrupted by %s", sig)
		return outcome{status: StatusCancelled, detail: "interrupted by " + sig.String() + "; cleanup and projection completed, nothing posted"}
	case r.err != nil && r.failState != "" && !IsConfigError(r.err):
		return outcome{status: StatusFailure, detail: "failed: " + r.failState, note: r.failState}
	case r.err != nil:
		return outcome{status: StatusFailure}
	}
	return outcome{status: statusPosting}
}

// resultStep posts the projection. A failed cleanup or publication validation blocks ordinary
// result publication: the summary says so, with the receipt, and nothing else is posted.
func (r *runner) resultStep(ctx context.Context, out outcome) outcome {
	if out.status != statusPosting {
		return out
	}
	var withheld string
	pubErr := validRendering(r.proj)
	switch {
	case r.res.Cleanup != CleanupComplete:
		withheld = "the review session could not be cleaned up"
	case pubErr != nil:
		withheld = "the result did not pass publication validation"
	}
	if withheld != "" {
		out = outcome{status: StatusFailure, detail: withheld + ": result withheld"}
		if err := r.postWithheld(ctx, r.proj, withheld, pubErr == nil); err != nil {
			r.err = err
			return out
		}
		r.err = errors.New("reviewrun: " + withheld + "; the result was withheld")
		return out
	}
	if err := r.post(ctx, r.proj); err != nil {
		r.err = err
		return outcome{status: StatusFailure, detail: "posting failed"}
	}
	return outcome{status: StatusSuccess}
}

// logPanic reports a finishing step's panic by the step's name and the panic's type only (its
// value may carry content).
func (r *runner) logPanic(step string, p any) {
	r.o.Log.Error().Str("step", step).Str("panic_type", fmt.Sprintf("%T", p)).Msg("review-context run: internal error in a finishing step")
}

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
