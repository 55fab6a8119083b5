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
package filter

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// Version is the filter_version written into every snapshot. It changes whenever the emitted
// bytes for the same input would change.
const Version = "forgectx-filter-v1.0.0"

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

// Pipeline is a compiled filter with its registry of exact run credentials. It is safe for
// concurrent use.
type Pipeline struct {
	secrets []string
}

// New compiles a pipeline that also redacts the given literal credential values.
func New(secrets []string) *Pipeline { return &Pipeline{secrets: secrets} }

// Apply runs the full pipeline over src (see the package doc and docs/filter.md).
func (p *Pipeline) Apply(ctx context.Context, src []byte, opt Options) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("%w: %w", ErrAborted, err)
	}
	if opt.MaxSourceBytes > 0 && len(src) > opt.MaxSourceBytes {
		return Result{Status: StatusRejected, Gap: GapSourceTooLarge}, nil
	}
	s := strings.ToValidUTF8(string(src), "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	if opt.Role != RoleDisplay {
		s = strings.TrimRight(s, "\n")
		if s != "" {
			s += "\n"
		}
	}
	norm := s
	out, findings := p.Sanitize(s)
	if opt.Role != RoleDisplay {
		out = strings.TrimRight(out, "\n")
		if out != "" {
			out += "\n"
		}
	}
	status := StatusUnchanged
	if out != norm {
		status = StatusModified
	}
	if opt.MaxBytes > 0 && len(out) > opt.MaxBytes {
		cut := opt.MaxBytes
		if opt.Role != RoleDisplay {
			cut--
		}
		for cut > 0 && !utf8.RuneStart(out[cut]) {
			cut--
		}
		out = strings.TrimRight(out[:max(cut, 0)], "\n")
		if opt.Role != RoleDisplay && out != "" {
			out += "\n"
		}
		status = StatusTruncated
	}
	return Result{Status: status, Findings: MergeFindings(findings), Output: []byte(out)}, nil
}

// Redact replaces registered run credentials and the secret-pattern floor in s.
func (p *Pipeline) Redact(s string) (string, []Finding) {
	n := 0
	for _, lit := range p.secrets {
		if lit == "" {
			continue
		}
		c := strings.Count(s, lit)
		if c > 0 {
			n += c
			s = strings.ReplaceAll(s, lit, "[REDACTED:run-credential]")
		}
	}
	if n == 0 {
		return s, nil
	}
	return s, []Finding{{Code: "redact.run-credential", Count: n}}
}

// Sanitize applies Unicode safety and redaction, with no injection scan and no bound.
func (p *Pipeline) Sanitize(s string) (string, []Finding) {
	return p.Redact(s)
}

// CheckStructural reports whether the full pipeline leaves s byte-identical and not rejected.
func (p *Pipeline) CheckStructural(ctx context.Context, s string) error {
	r, err := p.Apply(ctx, []byte(s), Options{Role: RoleDisplay})
	if err != nil {
		return err
	}
	if r.Status != StatusUnchanged {
		return fmt.Errorf("filter: structural value %s", r.Status)
	}
	return nil
}

// SecretEnvValues returns the literal values of secret environment variables.
func SecretEnvValues(environ []string, names []string) []string {
	var out []string
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok && len(v) >= 8 && (slices.Contains(names, k) || strings.HasSuffix(k, "_TOKEN")) {
			out = append(out, v)
		}
	}
	return out
}

// MergeFindings sums counts per code, sorted by code, dropping zero counts.
func MergeFindings(lists ...[]Finding) []Finding {
	m := map[string]int{}
	for _, l := range lists {
		for _, f := range l {
			m[f.Code] += f.Count
		}
	}
	var out []Finding
	for c, n := range m {
		if n != 0 {
			out = append(out, Finding{Code: c, Count: n})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out
}
