package reviewctx

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"strings"
	"syscall"

	"github.com/forgectx/forgectx/internal/platform/inputfile"

	"github.com/forgectx/forgectx/internal/snapshot/canon"
)

// policyPath is the only policy location, read from the protected target SHA.
const policyPath = ".opencodereview/review-context-policy.json"

// maxPolicyBytes bounds the policy blob (64 KiB).
const maxPolicyBytes = 64 << 10

// Policy schema versions (wire names, byte-exact).
const (
	policyV1 = "ocr.review-context-policy/v1"
	policyV2 = "ocr.review-context-policy/v2"
	policyV3 = "ocr.review-context-policy/v3"
)

// ErrPolicy is wrapped by every policy rejection; the message names the field and the rule.
var ErrPolicy = errors.New("reviewctx: invalid review-context policy")

// Account classes (closed set).
const (
	classUser       = "user"
	classAutomation = "automation"
	classSystem     = "system"
	classToolkitBot = "toolkit_bot"
)

// Projection fields (closed set). Retention is limited to retainable fields.
var (
	projectionFields = map[string]bool{"count": true, "descriptor": true, "digest": true, "expiry": true, "state": true, "text": true, "version": true}
	retainFields     = map[string]bool{"count": true, "digest": true, "expiry": true, "state": true, "version": true}
	accountClasses   = map[string]bool{classUser: true, classAutomation: true, classSystem: true, classToolkitBot: true}
	nameRE           = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,63}$`)
	issuePrefixRE    = regexp.MustCompile(`^[A-Z][A-Z0-9]{0,15}$`)
)

// Budgets are the aggregate limits.
type Budgets struct {
	MaxRecords int `json:"max_records"`
	MaxChars   int `json:"max_chars"`
	MaxBytes   int `json:"max_bytes"`
	MaxLines   int `json:"max_lines"`
	TimeoutMS  int `json:"timeout_ms"`
}

// TextBudgets are per-source text limits.
type TextBudgets struct {
	MaxChars int `json:"max_chars"`
	MaxBytes int `json:"max_bytes"`
	MaxLines int `json:"max_lines"`
}

// Projections are the separate retrieval, model-egress, publication and retention decisions.
type Projections struct {
	Retrieve []string `json:"retrieve"`
	Model    []string `json:"model"`
	Publish  []string `json:"publish"`
	Retain   []string `json:"retain"`
}

// Discussions is a forge_discussions or remediation_threads selector.
type Discussions struct {
	Required            bool         `json:"required"`
	AccountClasses      []string     `json:"account_classes"`
	IncludeResolved     bool         `json:"include_resolved"`
	IncludeOutdated     bool         `json:"include_outdated"`
	MaxAgeSeconds       int          `json:"max_age_seconds"`
	MaxThreads          int          `json:"max_threads"`
	MaxRepliesPerThread int          `json:"max_replies_per_thread"`
	MaxItems            int          `json:"max_items"`
	Budgets             TextBudgets  `json:"budgets"`
	Projections         *Projections `json:"projections,omitempty"` // nil for remediation (fixed)
}

// CICheck is one protected CI check: an exact job name and its declared path scope.
type CICheck struct {
	Name         string   `json:"name"`
	PathPrefixes []string `json:"path_prefixes"`
}

// CIOutcomes is the v3 ci_outcomes selector.
type CIOutcomes struct {
	Required      bool      `json:"required"`
	MaxAgeSeconds int       `json:"max_age_seconds"`
	Checks        []CICheck `json:"checks"`
}

// Recognizer is a toolkit-authored reference recognizer.
type Recognizer struct {
	Type       string `json:"type"` // issue_key, https_url, explicit
	Prefix     string `json:"prefix,omitempty"`
	Origin     string `json:"origin,omitempty"`
	PathPrefix string `json:"path_prefix,omitempty"`
}

// Reference binds one adapter, tenant, resource class and recognizer.
type Reference struct {
	Adapter       string      `json:"adapter"`
	Tenant        string      `json:"tenant"`
	ResourceClass string      `json:"resource_class"`
	Recognizer    Recognizer  `json:"recognizer"`
	Required      bool        `json:"required"`
	MaxRecords    int         `json:"max_records"`
	MaxAgeSeconds int         `json:"max_age_seconds"`
	Budgets       TextBudgets `json:"budgets"`
	Projections   Projections `json:"projections"`
}

// Policy is a validated review-context policy.
type Policy struct {
	SchemaVersion      string       `json:"schema_version"`
	Budgets            Budgets      `json:"budgets"`
	ForgeDiscussions   *Discussions `json:"forge_discussions,omitempty"`
	RemediationThreads *Discussions `json:"remediation_threads,omitempty"`
	CIOutcomes         *CIOutcomes  `json:"ci_outcomes,omitempty"`
	References         []Reference  `json:"references,omitempty"`
	// Digest is the lowercase hex SHA-256 of the policy document's RFC 8785 canonical JSON.
	Digest string `json:"-"`
}

// Sources lists the selected sources in a fixed order.
func (p *Policy) Sources() []string {
	var s []string
	if p.ForgeDiscussions != nil {
		s = append(s, SourceDiscussions)
	}
	if p.RemediationThreads != nil {
		s = append(s, SourceRemediation)
	}
	if p.CIOutcomes != nil {
		s = append(s, SourceCI)
	}
	if len(p.References) > 0 {
		s = append(s, SourceReferences)
	}
	return s
}

func policyErr(err error) error { return fmt.Errorf("%w: %w", ErrPolicy, err) }

// parsePolicy validates a policy document. Every rejection wraps ErrPolicy and names the
// field path ($.forge_discussions.max_threads) and the rule. It never panics on input.
func parsePolicy(b []byte) (*Policy, error) {
	if len(b) > maxPolicyBytes {
		// b may be a bounded read (maxPolicyBytes+1 bytes): its length is not the file's size.
		return nil, policyErr(fmt.Errorf("$: policy is over the %d-byte (64 KiB) bound", maxPolicyBytes))
	}
	root, err := parseStrict(b)
	if err != nil {
		return nil, policyErr(err)
	}
	o, err := newObj("$", root)
	if err != nil {
		return nil, policyErr(err)
	}
	p := &Policy{}
	p.SchemaVersion = o.str("schema_version", true)
	if o.err != nil {
		return nil, policyErr(o.err)
	}
	if err := checkPolicyVersion(o, p.SchemaVersion); err != nil {
		return nil, policyErr(err)
	}
	if err := parseBudgets(o, &p.Budgets); err != nil {
		return nil, policyErr(err)
	}
	if v := o.field("forge_discussions", false); v != nil {
		d, err := parseDiscussions("$.forge_discussions", v, false)
		if err != nil {
			return nil, policyErr(err)
		}
		p.ForgeDiscussions = d
	}
	if v := o.field("remediation_threads", false); v != nil {
		d, err := parseDiscussions("$.remediation_threads", v, true)
		if err != nil {
			return nil, policyErr(err)
		}
		p.RemediationThreads = d
	}
	if v := o.field("ci_outcomes", false); v != nil {
		c, err := parseCI("$.ci_outcomes", v)
		if err != nil {
			return nil, policyErr(err)
		}
		p.CIOutcomes = c
	}
	if v := o.field("references", false); v != nil {
		if p.References, err = parseReferences(v); err != nil {
			return nil, policyErr(err)
		}
	}
	if err := o.done(); err != nil {
		return nil, policyErr(err)
	}
	if len(p.Sources()) == 0 {
		return nil, policyErr(errors.New("$: selects no source (need at least one of forge_discussions, remediation_threads, ci_outcomes, references)"))
	}
	c, err := canon.Transform(b)
	if err != nil {
		return nil, policyErr(fmt.Errorf("$: canonical JSON: %v", err))
	}
	p.Digest = canon.SHA256Hex(c)
	return p, nil
}

// checkPolicyVersion accepts the known schema versions and refuses a source the version
// does not have.
func checkPolicyVersion(o *objReader, version string) error {
	ver := 0
	switch version {
	case policyV1:
		ver = 1
	case policyV2:
		ver = 2
	case policyV3:
		ver = 3
	default:
		return fmt.Errorf("$.schema_version: unknown version (accepted: %s, %s, %s)", policyV1, policyV2, policyV3)
	}
	if ver < 2 && o.has("remediation_threads") {
		return fmt.Errorf("$.remediation_threads: needs %s or later", policyV2)
	}
	if ver < 3 && o.has("ci_outcomes") {
		return fmt.Errorf("$.ci_outcomes: needs %s", policyV3)
	}
	return nil
}

// parseReferences reads $.references: at most 16, no two with the same adapter, tenant,
// class and recognizer.
func parseReferences(v *strictValue) ([]Reference, error) {
	if v.kind != 'a' {
		return nil, errors.New("$.references: must be an array")
	}
	if len(v.arr) > 16 {
		return nil, fmt.Errorf("$.references: %d entries, at most 16", len(v.arr))
	}
	var out []Reference
	seen := map[string]bool{}
	for i, e := range v.arr {
		r, err := parseReference(fmt.Sprintf("$.references[%d]", i), e)
		if err != nil {
			return nil, err
		}
		key := strings.Join([]string{r.Adapter, r.Tenant, r.ResourceClass, r.Recognizer.Type, r.Recognizer.Prefix, r.Recognizer.Origin, r.Recognizer.PathPrefix}, "\x00")
		if seen[key] {
			return nil, fmt.Errorf("$.references[%d]: duplicates an earlier reference", i)
		}
		seen[key] = true
		out = append(out, *r)
	}
	return out, nil
}

func parseBudgets(parent *objReader, b *Budgets) error {
	v := parent.field("budgets", true)
	if parent.err != nil {
		return parent.err
	}
	o, err := newObj("$.budgets", v)
	if err != nil {
		return err
	}
	b.MaxRecords = int(o.integer("max_records", true, 1, 128, 0))
	b.MaxChars = int(o.integer("max_chars", true, 1, 500000, 0))
	b.MaxBytes = int(o.integer("max_bytes", true, 1, 2000000, 0))
	b.MaxLines = int(o.integer("max_lines", true, 1, 50000, 0))
	b.TimeoutMS = int(o.integer("timeout_ms", true, 100, 120000, 0))
	return o.done()
}

func parseTextBudgets(path string, v *strictValue) (TextBudgets, error) {
	o, err := newObj(path, v)
	if err != nil {
		return TextBudgets{}, err
	}
	t := TextBudgets{
		MaxChars: int(o.integer("max_chars", true, 1, 100000, 0)),
		MaxBytes: int(o.integer("max_bytes", true, 1, 400000, 0)),
		MaxLines: int(o.integer("max_lines", true, 1, 10000, 0)),
	}
	return t, o.done()
}

// sortedUnique checks the "sorted unique list" rule (byte order).
func sortedUnique(path string, l []string) error {
	for i := 1; i < len(l); i++ {
		if l[i-1] >= l[i] {
			return fmt.Errorf("%s: must be sorted and unique (%q then %q)", path, l[i-1], l[i])
		}
	}
	return nil
}

func parseDiscussions(p string, v *strictValue, remediation bool) (*Discussions, error) {
	o, err := newObj(p, v)
	if err != nil {
		return nil, err
	}
	d := &Discussions{}
	d.Required = o.boolean("required", true)
	d.AccountClasses = o.strList("account_classes", true)
	d.IncludeResolved = o.boolean("include_resolved", true)
	d.IncludeOutdated = o.boolean("include_outdated", true)
	d.MaxAgeSeconds = int(o.integer("max_age_seconds", true, 0, 31536000, 0))
	d.MaxThreads = int(o.integer("max_threads", true, 1, 100, 0))
	d.MaxRepliesPerThread = int(o.integer("max_replies_per_thread", true, 1, 100, 0))
	d.MaxItems = int(o.integer("max_items", true, 1, 500, 0))
	bv := o.field("budgets", true)
	var pv *strictValue
	if !remediation {
		pv = o.field("projections", true)
	}
	if err := o.done(); err != nil {
		return nil, err
	}
	if len(d.AccountClasses) == 0 {
		return nil, fmt.Errorf("%s.account_classes: must name at least one class", p)
	}
	for i, c := range d.AccountClasses {
		if !accountClasses[c] {
			return nil, fmt.Errorf("%s.account_classes[%d]: %q is not one of automation, system, toolkit_bot, user", p, i, c)
		}
		if remediation && c == classToolkitBot {
			return nil, fmt.Errorf("%s.account_classes[%d]: remediation replies cannot include toolkit_bot (the verified root owns that role)", p, i)
		}
	}
	if err := sortedUnique(p+".account_classes", d.AccountClasses); err != nil {
		return nil, err
	}
	if d.Budgets, err = parseTextBudgets(p+".budgets", bv); err != nil {
		return nil, err
	}
	if pv != nil {
		pr, err := parseProjections(p+".projections", pv)
		if err != nil {
			return nil, err
		}
		d.Projections = pr
	}
	return d, nil
}

func parseProjections(p string, v *strictValue) (*Projections, error) {
	o, err := newObj(p, v)
	if err != nil {
		return nil, err
	}
	pr := &Projections{
		Retrieve: o.strList("retrieve", true),
		Model:    o.strList("model", true),
		Publish:  o.strList("publish", true),
		Retain:   o.strList("retain", true),
	}
	if err := o.done(); err != nil {
		return nil, err
	}
	lists := []struct {
		name string
		l    []string
	}{{"retrieve", pr.Retrieve}, {"model", pr.Model}, {"publish", pr.Publish}, {"retain", pr.Retain}}
	retrieve := map[string]bool{}
	for _, e := range pr.Retrieve {
		retrieve[e] = true
	}
	if len(pr.Retrieve) == 0 {
		return nil, fmt.Errorf("%s.retrieve: must name at least one field", p)
	}
	for _, l := range lists {
		fp := p + "." + l.name
		for i, f := range l.l {
			if !projectionFields[f] {
				return nil, fmt.Errorf("%s[%d]: %q is not a projection field (count, descriptor, digest, expiry, state, text, version)", fp, i, f)
			}
			if l.name != "retrieve" && !retrieve[f] {
				return nil, fmt.Errorf("%s[%d]: %q is not in retrieve (%s must be a subset of retrieve)", fp, i, f, l.name)
			}
			if l.name == "retain" && !retainFields[f] {
				return nil, fmt.Errorf("%s[%d]: %q cannot be retained (retain is limited to count, digest, expiry, state, version)", fp, i, f)
			}
		}
		if err := sortedUnique(fp, l.l); err != nil {
			return nil, err
		}
	}
	return pr, nil
}

func parseCI(p string, v *strictValue) (*CIOutcomes, error) {
	o, err := newObj(p, v)
	if err != nil {
		return nil, err
	}
	c := &CIOutcomes{}
	c.Required = o.boolean("required", false)
	c.MaxAgeSeconds = int(o.integer("max_age_seconds", false, 60, 604800, 86400))
	cv := o.field("checks", true)
	if err := o.done(); err != nil {
		return nil, err
	}
	if cv.kind != 'a' {
		return nil, fmt.Errorf("%s.checks: must be an array", p)
	}
	if len(cv.arr) < 1 || len(cv.arr) > 32 {
		return nil, fmt.Errorf("%s.checks: %d entries, need 1..32", p, len(cv.arr))
	}
	var names []string
	for i, e := range cv.arr {
		ep := fmt.Sprintf("%s.checks[%d]", p, i)
		eo, err := newObj(ep, e)
		if err != nil {
			return nil, err
		}
		ch := CICheck{Name: eo.str("name", true), PathPrefixes: eo.strList("path_prefixes", true)}
		if err := eo.done(); err != nil {
			return nil, err
		}
		if ch.Name == "" || len(ch.Name) > 255 || strings.ContainsAny(ch.Name, "\x00\r\n") || strings.TrimSpace(ch.Name) != ch.Name {
			return nil, fmt.Errorf("%s.name: must be an exact GitLab job name (1..255 bytes, no control line breaks, no surrounding space)", ep)
		}
		if len(ch.PathPrefixes) < 1 || len(ch.PathPrefixes) > 32 {
			return nil, fmt.Errorf("%s.path_prefixes: %d entries, need 1..32", ep, len(ch.PathPrefixes))
		}
		for j, pp := range ch.PathPrefixes {
			if err := checkRepoPrefix(pp); err != nil {
				return nil, fmt.Errorf("%s.path_prefixes[%d]: %v", ep, j, err)
			}
		}
		if err := sortedUnique(ep+".path_prefixes", ch.PathPrefixes); err != nil {
			return nil, err
		}
		names = append(names, ch.Name)
		c.Checks = append(c.Checks, ch)
	}
	if err := sortedUnique(p+".checks[].name", names); err != nil {
		return nil, err
	}
	return c, nil
}

// checkRepoPrefix enforces a normalized repository-relative path prefix: non-empty, no
// leading slash, no "." or ".." segment, no empty segment, no backslash or control byte. A
// single trailing slash marks a directory prefix.
func checkRepoPrefix(pp string) error {
	if pp == "" || len(pp) > 1024 {
		return errors.New("must be 1..1024 bytes")
	}
	if strings.ContainsAny(pp, "\\") || strings.IndexFunc(pp, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		return errors.New("must not contain a backslash or control character")
	}
	trim := strings.TrimSuffix(pp, "/")
	if strings.HasPrefix(pp, "/") || trim == "" || path.Clean(trim) != trim || trim == "." || trim == ".." || strings.HasPrefix(trim, "../") {
		return errors.New("must be a normalized repository-relative path (no leading /, no ., .. or empty segment)")
	}
	return nil
}

func parseReference(p string, v *strictValue) (*Reference, error) {
	o, err := newObj(p, v)
	if err != nil {
		return nil, err
	}
	r := &Reference{}
	r.Adapter = o.str("adapter", true)
	r.Tenant = o.str("tenant", true)
	r.ResourceClass = o.str("resource_class", true)
	rv := o.field("recognizer", true)
	r.Required = o.boolean("required", true)
	r.MaxRecords = int(o.integer("max_records", true, 1, 64, 0))
	r.MaxAgeSeconds = int(o.integer("max_age_seconds", true, 0, 31536000, 0))
	bv := o.field("budgets", true)
	pv := o.field("projections", true)
	if err := o.done(); err != nil {
		return nil, err
	}
	if !nameRE.MatchString(r.Adapter) {
		return nil, fmt.Errorf("%s.adapter: must match [a-z][a-z0-9_-]{0,63}", p)
	}
	if !nameRE.MatchString(r.Tenant) {
		return nil, fmt.Errorf("%s.tenant: must match [a-z][a-z0-9_-]{0,63}", p)
	}
	if r.ResourceClass != ResourceIssue && r.ResourceClass != resourceDocument {
		return nil, fmt.Errorf("%s.resource_class: must be issue or document", p)
	}
	ro, err := newObj(p+".recognizer", rv)
	if err != nil {
		return nil, err
	}
	r.Recognizer.Type = ro.str("type", true)
	rp := p + ".recognizer"
	switch r.Recognizer.Type {
	case recognizerIssueKey:
		r.Recognizer.Prefix = ro.str("prefix", true)
		if err := ro.done(); err != nil {
			return nil, err
		}
		if !issuePrefixRE.MatchString(r.Recognizer.Prefix) {
			return nil, fmt.Errorf("%s.prefix: must match [A-Z][A-Z0-9]{0,15}", rp)
		}
	case recognizerHTTPSURL:
		r.Recognizer.Origin = ro.str("origin", true)
		r.Recognizer.PathPrefix = ro.str("path_prefix", true)
		if err := ro.done(); err != nil {
			return nil, err
		}
		if err := checkOrigin(r.Recognizer.Origin); err != nil {
			return nil, fmt.Errorf("%s.origin: %v", rp, err)
		}
		if err := checkURLPathPrefix(r.Recognizer.PathPrefix); err != nil {
			return nil, fmt.Errorf("%s.path_prefix: %v", rp, err)
		}
	case recognizerExplicit:
		if err := ro.done(); err != nil {
			return nil, err
		}
	default:
		if ro.err != nil {
			return nil, ro.err
		}
		return nil, fmt.Errorf("%s.type: must be issue_key, https_url or explicit", rp)
	}
	if r.Budgets, err = parseTextBudgets(p+".budgets", bv); err != nil {
		return nil, err
	}
	pr, err := parseProjections(p+".projections", pv)
	if err != nil {
		return nil, err
	}
	r.Projections = *pr
	return r, nil
}

// classSet returns the account classes as a set, for membership tests.
func classSet(l []string) map[string]bool {
	m := map[string]bool{}
	for _, c := range l {
		m[c] = true
	}
	return m
}

// ReadPolicyFile validates a local policy file (for `forgectx review-context policy
// validate`, an authoring aid: at run time the policy comes only from the protected target's
// Git blob). The file must be a regular file, not a symlink, within maxPolicyBytes.
func ReadPolicyFile(name string) (*Policy, error) {
	fi, err := os.Lstat(name)
	if err != nil {
		return nil, policyErr(fmt.Errorf("$: %v", err))
	}
	if !fi.Mode().IsRegular() {
		return nil, policyErr(fmt.Errorf("$: policy must be a regular file, not %s", inputfile.Kind(fi.Mode())))
	}
	// Non-blocking and re-checked on the descriptor: a path swapped for a FIFO after the
	// Lstat neither blocks the open nor is read.
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, policyErr(fmt.Errorf("$: %v", err))
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, policyErr(errors.New("$: policy must be a regular file (it changed while being opened)"))
	}
	b, err := io.ReadAll(io.LimitReader(f, maxPolicyBytes+1))
	if err != nil {
		return nil, policyErr(fmt.Errorf("$: read: %v", err))
	}
	return parsePolicy(b)
}
