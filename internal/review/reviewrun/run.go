package reviewrun

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"syscall"
	"time"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/forge"
	_ "github.com/forgectx/forgectx/internal/forge/providers" // the GitLab provider of the snapshot path
	"github.com/forgectx/forgectx/internal/lifecycle"
	"github.com/forgectx/forgectx/internal/review/reviewctx"
	"github.com/forgectx/forgectx/internal/review/reviewmcp"
	"github.com/forgectx/forgectx/internal/review/reviewpub"
	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/internal/snapshot/verify"
	"github.com/forgectx/forgectx/pkg/prescript"
)

// Options configure one review run. The fields every lifecycle shares are lifecycle.Common's:
// here APIURL is the GitLab REST base (…/api/v4), TokenEnv's value is read from Environ, and
// Harness supplies the engine command (agent.command, agent.env, agent.timeout), the snapshot
// profile (profiles.change_proposal), the bot registry and the secrets.
type Options struct {
	lifecycle.Common
	Project      string // numeric ID or namespace/project path
	MR           int64
	ExpectedHead string
	// Forgectx is the executable the generated MCP entry starts (default os.Executable()).
	Forgectx string
	// WorkDir is the engine's working directory (the checkout; default the current one).
	WorkDir string
	// TempDir is where the owner-only session is created (default the OS temporary directory).
	TempDir string
	// PreservePrivateArtifacts keeps the owner-only session and adds the value-free DLP
	// decisions sidecar instead of cleaning up, projecting and posting (a local diagnostic;
	// refused under GitLab CI merge request execution).
	PreservePrivateArtifacts bool
	// HTTPClient is the GitLab transport of the context and posting edges (nil: the adapter's).
	HTTPClient *http.Client
	// EngineUID and EngineGID are the unprivileged identity the engine runs as when forgectx
	// runs as root (zero: DefaultEngineID). Without root they must be zero: the engine runs as
	// this process's user (docs/review-context.md, "Engine identity").
	EngineUID, EngineGID int
	// FinishTimeout bounds the forge writes of the finishing steps — the failure note, the
	// withheld summary, the result's posting — so that a forge that stops answering cannot hold
	// the job (default DefaultFinishTimeout).
	FinishTimeout time.Duration

	// hook, in tests, is called at named points of the lifecycle ("cleanup:store", …).
	hook func(point string)
}

// Run statuses: the lifecycle's.
const (
	StatusSuccess   = lifecycle.StatusSuccess
	StatusFailure   = lifecycle.StatusFailure
	StatusCancelled = lifecycle.StatusCancelled
)

// Result is what one run did: closed states and counts only.
type Result struct {
	Status      string
	Detail      string // a closed one-line diagnostic, never a value
	Receipt     *Receipt
	Decision    Decision
	Approved    bool
	Discussions int // finding discussions created
	Cleanup     string
	// Preserved is the kept session directory of a preservation run.
	Preserved string
}

// DefaultEngineID is the engine UID and GID of a root run that names none (the GitLab
// component's agent default).
const DefaultEngineID = 65532

// removeAll is os.RemoveAll; a test makes one artifact's removal fail (a failed cleanup is
// otherwise unreachable for the root user the CI image runs as).
var removeAll = os.RemoveAll

// ErrConfig wraps configuration errors found before any request (exit 2).
var ErrConfig = errors.New("reviewrun: configuration")

type runner struct {
	o       Options
	env     map[string]string
	token   string
	pipe    *filter.Pipeline
	secrets []string
	// engineCred is the engine's identity in a root run (nil: this process's own).
	engineCred *syscall.Credential
	s          *session
	acq        *reviewctx.Result
	runID      string
	// indexSHA256 is the assembled snapshot's root index digest, retained for the MCP server.
	indexSHA256 string
	context     []string // forbidden context values, kept in memory after the store is removed
	usage       reviewmcp.Usage
	usageErr    error
	engine      engineRun
	res         Result
	// rules are the repository Rules read at the target SHA.
	rules []reviewctx.RuleFile
	// err is the run's error once the phases ended; the finishing steps replace it (a failed
	// projection or posting, an interruption).
	err error
	// proj is the read-back projection the result step posts.
	proj *Projection
	// failState is the closed failure state the current step would post (failure.go); empty
	// before acquisition starts.
	failState string
}

func (r *runner) at(point string) {
	if r.o.hook != nil {
		r.o.hook(point)
	}
}

func (r *runner) getenv(k string) string { return r.env[k] }

func (r *runner) lookup(k string) (string, bool) { v, ok := r.env[k]; return v, ok }

// Run executes the fixed lifecycle once. The error is non-nil for configuration errors
// (ErrConfig, reviewctx selector/policy/adapter errors) and lifecycle failures; Result says
// how far it got and what it posted.
func Run(ctx context.Context, o Options) (*Result, error) {
	r, err := prepare(o)
	if err != nil {
		return nil, err
	}
	mode, prot, err := r.selectors()
	if err != nil {
		return nil, err
	}
	if err := checkEngineView(mode, o.Harness); err != nil {
		return nil, err
	}
	if r.s, err = newSession(o.TempDir, r.engineCred); err != nil {
		return nil, err
	}
	var cleanups lifecycle.Cleanups
	if !o.PreservePrivateArtifacts {
		cleanups.Add(func() { _ = r.s.remove() }) // belt and braces: cleanup below removes each part and reports it
	}
	defer cleanups.Run()
	// The one signal guard of every lifecycle: SIGTERM and SIGINT cancel the review instead of
	// ending the process, so that cleanup and the projection always run to their end.
	runCtx, guard := lifecycle.WatchSignals(ctx)
	stopGuard := guard.Stop
	defer stopGuard()

	runErr := r.review(runCtx, mode, prot)
	if o.PreservePrivateArtifacts {
		err := r.preserve(runErr)
		stopGuard()
		return &r.res, err
	}
	// From here nothing is cancelled: cleanup, the projection and the posting are finishing
	// steps (finish.go), bounded by FinishTimeout.
	r.err = runErr
	out := r.finishing(guard).Run(ctx, outcome{})
	if out.status == statusPosting || out.status == "" {
		// A finishing step panicked before the outcome was settled (logged by its name).
		out, r.err = outcome{status: StatusFailure, detail: "internal error while finishing"}, errors.New("reviewrun: internal error while finishing")
	}
	r.res.Status, r.res.Detail = out.status, out.detail
	return &r.res, r.err
}

func prepare(o Options) (*runner, error) {
	if o.Harness == nil {
		return nil, fmt.Errorf("%w: harness: required", ErrConfig)
	}
	if o.Harness.PreScript != nil || o.Harness.PostScript != nil {
		return nil, fmt.Errorf("%w: harness: pre_script/post_script: not supported by review-context run (one review, nothing else)", ErrConfig)
	}
	if _, err := o.Harness.ProfileFor(acquisition.KindChangeProposal); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if err := o.Harness.CheckAgentEnv(o.TokenEnv); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	o.Common.Defaults() // the same defaults (clock, grace, streams) as forgectx run
	if o.FinishTimeout <= 0 {
		o.FinishTimeout = DefaultFinishTimeout
	}
	if o.Forgectx == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("%w: cannot locate the forgectx executable for the MCP entry", ErrConfig)
		}
		o.Forgectx = exe
	}
	cred, err := engineIdentity(o.EngineUID, o.EngineGID, os.Geteuid())
	if err != nil {
		return nil, err
	}
	r := &runner{o: o, env: map[string]string{}, engineCred: cred}
	for _, kv := range o.Environ() {
		for i := 0; i < len(kv); i++ {
			if kv[i] == '=' {
				r.env[kv[:i]] = kv[i+1:]
				break
			}
		}
	}
	if o.PreservePrivateArtifacts && mrExecution(r.env) {
		return nil, fmt.Errorf("%w: --preserve-private-artifacts: refused under GitLab CI merge request execution (local diagnostic only)", ErrConfig)
	}
	r.token = r.env[o.TokenEnv]
	if r.token == "" {
		return nil, fmt.Errorf("%w: %s: the token variable is empty or unset", ErrConfig, o.TokenEnv)
	}
	r.secrets = filter.SecretEnvValues(o.Environ(), append([]string{o.TokenEnv}, o.Harness.Secrets...))
	r.pipe = filter.New(r.secrets)
	return r, nil
}

// engineIdentity is the credential the engine starts with: as root the given (or default)
// non-zero UID and GID with no supplementary groups, so the kernel clears every capability at
// execve; otherwise none (the engine is this user), and naming one is a configuration error.
func engineIdentity(uid, gid, euid int) (*syscall.Credential, error) {
	switch {
	case uid < 0 || gid < 0 || (uid == 0) != (gid == 0):
		return nil, fmt.Errorf("%w: --engine-uid/--engine-gid: both non-zero, or both unset", ErrConfig)
	case euid != 0 && uid != 0:
		return nil, fmt.Errorf("%w: --engine-uid/--engine-gid: only a root forgectx can run the engine as another user", ErrConfig)
	case euid != 0:
		return nil, nil
	case uid == 0:
		uid, gid = DefaultEngineID, DefaultEngineID
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}

func (r *runner) selectors() (reviewctx.Mode, reviewctx.ProtectionMode, error) {
	mode, err := reviewctx.ParseMode(r.getenv(reviewctx.EnvMode))
	if err != nil {
		return "", "", err
	}
	pv, present := r.lookup(reviewctx.EnvProtectionMode)
	prot, err := reviewctx.ParseProtectionMode(pv, present)
	return mode, prot, err
}

// review is the part of the lifecycle that an interruption cancels, as a phase list
// (lifecycle.Sequence): acquisition, snapshot, engine. Acquisition is complete before the
// engine starts; the first phase that fails ends the review with its error.
func (r *runner) review(ctx context.Context, mode reviewctx.Mode, prot reviewctx.ProtectionMode) error {
	step := func(f func(context.Context) error) func(context.Context) (phaseErr, bool) {
		return func(ctx context.Context) (phaseErr, bool) { err := f(ctx); return phaseErr{err}, err != nil }
	}
	seq := lifecycle.Sequence[phaseErr]{Phases: []lifecycle.Phase[phaseErr]{
		{Name: "acquisition", Run: step(func(ctx context.Context) error { return r.acquire(ctx, mode, prot) })},
		{Name: "snapshot", Run: step(func(ctx context.Context) error { r.failState = FailSnapshot; return r.snapshot(ctx) })},
		{Name: "engine", Run: step(r.runEngine)},
	}}
	out, _ := seq.Run(ctx)
	return out.err
}

// phaseErr is a review phase's outcome: the error that ended the review (nil: the next phase
// runs).
type phaseErr struct{ err error }

// acquire reads the review context (and the repository Rules at the target SHA) into the
// owner-only store.
func (r *runner) acquire(ctx context.Context, mode reviewctx.Mode, prot reviewctx.ProtectionMode) error {
	g, err := reviewctx.NewGitLab(reviewctx.GitLabOptions{APIURL: r.o.APIURL, Token: r.token, TokenEnv: r.o.TokenEnv, HTTPClient: r.o.HTTPClient, Concurrency: r.o.Concurrency}, r.o.Project, r.o.MR, r.o.Now)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	r.failState = FailAcquisition
	adapters, adaptersSet := r.lookup(reviewctx.EnvAdaptersJSON)
	r.acq, err = reviewctx.Acquire(ctx, g, reviewctx.AcquireOptions{
		Mode: mode, Protection: prot, AdaptersJSON: adapters, AdaptersSet: adaptersSet,
		ExpectedHead: r.o.ExpectedHead, StoreDir: r.s.store, Filter: r.pipe, Env: r.lookup, Now: r.o.Now,
	})
	if err != nil {
		return err
	}
	r.collectContext()
	// Repository Rules come from the captured target SHA, never from the source branch.
	if r.rules, err = g.RuleFiles(ctx, r.acq.TargetSHA); err != nil {
		return err
	}
	r.at("acquired")
	return nil
}

// collectContext keeps every admitted context value in memory (for the publication DLP's
// forbidden/non-publishable comparison) before the store is removed.
func (r *runner) collectContext() {
	if r.acq.Store != nil {
		r.runID = r.acq.Store.RunID
		r.context = reviewpub.ForbiddenFromStore(r.acq.Store)
	}
	// The constrained lifecycle's metadata is untrusted and never publishable either.
	if m := r.acq.Metadata; m != nil && m.Text != "" {
		r.context = append(r.context, m.Text)
	}
}

// snapshot assembles the merge request's entity-context-snapshot through the forge registry
// (the GitLab provider, exactly the `forgectx snapshot` path) and verifies the written tree;
// a tree that fails verification stops the run before the engine starts.
func (r *runner) snapshot(ctx context.Context) error {
	h := r.o.Harness
	profile, _ := h.ProfileFor(acquisition.KindChangeProposal)
	src, err := forge.Open(forge.Source{Forge: "gitlab", Repo: r.o.Project, Number: int(r.o.MR), APIURL: r.o.APIURL,
		TokenEnv: r.o.TokenEnv, InsecureHTTP: r.o.InsecureHTTP}, r.getenv, r.o.Log)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	acq, err := src.Acquire(ctx, profile)
	if err != nil {
		return fmt.Errorf("reviewrun: snapshot acquisition: %w", err)
	}
	// Streamed to the session's (empty) snapshot directory as forgectx snapshot does: the
	// record files are never all held in memory.
	tree, err := snapshot.AssembleTo(ctx, acq, snapshot.Config{Profile: profile, Category: h.Agent.Category, Bots: h.Bots, Filter: r.pipe, ReleaseBodies: true}, r.s.snapshot)
	if err != nil {
		return fmt.Errorf("reviewrun: snapshot: %w", err)
	}
	rep, err := verify.Dir(ctx, r.s.snapshot, verify.Options{IndexSHA256: tree.IndexSHA256})
	if err != nil {
		return fmt.Errorf("reviewrun: snapshot verification: %w", err)
	}
	if !rep.OK() {
		return fmt.Errorf("reviewrun: snapshot verification: %d violations", len(rep.Violations))
	}
	r.indexSHA256 = tree.IndexSHA256
	r.o.Log.Info().Str("index_sha256", tree.IndexSHA256).Int("files", rep.Files).Int("gaps", rep.Gaps).Msg("review-context run: snapshot verified")
	return nil
}

// runEngine generates the isolated HOME and starts the one review.
func (r *runner) runEngine(ctx context.Context) error {
	enriched := r.acq.Mode == reviewctx.ModeEnriched && r.acq.StoreWritten
	storeSHA := ""
	if r.acq.Identity != nil {
		storeSHA = r.acq.Identity.SHA256
	}
	r.failState = FailEngine
	mcfg := r.s.mcpConfig(r.indexSHA256, enriched, r.runID, r.acq.PolicyDigest, storeSHA)
	if err := r.writeMetadata(&mcfg); err != nil {
		return err
	}
	cfg, err := r.s.writeMCPConfig(r.o.Forgectx, r.s.mcpArgs(mcfg))
	if err != nil {
		return err
	}
	if r.engineCred != nil {
		rs, err := serveRelay(ctx, r.s.relaySocket(), r.engineCred, mcfg, r.o.Log)
		if err != nil {
			return err
		}
		defer rs.close()
	}
	env := engineEnv(r.o.Environ(), r.o.Harness, r.o.TokenEnv, r.s, cfg)
	dir := r.o.WorkDir
	if dir == "" {
		dir, _ = os.Getwd()
	}
	// The job token in the checkout's remote URL is stripped for the engine's lifetime
	// (checkout.go) and put back once the engine's process group is gone.
	r.failState = FailCheckoutCredentials
	guard, err := stripCheckout(dir, withheldValues(r.o.Environ(), r.o.Harness, r.o.TokenEnv))
	if err != nil {
		return err
	}
	r.failState = FailEngine
	if err := writeRules(r.s.rules, r.rules, r.s.own); err != nil {
		return err
	}
	overlay, err := overlayRules(dir, r.rules)
	if err != nil {
		if guard != nil {
			_ = guard.restore()
		}
		return err
	}
	defer func() {
		if err := overlay.restore(); err != nil {
			r.o.Log.Error().Str("code", "checkout_rules_not_restored").Msg("review-context run: the checkout's rules directory could not be restored")
		}
	}()
	if guard != nil {
		r.o.Log.Info().Msg("review-context run: credentials stripped from the checkout's git configuration for the engine")
		defer func() {
			if err := guard.restore(); err != nil {
				r.o.Log.Error().Str("code", "checkout_config_not_restored").Msg("review-context run: the checkout's git configuration could not be restored; it stays without credentials")
			}
		}()
	}
	r.at("engine")
	r.o.Log.Info().Bool("enriched", enriched).Msg("review-context run: engine started")
	// The engine's streams go to the job log line-redacted, as forgectx run's agent's do.
	eout, eerr := prescript.NewRedactingLog(r.o.Stdout, r.pipe), prescript.NewRedactingLog(r.o.Stderr, r.pipe)
	r.engine = runEngine(ctx, engineSpec{argv: r.o.Harness.Agent.Command, env: env, dir: dir, stdout: eout, stderr: eerr,
		timeout: r.o.Harness.Agent.Timeout, grace: r.o.KillGrace, cred: r.engineCred})
	eout.Flush()
	eerr.Flush()
	r.o.Log.Info().Int("exit_code", r.engine.ExitCode).Bool("timed_out", r.engine.TimedOut).Bool("stopped", r.engine.Stopped).Msg("review-context run: engine ended")
	// The usage file is session state: read it now, before cleanup removes it.
	r.usage, r.usageErr = reviewmcp.ReadUsage(r.s.usagePath())
	switch {
	case r.engine.Err != nil:
		return fmt.Errorf("reviewrun: engine did not start: %w", r.engine.Err)
	case r.engine.TimedOut:
		r.failState = FailEngineTimedOut
		return errors.New("reviewrun: engine timed out")
	case r.engine.Stopped:
		return errors.New("reviewrun: engine stopped")
	case r.engine.ExitCode != 0:
		return fmt.Errorf("reviewrun: engine exited %d", r.engine.ExitCode)
	case r.usageErr != nil:
		r.failState = FailUsage
		return fmt.Errorf("reviewrun: MCP usage: %w", r.usageErr)
	case !r.usage.SummaryCalled():
		r.failState = FailNoEvidenceSummary
		return errors.New("reviewrun: the engine never called ocr_toolkit_evidence(action=summary); the review is not valid")
	}
	r.failState = FailResult
	return nil
}

// cleanup removes the session, adapter and context artifacts — store, snapshot, generated
// HOME, TMPDIR, MCP state — one by one, on every path; it is never cancelled. The result file
// lives in its own directory and is projected afterwards.
func (r *runner) cleanup() string {
	state := CleanupComplete
	steps := []struct {
		name, path string
		rm         func() error
	}{
		{"store", r.s.store, func() error { return reviewctx.RemoveStore(r.s.store) }},
		{"snapshot", r.s.snapshot, nil},
		{"home", r.s.home, nil},
		{"tmp", r.s.tmp, nil},
		{"mcp", r.s.mcp, nil},
		{"rules", r.s.rules, nil},
	}
	for _, st := range steps {
		r.at("cleanup:" + st.name)
		rm := st.rm
		if rm == nil {
			rm = func() error { return removeAll(st.path) }
		}
		err := rm()
		if err == nil {
			// RemoveStore leaves nothing either: a surviving path is a failed cleanup.
			if _, lerr := os.Lstat(st.path); lerr == nil {
				err = errors.New("still present")
			}
		}
		if err != nil {
			r.o.Log.Error().Str("artifact", st.name).Msg("review-context run: cleanup failed")
			state = CleanupFailed
		}
	}
	r.o.Log.Info().Str("cleanup", state).Msg("review-context run: session artifacts removed")
	return state
}
