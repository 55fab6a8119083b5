package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/pkg/canon"
	"github.com/forgectx/forgectx/pkg/cirelay"
	"github.com/forgectx/forgectx/pkg/distill"
	"github.com/forgectx/forgectx/pkg/filter"
	"github.com/forgectx/forgectx/pkg/forge"
	_ "github.com/forgectx/forgectx/pkg/forge/providers" // registers every forge of this build
	"github.com/forgectx/forgectx/pkg/prescript"
	"github.com/forgectx/forgectx/pkg/snapshot"
	"github.com/forgectx/forgectx/pkg/stage"
	"github.com/forgectx/forgectx/pkg/status"
	"github.com/forgectx/forgectx/pkg/verify"
)

// noInput is input_revision when the run consumed no index.json (it ended before a snapshot
// was assembled): the SHA-256 of zero bytes, the digest of exactly what was consumed.
var noInput = canon.SHA256Hex(nil)

// maxExcerptBytes bounds FORGECTX_EVENT_EXCERPT: Linux refuses a single environment string
// over 128 KiB, so a larger excerpt is replaced by {} (and logged).
const maxExcerptBytes = 96 << 10

// runner is the state of one run.
type runner struct {
	o        Options
	c        *config
	log      zerolog.Logger
	pipe     *filter.Pipeline
	withheld []string // literal values never passed to the agent
	conn     *forge.Conn
	status   *statusComment
	res      *Result
	start    time.Time

	stageOpts   stage.Options
	st          *stage.Stage
	preDir      string // private directory of the pre-script output file
	treeDir     string // the host tree (pre- and post-script)
	tree        *snapshot.Tree
	retained    string // the assembler's index digest: the root of trust
	decision    *prescript.Decision
	results     runResults
	agentStatus string
	contextDir  string // the sealed copy handed to the agent
	cur         string // the lifecycle phase running (for an internal error)
}

// Run performs the whole CI job (docs/run.md): scavenge → start status comment → snapshot →
// pre-script → relay → (skip | root-index compare, verified read-only copy → agent →
// post-script) → completion status and receipt → cleanup, on every path.
//
// It returns a *ConfigError (exit 2) before anything is posted when the configuration is
// wrong; a *RunError (exit 1) with the Result when the run failed, was cancelled or timed out;
// nil with the Result on success or skip (exit 0).
func Run(ctx context.Context, o Options) (*Result, error) {
	defaults(&o)
	start := o.Now()
	c, err := resolve(&o, start)
	if err != nil {
		return nil, err
	}
	r := &runner{o: o, c: c, log: o.Log, start: start, res: &Result{}}
	// The filter redacts every credential-looking variable of the environment (by the filter's
	// name rule) plus the token, every forge credential variable and the registered secrets.
	// The agent is denied the values of exactly those: the token, every variable with a forge
	// credential name (harness.IsForgeCredentialName: GH_TOKEN, INPUT_TOKEN,
	// ACTIONS_RUNTIME_TOKEN, CI_JOB_TOKEN, …) and the registered secrets, under whatever name
	// a harness-listed variable carries them (it may need, say, its model API key).
	names := withheldNames(o.Environ(), c.tokenEnv, c.h.Secrets)
	r.pipe = filter.New(append(filter.SecretEnvValues(o.Environ(), names), c.token))
	r.withheld = append(pickValues(o.Environ(), names), c.token)
	if err := r.connect(); err != nil {
		return nil, err
	}
	return r.run(ctx)
}

func defaults(o *Options) {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Environ == nil {
		o.Environ = os.Environ
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.KillGrace <= 0 {
		o.KillGrace = 3 * time.Second
	}
	if o.FinishTimeout <= 0 {
		o.FinishTimeout = 5 * time.Second
	}
}

// connect builds the forge clients through the registry: the acquirer (which reads back only
// receipts by forgectx's own identity into agent_runs) and the commenter of the status
// comment and receipts.
func (r *runner) connect() error {
	conn, err := forge.Connect(r.c.provider, forge.Options{
		APIURL: r.c.ref.APIURL, Token: r.c.token, TokenEnv: r.c.tokenEnv, InsecureHTTP: r.o.InsecureHTTP, Log: r.log,
		CommentAuthor: r.c.author, CommentAuthorID: r.c.selfID, Kind: r.c.kind, OwnReceipts: true, WithCommenter: true,
	}, true)
	if err != nil {
		return err
	}
	r.conn = conn
	r.status = &statusComment{c: conn.Commenter, ref: r.c.ref, agent: r.c.h.Agent.Name, runURL: r.c.runURL, pipe: r.pipe, log: r.log}
	return nil
}

// resolveIdentity settles the comment identity once, before the status comment lookup and the
// acquisition both need it (Forgejo without --comment-author-id: the token's GET /user). If it
// cannot be read, the lookup and the receipt reader each try again and fail on their own terms
// (a warning; an agent_runs fetch_failed gap).
func (r *runner) resolveIdentity(ctx context.Context) {
	if r.conn.ResolveIdentity == nil {
		return
	}
	if err := r.conn.ResolveIdentity(ctx); err != nil {
		r.log.Warn().Err(err).Str("forge", r.c.ref.Forge).Msg("forgectx run: token identity unknown")
		return
	}
	r.status.c = r.conn.Commenter
}

// outcome is how the lifecycle ended.
type outcome struct {
	status string
	detail string
}

func (r *runner) phase(name string) *zerolog.Event {
	return r.log.Info().Str("phase", name)
}

func (r *runner) run(parent context.Context) (*Result, error) {
	ctx, cancel := context.WithTimeout(parent, r.c.h.TotalTimeout)
	defer cancel()
	// Cleanup runs exactly once on every path; the deferred call covers a panic that escapes
	// the guards below (it then propagates with every tree already removed).
	cleaned := false
	clean := func() {
		if !cleaned {
			cleaned = true
			r.cleanup()
		}
	}
	defer clean()
	r.log.Info().Str("agent", r.c.h.Agent.Name).Str("forge", r.c.ref.Forge).Str("kind", r.c.kind).
		Int("number", r.c.ref.Number).Str("receipt_id", r.c.receipt).Msg("forgectx run: starting")

	out := r.guardLifecycle(parent, ctx)

	// Finish on every path, in the order: completion status comment, receipt, cleanup,
	// then the job summary. After a cancellation or time-out the run's context is over, so the
	// forge writes get a short context of their own.
	fctx, fcancel := context.WithTimeout(context.WithoutCancel(parent), r.finishBudget(out.status))
	defer fcancel()
	if out.status == StatusCancelled {
		// GitHub sends SIGKILL seconds after cancelling: on a cancellation the trees go first
		// and the forge writes get what is left.
		r.guard("cleanup", clean)
	}
	r.res.Status, r.res.Detail = out.status, out.detail
	r.guard("status", func() { r.finishStatus(fctx, out) })
	r.guard("receipt", func() { r.postReceipt(fctx, out) })
	if !r.res.ReceiptPosted && (out.status == StatusSuccess || out.status == StatusSkipped) {
		// Every run leaves a receipt: a run whose receipt could not be posted is a failed run
		// (the receipt, had it been posted, would have said what the agent did). The status
		// comment already shows the success or skip: it is corrected.
		out = outcome{StatusFailure, "the run receipt could not be posted"}
		r.res.Status, r.res.Detail = out.status, out.detail
		r.guard("status", func() { r.finishStatus(fctx, out) })
	}
	r.guard("outputs", func() { r.relayOutputs(out) })
	r.guard("cleanup", clean)
	r.guard("summary", func() { r.writeSummary(out) })
	r.phase("done").Str("status", out.status).Bool("receipt_posted", r.res.ReceiptPosted).
		Bool("status_posted", r.res.StatusPosted).Int("cleanup_errors", len(r.res.Cleanup)).Msg("forgectx run: finished")

	if r.res.ExitCode() != ExitOK {
		return r.res, &RunError{Status: out.status, Detail: out.detail}
	}
	return r.res, nil
}

// guardLifecycle runs the lifecycle and turns a panic in any phase into a failed run (the
// status comment, receipt and cleanup still follow). Only the phase and, for a Go runtime
// error, its message are logged: a panic value may carry content.
func (r *runner) guardLifecycle(parent, ctx context.Context) (out outcome) {
	defer func() {
		if p := recover(); p != nil {
			r.logPanic(r.cur, p)
			out = outcome{StatusFailure, "forgectx failed internally during the " + r.cur + " phase"}
		}
	}()
	return r.lifecycle(parent, ctx)
}

// guard runs one finishing step; a panic in it is logged and the remaining steps still run.
func (r *runner) guard(step string, f func()) {
	defer func() {
		if p := recover(); p != nil {
			r.logPanic(step, p)
		}
	}()
	f()
}

func (r *runner) logPanic(phase string, p any) {
	ev := r.log.Error().Str("phase", phase).Str("panic_type", fmt.Sprintf("%T", p))
	if re, ok := p.(runtime.Error); ok {
		ev = ev.Str("runtime_error", re.Error())
	}
	ev.Msg("forgectx run: internal error; finishing and cleaning up")
}

func (r *runner) finishBudget(st string) time.Duration {
	if st == StatusCancelled || st == StatusTimedOut {
		return r.o.FinishTimeout
	}
	return 2 * time.Minute
}

// interrupted classifies an ended context: the parent cancelled (SIGTERM) is cancelled; the
// total timeout is timed_out.
func interrupted(parent, ctx context.Context) (outcome, bool) {
	if parent.Err() != nil && !errors.Is(parent.Err(), context.DeadlineExceeded) {
		return outcome{StatusCancelled, "the run was cancelled"}, true
	}
	if ctx.Err() != nil {
		return outcome{StatusTimedOut, "the run exceeded its total timeout"}, true
	}
	return outcome{}, false
}

// stopped is the outcome of a host process (what: "the agent", "the post-script") that was
// cancelled or ran out of time, and whether it was: a cancellation is cancelled; a timeout is
// the run's own interruption when the run's context ended, else the process's timed_out.
func stopped(what string, p procResult, timeout time.Duration, parent, ctx context.Context) (outcome, bool) {
	switch {
	case p.Cancelled:
		return outcome{StatusCancelled, "the run was cancelled while " + what + " ran"}, true
	case p.TimedOut:
		if o, ok := interrupted(parent, ctx); ok {
			return o, true
		}
		return outcome{StatusTimedOut, describeExit(what, p, timeout)}, true
	}
	return outcome{}, false
}

func (r *runner) lifecycle(parent, ctx context.Context) outcome {
	h := r.c.h
	r.cur = "scavenge"
	// 1. Scavenge trees abandoned by runs that died uncleanly.
	r.stageOpts = stage.Options{Base: r.c.base, StateDir: r.c.state, Forbidden: r.o.ArtifactDirs, Getenv: r.o.Getenv, Log: &r.log}
	sc, err := stage.Scavenge(ctx, r.stageOpts)
	if err != nil {
		r.log.Warn().Err(err).Msg("forgectx run: scavenging failed")
	}
	r.res.Scavenged = sc.Removed
	r.phase("scavenge").Int("scanned", sc.Scanned).Int("removed", sc.Removed).Int("live", sc.Live).Int("errors", len(sc.Errors)).Msg("forgectx run: abandoned trees scavenged")

	r.cur = "status"
	r.resolveIdentity(ctx)
	// 2. Start status comment (a failure to post it is logged, never fatal: the receipt is
	// what history relies on).
	if err := r.status.start(ctx); err != nil {
		r.log.Warn().Err(err).Msg("forgectx run: start status comment not posted")
	} else {
		r.res.StatusPosted = true
	}
	r.phase("status").Bool("posted", r.res.StatusPosted).Msg("forgectx run: start status comment")

	r.cur = "snapshot"
	// 3. Build and stage the snapshot.
	acq, err := r.conn.Acquirer.Acquire(ctx, r.c.ref, r.c.profile)
	if err != nil {
		if o, ok := interrupted(parent, ctx); ok {
			return o
		}
		r.log.Error().Err(err).Msg("forgectx run: acquisition failed")
		return outcome{StatusFailure, "reading the entity from the forge failed"}
	}
	tree, err := snapshot.Assemble(ctx, acq, snapshot.Config{Profile: r.c.profile, Category: h.Agent.Category, Bots: h.Bots, Filter: r.pipe})
	if err != nil {
		if o, ok := interrupted(parent, ctx); ok {
			return o
		}
		var ab *snapshot.AbortError
		if errors.As(err, &ab) {
			r.log.Error().Str("scope", ab.Scope).Str("code", ab.Code).Msg("forgectx run: snapshot aborted")
			return outcome{StatusFailure, fmt.Sprintf("snapshot aborted (%s %s): no script or agent was started", ab.Scope, ab.Code)}
		}
		return outcome{StatusFailure, "snapshot assembly failed"}
	}
	sum := tree.Summary
	r.res.Summary = &sum
	st, err := stage.Create(ctx, r.stageOpts, tree, tree.IndexSHA256)
	if err != nil {
		if o, ok := interrupted(parent, ctx); ok {
			return o
		}
		var pe *stage.PlacementError
		if errors.As(err, &pe) {
			return outcome{StatusFailure, "the snapshot tree would be placed inside the repository or run output; nothing was started"}
		}
		r.log.Error().Err(err).Msg("forgectx run: staging failed")
		return outcome{StatusFailure, "the snapshot could not be staged"}
	}
	// From here the pre-script has seen this index: it is the input the run consumed.
	r.st, r.tree, r.retained, r.treeDir = st, tree, tree.IndexSHA256, st.HostDir
	r.phase("snapshot").Str("index_sha256", r.retained).Int("files", sum.Files).Int("gaps", len(sum.Gaps)).
		Int("findings", len(sum.Findings)).Msg("forgectx run: snapshot staged")

	r.cur = "pre-script"
	// 4. Pre-script under the protocol, with the snapshot path in its environment.
	d := prescript.NoPrescript()
	if h.PreScript != nil {
		if r.preDir, err = os.MkdirTemp(r.c.state, "prescript-"); err != nil {
			return outcome{StatusFailure, "the pre-script output file could not be prepared"}
		}
		env := append(pickEnv(r.o.Environ(), h.PreScript.Env), EnvSnapshotDir+"="+r.treeDir)
		log := r.log
		sout, serr := newRedactLines(r.o.Stderr, r.pipe), newRedactLines(r.o.Stderr, r.pipe)
		d, err = prescript.Run(ctx, prescript.Options{
			RunDir: r.preDir, Command: h.PreScript.Command, Env: env,
			Stdout: sout, Stderr: serr, Redactor: r.pipe, Timeout: h.PreScript.Timeout, Log: &log,
		})
		sout.Flush()
		serr.Flush()
		if err != nil {
			if o, ok := interrupted(parent, ctx); ok {
				return o
			}
			var hf *prescript.HardFailure
			var pe *prescript.ProtocolError
			switch {
			case errors.As(err, &hf) && hf.TimedOut:
				return outcome{StatusTimedOut, "pre-script: " + hf.Diagnostic}
			case errors.As(err, &hf):
				return outcome{StatusFailure, "pre-script: " + hf.Diagnostic}
			case errors.As(err, &pe):
				return outcome{StatusFailure, "pre-script output file: " + pe.Error()}
			}
			return outcome{StatusFailure, "pre-script could not be started"}
		}
	}
	r.decision = &d
	if d.Skipped {
		r.res.Decision = "skip"
	} else {
		r.res.Decision = "proceed"
	}
	r.phase("pre-script").Str("decision", r.res.Decision).Str("basis", string(d.Basis)).Int("outputs", len(d.Outputs)).Msg("forgectx run: decision reached")

	r.cur = "relay"
	// 5. Relay the decision on every path that reached it.
	if _, err := cirelay.Relay(cirelay.Options{Getenv: r.o.Getenv, DotenvPath: r.o.DotenvPath, Log: &r.log}, d); err != nil {
		r.log.Error().Err(err).Msg("forgectx run: decision relay failed")
		return outcome{StatusFailure, "the decision could not be relayed to the CI system"}
	}

	// 6. Skip: the receipt, status and cleanup follow in run().
	if d.Skipped {
		reason := d.Reason
		if reason == "" {
			reason = "the pre-script requested a skip"
		}
		return outcome{StatusSkipped, reason}
	}

	r.cur = "verify"
	// 7. Root-index compare against the retained digest, verification into memory and the
	// agent-immutable copy made from exactly the verified bytes (pkg/stage).
	sealed, err := r.st.Seal(ctx, stage.SealOptions{Mode: r.o.Immutability, AgentUID: r.o.AgentUID, AgentGID: r.o.AgentGID})
	if err != nil {
		if o, ok := interrupted(parent, ctx); ok {
			return o
		}
		var im *stage.IndexMismatchError
		var ie *stage.ImmutabilityError
		var ve *verify.Error
		switch {
		case errors.As(err, &im):
			r.log.Error().Str("retained", im.Retained).Str("on_disk", im.OnDisk).Msg("forgectx run: root index changed")
			return outcome{StatusFailure, "the snapshot's root index changed after assembly; the agent was not started"}
		case errors.As(err, &ve):
			r.log.Error().Int("violations", len(ve.Report.Violations)).Msg("forgectx run: staged snapshot failed verification")
			first := ""
			if len(ve.Report.Violations) > 0 {
				first = " (" + ve.Report.Violations[0].Path + ": " + ve.Report.Violations[0].Rule + ")"
			}
			return outcome{StatusFailure, "the staged snapshot changed after assembly" + first + "; the agent was not started"}
		case errors.As(err, &ie):
			r.log.Error().Str("mode", string(ie.Mode)).Msg("forgectx run: agent immutability cannot be enforced")
			return outcome{StatusFailure, "the agent's snapshot copy cannot be made read-only here (" + string(ie.Mode) + "); the agent was not started"}
		}
		r.log.Error().Err(err).Msg("forgectx run: sealing failed")
		return outcome{StatusFailure, "the verified snapshot copy could not be made; the agent was not started"}
	}
	r.phase("verify").Str("mode", string(sealed.Mode)).Int("files", sealed.Files).Int64("bytes", sealed.Bytes).Msg("forgectx run: verified read-only copy ready")

	r.cur = "agent"
	// 8. The agent: scrubbed environment, the read-only copy and the event excerpt.
	excerpt, drep := distill.FromCI(distill.CIInput{Getenv: r.o.Getenv}, distill.Options{Filter: r.pipe})
	if len(excerpt) > maxExcerptBytes {
		r.log.Warn().Int("bytes", len(excerpt)).Msg("forgectx run: event excerpt too large for the environment; passing {}")
		excerpt = []byte("{}")
	}
	r.log.Info().Str("phase", "excerpt").Int("fields", drep.Fields).Str("warning", drep.Warning).Msg("forgectx run: event distilled")
	env := pickEnv(r.o.Environ(), h.Agent.Env)
	env, dropped := scrub(env, r.withheld)
	if dropped > 0 {
		r.log.Warn().Int("dropped", dropped).Msg("forgectx run: agent variables carrying a withheld credential were dropped")
	}
	env = append(env, EnvContextDir+"="+sealed.Dir, EnvEventExcerpt+"="+string(excerpt))
	// In both modes the launched agent must be unprivileged: with a write-overriding
	// capability or UID 0 it could rewrite the root-owned copy (ownership) or remount the
	// read-only bind mount writable (bind-mount). stage.CheckAgentProcess runs right after the
	// start; a refused agent is killed and the run fails (docs/run.md, "Agent privileges").
	spec := procSpec{argv: h.Agent.Command, env: env, timeout: h.Agent.Timeout, grace: r.o.KillGrace, afterStart: stage.CheckAgentProcess}
	if sealed.Mode == stage.ModeOwnership || sealed.AgentUID > 0 && os.Geteuid() == 0 {
		// The agent runs as the agent UID with no supplementary groups, so the kernel clears
		// every capability at execve — unless the binary grants some back.
		if err := checkAgentExecutable(h.Agent.Command[0], env); err != nil {
			r.log.Error().Err(err).Msg("forgectx run: agent executable could regain privileges")
			return outcome{StatusFailure, "the agent executable could regain privileges (set-ID bit or file capabilities); the agent was not started"}
		}
		spec.attr = sealed.SysProcAttr()
	}
	r.phase("agent").Str("mode", string(sealed.Mode)).Msg("forgectx run: agent starting")
	aout, aerr := newRedactLines(r.o.Stdout, r.pipe), newRedactLines(r.o.Stderr, r.pipe)
	spec.stdout, spec.stderr = aout, aerr
	ap := runProc(ctx, spec)
	aout.Flush()
	aerr.Flush()
	r.res.AgentRan, r.res.AgentDuration = ap.StartErr == nil, ap.Duration
	r.contextDir = sealed.Dir
	// Spec "Lifecycle and access": the sandbox copy goes right after the runtime's last use;
	// the host tree stays for the post-script. A failure is retried by the final cleanup.
	if err := r.st.RemoveSandbox(); err != nil {
		r.log.Warn().Err(err).Msg("forgectx run: sandbox copy not removed after the agent; retried at cleanup")
	} else {
		r.phase("agent").Msg("forgectx run: sandbox copy removed")
	}
	if ap.CheckErr != nil {
		r.log.Error().Err(ap.CheckErr).Str("mode", string(sealed.Mode)).Msg("forgectx run: agent process is not unprivileged; stopped")
		return outcome{StatusFailure, "the agent process was not unprivileged and was stopped"}
	}
	r.phase("agent").Int("exit_code", ap.ExitCode).Int64("duration_ms", ap.Duration.Milliseconds()).
		Bool("timed_out", ap.TimedOut).Bool("cancelled", ap.Cancelled).Msg("forgectx run: agent finished")
	if o, ok := stopped("the agent", ap, h.Agent.Timeout, parent, ctx); ok {
		return o
	}
	result := outcome{StatusSuccess, ""}
	r.agentStatus = StatusSuccess
	if !ap.ok() {
		result = outcome{StatusFailure, describeExit("the agent", ap, h.Agent.Timeout)}
		r.agentStatus = StatusFailure
	}

	r.cur = "post-script"
	// 9. Post-script on the host (after a failed agent too: it may report or clean up).
	if h.PostScript != nil {
		if r.preDir == "" {
			if r.preDir, err = os.MkdirTemp(r.c.state, "prescript-"); err != nil {
				return outcome{StatusFailure, "the post-script result file could not be prepared"}
			}
		}
		resultFile := filepath.Join(r.preDir, "result")
		env := append(pickEnv(r.o.Environ(), h.PostScript.Env), EnvSnapshotDir+"="+r.treeDir, EnvAgentStatus+"="+r.agentStatus,
			EnvResultFile+"="+resultFile)
		pout, perr := newRedactLines(r.o.Stderr, r.pipe), newRedactLines(r.o.Stderr, r.pipe)
		tail := newLastLine(perr, 2048)
		pp := runProc(ctx, procSpec{argv: h.PostScript.Command, env: env, stdout: pout, stderr: tail, timeout: h.PostScript.Timeout, grace: r.o.KillGrace})
		pout.Flush()
		perr.Flush()
		r.phase("post-script").Int("exit_code", pp.ExitCode).Int64("duration_ms", pp.Duration.Milliseconds()).Msg("forgectx run: post-script finished")
		if o, ok := stopped("the post-script", pp, h.PostScript.Timeout, parent, ctx); ok {
			return o
		}
		if !pp.ok() && result.status == StatusSuccess {
			d := describeExit("the post-script", pp, h.PostScript.Timeout)
			if last := tail.Last(); last != "" {
				red, _ := r.pipe.Redact(last)
				d += ": " + red
			}
			result = outcome{StatusFailure, d}
		}
		if pp.ok() {
			res, err := readResults(resultFile)
			if err != nil {
				// The results are the post-script's claim for the receipt; a malformed claim
				// fails the run rather than leaving a receipt that says less than happened.
				r.log.Error().Err(err).Msg("forgectx run: post-script result file refused")
				if result.status == StatusSuccess {
					result = outcome{StatusFailure, "the post-script's " + err.Error()}
				}
			} else {
				r.results = res
			}
			r.phase("post-script").Int("result_record_keys", len(res.keys)).Bool("resulting_commit", res.commit != "").Msg("forgectx run: results read")
		}
	}
	return result
}

// cleanup removes the sandbox copy, the host tree and the stage state (pkg/stage), and the
// pre-script's private directory, on every path. Failures are recorded (no content).
func (r *runner) cleanup() {
	if r.st != nil {
		if err := r.st.Cleanup(); err != nil {
			r.res.Cleanup = append(r.res.Cleanup, "stage")
		}
	}
	if r.preDir != "" {
		if err := os.RemoveAll(r.preDir); err != nil {
			r.res.Cleanup = append(r.res.Cleanup, "pre-script directory")
		}
	}
	r.phase("cleanup").Int("errors", len(r.res.Cleanup)).Msg("forgectx run: snapshot trees removed")
}

// inputRevision is the SHA-256 of the exact index.json bytes the run consumed: the assembled
// (retained) index once a snapshot was staged — the pre-script read it even when it then
// skipped — and noInput before that.
func (r *runner) inputRevision() string {
	if r.tree == nil {
		return noInput
	}
	return r.retained
}

func (r *runner) finishStatus(ctx context.Context, out outcome) {
	if err := r.status.finish(ctx, out.status, out.detail); err != nil {
		r.log.Warn().Err(err).Msg("forgectx run: completion status comment not posted")
		r.res.StatusPosted = false
		return
	}
	r.res.StatusPosted = true
}

func (r *runner) postReceipt(ctx context.Context, out outcome) {
	rc := status.Receipt{
		ID: r.c.receipt, Agent: r.c.h.Agent.Name, Status: out.status, InputRevision: r.inputRevision(),
		InputHeadSHA: r.c.headSHA, ResultRecordKeys: append([]string{}, r.results.keys...), ResultingCommitSHA: r.results.commit,
		StartedAt: canon.FormatTime(r.start), CompletedAt: canon.FormatTime(r.o.Now()),
	}
	r.res.InputRevision, r.res.ReceiptID = rc.InputRevision, rc.ID
	body, err := status.RenderReceipt(rc)
	if err != nil {
		r.log.Error().Err(err).Msg("forgectx run: receipt could not be rendered")
		return
	}
	if _, err := r.conn.Commenter.CreateComment(ctx, r.c.ref, body); err != nil {
		r.log.Error().Err(err).Msg("forgectx run: receipt not posted")
		return
	}
	r.res.ReceiptPosted = true
	r.phase("receipt").Str("receipt_id", rc.ID).Str("status", rc.Status).Str("input_revision", rc.InputRevision).Msg("forgectx run: receipt posted")
}
