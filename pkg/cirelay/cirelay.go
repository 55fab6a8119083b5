// Package cirelay relays a pre-script decision to the CI system: the "CI relay" section of the
// pre-script output protocol v1 (docs/prescript.md), plus a GitLab dotenv report,
// which the spec leaves out of v1 and forgectx adds.
//
// # GitHub Actions
//
// Under GitHub Actions (GITHUB_ACTIONS=true and GITHUB_OUTPUT set) Relay appends the decision
// to $GITHUB_OUTPUT with github.com/sethvargo/go-githubactions' file-command format, one
// heredoc entry per key:
//
//	<key><<_GitHubActionsFileCommandDelimeter_
//	<value>
//	_GitHubActionsFileCommandDelimeter_
//
// The keys, in the order written (see Entries):
//
//	reason        the decision's reason ("" when none)
//	skip-reason   the same value: the name the composite action re-exports as its skip-reason output
//	<outputs>     the script's own keys, sorted; a script key named skip-reason is not relayed
//	              (the relay owns that name) and is reported in Result.Shadowed
//	skipped       "true" or "false", always last
//
// skipped is written last on purpose: if a write fails part-way, the partial relay has no
// skipped entry, which consumers already read as "no decision reached" (and the run fails).
// Every path that reaches a decision relays: skip, proceed, and no pre-script (RelayNoPrescript).
// A value that could smuggle an entry is refused before anything is written: a control
// character (CR and LF included) in a key or value, a key outside the protocol's key pattern,
// or a key or value containing the heredoc delimiter.
//
// # GitLab dotenv
//
// With Options.DotenvPath set, Relay also writes (atomically, replacing a regular file and
// refusing anything else, see internal/platform/safeout) a dotenv
// report for artifacts:reports:dotenv: reason, the outputs sorted, skipped last, one KEY=VALUE
// line each, no comments, no blank lines. GitLab's dotenv rules are enforced and a violation
// fails the relay, naming the key and the rule (never the value):
//
//   - key matches ^[a-zA-Z_][a-zA-Z0-9_]*$ and is at most 255 bytes (so hyphenated protocol
//     keys cannot be relayed, and skip-reason is not written);
//   - value is single-line UTF-8 with no control character and no surrounding whitespace
//     (GitLab strips it and does not support quoting);
//   - at most DotenvLimits.MaxVariables variables and DotenvLimits.MaxBytes bytes in the file.
//
// Keys with an empty value are omitted from the dotenv report: GitLab job scripts see an
// unset variable and an empty one alike, and older GitLab versions reject KEY= lines.
//
// The limits are GitLab's documented defaults (docs: "CI/CD job artifacts reports: dotenv" and
// the dotenv_size / dotenv_variables application limits): 5 KiB per file and 20 variables on a
// default self-managed instance. The gitlab client-go module does not carry these numbers
// (its PlanLimit type has no dotenv fields), so they are constants here; raise them with
// DotenvLimits for instances configured higher.
package cirelay

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/rs/zerolog"
	"github.com/sethvargo/go-githubactions"

	"github.com/forgectx/forgectx/internal/platform/safeout"
	"github.com/forgectx/forgectx/pkg/prescript"
)

// Keys the relay writes besides the script's outputs.
const (
	KeySkipped    = prescript.KeySkipped // "true" / "false"
	KeyReason     = prescript.KeyReason
	KeySkipReason = "skip-reason" // GitHub only: the composite action's output name
)

// GitHubDelimiter is the heredoc delimiter go-githubactions v1.3.0 writes (its spelling).
const GitHubDelimiter = "_GitHubActionsFileCommandDelimeter_"

// Default GitLab dotenv limits (see the package doc).
const (
	DefaultDotenvMaxBytes     = 5 * 1024
	DefaultDotenvMaxVariables = 20
	DotenvMaxKeyBytes         = 255
)

// DotenvLimits bound the dotenv report. Zero fields take the defaults.
type DotenvLimits struct {
	MaxBytes     int
	MaxVariables int
}

// Options select the relay targets.
type Options struct {
	// Getenv reads GITHUB_ACTIONS and GITHUB_OUTPUT; nil means os.Getenv.
	Getenv func(string) string
	// DotenvPath, when set, is where the GitLab dotenv report is written.
	DotenvPath   string
	DotenvLimits DotenvLimits
	// Log receives counts and key names only; nil disables logging.
	Log *zerolog.Logger
}

// Result says what was relayed.
type Result struct {
	GitHub   bool     // appended to $GITHUB_OUTPUT
	Dotenv   bool     // wrote the dotenv report
	Shadowed []string // script output keys not relayed because the relay owns the name
}

// RefusedError is a value or key the relay will not write because it could smuggle an entry
// or breaks the target's rules. It names the target, the key and the rule, never the value.
type RefusedError struct {
	Target string // "GITHUB_OUTPUT" or "dotenv"
	Key    string // empty when the rule is about the whole report
	Rule   string
}

func (e *RefusedError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("%s relay refused: %s", e.Target, e.Rule)
	}
	return fmt.Sprintf("%s relay refused key %q: %s", e.Target, e.Key, e.Rule)
}

// Entries returns the exact key/value pairs the GitHub relay writes for d, in order, and the
// script output keys shadowed by relay-owned names.
func Entries(d prescript.Decision) (entries []prescript.KV, shadowed []string) {
	entries = append(entries, prescript.KV{Key: KeyReason, Value: d.Reason}, prescript.KV{Key: KeySkipReason, Value: d.Reason})
	for _, kv := range d.Outputs {
		if kv.Key == KeySkipReason {
			shadowed = append(shadowed, kv.Key)
			continue
		}
		entries = append(entries, kv)
	}
	return append(entries, prescript.KV{Key: KeySkipped, Value: fmt.Sprint(d.Skipped)}), shadowed
}

// DotenvEntries returns the exact key/value pairs the dotenv report holds for d, in order:
// reason, outputs, skipped; empty values omitted.
func DotenvEntries(d prescript.Decision) []prescript.KV {
	var entries []prescript.KV
	if d.Reason != "" {
		entries = append(entries, prescript.KV{Key: KeyReason, Value: d.Reason})
	}
	for _, kv := range d.Outputs {
		if kv.Value != "" {
			entries = append(entries, kv)
		}
	}
	return append(entries, prescript.KV{Key: KeySkipped, Value: fmt.Sprint(d.Skipped)})
}

// GitHubOutputPath returns $GITHUB_OUTPUT when the relay applies (GITHUB_ACTIONS=true and
// GITHUB_OUTPUT set).
func GitHubOutputPath(getenv func(string) string) (string, bool) {
	if getenv == nil {
		getenv = os.Getenv
	}
	p := getenv("GITHUB_OUTPUT")
	return p, getenv("GITHUB_ACTIONS") == "true" && p != ""
}

// Relay writes d to every applicable target. Any refusal or write failure is returned and must
// fail the run: a workflow gate that disagrees with the CLI is what the relay exists to
// prevent. Both targets are validated before either is written.
func Relay(opts Options, d prescript.Decision) (Result, error) {
	var res Result
	ghPath, gh := GitHubOutputPath(opts.Getenv)
	ghEntries, shadowed := Entries(d)
	res.Shadowed = shadowed
	var dotenv []byte
	if opts.DotenvPath != "" {
		var err error
		if dotenv, err = RenderDotenv(DotenvEntries(d), opts.DotenvLimits); err != nil {
			return res, err
		}
	}
	if gh {
		if err := validateGitHub(ghEntries); err != nil {
			return res, err
		}
		if err := appendGitHubOutput(ghPath, ghEntries); err != nil {
			return res, err
		}
		res.GitHub = true
	}
	if opts.DotenvPath != "" {
		if err := WriteDotenv(opts.DotenvPath, dotenv); err != nil {
			return res, err
		}
		res.Dotenv = true
	}
	if opts.Log != nil && (res.GitHub || res.Dotenv) {
		opts.Log.Info().Bool("github_output", res.GitHub).Bool("dotenv", res.Dotenv).
			Int("entries", len(ghEntries)).Strs("shadowed_keys", res.Shadowed).Msg("decision relayed")
	}
	return res, nil
}

// RelayNoPrescript relays the decision of a harness that defines no pre-script: proceed,
// skipped=false.
func RelayNoPrescript(opts Options) (Result, error) {
	return Relay(opts, prescript.NoPrescript())
}

// WriteGitHubOutput validates entries and appends them to the file at path in the
// go-githubactions file-command format. It exists for callers that manage the environment
// themselves; Relay is the usual entry point.
func WriteGitHubOutput(path string, entries []prescript.KV) error {
	if err := validateGitHub(entries); err != nil {
		return err
	}
	return appendGitHubOutput(path, entries)
}

func validateGitHub(entries []prescript.KV) error {
	for _, e := range entries {
		refuse := func(rule string) error { return &RefusedError{Target: "GITHUB_OUTPUT", Key: e.Key, Rule: rule} }
		switch {
		case !prescript.ValidKey(e.Key):
			return refuse("key does not match ^[a-zA-Z_][a-zA-Z0-9_-]*$")
		case hasControl(e.Value):
			return refuse("value contains a control character (CR or LF would start a new entry)")
		case strings.Contains(e.Key, GitHubDelimiter) || strings.Contains(e.Value, GitHubDelimiter):
			return refuse("key or value contains the heredoc delimiter " + GitHubDelimiter)
		}
	}
	return nil
}

// appendGitHubOutput writes through go-githubactions, which panics when the file command cannot
// be written; the panic is turned back into an error here.
func appendGitHubOutput(path string, entries []prescript.KV) (err error) {
	// The runner's $GITHUB_OUTPUT is always a regular file; anything else (a device, a FIFO,
	// a directory) is refused by the safe-output rule before go-githubactions opens it.
	if err := safeout.CheckAppend(path, safeout.Options{}); err != nil {
		return fmt.Errorf("append to GITHUB_OUTPUT: %w", err)
	}
	a := githubactions.New(
		githubactions.WithWriter(io.Discard),
		githubactions.WithGetenv(func(k string) string {
			if k == "GITHUB_OUTPUT" {
				return path
			}
			return ""
		}),
	)
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = fmt.Errorf("append to GITHUB_OUTPUT: %w", e)
			} else {
				err = fmt.Errorf("append to GITHUB_OUTPUT: %v", r)
			}
		}
	}()
	for _, e := range entries {
		a.SetOutput(e.Key, e.Value)
	}
	return nil
}

// RenderDotenv validates entries against GitLab's dotenv rules and renders the report.
func RenderDotenv(entries []prescript.KV, limits DotenvLimits) ([]byte, error) {
	maxBytes, maxVars := limits.MaxBytes, limits.MaxVariables
	if maxBytes <= 0 {
		maxBytes = DefaultDotenvMaxBytes
	}
	if maxVars <= 0 {
		maxVars = DefaultDotenvMaxVariables
	}
	if len(entries) > maxVars {
		return nil, &RefusedError{Target: "dotenv", Rule: fmt.Sprintf("%d variables exceed GitLab's limit of %d", len(entries), maxVars)}
	}
	var b bytes.Buffer
	seen := map[string]bool{}
	for _, e := range entries {
		refuse := func(rule string) error { return &RefusedError{Target: "dotenv", Key: e.Key, Rule: rule} }
		switch {
		case !dotenvKey(e.Key):
			return nil, refuse("key does not match GitLab's ^[a-zA-Z_][a-zA-Z0-9_]*$")
		case len(e.Key) > DotenvMaxKeyBytes:
			return nil, refuse(fmt.Sprintf("key is longer than %d bytes", DotenvMaxKeyBytes))
		case seen[e.Key]:
			return nil, refuse("key appears twice")
		case hasControl(e.Value):
			return nil, refuse("value is not a single line without control characters")
		case !utf8.ValidString(e.Value):
			return nil, refuse("value is not valid UTF-8")
		case strings.Trim(e.Value, " \t") != e.Value:
			return nil, refuse("value has surrounding whitespace, which GitLab would strip")
		}
		seen[e.Key] = true
		b.WriteString(e.Key)
		b.WriteByte('=')
		b.WriteString(e.Value)
		b.WriteByte('\n')
	}
	if b.Len() > maxBytes {
		return nil, &RefusedError{Target: "dotenv", Rule: fmt.Sprintf("report is %d bytes, over GitLab's limit of %d", b.Len(), maxBytes)}
	}
	return b.Bytes(), nil
}

// WriteDotenv replaces the dotenv report at path with body (as RenderDotenv returns it),
// through internal/platform/safeout: a temporary file beside the target renamed over it, so a failed write
// never leaves a half report for the artifact uploader, and only a regular file (or a new
// path) is ever replaced — a device node, FIFO, directory or dangling symlink named by
// --dotenv is refused, never clobbered. Errors read "write dotenv report: PATH: RULE" and name
// the target, never the temporary file.
func WriteDotenv(path string, body []byte) error {
	if err := safeout.WriteFile(path, body, safeout.Options{Perm: 0o644}); err != nil {
		return fmt.Errorf("write dotenv report: %w", err)
	}
	return nil
}

func dotenvKey(k string) bool { return prescript.ValidKey(k) && !strings.Contains(k, "-") }

func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return true
		}
	}
	return false
}
