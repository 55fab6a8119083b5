package prescript

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/platform/procgroup"
)

// EnvOutput is the environment variable that carries the output file's absolute path to the
// script. Wire name: byte-exact.
const EnvOutput = "FULLSEND_PRESCRIPT_OUTPUT"

// ExitNeutral is the exit code that requests an authoritative neutral skip.
const ExitNeutral = 78

// DefaultTimeout bounds a pre-script when neither Options.Timeout nor the context sets a
// deadline.
const DefaultTimeout = 10 * time.Minute

// DefaultKillGrace is how long a cancelled or timed-out script's process group has between
// SIGTERM and SIGKILL (the agent's and post-script's default in forgectx run).
const DefaultKillGrace = 3 * time.Second

// DefaultWaitDelay is how long Run waits for the script's streams to close after the script
// exits (a background child may hold them open) before closing them itself.
const DefaultWaitDelay = 5 * time.Second

// Redactor is the redaction pass of the filter pipeline: literal run-credential values plus the
// shared secret-pattern scanner. *filter.Pipeline implements it.
type Redactor interface {
	Redact(s string) (string, []filter.Finding)
}

// Options configure one Run.
type Options struct {
	// RunDir is the run directory; the output file is created inside it. It must exist.
	RunDir string
	// Command is the script and its arguments (argv). Command[0] is run directly (it needs a
	// shebang and the executable bit, or name an interpreter such as bash).
	Command []string
	// Dir is the script's working directory; empty means the current one.
	Dir string
	// Env is the script's environment; nil means os.Environ(). Any FULLSEND_PRESCRIPT_OUTPUT in
	// it is replaced by the prepared file's path.
	Env []string
	// Stdout and Stderr receive the script's streams live (the job log). Nil discards.
	Stdout, Stderr io.Writer
	// Redactor redacts the stdout-derived exit-78 reason and hard-failure diagnostics. Nil
	// means filter.New(filter.SecretEnvValues(Env, SecretEnvNames)).
	Redactor Redactor
	// SecretEnvNames names extra environment variables whose literal values are secrets (used
	// only when Redactor is nil).
	SecretEnvNames []string
	// Timeout bounds the script; zero means DefaultTimeout unless ctx already has a deadline.
	Timeout time.Duration
	// WaitDelay overrides DefaultWaitDelay (raised to KillGrace when shorter).
	WaitDelay time.Duration
	// KillGrace is how long the script's process group has between SIGTERM and SIGKILL when
	// the context ends (cancellation or time-out); zero means DefaultKillGrace.
	KillGrace time.Duration
	// Log receives structured events (counts and codes only). Nil disables logging.
	Log *zerolog.Logger
}

// Basis says what the decision rests on.
type Basis string

// Bases of a Decision.
const (
	BasisFile        Basis = "file"         // exit 0: the output file decided (skipped=true, or proceed)
	BasisExitNeutral Basis = "exit-78"      // exit 78: authoritative neutral skip
	BasisNoPrescript Basis = "no-prescript" // the harness defines no pre-script: proceed
)

// Decision is the outcome of the gate: skip or proceed.
type Decision struct {
	Skipped bool
	// Reason is the file's reason= value (never redacted) or, for exit 78 without one, the
	// sanitised, capped and redacted last non-empty stdout line. It may be empty.
	Reason string
	// ReasonFromStdout reports that Reason is the exit-78 stdout fallback.
	ReasonFromStdout bool
	// Outputs are the file's non-reserved keys, sorted by key.
	Outputs []KV
	Basis   Basis
}

// NoPrescript is the decision for a harness without a pre-script: proceed. It is relayed like
// any other decision (skipped=false).
func NoPrescript() Decision { return Decision{Basis: BasisNoPrescript} }

// DecisionFrom turns a parsed file into the exit-0 decision it requests.
func DecisionFrom(f File) Decision {
	return Decision{Skipped: f.SkippedSet && f.Skipped, Reason: f.Reason, Outputs: f.Outputs, Basis: BasisFile}
}

// HardFailure is the spec's hard failure of the script itself: a non-zero exit other than 78,
// death by a signal, or a timeout. Diagnostic is the script's own message chosen by the spec's
// preference order, sanitised, redacted and capped; it is never empty.
type HardFailure struct {
	ExitCode int    // -1 when the script did not exit normally
	Status   string // the process status, e.g. "exit status 1" or "signal: killed"
	TimedOut bool
	// Diagnostic is one line of at most MaxTextBytes bytes.
	Diagnostic string
	// FromOutput reports that Diagnostic was captured from the script's output rather than
	// synthesised from its status.
	FromOutput bool
	// Redactions counts what the redaction pass replaced (codes and counts only).
	Redactions []filter.Finding
}

func (h *HardFailure) Error() string {
	return fmt.Sprintf("pre-script failed (%s): %s", h.Status, h.Diagnostic)
}

// Run prepares the output file, runs the script with its streams teed to the job log, and
// applies the exit-code table. It returns the decision, or an error: *HardFailure for a failed
// script, *ProtocolError for an output file that breaks the grammar or error semantics (after
// exit 0), or a wrapped error when the script could not be started or prepared. The output
// file is removed on every path.
func Run(ctx context.Context, opts Options) (Decision, error) {
	log := zerolog.Nop()
	if opts.Log != nil {
		log = *opts.Log
	}
	p, err := prepare(opts)
	if err != nil {
		return Decision{}, err
	}
	defer os.Remove(p.path)

	timeout := opts.Timeout
	if _, has := ctx.Deadline(); timeout == 0 && !has {
		timeout = DefaultTimeout
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	x, err := execute(ctx, opts, p, &log)
	if err != nil {
		return Decision{}, err
	}
	if ctxErr := ctx.Err(); ctxErr != nil && (x.stopped || x.code != 0 && x.code != ExitNeutral) {
		return Decision{}, interruptedFailure(x, p.redactor, ctxErr, timeout)
	}
	switch x.code {
	case 0:
		file, err := readOutput(p.path)
		if err != nil {
			return Decision{}, err
		}
		d := DecisionFrom(file)
		log.Info().Bool("skipped", d.Skipped).Str("basis", string(d.Basis)).Strs("output_keys", logKeys(d.Outputs, p.redactor)).Msg("pre-script decision")
		return d, nil
	case ExitNeutral:
		return neutralSkip(p, x, &log), nil
	}
	hf := hardFailure(x.state, x.out, x.errc, p.redactor)
	log.Error().Int("exit_code", x.code).Bool("from_output", hf.FromOutput).Int("redactions", countFindings(hf.Redactions)).Msg("pre-script failed")
	return Decision{}, hf
}

// prepared is a validated Run: the absolute run directory, the script's environment, the
// redaction pass and the prepared (empty) output file.
type prepared struct {
	runDir   string
	env      []string
	redactor Redactor
	secrets  []string // literal values the captures also know (nil with Options.Redactor)
	path     string
}

// prepare validates opts and creates the output file: empty, mode 0600 (CreateTemp's mode),
// inside the run directory. The caller removes p.path.
func prepare(opts Options) (*prepared, error) {
	if len(opts.Command) == 0 || opts.Command[0] == "" {
		return nil, errors.New("prescript: no script to run")
	}
	if opts.RunDir == "" {
		return nil, errors.New("prescript: run directory is required")
	}
	runDir, err := filepath.Abs(opts.RunDir)
	if err != nil {
		return nil, fmt.Errorf("prescript: run directory: %w", err)
	}
	p := &prepared{runDir: runDir, env: opts.Env, redactor: opts.Redactor}
	if p.env == nil {
		p.env = os.Environ()
	}
	if p.redactor == nil {
		p.secrets = filter.SecretEnvValues(p.env, opts.SecretEnvNames)
		p.redactor = filter.New(p.secrets)
	}
	f, err := os.CreateTemp(runDir, "prescript-*.out")
	if err != nil {
		return nil, fmt.Errorf("prescript: create output file: %w", err)
	}
	p.path = f.Name()
	if err := f.Close(); err != nil {
		os.Remove(p.path)
		return nil, fmt.Errorf("prescript: create output file: %w", err)
	}
	return p, nil
}

// execution is how the script ran: its process state, exit code and captured streams.
type execution struct {
	state     *os.ProcessState
	code      int
	out, errc *capture
	// stopped: the context ended before the script was reaped and its group was signalled.
	stopped bool
}

// execute runs the script with the output file's path in its environment and its streams
// teed, line by line through the redaction pass, to the job log. It returns an error only
// when the script could not be started or waited for.
func execute(ctx context.Context, opts Options, p *prepared, log *zerolog.Logger) (*execution, error) {
	// The live job log gets the script's streams line by line through the redaction pass,
	// like every other copy of its output (the spec's "before it reaches the status comment,
	// span, or log"): a script that echoes $MY_TOKEN does not print it in the job log.
	var jl jobLog
	liveOut, liveErr := NewRedactingLog(opts.Stdout, p.redactor), NewRedactingLog(opts.Stderr, p.redactor)
	x := &execution{out: newCapture(jl.to(liveOut.writer()), p.secrets), errc: newCapture(jl.to(liveErr.writer()), p.secrets)}
	grace := opts.KillGrace
	if grace <= 0 {
		grace = DefaultKillGrace
	}
	waitDelay := opts.WaitDelay
	if waitDelay == 0 {
		waitDelay = DefaultWaitDelay
	}
	// The script runs in its own process group: when the context ends (time-out, interrupt)
	// the whole group gets SIGTERM, so the script and its children can finish their writes,
	// then SIGKILL after grace. Its background children are killed as soon as it exits (and
	// once more after it is reaped, for a child that escaped the first signal), never left
	// running with the job's environment or holding the captured streams open. The streams
	// are closed after WaitDelay, never before the group's grace.
	r := procgroup.Run(ctx, procgroup.Spec{Argv: opts.Command, Env: withVar(p.env, EnvOutput, p.path), Dir: opts.Dir,
		Stdout: x.out, Stderr: x.errc, Grace: grace, WaitDelay: max(waitDelay, grace), KillGroupOnExit: true})
	// A script stopped by the context is interrupted whatever it then exits with: with a
	// SIGTERM first, a trap could exit 0 or 78, and that is no decision.
	x.stopped = r.Stopped
	x.out.close()
	x.errc.close()
	liveOut.Flush()
	liveErr.Flush()
	if jl.failed > 0 {
		log.Warn().Int("failed_writes", jl.failed).Msg("pre-script output could not be copied to the job log")
	}
	if r.StartErr != nil {
		// Say why (not found, not executable, interpreter missing): the status comment shows
		// it, and "no such file or directory" alone hides a missing #! interpreter.
		return nil, fmt.Errorf("prescript: %w", DescribeStart(opts.Command[0], opts.Dir, r.StartErr))
	}
	var exitErr *exec.ExitError
	// A script that exited (with any code, or whose streams were closed after WaitDelay) has
	// a decision or a failure to report; any other wait error is no outcome.
	exited := errors.As(r.WaitErr, &exitErr) || errors.Is(r.WaitErr, exec.ErrWaitDelay)
	if r.WaitErr != nil && !exited {
		return nil, fmt.Errorf("prescript: wait: %w", r.WaitErr)
	}
	x.state, x.code = r.State, r.ExitCode
	log.Debug().Int("exit_code", x.code).Int("stdout_lines", x.out.lines).Int("stderr_lines", x.errc.lines).
		Int64("duration_ms", r.Duration.Milliseconds()).Msg("pre-script exited")
	return x, nil
}

// interruptedFailure is the hard failure of a script the context stopped (a time-out or an
// interrupt): the status says which, followed by the script's own diagnostic if it printed one.
func interruptedFailure(x *execution, r Redactor, ctxErr error, timeout time.Duration) *HardFailure {
	hf := hardFailure(x.state, x.out, x.errc, r)
	hf.TimedOut = errors.Is(ctxErr, context.DeadlineExceeded)
	what := "interrupted"
	switch {
	case hf.TimedOut && timeout > 0:
		what = fmt.Sprintf("timed out after %s", timeout)
	case hf.TimedOut:
		what = "timed out (deadline exceeded)"
	}
	if hf.FromOutput {
		hf.Diagnostic = capBytes(what+"; "+hf.Diagnostic, MaxTextBytes)
	} else {
		hf.Diagnostic = what
	}
	return hf
}

// neutralSkip is exit 78's decision: an authoritative skip whose reason and outputs come from
// the output file when it parses, and the reason otherwise from the last stdout line.
func neutralSkip(p *prepared, x *execution, log *zerolog.Logger) Decision {
	d := Decision{Skipped: true, Basis: BasisExitNeutral}
	file, perr := readOutput(p.path)
	if perr != nil {
		// Best effort: the exit code is authoritative, a broken file only loses its
		// reason and outputs.
		var pe *ProtocolError
		rule, line := "", 0
		if errors.As(perr, &pe) {
			rule, line = string(pe.Rule), pe.Line
		}
		log.Warn().Int("line", line).Str("rule", rule).Msg("exit 78: output file ignored, skipping anyway")
	} else {
		d.Reason, d.Outputs = file.Reason, file.Outputs
	}
	if d.Reason == "" {
		reason, findings := clean(x.out.lastNonEmpty(), p.redactor)
		d.Reason, d.ReasonFromStdout = reason, reason != ""
		if n := countFindings(findings); n > 0 {
			log.Info().Int("redactions", n).Msg("exit 78: stdout reason redacted")
		}
	}
	log.Info().Bool("skipped", true).Str("basis", string(d.Basis)).Bool("reason_from_stdout", d.ReasonFromStdout).
		Strs("output_keys", logKeys(d.Outputs, p.redactor)).Msg("pre-script decision")
	return d
}

// readOutput applies the file-level rules (missing, not regular) and then Parse.
func readOutput(path string) (File, error) {
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return File{}, &ProtocolError{Rule: RuleFileMissing}
	}
	if err != nil {
		return File{}, &ProtocolError{Rule: RuleFileUnread, Err: err}
	}
	if !st.Mode().IsRegular() {
		return File{}, &ProtocolError{Rule: RuleNotRegular}
	}
	// A background child of the script may still swap the path between Lstat and Open: the open
	// does not follow a symlink and does not block on a FIFO, and the opened file is checked
	// again, so the read is always of a regular file and bounded.
	f, err := openNoFollow(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return File{}, &ProtocolError{Rule: RuleFileMissing}
		}
		if isSymlinkErr(err) {
			return File{}, &ProtocolError{Rule: RuleNotRegular}
		}
		return File{}, &ProtocolError{Rule: RuleFileUnread, Err: err}
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return File{}, &ProtocolError{Rule: RuleFileUnread, Err: err}
	} else if !st.Mode().IsRegular() {
		return File{}, &ProtocolError{Rule: RuleNotRegular}
	}
	return Parse(f)
}

// hardFailure builds the diagnostic in the spec's preference order: error annotations (stdout
// ones, then stderr ones), else the last non-empty stderr line, else the last non-empty stdout
// line; sanitised, redacted, capped.
func hardFailure(ps *os.ProcessState, out, errc *capture, r Redactor) *HardFailure {
	hf := &HardFailure{ExitCode: ps.ExitCode(), Status: ps.String()}
	var parts []string
	var findings [][]filter.Finding
	for _, a := range append(append([]string(nil), out.annotations...), errc.annotations...) {
		if msg, f := clean(a, r); msg != "" {
			parts = append(parts, msg)
			findings = append(findings, f)
		}
	}
	var diag string
	switch {
	case len(parts) > 0:
		diag = capBytes(strings.Join(parts, AnnotationSeparator), MaxTextBytes)
	case errc.lastNonEmpty() != "":
		var f []filter.Finding
		diag, f = clean(errc.lastNonEmpty(), r)
		findings = append(findings, f)
	case out.lastNonEmpty() != "":
		var f []filter.Finding
		diag, f = clean(out.lastNonEmpty(), r)
		findings = append(findings, f)
	}
	hf.Redactions = filter.MergeFindings(findings...)
	if diag != "" {
		hf.Diagnostic, hf.FromOutput = diag, true
	} else if hf.ExitCode >= 0 {
		hf.Diagnostic = fmt.Sprintf("exited with code %d and printed nothing", hf.ExitCode)
	} else {
		hf.Diagnostic = fmt.Sprintf("%s and printed nothing", ps.String())
	}
	return hf
}

// clean is the one pipeline for captured text: strip control characters, redact (before the
// cap, so a secret is never cut into an unrecognisable prefix), cap at a UTF-8 boundary.
func clean(s string, r Redactor) (string, []filter.Finding) {
	s = sanitize(s)
	if s == "" {
		return "", nil
	}
	red, findings := r.Redact(s)
	// The redactor's output is text we did not check; keep the one-line guarantee.
	return capBytes(sanitize(red), MaxTextBytes), findings
}

// RedactedKey stands in the log for an output key that the redaction pass would rewrite.
const RedactedKey = "[redacted-key]"

// logKeys lists output keys for the log ("parsed, logged, and relayed"); values are never
// logged. A key matches the protocol's key pattern, which a token shape such as ghp_… also
// matches, so every key goes through the redaction pass and one it would rewrite is logged as
// RedactedKey.
func logKeys(kvs []KV, r Redactor) []string {
	out := make([]string, len(kvs))
	for i, kv := range kvs {
		out[i] = kv.Key
		if red, _ := r.Redact(kv.Key); red != kv.Key {
			out[i] = RedactedKey
		}
	}
	return out
}

func countFindings(fs []filter.Finding) int {
	n := 0
	for _, f := range fs {
		n += f.Count
	}
	return n
}

// withVar returns env with every entry for name removed and name=value appended.
func withVar(env []string, name, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k == name {
			continue
		}
		out = append(out, kv)
	}
	return append(out, name+"="+value)
}
