// Package reviewpub is the publication DLP of a review-context run (docs/review-context.md,
// "Publication DLP": after the engine exits, separate publication-sink and private-retention
// projections, with the ocr.publication-dlp-signal/v2 and ocr.private-dlp-decisions/v1 records).
//
// Project takes a validated review result (internal/review/reviewresult) and returns two projections:
//
//   - the publication projection: exactly the values the poster renders — finding fields,
//     warnings, the outcome message, displayed tool names and the manifest failure path and
//     reason — each checked against the forbidden (non-publishable) context, the configured
//     secrets (the internal/filter pipeline), closed PII patterns, control characters, Markdown
//     destinations and raw HTML, and Unicode/HTML/Markdown laundering forms (bidi,
//     zero-width, full-width, entity-encoded). An unsafe required finding field removes the
//     finding; an unsafe existing_code or suggestion_code is removed and the finding kept; a
//     tab is allowed only in those two code fields;
//   - the private-retention projection: the publication projection plus the private
//     metadata, whose unsafe values are replaced with a static text.
//
// The Decision is private-sanitized only when the canonical publication/approval projection
// is byte-identical before and after; any other change is publication-filtered, whose
// projection has status completed_with_errors with the original coverage kind and counts.
// Unsafe values and their locations are never part of an Outcome except the value-free
// Decisions attribution, which only an explicit local preservation run may write.
package reviewpub

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/forgectx/forgectx/internal/review/reviewctx"
	"github.com/forgectx/forgectx/internal/review/reviewresult"
	"github.com/forgectx/forgectx/internal/snapshot/canon"
)

// Wire names.
const (
	SignalSchema    = "ocr.publication-dlp-signal/v2"
	decisionsSchema = "ocr.private-dlp-decisions/v1"
)

// Static replacement texts (non-sensitive, fixed).
const (
	withheldOutcome = "The outcome message was withheld by publication DLP."
	withheldValue   = "[withheld by publication DLP]"
	sanitizedValue  = "[sanitized]"
)

// Decision is the publication-DLP result receipt v8 records.
type Decision string

// Decisions.
const (
	// DecisionClean: nothing was changed.
	DecisionClean Decision = "clean"
	// decisionPrivateSanitized: only private metadata was sanitized; the canonical
	// publication/approval projection is byte-identical, so normal approval applies.
	decisionPrivateSanitized Decision = "private-sanitized"
	// DecisionPublicationFiltered: a publication value was removed or replaced (or the
	// projection was incomparable): the previous review is kept, only counts are emitted, and
	// the run never approves automatically.
	DecisionPublicationFiltered Decision = "publication-filtered"
)

// Inputs are the values the checks compare against.
type Inputs struct {
	// Forbidden are non-publishable context values (ForbiddenFromStore).
	Forbidden []string
	// Secrets are configured secret values (the run's token, secret-looking environment
	// values: filter.SecretEnvValues), registered with the filter pipeline.
	Secrets []string
}

// ForbiddenFromStore returns every committed context text whose publish projection does not
// include it: descriptor, state and text of ordinary records, the root and every reply of a
// remediation thread (fixed projection: never publishable). CI outcome fields are protected
// policy scope and closed values, not context text.
func ForbiddenFromStore(st *reviewctx.Store) []string {
	var out []string
	for _, r := range st.Records {
		c := r.Content
		if c.Thread != nil {
			out = append(out, c.Thread.Root)
			for _, rep := range c.Thread.Replies {
				out = append(out, rep.Text)
			}
			continue
		}
		pub := map[string]bool{}
		for _, f := range r.Binding.Projections.Publish {
			pub[f] = true
		}
		for _, f := range []struct{ name, v string }{{"descriptor", c.Descriptor}, {"state", c.State}, {"text", c.Text}} {
			if f.v != "" && !pub[f.name] {
				out = append(out, f.v)
			}
		}
	}
	return out
}

// ReasonCounts counts the checked values with at least one hit of each closed reason (every
// key always present on the wire).
type ReasonCounts struct {
	Control             int `json:"control"`
	ForbiddenContext    int `json:"forbidden_context"`
	HTML                int `json:"html"`
	Laundering          int `json:"laundering"`
	MarkdownDestination int `json:"markdown_destination"`
	PII                 int `json:"pii"`
	Secret              int `json:"secret"`
	WorkBound           int `json:"work_bound"`
}

func (rc *ReasonCounts) add(r Reason) {
	switch r {
	case reasonControl:
		rc.Control++
	case ReasonForbiddenContext:
		rc.ForbiddenContext++
	case reasonHTML:
		rc.HTML++
	case ReasonLaundering:
		rc.Laundering++
	case ReasonMarkdownDestination:
		rc.MarkdownDestination++
	case ReasonPII:
		rc.PII++
	case ReasonSecret:
		rc.Secret++
	case reasonWorkBound:
		rc.WorkBound++
	}
}

// Signal is the ocr.publication-dlp-signal/v2 document: low-cardinality counts only. The
// summary carries it in an HTML marker (Marker) and the posting step logs the same JSON as
// one telemetry line (JSON).
type Signal struct {
	SchemaVersion string   `json:"schema_version"`
	Result        Decision `json:"result"`
	// PrivateSanitized counts private metadata values replaced before retention.
	PrivateSanitized int `json:"private_sanitized"`
	// PublicationFiltered counts publication values removed or replaced (findings and
	// optional fields included).
	PublicationFiltered int `json:"publication_filtered"`
	FindingsRetained    int `json:"findings_retained"`
	FindingsOmitted     int `json:"findings_omitted"`
	FieldsOmitted       int `json:"fields_omitted"`
	WarningsRetained    int `json:"warnings_retained"`
	WarningsOmitted     int `json:"warnings_omitted"`
	// ValuesWithheld counts the outcome message, tool names and manifest failure fields
	// replaced or removed.
	ValuesWithheld int          `json:"values_withheld"`
	Reasons        ReasonCounts `json:"reasons"`
}

// JSON is the signal's RFC 8785 bytes: the telemetry line and the marker payload.
func (s Signal) JSON() []byte {
	b, err := canon.JSON(s)
	if err != nil { // a struct of ints and closed strings always encodes
		panic(err)
	}
	return b
}

// Marker is the summary's HTML marker: "<!-- ocr.publication-dlp-signal/v2 {json} -->". The
// JSON holds digits, closed names and punctuation only, so it cannot end the comment.
func (s Signal) Marker() string {
	return "<!-- " + SignalSchema + " " + string(s.JSON()) + " -->"
}

// ParseMarker finds and decodes the signal marker in a body (exactly one), for tests and for
// a poster that re-reads its summary.
func ParseMarker(body string) (Signal, bool) {
	const open = "<!-- " + SignalSchema + " "
	i := strings.Index(body, open)
	if i < 0 || strings.Count(body, open) != 1 {
		return Signal{}, false
	}
	rest := body[i+len(open):]
	j := strings.Index(rest, " -->")
	if j < 0 {
		return Signal{}, false
	}
	var s Signal
	dec := json.NewDecoder(strings.NewReader(rest[:j]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil || s.SchemaVersion != SignalSchema {
		return Signal{}, false
	}
	return s, true
}

// Details are the summary's two distinct detail lines: private sanitization and publication
// filtering, counts only.
func (s Signal) Details() []string {
	return []string{
		fmt.Sprintf("Private metadata sanitized before retention: %d value(s).", s.PrivateSanitized),
		fmt.Sprintf("Publication filtered: %d finding(s) omitted, %d optional field(s) omitted, %d warning(s) omitted, %d other value(s) withheld.",
			s.FindingsOmitted, s.FieldsOmitted, s.WarningsOmitted, s.ValuesWithheld),
	}
}

// PrivateDecision is one value-free attribution row of the ocr.private-dlp-decisions/v1
// sidecar: the JSON path in the result, the closed reason, the detector subtype, the value's
// size in bytes and its SHA-256 — never the value.
type PrivateDecision struct {
	Path     string `json:"path"`
	Reason   Reason `json:"reason"`
	Detector string `json:"detector"`
	Size     int    `json:"size"`
	SHA256   string `json:"sha256"`
}

// decisionsDoc is the sidecar document.
type decisionsDoc struct {
	SchemaVersion string            `json:"schema_version"`
	Decisions     []PrivateDecision `json:"decisions"`
}

// Outcome is the result of Project.
type Outcome struct {
	Decision Decision
	// Publication is what the poster may render (Metadata empty).
	Publication *reviewresult.Result
	// Private is what may be retained: Publication plus sanitized metadata.
	Private *reviewresult.Result
	Signal  Signal
	// Decisions is the value-free attribution, for the explicit local preservation sidecar
	// only; ordinary runs must not write it.
	Decisions []PrivateDecision
}

// DecisionsJSON is the sidecar's canonical bytes.
func (o *Outcome) DecisionsJSON() ([]byte, error) {
	d := o.Decisions
	if d == nil {
		d = []PrivateDecision{}
	}
	return canon.JSON(decisionsDoc{SchemaVersion: decisionsSchema, Decisions: d})
}

// publicationView is the canonical publication/approval projection: every sink plus the
// status and coverage approval reads.
type publicationView struct {
	Status          reviewresult.Status           `json:"status"`
	OutcomeMessage  string                        `json:"outcome_message"`
	Coverage        reviewresult.Coverage         `json:"coverage"`
	Findings        []reviewresult.Finding        `json:"findings"`
	Warnings        []string                      `json:"warnings"`
	ToolNames       []string                      `json:"tool_names"`
	ManifestFailure *reviewresult.ManifestFailure `json:"manifest_failure,omitempty"`
}

// canonicalPublication returns the RFC 8785 bytes of r's publication/approval projection.
func canonicalPublication(r *reviewresult.Result) ([]byte, error) {
	return canon.JSON(publicationView{r.Status, r.OutcomeMessage, r.Coverage, r.Findings, r.Warnings, r.ToolNames, r.ManifestFailure})
}

// projector accumulates one projection's counts and attributions.
type projector struct {
	d         *detector
	sig       Signal
	decisions []PrivateDecision
}

// keepSafe returns the items of the string list field that are safe to publish, in order. An
// unsafe item is left out whole and counted in *dropped and in PublicationFiltered.
func (p *projector) keepSafe(field string, in []string, c fieldClass, dropped *int) []string {
	var kept []string
	for i, v := range in {
		if p.unsafe(fmt.Sprintf("$.%s[%d]", field, i), v, c) {
			*dropped++
			p.sig.PublicationFiltered++
			continue
		}
		kept = append(kept, v)
	}
	return kept
}

// unsafe checks one value and records its hits; it reports whether the value is unsafe.
func (p *projector) unsafe(path, v string, c fieldClass) bool {
	hits := p.d.check(v, c)
	sum := sha256.Sum256([]byte(v))
	counted := map[Reason]bool{}
	for _, h := range hits {
		if !counted[h.reason] { // a value counts once per reason, however many detectors fired
			counted[h.reason] = true
			p.sig.Reasons.add(h.reason)
		}
		p.decisions = append(p.decisions, PrivateDecision{Path: path, Reason: h.reason, Detector: h.detector, Size: len(v), SHA256: hex.EncodeToString(sum[:])})
	}
	return len(hits) > 0
}

// Project validates res and returns its publication and private-retention projections, the
// decision and the signal. It fails only on an invalid result (which cannot be published at
// all).
func Project(res *reviewresult.Result, in Inputs) (*Outcome, error) {
	if err := res.Validate(); err != nil {
		return nil, err
	}
	p := &projector{d: newDetector(in), sig: Signal{SchemaVersion: SignalSchema}}
	pub := p.publication(res)
	meta := p.private(res.Metadata)

	before, errB := canonicalPublication(res)
	after, errA := canonicalPublication(pub)
	o := &Outcome{}
	switch {
	case errB == nil && errA == nil && bytes.Equal(before, after):
		o.Decision = DecisionClean
		if p.sig.PrivateSanitized > 0 {
			o.Decision = decisionPrivateSanitized
		}
	default:
		o.Decision = DecisionPublicationFiltered
		// the safe completed_with_errors projection keeps the validated original coverage,
		// so complete coverage is not relabelled and filtered warnings synthesize nothing
		// (a failed review stays failed: filtering never makes a run look better)
		if res.Status != reviewresult.StatusFailed {
			pub.Status = reviewresult.StatusCompletedWithErrors
		}
		pub.Coverage = res.Coverage
	}
	priv := *pub
	priv.Metadata = meta
	o.Publication, o.Private = pub, &priv
	p.sig.Result = o.Decision
	o.Signal, o.Decisions = p.sig, p.decisions
	for _, r := range []*reviewresult.Result{o.Publication, o.Private} {
		if err := r.Validate(); err != nil {
			return nil, fmt.Errorf("reviewpub: projection invalid: %w", err)
		}
	}
	return o, nil
}

// publication builds the publication projection of res (status and coverage as given).
func (p *projector) publication(res *reviewresult.Result) *reviewresult.Result {
	out := &reviewresult.Result{
		SchemaVersion: res.SchemaVersion, Status: res.Status, Coverage: res.Coverage,
		Findings: []reviewresult.Finding{}, Warnings: []string{}, ToolNames: []string{}, Metadata: map[string]string{},
	}
	for i, f := range res.Findings {
		path := fmt.Sprintf("$.findings[%d]", i)
		if bad := p.unsafe(path+".path", f.Path, classLine) || p.unsafe(path+".message", f.Message, classProse); bad {
			p.sig.FindingsOmitted++
			p.sig.PublicationFiltered++
			continue
		}
		for _, c := range []struct {
			name string
			v    *string
		}{{"existing_code", &f.ExistingCode}, {"suggestion_code", &f.SuggestionCode}} {
			if *c.v != "" && p.unsafe(path+"."+c.name, *c.v, classCode) {
				*c.v = "" // the optional field goes, the finding stays
				p.sig.FieldsOmitted++
				p.sig.PublicationFiltered++
			}
		}
		out.Findings = append(out.Findings, f)
	}
	p.sig.FindingsRetained = len(out.Findings)
	out.Warnings = append(out.Warnings, p.keepSafe("warnings", res.Warnings, classProse, &p.sig.WarningsOmitted)...)
	p.sig.WarningsRetained = len(out.Warnings)
	out.OutcomeMessage = p.withhold("$.outcome_message", res.OutcomeMessage, classProse, withheldOutcome)
	out.ToolNames = append(out.ToolNames, p.keepSafe("tool_names", res.ToolNames, classLine, &p.sig.ValuesWithheld)...)
	if m := res.ManifestFailure; m != nil {
		out.ManifestFailure = &reviewresult.ManifestFailure{
			Path:   p.withhold("$.manifest_failure.path", m.Path, classLine, withheldValue),
			Reason: p.withhold("$.manifest_failure.reason", m.Reason, classLine, withheldValue),
		}
	}
	return out
}

// withhold returns v, or the static replacement when v is unsafe.
func (p *projector) withhold(path, v string, c fieldClass, repl string) string {
	if v == "" || !p.unsafe(path, v, c) {
		return v
	}
	p.sig.ValuesWithheld++
	p.sig.PublicationFiltered++
	return repl
}

// private sanitizes the private metadata: unsafe values become sanitizedValue.
func (p *projector) private(meta map[string]string) map[string]string {
	out := make(map[string]string, len(meta))
	for _, k := range sortedKeys(meta) {
		v := meta[k]
		if v != "" && p.unsafe("$.metadata."+k, v, classPrivate) {
			v = sanitizedValue
			p.sig.PrivateSanitized++
		}
		out[k] = v
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	for i := 1; i < len(ks); i++ {
		for j := i; j > 0 && ks[j] < ks[j-1]; j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
	return ks
}

// Fence returns a backtick code fence longer than any backtick run in code (at least three),
// so rendered existing_code or suggestion_code cannot close its fence and become Markdown.
func Fence(code string) string {
	longest, run := 0, 0
	for i := 0; i < len(code); i++ {
		if code[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}
