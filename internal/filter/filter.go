// Package filter is the v1 filter pipeline of the entity-context-snapshot spec
// ("Canonical bytes": Unicode safety, redaction floor, injection floor, byte bounds).
//
// Every attacker-controllable string forgectx hands an agent or a human passes through one
// Pipeline: record bodies, logs, display strings, structural strings (checked, never
// rewritten), pre-script diagnostics, status-comment details and event excerpts. There is one
// secret scanner in the project, and it lives here.
//
// API CONTRACT (other packages code against these names; keep them stable):
//
//	filter.Version                       the filter_version string
//	filter.New(secrets []string) *Pipeline
//	(*Pipeline).Apply(ctx, src, Options) (Result, error)   error = aborted pipeline
//	(*Pipeline).Redact(s string) (string, []Finding)       redaction only (literals + patterns)
//	(*Pipeline).Sanitize(s string) (string, []Finding)     Unicode safety + redaction, no injection scan, no bound
//	(*Pipeline).CheckStructural(ctx, s string) error       nil only if the full pipeline leaves s unchanged
//	filter.SecretEnvValues(environ []string, names []string) []string
//	filter.MergeFindings(...[]Finding) []Finding
//
// A Pipeline is safe for concurrent use: Apply, Redact, Sanitize and CheckStructural keep all
// their working state (chunk buffers, the injection scan's lower-cased block) per call.
//
// test/filterv13 is a frozen copy of the v1.3.1 pipeline imported only by this package's
// tests: the differential tests compare the two on random and hostile text, so every change
// of emitted bytes between the versions is one that v1.4 makes on purpose.
package filter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"
)

// Version is the filter_version written into every snapshot. It changes whenever the emitted
// bytes for the same input would change.
const Version = "forgectx-filter-v1.5.0"

// Role selects the bounding rule: bodies and logs get the single-trailing-LF rule, display
// strings are bounded with no LF added.
type Role string

// Roles.
const (
	RoleBody    Role = "body"
	RoleLog     Role = "log"
	RoleDisplay Role = "display"
)

// Status is filter.status of the spec.
type Status string

// Statuses.
const (
	StatusUnchanged Status = "unchanged"
	StatusModified  Status = "modified"
	StatusTruncated Status = "truncated"
	StatusRejected  Status = "rejected"
)

// Gap codes a rejection maps to (index.json gaps[].code).
const (
	GapSourceTooLarge = "source_too_large"
	GapUnsafeContent  = "unsafe_content"
)

// Finding is one {code,count} row; codes match ^[a-z][a-z0-9._-]*$ and never carry source text.
type Finding struct {
	Code  string `json:"code"`
	Count int    `json:"count"`
}

// Options bound one Apply call. Zero bounds mean unbounded.
type Options struct {
	Role           Role
	MaxBytes       int // emitted byte bound (max_record_bytes, max_log_bytes, max_metadata_string_bytes)
	MaxSourceBytes int // pre-decode bound (max_source_bytes)
}

// Result is the outcome of Apply. Output is nil when Status is rejected; Gap then names why.
type Result struct {
	Status   Status
	Findings []Finding // sorted by code
	Output   []byte
	Gap      string
}

// ErrAborted wraps every pipeline component failure; the original bytes never pass through.
var ErrAborted = errors.New("filter: pipeline aborted")

// ErrOptions is returned (wrapped) for Options outside their documented ranges.
var ErrOptions = errors.New("filter: invalid options")

// ErrStructural is wrapped by the error CheckStructural returns for a value the pipeline would
// change or reject.
var ErrStructural = errors.New("filter: structural value not representable unchanged")

// StructuralError names why a structural value failed CheckStructural: the status the full
// pipeline gave it and the finding codes (never the value); a value changed only by line-ending
// normalisation reports status modified and the code "line-ending".
type StructuralError struct {
	Status Status
	Codes  []string
}

func (e *StructuralError) Error() string {
	return fmt.Sprintf("filter: structural value not representable unchanged (status %s: %s)", e.Status, strings.Join(e.Codes, ", "))
}

// Unwrap makes errors.Is(err, ErrStructural) true.
func (e *StructuralError) Unwrap() error { return ErrStructural }

// Pipeline is a compiled filter with its registry of exact run credentials. It is safe for
// concurrent use.
type Pipeline struct {
	literals [][]byte // longest first, so a literal that contains another redacts whole
}

// New compiles a pipeline that also redacts the given literal credential values (exact byte
// match on the Unicode-normalised text, also URL-encoded and JSON-escaped; duplicates dropped).
// Values shorter than MinSecretEnvBytes are ignored, whoever registers them (the run's own
// token included): literal redaction of a one- to seven-byte value ("x", "true", "main")
// destroys ordinary text ("fixture" → "fi[REDACTED:run-credential]ture") and, by where the
// markers land, reveals the value it was meant to hide. Such a value is no credential; the
// pattern detectors still apply. Use SecretEnvValues to pick values from an environment.
func New(secrets []string) *Pipeline {
	seen := map[string]bool{}
	var lits [][]byte
	addLit := func(v []byte) {
		if len(v) == 0 || seen[string(v)] {
			return
		}
		seen[string(v)] = true
		lits = append(lits, v)
	}
	for _, s := range secrets {
		if len(s) < MinSecretEnvBytes {
			continue
		}
		// the value, the form it takes after Unicode safety, and the forms a log prints it in
		// when it holds special characters: URL-encoded (query and path escaping, in a DSN or
		// a callback URL) and JSON-escaped (also with "\/")
		var c counts
		for _, v := range []string{s, string(unicodeSafety([]byte(s), &c)), url.QueryEscape(s), url.PathEscape(s)} {
			addLit([]byte(v))
		}
		if j, err := json.Marshal(s); err == nil && len(j) >= 2 {
			js := string(j[1 : len(j)-1])
			addLit([]byte(js))
			addLit([]byte(strings.ReplaceAll(js, "/", `\/`)))
		}
	}
	sort.Slice(lits, func(i, j int) bool {
		if len(lits[i]) != len(lits[j]) {
			return len(lits[i]) > len(lits[j])
		}
		return bytes.Compare(lits[i], lits[j]) < 0
	})
	return &Pipeline{literals: lits}
}

func abortf(err error) error { return fmt.Errorf("%w: %w", ErrAborted, err) }

// trimLF drops every trailing LF; the single-trailing-LF rule then appends one LF to a
// non-empty result.
func trimLF(b []byte) []byte {
	e := len(b)
	for e > 0 && b[e-1] == '\n' {
		e--
	}
	return b[:e]
}

// Apply runs the full pipeline over src in the spec's order:
//
//  0. len(src) > MaxSourceBytes: rejected, Gap source_too_large, nothing decoded or emitted;
//  1. decode UTF-8 (invalid sequences become U+FFFD, counted), CRLF/CR to LF, and for body and
//     log roles the single-trailing-LF rule; then Unicode safety (floor + shipped extras + NFKC);
//  2. redaction on the complete normalised text;
//  3. injection scan on the complete redacted text: a match rejects (Gap unsafe_content);
//  4. the byte bound at a code-point boundary (body/log: the LF rule, the LF counted in the
//     bound; display: no LF added);
//  5. if 4 removed bytes, the emitted bytes are scanned for injection again.
//
// Status is unchanged when the emitted bytes equal the normalised source (step 1's line-ending
// and trailing-LF canonicalisation does not by itself modify), modified when any replacement,
// strip or redaction happened, truncated when the bound removed bytes. Output is a fresh
// slice. A returned error wraps ErrAborted (context cancelled, internal failure) or ErrOptions;
// the original bytes are never returned with an error.
func (p *Pipeline) Apply(ctx context.Context, src []byte, opt Options) (res Result, err error) {
	if err := checkOptions(opt); err != nil {
		return Result{}, err
	}
	defer func() {
		if r := recover(); r != nil {
			res, err = Result{}, abortf(fmt.Errorf("internal failure: %v", r))
		}
	}()
	if err := ctx.Err(); err != nil {
		return Result{}, abortf(err)
	}
	if opt.MaxSourceBytes > 0 && len(src) > opt.MaxSourceBytes {
		return Result{Status: StatusRejected, Gap: GapSourceTooLarge}, nil
	}
	var c counts
	text := unicodeSafety(src, &c)
	if err := ctx.Err(); err != nil {
		return Result{}, abortf(err)
	}
	owned := len(text) > 0 && len(src) > 0 && &text[0] != &src[0]
	text = p.redact(text, &c, owned)
	if err := ctx.Err(); err != nil {
		return Result{}, abortf(err)
	}
	scanInjection(text, &c)
	if injectionFound(&c) {
		return Result{Status: StatusRejected, Gap: GapUnsafeContent, Findings: c.findings()}, nil
	}
	if err := ctx.Err(); err != nil {
		return Result{}, abortf(err)
	}
	return emit(src, text, opt, &c), nil
}

// checkOptions rejects Options outside their documented ranges.
func checkOptions(opt Options) error {
	switch opt.Role {
	case RoleBody, RoleLog, RoleDisplay:
	default:
		return fmt.Errorf("%w: Options.Role %q must be body, log or display", ErrOptions, opt.Role)
	}
	if opt.MaxBytes < 0 || opt.MaxSourceBytes < 0 {
		return fmt.Errorf("%w: Options.MaxBytes and Options.MaxSourceBytes must be >= 0 (0 = unbounded)", ErrOptions)
	}
	return nil
}

// emit is pipeline steps 4 and 5 on the redacted, injection-free text: the trailing-LF rule,
// the byte bound and, when the bound removed bytes, the injection scan of the exact emitted
// bytes. The output never aliases src; a buffer the pipeline made is handed over without a
// copy.
func emit(src, text []byte, opt Options, c *counts) Result {
	status := StatusUnchanged
	if c.any(cInvalidUTF8, cIBAN) {
		status = StatusModified
	}
	lf := opt.Role != RoleDisplay
	addLF := false
	if lf {
		text = trimLF(text)
		addLF = len(text) > 0
	}
	truncated := false
	if size := len(text) + b2i(addLF); opt.MaxBytes > 0 && size > opt.MaxBytes {
		text = bound(text, opt.MaxBytes, lf)
		addLF = lf && len(text) > 0
		truncated = true
	}
	var out []byte
	if len(text) == 0 {
		out = []byte{}
	} else if len(src) > 0 && &text[0] == &src[0] || cap(text) < len(text)+b2i(addLF) {
		out = make([]byte, len(text), len(text)+1)
		copy(out, text)
	} else {
		out = text
	}
	if addLF {
		out = append(out, '\n')
	}
	if truncated {
		status = StatusTruncated
		c[cTruncated]++
		scanInjection(out, c)
		if injectionFound(c) {
			return Result{Status: StatusRejected, Gap: GapUnsafeContent, Findings: c.findings()}
		}
	}
	return Result{Status: status, Findings: c.findings(), Output: out}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// bound cuts text to the longest prefix ending at a code-point boundary that fits max bytes
// (max-1 when an LF is to follow); with lf, trailing LFs of that prefix are dropped too, so
// the emitted text ends in exactly one LF (or is empty). text has no trailing LF and
// len(text) >= max-1 when lf, len(text) > max otherwise.
func bound(text []byte, max int, lf bool) []byte {
	cut := max
	if lf {
		cut--
	}
	for cut > 0 && cut < len(text) && !utf8.RuneStart(text[cut]) {
		cut--
	}
	text = text[:cut]
	if lf {
		text = trimLF(text)
	}
	return text
}

// Redact replaces the registered run credentials and the pattern floor in s; there is no
// Unicode safety and no injection scan. Pre-script diagnostics use it.
func (p *Pipeline) Redact(s string) (string, []Finding) {
	var c counts
	b := p.redact([]byte(s), &c, true)
	return string(b), c.findings()
}

// Sanitize applies decoding (invalid UTF-8 to U+FFFD), line-ending normalisation, Unicode
// safety and redaction, with no injection scan and no bound: free-text excerpt fields and
// status-comment details use it.
func (p *Pipeline) Sanitize(s string) (string, []Finding) {
	var c counts
	b := unicodeSafety([]byte(s), &c)
	b = p.redact(b, &c, true) // []byte(s) is a fresh copy: the pipeline owns it
	return string(b), c.findings()
}

// CheckStructural returns nil only when the full pipeline (display role, no bound) leaves s
// byte-identical and does not reject it. Otherwise the error is a *StructuralError naming the
// status and the finding codes (never the value), or wraps ErrAborted.
func (p *Pipeline) CheckStructural(ctx context.Context, s string) error {
	r, err := p.Apply(ctx, []byte(s), Options{Role: RoleDisplay})
	if err != nil {
		return err
	}
	if r.Status == StatusUnchanged && string(r.Output) == s {
		return nil
	}
	codes := make([]string, 0, len(r.Findings))
	for _, f := range r.Findings {
		codes = append(codes, f.Code)
	}
	status := r.Status
	if len(codes) == 0 {
		// only the line-ending canonicalisation changed it (CR or CRLF in the value)
		codes = append(codes, "line-ending")
		status = StatusModified
	}
	return &StructuralError{Status: status, Codes: codes}
}

// MergeFindings sums counts per code and returns them sorted by code, zero counts dropped.
func MergeFindings(lists ...[]Finding) []Finding {
	m := map[string]int{}
	for _, l := range lists {
		for _, f := range l {
			m[f.Code] += f.Count
		}
	}
	codes := make([]string, 0, len(m))
	for c, n := range m {
		if n != 0 {
			codes = append(codes, c)
		}
	}
	sort.Strings(codes)
	out := make([]Finding, 0, len(codes))
	for _, c := range codes {
		out = append(out, Finding{Code: c, Count: m[c]})
	}
	return out
}
