package run

import (
	"github.com/forgectx/forgectx/pkg/cirelay"
	"github.com/forgectx/forgectx/pkg/prescript"
)

// The run's own outputs (docs/run.md, "Outputs"), relayed on every path that reaches a
// terminal state through the same targets as the pre-script decision (pkg/cirelay).
const (
	// OutputStatus is the receipt status: success, failure, skipped, cancelled, timed_out.
	OutputStatus = "status"
	// OutputContextDir is the path of the verified read-only copy the agent was given; empty
	// when the agent was not launched. The copy is removed when the run ends.
	OutputContextDir = "context-dir"
	// DotenvStatus and DotenvContextDir are the same two outputs in the dotenv report, whose
	// keys cannot hold a dash. An empty context directory is omitted there, like every empty
	// dotenv value (cirelay.DotenvEntries).
	DotenvStatus     = "FORGECTX_STATUS"
	DotenvContextDir = "FORGECTX_CONTEXT_DIR"
)

// OutputEntries returns the exact entries appended to $GITHUB_OUTPUT at the end of a run, in
// order.
func OutputEntries(status, contextDir string) []prescript.KV {
	return []prescript.KV{{Key: OutputStatus, Value: status}, {Key: OutputContextDir, Value: contextDir}}
}

// DotenvReport returns the entries of the final dotenv report: the decision's entries when a
// decision was reached (cirelay.DotenvEntries; a script output named like one of the run's
// keys is dropped, the run's value wins), then FORGECTX_STATUS and, when not empty,
// FORGECTX_CONTEXT_DIR.
func DotenvReport(d *prescript.Decision, status, contextDir string) []prescript.KV {
	var out []prescript.KV
	if d != nil {
		for _, kv := range cirelay.DotenvEntries(*d) {
			if kv.Key == DotenvStatus || kv.Key == DotenvContextDir {
				continue
			}
			out = append(out, kv)
		}
	}
	out = append(out, prescript.KV{Key: DotenvStatus, Value: status})
	if contextDir != "" {
		out = append(out, prescript.KV{Key: DotenvContextDir, Value: contextDir})
	}
	return out
}

// relayOutputs writes status and context-dir: appended to $GITHUB_OUTPUT under GitHub (or
// Forgejo) Actions, and, with --dotenv, the dotenv report rewritten whole with them after the
// decision. A failure is logged and recorded in Result.OutputsRelayed; it does not change the
// run's status (the receipt is already posted).
func (r *runner) relayOutputs(out outcome) {
	contextDir := ""
	if r.res.AgentRan {
		contextDir = r.contextDir
	}
	r.res.ContextDir = contextDir
	ok := true
	if path, gh := cirelay.GitHubOutputPath(r.o.Getenv); gh {
		if err := cirelay.WriteGitHubOutput(path, OutputEntries(out.status, contextDir)); err != nil {
			r.log.Error().Err(err).Msg("forgectx run: status and context-dir not written to GITHUB_OUTPUT")
			ok = false
		}
	}
	if r.o.DotenvPath != "" {
		body, err := cirelay.RenderDotenv(DotenvReport(r.decision, out.status, contextDir), cirelay.DotenvLimits{})
		if err == nil {
			err = cirelay.WriteDotenv(r.o.DotenvPath, body)
		}
		if err != nil {
			r.log.Error().Err(err).Msg("forgectx run: status and context-dir not written to the dotenv report")
			ok = false
		}
	}
	r.res.OutputsRelayed = ok
	r.phase("outputs").Str("status", out.status).Bool("context_dir", contextDir != "").Bool("relayed", ok).Msg("forgectx run: outputs relayed")
}
