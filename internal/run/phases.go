package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/forgectx/forgectx/internal/event/distill"
	"github.com/forgectx/forgectx/internal/lifecycle"
	"github.com/forgectx/forgectx/internal/platform/procgroup"
	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/snapshot/stage"
	"github.com/forgectx/forgectx/internal/snapshot/treefs"
	"github.com/forgectx/forgectx/internal/snapshot/verify"
	"github.com/forgectx/forgectx/pkg/cirelay"
	"github.com/forgectx/forgectx/pkg/prescript"
)

// phase names one step of the lifecycle (docs/run.md): a closed list, never a string
// assembled on the way.
type phase int

const (
	phaseScavenge phase = iota
	phaseStatus
	phaseSnapshot
	phasePrescript
	phaseRelay
	phaseVerify
	phaseAgent
	phasePostscript
)

var phaseNames = [...]string{"scavenge", "status", "snapshot", "pre-script", "relay", "verify", "agent", "post-script"}

func (p phase) String() string {
	if int(p) >= 0 && int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return "unknown"
}

// step is one phase's function. It returns done with the run's outcome when the run ends in
// this phase (a failure, a skip, an interruption); otherwise the next phase runs. The agent
// and post-script phases record the running result in runner.result instead.
type step func(r *runner, parent, ctx context.Context) (out outcome, done bool)

// runPhases is the run as a list of phases, in order, like the assembler's step list:
// scavenge → start status comment → snapshot → pre-script → relay → (skip | root-index
// compare, verified read-only copy → agent → post-script). The completion status comment,
// receipt and cleanup follow in run(), from one place for every exit path.
var runPhases = []struct {
	id  phase
	run step
}{
	{phaseScavenge, (*runner).scavenge},
	{phaseStatus, (*runner).startStatus},
	{phaseSnapshot, (*runner).snapshot},
	{phasePrescript, (*runner).prescript},
	{phaseRelay, (*runner).relay},
	{phaseVerify, (*runner).verify},
	{phaseAgent, (*runner).agent},
	{phasePostscript, (*runner).postscript},
}

// lifecycle runs the phases (lifecycle.Sequence) until one ends the run; the running result
// (the agent's, as the post-script amended it) is the outcome when every phase ran.
func (r *runner) lifecycle(parent, ctx context.Context) outcome {
	seq := lifecycle.Sequence[outcome]{Phases: make([]lifecycle.Phase[outcome], 0, len(runPhases))}
	for _, p := range runPhases {
		p := p
		seq.Phases = append(seq.Phases, lifecycle.Phase[outcome]{Name: p.id.String(),
			Run: func(ctx context.Context) (outcome, bool) { return p.run(r, parent, ctx) }})
	}
	var began time.Time
	seq.Before = func(ctx context.Context, name string) (outcome, bool) {
		// A signal (or the total timeout) that arrived during the previous phase ends the run
		// before the next one starts, whatever that phase made of its cancelled context: a
		// run cancelled while scavenging posts no ⏳ start comment, one cancelled while its
		// start comment was in flight reads nothing from the forge.
		if o, ok := interrupted(parent, ctx); ok {
			return o, true
		}
		// Progress on long work: each phase's start and end with its duration, names and
		// counts only (the phases' own lines carry their details, never bodies).
		began = time.Now()
		r.log.Info().Str("phase", name).Msg("forgectx run: phase started")
		if r.o.PhaseHook != nil {
			r.o.PhaseHook(ctx, name)
		}
		return outcome{}, false
	}
	seq.After = func(name string, done bool) {
		r.log.Info().Str("phase", name).Int64("duration_ms", time.Since(began).Milliseconds()).
			Bool("ends_run", done).Msg("forgectx run: phase ended")
	}
	// A panic in any phase is a failed run (the status comment, receipt and cleanup still
	// follow). Only the phase and, for a Go runtime error, its message are logged: a panic
	// value may carry content.
	seq.Recover = func(name string, p any) outcome {
		r.logPanic(name, p)
		return outcome{StatusFailure, "forgectx failed internally during the " + name + " phase"}
	}
	if out, done := seq.Run(ctx); done {
		return out
	}
	return r.result
}

// failed is a phase's failure: the run ends with it unless the run was interrupted, in which
// case the interruption is the outcome (cancelled or timed_out, whatever failed on the way).
func failed(parent, ctx context.Context, detail string) (outcome, bool) {
	if o, ok := interrupted(parent, ctx); ok {
		return o, true
	}
	return outcome{StatusFailure, detail}, true
}

// scavenge removes trees abandoned by runs that died uncleanly; a failure is only logged.
func (r *runner) scavenge(_, ctx context.Context) (outcome, bool) {
	r.stageOpts = stage.Options{Base: r.c.base, StateDir: r.c.state, Forbidden: r.o.ArtifactDirs, Getenv: r.o.Getenv, Log: &r.log}
	sc, err := stage.Scavenge(ctx, r.stageOpts)
	if err != nil {
		r.log.Warn().Err(err).Msg("forgectx run: scavenging failed")
	}
	r.res.Scavenged = sc.Removed
	r.phase("scavenge").Int("scanned", sc.Scanned).Int("removed", sc.Removed).Int("live", sc.Live).Int("errors", len(sc.Errors)).Msg("forgectx run: abandoned trees scavenged")
	return outcome{}, false
}

// startStatus posts the start status comment. A failure to post it is logged, never fatal:
// the receipt is what history relies on.
func (r *runner) startStatus(_, ctx context.Context) (outcome, bool) {
	r.resolveIdentity(ctx)
	if err := r.status.start(ctx); err != nil {
		r.log.Warn().Err(err).Msg("forgectx run: start status comment not posted")
	} else {
		r.res.StatusPosted = true
	}
	r.phase("status").Bool("posted", r.res.StatusPosted).Msg("forgectx run: start status comment")
	return outcome{}, false
}

// snapshot acquires the entity, assembles the tree and stages it. From its end the pre-script
// has seen this index: it is the input the run consumed.
//
// The tree is assembled straight into the stage's host directory (snapshot.AssembleTo through
// stage.Build): each record file is written as soon as it is final, so the whole tree is never
// held in memory, and the stage state naming this run is saved before the first byte, so a
// crash mid-assembly leaves nothing the next run's scavenger does not remove.
func (r *runner) snapshot(parent, ctx context.Context) (outcome, bool) {
	acq, err := r.conn.Acquirer.Acquire(ctx, r.c.ref, r.c.profile)
	if err != nil {
		if o, ok := interrupted(parent, ctx); ok {
			return o, true
		}
		r.log.Error().Err(err).Msg("forgectx run: acquisition failed")
		return outcome{StatusFailure, "reading the entity from the forge failed"}, true
	}
	r.acqBytes = r.acquisitionBytes()
	limit, restore := r.memoryLimit()
	defer restore()
	var (
		sum    snapshot.Summary
		asmErr error // the assembler's own failure, told apart from staging's
	)
	cfg := r.assembleConfig()
	st, err := stage.Build(ctx, r.stageOpts, func(ctx context.Context, dir string) (string, treefs.Sums, error) {
		tree, err := snapshot.AssembleTo(ctx, acq, cfg, dir)
		if err != nil {
			asmErr = err
			return "", nil, err
		}
		// Only the summary, the digest and the sums outlive the builder: the tree's JSON
		// documents and index are not kept while the host tree is checked and sealed.
		sum = tree.Summary
		return tree.IndexSHA256, tree.Sums(), nil
	})
	if asmErr != nil {
		var ab *snapshot.AbortError
		if errors.As(asmErr, &ab) {
			if o, ok := interrupted(parent, ctx); ok {
				return o, true
			}
			r.log.Error().Str("scope", ab.Scope).Str("code", ab.Code).Msg("forgectx run: snapshot aborted")
			return outcome{StatusFailure, fmt.Sprintf("snapshot aborted (%s %s): no script or agent was started", ab.Scope, ab.Code)}, true
		}
		return failed(parent, ctx, "snapshot assembly failed")
	}
	if err != nil {
		var pe *stage.PlacementError
		if errors.As(err, &pe) {
			return failed(parent, ctx, "the snapshot tree would be placed inside the repository or run output; nothing was started")
		}
		if o, ok := interrupted(parent, ctx); ok {
			return o, true
		}
		r.log.Error().Err(err).Msg("forgectx run: staging failed")
		return outcome{StatusFailure, "the snapshot could not be staged"}, true
	}
	r.res.Summary = &sum
	r.st, r.retained, r.treeDir = st, st.IndexSHA256, st.HostDir
	r.status.report = r.contextReport(ctx)
	r.phase("snapshot").Str("index_sha256", r.retained).Int("files", sum.Files).Int("gaps", len(sum.Gaps)).
		Int("findings", len(sum.Findings)).Int64("memory_limit_bytes", limit).Msg("forgectx run: snapshot staged")
	return outcome{}, false
}

// assembleConfig is the run's snapshot configuration. ReleaseBodies is set: the acquisition is
// the run's alone and nothing reads it after assembly, so each body and log can go as soon as
// it is filtered (at 100k records the bodies are most of the acquisition's memory).
func (r *runner) assembleConfig() snapshot.Config {
	return snapshot.Config{Profile: r.c.profile, Category: r.c.h.Agent.Category, Bots: r.c.h.Bots, Filter: r.pipe, ReleaseBodies: true}
}

// prescript runs the pre-script under the protocol, with the snapshot path in its
// environment, and records the decision.
func (r *runner) prescript(parent, ctx context.Context) (outcome, bool) {
	d := prescript.NoPrescript()
	if ps := r.c.h.PreScript; ps != nil {
		var err error
		if r.preDir, err = os.MkdirTemp(r.c.state, "prescript-"); err != nil {
			return outcome{StatusFailure, "the pre-script output file could not be prepared"}, true
		}
		env := append(pickEnv(r.o.Environ(), ps.Env), EnvSnapshotDir+"="+r.treeDir)
		log := r.log
		// prescript.Run redacts the script's live log itself (the same pass, r.pipe): the
		// streams go to the job log unwrapped, so each line is redacted once.
		d, err = prescript.Run(ctx, prescript.Options{
			RunDir: r.preDir, Command: ps.Command, Env: env,
			Stdout: r.o.Stderr, Stderr: r.o.Stderr, Redactor: r.pipe, Timeout: ps.Timeout, KillGrace: r.o.KillGrace, Log: &log,
		})
		if err != nil {
			return prescriptFailure(parent, ctx, err)
		}
	}
	r.decision = &d
	r.res.Decision = "proceed"
	if d.Skipped {
		r.res.Decision = "skip"
	}
	r.phase("pre-script").Str("decision", r.res.Decision).Str("basis", string(d.Basis)).Int("outputs", len(d.Outputs)).Msg("forgectx run: decision reached")
	return outcome{}, false
}

// prescriptFailure is the outcome of a pre-script that did not reach a decision.
func prescriptFailure(parent, ctx context.Context, err error) (outcome, bool) {
	if o, ok := interrupted(parent, ctx); ok {
		return o, true
	}
	var hf *prescript.HardFailure
	var pe *prescript.ProtocolError
	switch {
	case errors.As(err, &hf) && hf.TimedOut:
		return outcome{StatusTimedOut, "pre-script: " + hf.Diagnostic}, true
	case errors.As(err, &hf):
		return outcome{StatusFailure, "pre-script: " + hf.Diagnostic}, true
	case errors.As(err, &pe):
		return outcome{StatusFailure, "pre-script output file: " + pe.Error()}, true
	}
	var se *prescript.StartError
	if errors.As(err, &se) {
		return outcome{StatusFailure, "pre-script could not be started: " + se.Reason}, true
	}
	return outcome{StatusFailure, "pre-script could not be started"}, true
}

// relay relays the decision on every path that reached it; a skip ends the run here (the
// receipt, status and cleanup follow in run()).
func (r *runner) relay(_, _ context.Context) (outcome, bool) {
	d := *r.decision
	if _, err := cirelay.Relay(cirelay.Options{Getenv: r.o.Getenv, DotenvPath: r.o.DotenvPath, Log: &r.log}, d); err != nil {
		r.log.Error().Err(err).Msg("forgectx run: decision relay failed")
		return outcome{StatusFailure, "the decision could not be relayed to the CI system"}, true
	}
	if d.Skipped {
		reason := d.Reason
		if reason == "" {
			reason = "the pre-script requested a skip"
		}
		return outcome{StatusSkipped, reason}, true
	}
	return outcome{}, false
}

// verify compares the host tree's root index against the retained digest, copies the tree
// file by file into the agent's copy, makes the copy immutable and verifies that sealed copy
// against the retained digest (internal/snapshot/stage Seal): the agent reads exactly the verified bytes.
//
// Seal holds no tree in memory (the copy is streamed, verify.Check keeps the record files and
// logs as digests and text facts), so the verify phase runs under the snapshot phase's bound,
// snapshot.MemoryLimit of the acquisition (docs/snapshot.md "Scale").
func (r *runner) verify(parent, ctx context.Context) (outcome, bool) {
	limit, restore := r.memoryLimit()
	defer restore()
	sealed, err := r.st.Seal(ctx, stage.SealOptions{Mode: r.o.Immutability, AgentUID: r.o.AgentUID, AgentGID: r.o.AgentGID})
	if err != nil {
		if o, ok := interrupted(parent, ctx); ok {
			return o, true
		}
		return r.sealFailure(err), true
	}
	r.sealed = sealed
	r.phase("verify").Str("mode", string(sealed.Mode)).Int("files", sealed.Files).Int64("bytes", sealed.Bytes).
		Int64("memory_limit_bytes", limit).Msg("forgectx run: verified read-only copy ready")
	return outcome{}, false
}

// sealFailure is the outcome of a copy that could not be verified or made read-only.
func (r *runner) sealFailure(err error) outcome {
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

// agentEnv is the agent's environment: its harness-listed variables with every withheld
// credential dropped, the read-only copy and the event excerpt.
func (r *runner) agentEnv() []string {
	excerpt, drep := distill.FromCI(distill.CIInput{Getenv: r.o.Getenv}, distill.Options{Filter: r.pipe})
	if len(excerpt) > maxExcerptBytes {
		r.log.Warn().Int("bytes", len(excerpt)).Msg("forgectx run: event excerpt too large for the environment; passing {}")
		excerpt = []byte("{}")
	}
	r.log.Info().Str("phase", "excerpt").Int("fields", drep.Fields).Str("warning", drep.Warning).Msg("forgectx run: event distilled")
	env, dropped := scrub(pickEnv(r.o.Environ(), r.c.h.Agent.Env), r.withheld)
	if dropped > 0 {
		r.log.Warn().Int("dropped", dropped).Msg("forgectx run: agent variables carrying a withheld credential were dropped")
	}
	return append(env, EnvContextDir+"="+r.sealed.Dir, EnvEventExcerpt+"="+string(excerpt))
}

// agent runs the agent on the read-only copy and records its result; the sandbox copy goes
// right after (spec "Lifecycle and access"), the host tree stays for the post-script.
func (r *runner) agent(parent, ctx context.Context) (outcome, bool) {
	h, sealed := r.c.h, r.sealed
	env := r.agentEnv()
	// In both modes the launched agent must be unprivileged: with a write-overriding
	// capability or UID 0 it could rewrite the root-owned copy (ownership) or remount the
	// read-only bind mount writable (bind-mount). procgroup.CheckProcess runs right after the
	// start; a refused agent is killed and the run fails (docs/run.md, "Agent privileges").
	spec := procSpec{argv: h.Agent.Command, env: env, timeout: h.Agent.Timeout, grace: r.o.KillGrace, unprivileged: true}
	if sealed.Mode == stage.ModeOwnership || sealed.AgentUID > 0 && os.Geteuid() == 0 {
		// The agent runs as the agent UID with no supplementary groups, so the kernel clears
		// every capability at execve — unless the binary grants some back.
		if err := checkAgentExecutable(h.Agent.Command[0], env); err != nil {
			r.log.Error().Err(err).Msg("forgectx run: agent executable refused")
			return outcome{StatusFailure, agentExecutableProblem(err)}, true
		}
		spec.identity = &procgroup.Identity{UID: uint32(sealed.AgentUID), GID: uint32(sealed.AgentGID)}
	}
	r.phase("agent").Str("mode", string(sealed.Mode)).Msg("forgectx run: agent starting")
	aout, aerr := prescript.NewRedactingLog(r.o.Stdout, r.pipe), prescript.NewRedactingLog(r.o.Stderr, r.pipe)
	spec.stdout, spec.stderr = aout, aerr
	ap := runProc(ctx, spec)
	aout.Flush()
	aerr.Flush()
	r.res.AgentRan, r.res.AgentDuration = ap.StartErr == nil, ap.Duration
	r.contextDir = sealed.Dir
	if err := r.st.RemoveSandbox(); err != nil {
		r.log.Warn().Err(err).Msg("forgectx run: sandbox copy not removed after the agent; retried at cleanup")
	} else {
		r.phase("agent").Msg("forgectx run: sandbox copy removed")
	}
	if ap.CheckErr != nil {
		r.log.Error().Err(ap.CheckErr).Str("mode", string(sealed.Mode)).Msg("forgectx run: agent process is not unprivileged; stopped")
		return outcome{StatusFailure, "the agent process was not unprivileged and was stopped"}, true
	}
	r.phase("agent").Int("exit_code", ap.ExitCode).Int64("duration_ms", ap.Duration.Milliseconds()).
		Bool("timed_out", ap.TimedOut).Bool("cancelled", ap.Cancelled).Msg("forgectx run: agent finished")
	if o, ok := stopped("the agent", ap, h.Agent.Timeout, parent, ctx); ok {
		return o, true
	}
	r.result, r.agentStatus = outcome{StatusSuccess, ""}, StatusSuccess
	if !ap.ok() {
		r.result, r.agentStatus = outcome{StatusFailure, describeExit("the agent", ap, h.Agent.Timeout)}, StatusFailure
	}
	return outcome{}, false
}

// postscript runs the post-script on the host (after a failed agent too: it may report or
// clean up) and reads its result file into the receipt's claims.
func (r *runner) postscript(parent, ctx context.Context) (outcome, bool) {
	ps := r.c.h.PostScript
	if ps == nil {
		return outcome{}, false
	}
	if r.preDir == "" {
		var err error
		if r.preDir, err = os.MkdirTemp(r.c.state, "prescript-"); err != nil {
			return outcome{StatusFailure, "the post-script result file could not be prepared"}, true
		}
	}
	resultFile := filepath.Join(r.preDir, "result")
	env := append(pickEnv(r.o.Environ(), ps.Env), EnvSnapshotDir+"="+r.treeDir, EnvAgentStatus+"="+r.agentStatus,
		EnvResultFile+"="+resultFile)
	pout, perr := prescript.NewRedactingLog(r.o.Stderr, r.pipe), prescript.NewRedactingLog(r.o.Stderr, r.pipe)
	tail := newLastLine(perr, 2048)
	pp := runProc(ctx, procSpec{argv: ps.Command, env: env, stdout: pout, stderr: tail, timeout: ps.Timeout, grace: r.o.KillGrace})
	pout.Flush()
	perr.Flush()
	r.phase("post-script").Int("exit_code", pp.ExitCode).Int64("duration_ms", pp.Duration.Milliseconds()).Msg("forgectx run: post-script finished")
	if o, ok := stopped("the post-script", pp, ps.Timeout, parent, ctx); ok {
		return o, true
	}
	if !pp.ok() && r.result.status == StatusSuccess {
		d := describeExit("the post-script", pp, ps.Timeout)
		if last := tail.Last(); last != "" {
			red, _ := r.pipe.Redact(last)
			d += ": " + red
		}
		r.result = outcome{StatusFailure, d}
	}
	if pp.ok() {
		r.readPostscriptResults(resultFile)
	}
	return outcome{}, false
}

// readPostscriptResults reads the post-script's claims for the receipt; a malformed claim
// fails the run rather than leaving a receipt that says less than happened.
func (r *runner) readPostscriptResults(resultFile string) {
	res, err := readResults(resultFile)
	if err != nil {
		r.log.Error().Err(err).Msg("forgectx run: post-script result file refused")
		if r.result.status == StatusSuccess {
			r.result = outcome{StatusFailure, "the post-script's " + err.Error()}
		}
	} else {
		r.results = res
	}
	r.phase("post-script").Int("result_record_keys", len(res.keys)).Bool("resulting_commit", res.commit != "").Msg("forgectx run: results read")
}
