package reviewrun

import (
	"context"
	"html"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/forgectx/forgectx/pkg/canon"
	"github.com/forgectx/forgectx/pkg/filter"
	"github.com/forgectx/forgectx/pkg/reviewresult"
)

// This file is the publication DLP projection the run applies to the engine's result (spec
// "After OCR exits, the toolkit applies separate publication-sink and private-retention
// projections"). pkg/reviewpub (issue #18 item 4) is its intended owner; until it lands this
// is the run's own, behind the one function publicationProjection.

// DLPSignalSchema is the marker and telemetry discriminator of the DLP signal.
const DLPSignalSchema = "ocr.publication-dlp-signal/v2"

// MinExcerpt is the shortest normalized contiguous context excerpt the detector compares.
const MinExcerpt = 24

// DLP reasons (closed, low-cardinality).
const (
	ReasonContext  = "context"
	ReasonSecret   = "secret"
	ReasonPII      = "pii"
	ReasonControl  = "control"
	ReasonMarkdown = "markdown_destination"
)

// DLPSignal is the value-free count summary: the summary's HTML marker and one telemetry line.
type DLPSignal struct {
	Schema   string         `json:"schema"`
	Result   string         `json:"result"`
	Retained int            `json:"retained"`
	Omitted  int            `json:"omitted"`
	Reasons  map[string]int `json:"reasons"`
	// PrivateSanitized counts private metadata values replaced with a static value.
	PrivateSanitized int `json:"private_sanitized"`
}

// Marker is the exact summary marker: an HTML comment holding the canonical signal JSON.
func (s DLPSignal) Marker() string {
	b, _ := canon.JSON(s)
	return "<!-- " + DLPSignalSchema + " " + string(b) + " -->"
}

// dlp is one run's detector state: the pipeline with the run's secrets and the normalized
// forbidden context (whole values and every MinExcerpt-rune window).
type dlp struct {
	pipe    *filter.Pipeline
	whole   map[string]bool
	windows map[string]bool
}

func newDLP(pipe *filter.Pipeline, forbidden []string) *dlp {
	d := &dlp{pipe: pipe, whole: map[string]bool{}, windows: map[string]bool{}}
	for _, f := range forbidden {
		n := []rune(launder(f))
		if len(n) == 0 {
			continue
		}
		d.whole[string(n)] = true
		for i := 0; i+MinExcerpt <= len(n); i++ {
			d.windows[string(n[i:i+MinExcerpt])] = true
		}
	}
	return d
}

// launder undoes the laundering forms a copy can hide behind before comparison: HTML
// entities, Unicode compatibility forms (NFKC), format characters (bidi controls, zero-width,
// tags), Markdown emphasis and code punctuation, case and whitespace runs.
func launder(s string) string {
	s = html.UnescapeString(html.UnescapeString(s))
	s = norm.NFKC.String(s)
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Mn, r) || r == utf8.RuneError:
			continue
		case strings.ContainsRune("*_~`>#|\\", r):
			continue
		case unicode.IsSpace(r):
			if !space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		b.WriteRune(unicode.ToLower(r))
	}
	return strings.TrimSpace(b.String())
}

var (
	reEmail = regexp.MustCompile(`(?i)[a-z0-9._%+\-]+@[a-z0-9\-]+(\.[a-z0-9\-]+)*\.[a-z]{2,}`)
	// A phone-like run: an optional +, then 9-15 digits with at least one separator between
	// groups. Separator-free digit runs (SHAs, build numbers) are not phone-like.
	rePhone = regexp.MustCompile(`\+?\(?[0-9]{2,4}\)?[ .\-][0-9]{2,4}[ .\-][0-9]{3,4}([ .\-][0-9]{2,4})?`)
	// Markdown and HTML destinations: inline links/images, reference definitions, autolinks,
	// raw tags.
	reMarkdownDest = regexp.MustCompile(`\]\s*\(|^\s*\[[^\]]+\]:|<[a-zA-Z/!]|(?i)\b(https?|ftp|data|javascript|mailto):`)
)

// check returns the reasons a value is not publishable ("" when it is). code allows the
// horizontal tab (existing_code, suggestion_code); every other detector still applies.
func (d *dlp) check(ctx context.Context, v string, code bool) (string, error) {
	if v == "" {
		return "", nil
	}
	for _, r := range v {
		if r == '\t' && code {
			continue
		}
		if r == '\n' || (!unicode.IsControl(r) && !unicode.Is(unicode.Cf, r)) {
			continue
		}
		return ReasonControl, nil
	}
	res, err := d.pipe.Apply(ctx, []byte(v), filter.Options{Role: filter.RoleBody})
	if err != nil {
		return "", err
	}
	if res.Status == filter.StatusRejected {
		return ReasonControl, nil
	}
	for _, f := range res.Findings {
		switch {
		case strings.HasPrefix(f.Code, "redact.ssn"), strings.HasPrefix(f.Code, "redact.payment-card"), strings.HasPrefix(f.Code, "redact.iban"):
			return ReasonPII, nil
		case strings.HasPrefix(f.Code, "redact."):
			return ReasonSecret, nil
		case strings.HasPrefix(f.Code, "unicode."), strings.HasPrefix(f.Code, "injection."):
			return ReasonControl, nil
		}
	}
	if reEmail.MatchString(v) || rePhone.MatchString(v) {
		return ReasonPII, nil
	}
	if !code && reMarkdownDest.MatchString(v) {
		return ReasonMarkdown, nil
	}
	n := []rune(launder(v))
	if d.whole[string(n)] {
		return ReasonContext, nil
	}
	for i := 0; i+MinExcerpt <= len(n); i++ {
		if d.windows[string(n[i:i+MinExcerpt])] {
			return ReasonContext, nil
		}
	}
	return "", nil
}

// publicationProjection applies the publication-sink projection to r (findings, warnings,
// outcome message, tool names, manifest failure path/reason) and the private-retention
// projection to its metadata. An unsafe required finding field removes the finding; an unsafe
// optional field only that field; an unsafe warning or tool name is dropped; an unsafe outcome
// message or manifest failure field becomes a static value. Any publication change makes the
// result publication-filtered with status completed_with_errors (the original coverage kind and
// counts kept); a change to private metadata only is private-sanitized.
func publicationProjection(ctx context.Context, d *dlp, r *reviewresult.Result) (*reviewresult.Result, DLPSignal, error) {
	out := *r
	sig := DLPSignal{Schema: DLPSignalSchema, Result: DLPClean, Reasons: map[string]int{}}
	note := func(reason string) { sig.Reasons[reason]++; sig.Omitted++ }
	out.Findings = []reviewresult.Finding{}
	for _, f := range r.Findings {
		keep := true
		for _, v := range []string{f.Path, f.Message} {
			why, err := d.check(ctx, v, false)
			if err != nil {
				return nil, sig, err
			}
			if why != "" {
				note(why)
				keep = false
				break
			}
		}
		if !keep {
			continue
		}
		for _, p := range []*string{&f.ExistingCode, &f.SuggestionCode} {
			why, err := d.check(ctx, *p, true)
			if err != nil {
				return nil, sig, err
			}
			if why != "" {
				note(why)
				*p = ""
			}
		}
		out.Findings = append(out.Findings, f)
		sig.Retained++
	}
	var err error
	if out.Warnings, err = d.keepSafe(ctx, r.Warnings, note, &sig.Retained); err != nil {
		return nil, sig, err
	}
	if out.ToolNames, err = d.keepSafe(ctx, r.ToolNames, note, nil); err != nil {
		return nil, sig, err
	}
	if why, err := d.check(ctx, r.OutcomeMessage, false); err != nil {
		return nil, sig, err
	} else if why != "" {
		note(why)
		out.OutcomeMessage = "The review result was filtered before publication."
	}
	if r.ManifestFailure != nil {
		mf := *r.ManifestFailure
		for _, p := range []*string{&mf.Path, &mf.Reason} {
			if why, err := d.check(ctx, *p, false); err != nil {
				return nil, sig, err
			} else if why != "" {
				note(why)
				*p = "withheld"
			}
		}
		out.ManifestFailure = &mf
	}
	if sig.Omitted > 0 {
		sig.Result = DLPPublicationFiltered
		out.Status = reviewresult.StatusCompletedWithErrors
	}
	meta, n, err := d.sanitizeMetadata(ctx, r.Metadata)
	if err != nil {
		return nil, sig, err
	}
	out.Metadata, sig.PrivateSanitized = meta, n
	if n > 0 && sig.Result == DLPClean {
		sig.Result = DLPPrivateSanitized
	}
	return &out, sig, nil
}

func (d *dlp) keepSafe(ctx context.Context, in []string, note func(string), retained *int) ([]string, error) {
	out := []string{}
	for _, v := range in {
		why, err := d.check(ctx, v, false)
		if err != nil {
			return nil, err
		}
		if why != "" {
			note(why)
			continue
		}
		out = append(out, v)
		if retained != nil {
			*retained++
		}
	}
	return out, nil
}

// sanitizeMetadata replaces every private metadata value that fails the secret, PII or
// control detectors with a static value. Markdown and context-excerpt checks do not apply:
// metadata is never rendered, and an opaque identifier is not a publication leak.
func (d *dlp) sanitizeMetadata(ctx context.Context, m map[string]string) (map[string]string, int, error) {
	out := make(map[string]string, len(m))
	n := 0
	for k, v := range m {
		why, err := d.check(ctx, v, true)
		if err != nil {
			return nil, 0, err
		}
		if why == ReasonSecret || why == ReasonPII || why == ReasonControl {
			out[k] = "sanitized"
			n++
			continue
		}
		out[k] = v
	}
	return out, n, nil
}
