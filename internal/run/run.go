package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/forge"
	_ "github.com/forgectx/forgectx/internal/forge/providers" // registers every forge of this build
	"github.com/forgectx/forgectx/internal/lifecycle"
	"github.com/forgectx/forgectx/internal/snapshot/canon"
	"github.com/forgectx/forgectx/internal/snapshot/stage"
	"github.com/forgectx/forgectx/internal/status"
	"github.com/forgectx/forgectx/pkg/prescript"
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
	retained    string // the assembler's index digest: the root of trust (set once staged)
	acqBytes    int64  // the acquisition's size for the phases' memory limits (0: none set)
	decision    *prescript.Decision
	results     runResults
	agentStatus string
	contextDir  string // the sealed copy handed to the agent
	result      outcome
	sealed      *stage.Sealed
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
	// After connect (which only builds clients, and refuses a bad --api-url first), before
	// the first forge request.
	if err := preflight(&r.o, c); err != nil {
		return nil, err
	}
	// The one signal guard of every lifecycle: SIGTERM or SIGINT cancels the run (as main's
	// context does) and the finishing steps still run before it is stopped.
	gctx, guard := lifecycle.WatchSignals(ctx)
	defer guard.Stop()
	return r.run(gctx)
}

func defaults(o *Options) {
	o.Common.Defaults()
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.FinishTimeout <= 0 {
		o.FinishTimeout = 5 * time.Second
	}
}

// connect builds the forge clients through the registry: the acquirer (which reads back only
// receipts by forgectx's own identity into agent_runs) and the commenter of the status
// comment and receipts.
func (r *runner) connect() error {
	fo := forge.Options{
		APIURL: r.c.ref.APIURL, Token: r.c.token, TokenEnv: r.c.tokenEnv, InsecureHTTP: r.o.InsecureHTTP, Log: r.log,
		Concurrency:   r.o.Concurrency,
		CommentAuthor: r.c.author, CommentAuthorID: r.c.selfID, Kind: r.c.kind, OwnReceipts: true, WithCommenter: true,
	}
	if r.c.replayer != nil {
		// Offline: the cassette answers every read (recorded waits are not waited again) and
		// the transport policy has nothing to guard, since nothing is sent.
		fo.Transport, fo.Retry = r.c.replayer, forge.Offline
	}
	conn, err := forge.Connect(r.c.provider, fo, r.c.replayer == nil)
	if err != nil {
		return err
	}
	r.conn = conn
	r.offlineWrites()
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
	r.offlineWrites()
	r.status.c = r.conn.Commenter
}

// offlineWrites, in a replayed run, routes the comment writes of the connection's commenter
// to the offline sink (Options.Posts); its reads stay the cassette's.
func (r *runner) offlineWrites() {
	if r.c.replayer == nil || r.conn.Commenter == nil {
		return
	}
	if _, done := r.conn.Commenter.(*offlineCommenter); done {
		return
	}
	w := r.o.Posts
	if w == nil {
		w = io.Discard
	}
	r.conn.Commenter = &offlineCommenter{read: r.conn.Commenter, w: w}
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
	var cleanups lifecycle.Cleanups
	cleanups.Add(r.cleanup)
	clean := cleanups.Run
	defer clean()
	r.log.Info().Str("agent", r.c.h.Agent.Name).Str("forge", r.c.ref.Forge).Str("kind", r.c.kind).
		Int("number", r.c.ref.Number).Str("receipt_id", r.c.receipt).Msg("forgectx run: starting")

	out := r.lifecycle(parent, ctx)

	// Finish on every path. After a cancellation or time-out the run's context is over, so the
	// forge writes get a bounded context of their own (lifecycle.Finish).
	out = r.finishing(clean).Run(parent, out)
	r.logUnused()
	r.phase("done").Str("status", out.status).Bool("receipt_posted", r.res.ReceiptPosted).
		Bool("status_posted", r.res.StatusPosted).Int("cleanup_errors", len(r.res.Cleanup)).Msg("forgectx run: finished")

	if r.res.ExitCode() != ExitOK {
		return r.res, &RunError{Status: out.status, Detail: out.detail}
	}
	return r.res, nil
}

// finishing is the run's finishing, in order: completion status comment, receipt (a success
// or skip without one becomes a failure and the status comment is posted again), outputs,
// cleanup, then the job summary.
func (r *runner) finishing(clean func()) lifecycle.Finish[outcome] {
	return lifecycle.Finish[outcome]{
		Budget: func(out outcome) time.Duration { return r.finishBudget(out.status) },
		Report: r.logPanic,
		Steps: []lifecycle.FinishStep[outcome]{
			{Name: "cleanup", Run: func(_ context.Context, out outcome) outcome {
				if out.status == StatusCancelled {
					// GitHub sends SIGKILL seconds after cancelling: on a cancellation the trees go
					// first and the forge writes get what is left.
					clean()
				}
				return out
			}},
			{Name: "status", Again: true, Run: func(ctx context.Context, out outcome) outcome {
				r.res.Status, r.res.Detail = out.status, out.detail
				r.finishStatus(ctx, out)
				return out
			}},
			{Name: "receipt", Run: func(ctx context.Context, out outcome) outcome { r.postReceipt(ctx, out); return out }},
			{Name: "receipt_required", Run: r.requireReceipt},
			{Name: "outputs", Run: func(_ context.Context, out outcome) outcome { r.relayOutputs(out); return out }},
			{Name: "cleanup", Run: func(_ context.Context, out outcome) outcome { clean(); return out }},
			{Name: "summary", Run: func(_ context.Context, out outcome) outcome { r.writeSummary(out); return out }},
		},
	}
}

// requireReceipt is the rule that every run leaves a receipt: a success or skip whose receipt
// could not be posted is a failed run (the receipt, had it been posted, would have said what
// the agent did). The status comment already shows the success or skip: the changed outcome
// makes the status step run again to correct it.
func (r *runner) requireReceipt(_ context.Context, out outcome) outcome {
	if !r.res.ReceiptPosted && (out.status == StatusSuccess || out.status == StatusSkipped) {
		return outcome{StatusFailure, "the run receipt could not be posted"}
	}
	return out
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

// cleanup removes the sandbox copy, the host tree and the stage state (internal/snapshot/stage), and the
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
	if r.retained == "" {
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
