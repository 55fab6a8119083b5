package reviewctx

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/forgectx/forgectx/internal/filter"
)

// AcquireOptions configure one acquisition (steps 1-5 of part 1 for one merge request).
type AcquireOptions struct {
	Mode       Mode
	Protection ProtectionMode
	// AdaptersJSON is OCR_REVIEW_CONTEXT_ADAPTERS_JSON; AdaptersSet says whether it is
	// present at all (any value is an adapter setting).
	AdaptersJSON string
	AdaptersSet  bool
	// ExpectedHead, when set (CI_COMMIT_SHA), must equal the merge request's head.
	ExpectedHead string
	// StoreDir is where the store is committed (created 0700).
	StoreDir string
	// Filter is the DLP pipeline (filter.New with the run's secrets).
	Filter *filter.Pipeline
	// Env resolves env_from and headers_from names (never logged).
	Env     Env
	RootCAs *x509.CertPool // remote adapter TLS roots; nil = system pool (tests only)
	Now     func() time.Time
}

// errRevision is the fail-closed outcome of a head that differs from the expected revision
// or changes during acquisition.
var errRevision = errors.New("reviewctx: reviewed head changed or differs from the expected revision")

// Result is the outcome of Acquire. It carries counts and closed states; record text stays in
// the store (or, in the constrained lifecycle, in Metadata, never printed).
type Result struct {
	Mode          Mode          `json:"mode"`
	Protected     bool          `json:"protected"`
	Constrained   bool          `json:"constrained"`
	PolicyVersion string        `json:"policy_version,omitempty"`
	PolicyDigest  string        `json:"policy_digest,omitempty"`
	Sources       []SourceState `json:"sources"`
	Records       int           `json:"records"`
	StoreWritten  bool          `json:"store_written"`
	// TargetSHA and ReviewedHead are the captured target SHA (the policy's object) and the
	// merge request head: receipt v8's closed target and source identities.
	TargetSHA    string `json:"target_sha"`
	ReviewedHead string `json:"reviewed_head"`
	// Store and Identity are set when a store was committed.
	Store    *Store         `json:"-"`
	Identity *StoreIdentity `json:"-"`
	// Metadata is the admitted metadata record of a constrained metadata run (no store).
	Metadata *Content `json:"-"`
}

// Acquire runs one acquisition: capture the target (protection and SHA), decide the
// lifecycle, load the protected policy, acquire the sources read twice, resolve references
// through the adapters, DLP-check and bound every record, and commit the private store.
func Acquire(ctx context.Context, f Forge, o AcquireOptions) (*Result, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Filter == nil {
		o.Filter = filter.New(nil)
	}
	var adapters []AdapterConfig
	if o.AdaptersSet {
		var err error
		if adapters, err = ParseAdapters(o.AdaptersJSON); err != nil {
			return nil, err
		}
	}
	t, lc, err := capture(ctx, f, o)
	if err != nil {
		return nil, err
	}
	res := &Result{Mode: lc.Mode, Protected: lc.Protected, Constrained: lc.Constrained, Sources: []SourceState{},
		TargetSHA: t.TargetSHA, ReviewedHead: t.ReviewedHead}
	if lc.Mode == ModeOff {
		return res, nil
	}
	now := o.Now().UTC().Truncate(time.Second)
	var pol *Policy
	if lc.UsesPolicy() {
		if pol, err = loadPolicy(ctx, f, t); err != nil {
			return nil, err
		}
		res.PolicyVersion, res.PolicyDigest = pol.SchemaVersion, pol.Digest
	}
	broker := &Broker{Adapters: adapters, Env: o.Env, RootCAs: o.RootCAs}
	if pol != nil {
		if err := broker.CheckReferences(pol.References); err != nil {
			return nil, err
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(pol.Budgets.TimeoutMS)*time.Millisecond)
		defer cancel()
	}
	results, err := readSources(ctx, f, pol, t)
	if err != nil {
		return nil, err
	}
	ids := f.Identities()
	for i := range results {
		if err := applyDLP(ctx, o.Filter, ids, &results[i]); err != nil {
			return nil, err
		}
	}
	runID, err := newRunID()
	if err != nil {
		return nil, err
	}
	if pol != nil && len(pol.References) > 0 {
		refRes, err := references(ctx, f, broker, pol, runID, results, o.Filter, ids, now)
		if err != nil {
			return nil, err
		}
		results = append(results, refRes)
	}
	if pol != nil {
		applyBudgets(pol, results)
	}
	if lc.Constrained {
		return constrainedResult(res, results[0]), nil
	}
	s, err := newStore(runID, lc.Mode, t, pol, now, results)
	if err != nil {
		return nil, err
	}
	id, err := CommitStore(o.StoreDir, s)
	if err != nil {
		return nil, err
	}
	res.Sources, res.Records, res.StoreWritten, res.Store, res.Identity = s.Sources, len(s.Records), true, s, &id
	return res, nil
}

// capture reads the target (protection, SHA, head), checks the expected head, decides the
// lifecycle and, for enriched, validates the merge-request pipeline environment against it.
func capture(ctx context.Context, f Forge, o AcquireOptions) (Target, Lifecycle, error) {
	t, err := f.Target(ctx)
	if err != nil {
		return t, Lifecycle{}, err
	}
	if o.ExpectedHead != "" && o.ExpectedHead != t.ReviewedHead {
		return t, Lifecycle{}, fmt.Errorf("%w: merge request head is not the expected commit", errRevision)
	}
	lc, err := Decide(o.Mode, o.Protection, t.Protected, o.AdaptersSet)
	if err == nil && lc.Mode == ModeEnriched {
		err = checkMREnvironment(o.Env, t)
	}
	return t, lc, err
}

// loadPolicy reads and validates the protected policy at the target SHA.
func loadPolicy(ctx context.Context, f Forge, t Target) (*Policy, error) {
	blob, err := f.PolicyBlob(ctx, t.TargetSHA)
	if err != nil {
		return nil, err
	}
	return parsePolicy(blob)
}

// readSources reads the metadata and the policy's forge sources, then re-reads the head and
// metadata: a moved head fails closed, changed metadata degrades its source to mutated.
func readSources(ctx context.Context, f Forge, pol *Policy, t Target) ([]SourceResult, error) {
	md, err := f.Metadata(ctx)
	if err != nil {
		return nil, err
	}
	var mdSource SourceResult
	if bot, err := f.BotUsername(ctx); err != nil {
		// without the live bot its mention commands cannot be recognized: no record
		mdSource = SourceResult{State: newState(SourceMetadata, false)}
		degrade(&mdSource.State, Unavailable, "live_bot_unavailable")
	} else {
		mdSource = metadataSource(md, bot)
	}
	results := []SourceResult{mdSource}
	if pol != nil {
		if pol.ForgeDiscussions != nil || pol.RemediationThreads != nil {
			g, r := f.Discussions(ctx, pol.ForgeDiscussions, pol.RemediationThreads, t.ReviewedHead)
			if pol.ForgeDiscussions != nil {
				results = append(results, g)
			}
			if pol.RemediationThreads != nil {
				results = append(results, r)
			}
		}
		if pol.CIOutcomes != nil {
			results = append(results, f.CIOutcomes(ctx, pol.CIOutcomes, t.ReviewedHead))
		}
	}
	headSame, mdSame, err := f.Recheck(ctx, t, md)
	if err != nil {
		return nil, err
	}
	if !headSame {
		return nil, fmt.Errorf("%w: the merge request moved during acquisition", errRevision)
	}
	if !mdSame {
		results[0].Drafts = nil
		degrade(&results[0].State, Mutated, "snapshot_changed")
	}
	return results, nil
}

// references resolves the candidates recognized in the admitted texts through the adapters,
// applies the command and mention rule to the adapters' text (it reaches the model too) and
// DLP-checks the records.
func references(ctx context.Context, f Forge, broker *Broker, pol *Policy, runID string, results []SourceResult, p *filter.Pipeline, ids Identities, now time.Time) (SourceResult, error) {
	refRes := resolveReferences(ctx, broker, pol, runID, recognize(pol.References, discoverableTexts(results)), now)
	bot, _ := f.BotUsername(ctx)
	for i := range refRes.Drafts {
		c := &refRes.Drafts[i].Content
		c.Descriptor, c.State, c.Text = commandFree(c.Descriptor, bot), commandFree(c.State, bot), commandFree(c.Text, bot)
	}
	err := applyDLP(ctx, p, ids, &refRes)
	return refRes, err
}

// commandFree removes lifecycle-command lines (stripCommands) and rewrites every remaining
// mention to @someone: for texts with no participant pseudonyms (metadata, adapter records).
func commandFree(s, bot string) string {
	s, _ = stripCommands(s, bot)
	return replaceMentions(s, func(string) string { return "@someone" })
}

// discoverableTexts are the texts references are recognized in.
func discoverableTexts(results []SourceResult) []string {
	var texts []string
	for _, r := range results {
		for _, d := range r.Drafts {
			if d.Discoverable {
				texts = append(texts, d.Content.Text)
			}
		}
	}
	return texts
}

// constrainedResult is the outcome of the constrained metadata lifecycle: no store, the one
// admitted metadata record kept in memory.
func constrainedResult(res *Result, md SourceResult) *Result {
	st := md.State
	st.Records = len(md.Drafts)
	res.Sources = append(res.Sources, st)
	if len(md.Drafts) == 1 {
		c := md.Drafts[0].Content
		res.Metadata = &c
		res.Records = 1
	}
	return res
}

// newStore mints a handle per admitted draft and binds each record to this run and policy.
func newStore(runID string, mode Mode, t Target, pol *Policy, now time.Time, results []SourceResult) (*Store, error) {
	expires := now.Add(maxStoreTTL)
	s := &Store{SchemaVersion: StoreSchema, RunID: runID, Mode: mode, PolicySHA: t.TargetSHA, ReviewedHead: t.ReviewedHead,
		CreatedAt: now.Format(time.RFC3339), ExpiresAt: expires.Format(time.RFC3339), Sources: []SourceState{}, Records: []Record{}}
	if pol != nil {
		s.PolicyDigest = pol.Digest
	}
	for _, r := range results {
		r.State.Records = len(r.Drafts)
		s.Sources = append(s.Sources, r.State)
		for _, d := range r.Drafts {
			rec, err := newRecord(d, runID, s.PolicyDigest, expires)
			if err != nil {
				return nil, err
			}
			s.Records = append(s.Records, rec)
			if d.Mutable {
				s.AdmittedMutable = true
			}
		}
	}
	return s, nil
}

func newRecord(d Draft, runID, policyDigest string, expires time.Time) (Record, error) {
	h, err := NewHandle()
	if err != nil {
		return Record{}, err
	}
	exp := expires
	if !d.Expiry.IsZero() && d.Expiry.Before(exp) {
		exp = d.Expiry.UTC().Truncate(time.Second)
	}
	dg, err := d.Content.Digest()
	if err != nil {
		return Record{}, err
	}
	return Record{Handle: h, Source: d.Source, Mutable: d.Mutable, Content: d.Content, Binding: Binding{
		RunID: runID, PolicyDigest: policyDigest, Adapter: d.Adapter, Tenant: d.Tenant, CanonicalObject: d.CanonicalObject,
		ResourceClass: d.ResourceClass, Projections: d.Projections, Version: d.Version, Digest: dg, ExpiresAt: exp.Format(time.RFC3339),
	}}, nil
}

// metadataSource bounds the metadata projection into one record.
func metadataSource(m Metadata, bot string) SourceResult {
	r := SourceResult{State: newState(SourceMetadata, false)}
	cut := func(s string, n int) string {
		if len(s) <= n {
			return s
		}
		degrade(&r.State, Partial, "bound")
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		return s[:n]
	}
	labels := m.Labels
	if len(labels) > maxLabels {
		labels = labels[:maxLabels]
		degrade(&r.State, Partial, "bound")
	}
	var ls []string
	for _, l := range labels {
		ls = append(ls, cut(l, maxLabelBytes))
	}
	text := "Title: " + cut(m.Title, maxTitleBytes) + "\nSource branch: " + cut(m.SourceBranch, maxBranchBytes) + "\nLabels: " + strings.Join(ls, ", ") + "\n\n" + cut(m.Description, maxDescBytes)
	// Lifecycle commands (slash commands, lines mentioning the live bot) are never model text,
	// and any other mention is display identity: the metadata path has no participant
	// pseudonyms, so it becomes @someone.
	text = commandFree(text, bot)
	all := []string{"descriptor", "state", "text"}
	r.Drafts = []Draft{{
		Source: SourceMetadata, ResourceClass: resourceMetadata, CanonicalObject: "forge/merge_request/metadata", Version: "1",
		Mutable: true, Discoverable: true, Projections: Projections{Retrieve: all, Model: all, Publish: []string{}, Retain: []string{"state"}},
		Content: Content{Descriptor: "merge request metadata (untrusted)", State: "open", Text: strings.TrimSpace(text)},
	}}
	return r
}

// dlpText runs one string through the filter pipeline. A rejection or any redaction finding
// (a secret in context) is not clean; Unicode normalization alone is.
func dlpText(ctx context.Context, p *filter.Pipeline, ids Identities, s string) (string, bool, string, error) {
	if s == "" {
		return "", true, "", nil
	}
	r, err := p.Apply(ctx, []byte(s), filter.Options{Role: filter.RoleBody})
	if err != nil {
		return "", false, "", err
	}
	if r.Status == filter.StatusRejected {
		return "", false, "", nil
	}
	for _, f := range r.Findings {
		if strings.HasPrefix(f.Code, "redact.") {
			return "", false, "", nil
		}
	}
	out := strings.TrimSuffix(string(r.Output), "\n")
	// An e-mail, phone or profile URL reveals a participant as surely as a field would, and
	// no stand-in keeps the sentence meaningful: the record is rejected, not redacted. A bare
	// name or username is rewritten to "someone", as mentions are.
	if len(identifierCodes(out, ids)) > 0 {
		return "", false, reasonIdentifier, nil
	}
	return unname(out, ids), true, "", nil
}

// reasonIdentifier is the source reason of a record rejected by the context DLP for a
// personal identifier in its text (besides dlp_rejected).
const reasonIdentifier = "identifier"

// applyDLP filters every text field of every draft; a draft with an unclean field is
// dropped and its source marked dlp_rejected.
func applyDLP(ctx context.Context, p *filter.Pipeline, ids Identities, r *SourceResult) error {
	kept := r.Drafts[:0:0]
	for _, d := range r.Drafts {
		clean := true
		fields := []*string{&d.Content.Descriptor, &d.Content.State, &d.Content.Text}
		if d.Content.Thread != nil {
			th := *d.Content.Thread
			th.Replies = append([]Reply(nil), th.Replies...)
			d.Content.Thread = &th
			fields = append(fields, &th.Root)
			for i := range th.Replies {
				fields = append(fields, &th.Replies[i].Text)
			}
		}
		why := ""
		for _, fp := range fields {
			out, ok, reason, err := dlpText(ctx, p, ids, *fp)
			if err != nil {
				return err
			}
			if !ok {
				clean, why = false, reason
				break
			}
			*fp = out
		}
		if !clean {
			if why != "" {
				addReason(&r.State, why)
			}
			degrade(&r.State, DLPRejected, "dlp_rejected")
			r.State.Omitted++
			continue
		}
		kept = append(kept, d)
	}
	r.Drafts = kept
	return nil
}

func measure(c Content) (chars, bytes, lines int) {
	parts := []string{c.Descriptor, c.State, c.Text}
	if c.Thread != nil {
		parts = append(parts, c.Thread.Root)
		for _, r := range c.Thread.Replies {
			parts = append(parts, r.Text)
		}
	}
	for _, s := range parts {
		if s == "" {
			continue
		}
		chars += utf8.RuneCountInString(s)
		bytes += len(s)
		lines += strings.Count(s, "\n") + 1
	}
	return
}

// applyBudgets enforces the per-source text budgets and then the aggregate budgets in source
// order; an omitted record makes its source partial.
func applyBudgets(p *Policy, results []SourceResult) {
	var aRec, aChars, aBytes, aLines int
	for i := range results {
		r := &results[i]
		var tb *TextBudgets
		switch r.State.Source {
		case SourceDiscussions:
			tb = &p.ForgeDiscussions.Budgets
		case SourceRemediation:
			tb = &p.RemediationThreads.Budgets
		}
		var sChars, sBytes, sLines int
		kept := r.Drafts[:0:0]
		for _, d := range r.Drafts {
			c, b, l := measure(d.Content)
			if tb != nil && (sChars+c > tb.MaxChars || sBytes+b > tb.MaxBytes || sLines+l > tb.MaxLines) {
				degrade(&r.State, Partial, "source_budget")
				r.State.Omitted++
				continue
			}
			if aRec+1 > p.Budgets.MaxRecords || aChars+c > p.Budgets.MaxChars || aBytes+b > p.Budgets.MaxBytes || aLines+l > p.Budgets.MaxLines {
				degrade(&r.State, Partial, "aggregate_budget")
				r.State.Omitted++
				continue
			}
			sChars, sBytes, sLines = sChars+c, sBytes+b, sLines+l
			aRec, aChars, aBytes, aLines = aRec+1, aChars+c, aBytes+b, aLines+l
			kept = append(kept, d)
		}
		r.Drafts = kept
	}
}

// resolveReferences authorizes and resolves every candidate. A candidate that resolves to
// an object another candidate resolved with a different version or expiry makes both
// unavailable; the same object twice is one record.
func resolveReferences(ctx context.Context, b *Broker, p *Policy, runID string, cands []Candidate, now time.Time) SourceResult {
	res := SourceResult{State: newState(SourceReferences, false)}
	for _, r := range p.References {
		if r.Required {
			res.State.Required = true
		}
	}
	type got struct {
		rec *AdapterRecord
		ref int
		bad bool
	}
	byObj := map[string]*got{}
	var order []string
	for i, c := range cands {
		ref := p.References[c.Reference]
		rec := b.Resolve(ctx, runID, "req-"+strconv.Itoa(i+1), ref, c.Value, now)
		if rec == nil {
			degrade(&res.State, Partial, "unavailable")
			if ref.Required {
				degrade(&res.State, Unavailable, "required_unavailable")
			}
			res.State.Omitted++
			continue
		}
		key := ref.Adapter + "\x00" + ref.Tenant + "\x00" + ref.ResourceClass + "\x00" + rec.CanonicalObject
		if g, ok := byObj[key]; ok {
			if g.rec.Version != rec.Version || !g.rec.Expiry.Equal(rec.Expiry) {
				g.bad = true
			}
			continue
		}
		byObj[key] = &got{rec: rec, ref: c.Reference}
		order = append(order, key)
	}
	for _, k := range order {
		g := byObj[k]
		if g.bad {
			degrade(&res.State, Partial, "version_changed")
			res.State.Omitted++
			continue
		}
		ref := p.References[g.ref]
		res.Drafts = append(res.Drafts, Draft{
			Source: SourceReferences, ResourceClass: ref.ResourceClass, Adapter: ref.Adapter, Tenant: ref.Tenant,
			CanonicalObject: g.rec.CanonicalObject, Version: g.rec.Version, Projections: ref.Projections,
			Content: g.rec.Content, Expiry: g.rec.Expiry,
		})
	}
	return res
}
