package reviewrun

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/forgectx/forgectx/internal/review/reviewpub"
	"github.com/forgectx/forgectx/internal/review/reviewresult"
)

// CleanupPreserved is Result.Cleanup of an explicit local preservation run.
const CleanupPreserved = "preserved"

// DecisionsFile is the value-free ocr.private-dlp-decisions/v1 sidecar a preservation run
// writes next to the raw result.
const DecisionsFile = "private-dlp-decisions.json"

// mrExecution reports a validated GitLab CI merge request execution, which refuses the
// preservation exception before the engine starts.
func mrExecution(env map[string]string) bool {
	return env["GITLAB_CI"] == "true" && (env["CI_MERGE_REQUEST_IID"] != "" || env["CI_PIPELINE_SOURCE"] == "merge_request_event")
}

// preserve ends a --preserve-private-artifacts run: the owner-only session (raw store,
// snapshot, generated HOME, usage, raw result) is kept, the value-free DLP attribution sidecar
// is added, and no receipt is made and nothing is posted. It is local evidence for
// investigating conservative false positives, never a posting boundary.
func (r *runner) preserve(runErr error) error {
	r.res.Cleanup, r.res.Preserved = CleanupPreserved, r.s.root
	if runErr != nil {
		r.res.Status = StatusFailure
		return runErr
	}
	raw, _, err := readRawResult(r.s.resultPath(), r.s.resultOwner())
	if err != nil {
		r.res.Status = StatusFailure
		return err
	}
	res, err := reviewresult.Decode(raw)
	if err != nil {
		r.res.Status = StatusFailure
		return fmt.Errorf("%w: %w", ErrProjection, err)
	}
	out, err := reviewpub.Project(res, reviewpub.Inputs{Forbidden: r.context, Secrets: r.secrets})
	if err != nil {
		r.res.Status = StatusFailure
		return fmt.Errorf("%w: publication DLP: %w", ErrProjection, err)
	}
	b, err := out.DecisionsJSON()
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(r.s.out, DecisionsFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("reviewrun: DLP decisions sidecar: %w", err)
	}
	_, werr := f.Write(append(b, '\n'))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("reviewrun: DLP decisions sidecar: %w", werr)
	}
	r.res.Status, r.res.Detail = StatusSuccess, "private artifacts preserved; no receipt, nothing posted"
	r.o.Log.Warn().Str("publication_dlp", string(out.Decision)).Msg("review-context run: private artifacts preserved (local diagnostic; owner-only)")
	return nil
}
