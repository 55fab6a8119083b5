package snapshot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/platform/parallel"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/internal/snapshot/canon"
	"github.com/forgectx/forgectx/internal/status"
)

// File roles and media types (index.schema.json file.role; closed by role).
const (
	mediaJSON     = "application/json"
	mediaMarkdown = "text/markdown"
	mediaText     = "text/plain"
)

var roleRank = map[string]int{"admin": 5, "maintain": 4, "write": 3, "triage": 2, "read": 1, "none": 0, "external": 0}

type gapKey struct{ scope, code string }

// maxAdapterGapCount bounds one adapter gap count and the sum of an adapter's counts for one
// (scope, code): 2^52, half of what RFC 8785 represents exactly.
const maxAdapterGapCount = 1 << 52

// findings accumulates filter findings by code.
type findings map[string]int

func (f findings) add(list []filter.Finding) {
	for _, x := range list {
		if x.Count > 0 {
			f[x.Code] += x.Count
		}
	}
}

// list returns the findings sorted by code, never nil (the schemas require an array).
func (f findings) list() []filter.Finding {
	out := make([]filter.Finding, 0, len(f))
	for c, n := range f {
		out = append(out, filter.Finding{Code: c, Count: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out
}

// docStatus folds the statuses of the parts of one document: truncated beats modified beats
// unchanged; a part dropped because the filter rejected it makes the document modified.
type docStatus filter.Status

func (d *docStatus) add(s filter.Status) {
	rank := func(s filter.Status) int {
		switch s {
		case filter.StatusTruncated:
			return 2
		case filter.StatusModified, filter.StatusRejected:
			return 1
		}
		return 0
	}
	if *d == "" || rank(s) > rank(filter.Status(*d)) {
		if s == filter.StatusRejected {
			s = filter.StatusModified
		}
		*d = docStatus(s)
	}
}

func (d docStatus) get() filter.Status {
	if d == "" {
		return filter.StatusUnchanged
	}
	return filter.Status(d)
}

func filterOf(r filter.Result) filterJSON {
	f := r.Findings
	if f == nil {
		f = []filter.Finding{}
	}
	return filterJSON{Status: r.Status, Findings: f}
}

// actorInfo is one valid, unambiguous actor observation from the acquisition.
type actorInfo struct {
	kind     string
	login    *string
	role     *string
	verified bool

	loginDone bool
	loginOut  *string
	loginRes  filter.Result
}

// record is one manifest record with its sort key.
type record struct {
	created time.Time
	key     string
	entry   any
}

// retained is a comment or review record that has a content file.
type retained struct {
	key  string
	path string
}

type asm struct {
	ctx  context.Context
	cfg  Config
	acq  *acquisition.Acquisition
	prof acquisition.Profile

	forge, host, repoID string
	minRank             int
	bots                map[string]BotIdentity

	gaps       map[gapKey]int
	actors     map[string]*actorInfo
	referenced map[string]bool

	files   []File
	entries []fileJSON
	records []record
	sources map[string]*SourceSummary
	all     findings

	idxFind   findings
	idxStatus docStatus

	entityPath     string
	commentContent map[string]retained // comment ID → content
	reviewContent  map[string]retained // review ID → content (retained with a file)
	reviewKept     map[string]string   // review ID → record key (in records[])
	reviewOrder    []reviewRelJSON
	reviewTimes    map[string]time.Time

	threadRels   []threadRelJSON
	threadStates []threadStateJSON
	threadMeta   []threadView
	runs         []runJSON
	runsFind     findings
	runsStatus   docStatus

	collection []byte
	profileSum string

	// validated names the documents already validated (in chunks) where they were built.
	validated map[string]bool
	// out, for AssembleTo, receives every file no later step reads as soon as it is final.
	out *spillWriter
}

// threadView is what the order views need of a retained thread.
type threadView struct {
	created    time.Time
	key        string
	reviewID   string
	unresolved bool
	paths      []string
}

// Assemble builds and validates the whole tree from an acquisition. It returns a *ConfigError
// for an invalid profile, category or bot registry, an *AbortError when an abort rule applies
// (the tree must not be used), and a plain error for an acquisition that breaks the
// interchange's own rules.
func Assemble(ctx context.Context, acq *acquisition.Acquisition, cfg Config) (*Tree, error) {
	return assemble(ctx, acq, cfg, nil)
}

// assemble is Assemble, spilling finished files to out when it is not nil (AssembleTo).
func assemble(ctx context.Context, acq *acquisition.Acquisition, cfg Config, out *spillWriter) (*Tree, error) {
	if err := ValidateProfile(cfg.Profile); err != nil {
		return nil, err
	}
	minRole, err := HumanMinRole(cfg.Category)
	if err != nil {
		return nil, err
	}
	if err := ValidateBots(cfg.Bots); err != nil {
		return nil, err
	}
	if cfg.Filter == nil {
		return nil, errors.New("snapshot: a filter pipeline is required")
	}
	if acq == nil {
		return nil, errors.New("snapshot: no acquisition")
	}
	if acq.Version != 0 && acq.Version != acquisition.Version {
		return nil, fmt.Errorf("snapshot: acquisition_version %d is not supported", acq.Version)
	}
	a := &asm{
		ctx: ctx, cfg: cfg, acq: acq, prof: cfg.Profile,
		minRank: roleRank[minRole], bots: map[string]BotIdentity{},
		gaps: map[gapKey]int{}, actors: map[string]*actorInfo{}, referenced: map[string]bool{},
		sources: map[string]*SourceSummary{}, all: findings{}, idxFind: findings{}, runsFind: findings{},
		commentContent: map[string]retained{}, reviewContent: map[string]retained{},
		reviewKept: map[string]string{}, reviewTimes: map[string]time.Time{}, validated: map[string]bool{},
		out: out,
	}
	for _, b := range cfg.Bots {
		a.bots[b.ID] = b
	}
	a.collection, a.profileSum, err = CollectionJSON(cfg.Profile, cfg.Category)
	if err != nil {
		return nil, err
	}
	for _, step := range []func() error{
		a.source, a.outcomes, a.actorTable, a.entity, a.comments, a.reviews, a.threads, a.checks,
		a.agentRuns, a.actorState, a.orderViews,
	} {
		if err := step(); err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, &AbortError{Scope: "filter", Code: AbortFilterFailed, Reason: "assembly cancelled", Err: err}
		}
	}
	return a.finish()
}

func (a *asm) gap(scope, code string, n int) {
	if n > 0 {
		a.gaps[gapKey{scope, code}] += n
	}
}

func (a *asm) src(name string) *SourceSummary {
	s, ok := a.sources[name]
	if !ok {
		s = &SourceSummary{Source: name}
		a.sources[name] = s
	}
	return s
}

// apply runs the filter pipeline; a component error aborts (original bytes never pass).
func (a *asm) apply(src []byte, role filter.Role, maxBytes int) (filter.Result, error) {
	r, err := a.cfg.Filter.Apply(a.ctx, src, filter.Options{Role: role, MaxBytes: maxBytes, MaxSourceBytes: a.prof.Bounds.MaxSourceBytes})
	return a.accept(r, err)
}

// accept applies the assembler's rules to one filter outcome (in input order: it folds the
// findings into the run's totals).
func (a *asm) accept(r filter.Result, err error) (filter.Result, error) {
	if err != nil {
		return r, &AbortError{Scope: "filter", Code: AbortFilterFailed, Reason: "a filter pipeline component failed", Err: err}
	}
	switch r.Status {
	case filter.StatusUnchanged, filter.StatusModified, filter.StatusTruncated:
	case filter.StatusRejected:
		if r.Gap != acquisition.GapSourceTooLarge {
			r.Gap = acquisition.GapUnsafeContent
		}
	default:
		return r, &AbortError{Scope: "filter", Code: AbortFilterFailed, Reason: "the filter returned an unknown status"}
	}
	a.all.add(r.Findings)
	return r, nil
}

// display filters one source-derived display string. ok is false when the value is unsafe
// (rejected) or empty after filtering.
func (a *asm) display(s string) (string, filter.Result, bool, error) {
	r, err := a.apply([]byte(s), filter.RoleDisplay, a.prof.Bounds.MaxMetadataStringBytes)
	if err != nil {
		return "", r, false, err
	}
	if r.Status == filter.StatusRejected || len(r.Output) == 0 {
		return "", r, false, nil
	}
	return string(r.Output), r, true, nil
}

// structural runs a structural string through the complete pipeline before strict validation:
// it must come out byte-identical (never rewritten). unsafe is true when it would not.
func (a *asm) structural(s string) (unsafe bool, err error) {
	if err := a.cfg.Filter.CheckStructural(a.ctx, s); err != nil {
		if errors.Is(err, filter.ErrAborted) {
			return false, &AbortError{Scope: "filter", Code: AbortFilterFailed, Reason: "a filter pipeline component failed", Err: err}
		}
		return true, nil
	}
	return false, nil
}

// boundOK: a structural value longer than max_metadata_string_bytes is invalid, never truncated.
func (a *asm) boundOK(s string) bool { return len(s) <= a.prof.Bounds.MaxMetadataStringBytes }

// oidOK: a lowercase SHA-1 or SHA-256 Git object ID within max_metadata_string_bytes (a
// structural value: never case-folded, never truncated).
func (a *asm) oidOK(s string) bool { return gitOID(s) && a.boundOK(s) }

// hashOK: a lowercase 64-hex digest (input_revision, result record keys) within
// max_metadata_string_bytes.
func (a *asm) hashOK(s string) bool { return recordKeyOK(s) && a.boundOK(s) }

func (a *asm) key(kind, id string) string {
	return canon.RecordKey(a.forge, a.host, a.repoID, kind, id)
}

func (a *asm) addFile(path, role, media string, data []byte, f *filterJSON) {
	sum := sha256.Sum256(data)
	a.files = append(a.files, a.spill(path, data, sum))
	a.entries = append(a.entries, fileJSON{Path: path, Role: role, MediaType: media, Bytes: len(data), SHA256: hex.EncodeToString(sum[:]), Filter: f})
}

// source validates the required singleton source fields; any failure aborts.
func (a *asm) source() error {
	s := a.acq.Source
	switch s.Forge {
	case "github", "gitlab", "forgejo":
	default:
		return abortf("source", acquisition.GapInvalidMetadata, "source.forge must be github, gitlab or forgejo")
	}
	for _, f := range []struct{ name, v string }{{"source.host", s.Host}, {"source.repository_id", s.RepositoryID}, {"source.repository", s.Repository}} {
		unsafe, err := a.structural(f.v)
		if err != nil {
			return err
		}
		if unsafe {
			return abortf("source", acquisition.GapUnsafeContent, "%s did not pass the filter pipeline unchanged (structural values are never rewritten)", f.name)
		}
		if !a.boundOK(f.v) {
			return abortf("source", acquisition.GapInvalidMetadata, "%s exceeds max_metadata_string_bytes (structural values are never truncated)", f.name)
		}
	}
	if !canon.IsCanonicalHost(s.Host) {
		return abortf("source", acquisition.GapInvalidMetadata, "source.host must be a lowercase DNS name with :port only when the port is not 443")
	}
	if !forgeRecordID(s.Forge, s.RepositoryID) {
		return abortf("source", acquisition.GapInvalidMetadata, "source.repository_id does not match the %s ID mapping", s.Forge)
	}
	if !sourceRepository(s.Forge, s.Repository) {
		return abortf("source", acquisition.GapInvalidMetadata, "source.repository must be a repository path owner/name (lowercase [a-z0-9_.-] for github and forgejo)")
	}
	a.forge, a.host, a.repoID = s.Forge, s.Host, s.RepositoryID
	return nil
}

// outcomes merges the adapter-observed gaps of the selected scopes (actors always apply).
func (a *asm) outcomes() error {
	o := a.acq.Outcomes
	sums := map[gapKey]int{}
	for _, sc := range []struct {
		scope, source string
		gaps          []acquisition.Gap
	}{
		{acquisition.ScopeComments, acquisition.SourceComments, o.Comments},
		{acquisition.ScopeReviews, acquisition.SourceReviews, o.Reviews},
		{acquisition.ScopeChecks, acquisition.SourceChecks, o.Checks},
		{acquisition.ScopeCheckLogs, acquisition.SourceCheckLogs, o.CheckLogs},
		{acquisition.ScopeAgentRuns, acquisition.SourceAgentRuns, o.AgentRuns},
		{acquisition.ScopeActors, "", o.Actors},
	} {
		for i, g := range sc.gaps {
			switch g.Code {
			case acquisition.GapProfileBound, acquisition.GapHistoryUnavailable, acquisition.GapUnsupported,
				acquisition.GapAuthorizationFailed, acquisition.GapFetchFailed, acquisition.GapSourceTooLarge,
				acquisition.GapInvalidMetadata, acquisition.GapUnsafeContent:
			default:
				return fmt.Errorf("acquisition: outcomes.%s[%d].code: not a v1 gap code", sc.scope, i)
			}
			// Counts are exact in RFC 8785 only up to 2^53-1. Adapter rows for one (scope,
			// code) may sum to at most 2^52, which leaves room for the assembler's own counts
			// (bounded by the number of records a document can hold).
			if g.Count < 1 || g.Count > maxAdapterGapCount {
				return fmt.Errorf("acquisition: outcomes.%s[%d].count: must be from 1 to 2^52", sc.scope, i)
			}
			sums[gapKey{sc.scope, g.Code}] += g.Count
			if sums[gapKey{sc.scope, g.Code}] > maxAdapterGapCount {
				return fmt.Errorf("acquisition: outcomes.%s: the %s counts sum beyond 2^52", sc.scope, g.Code)
			}
			if sc.source == "" || a.prof.Includes(sc.source) {
				a.gap(sc.scope, g.Code, g.Count)
			}
		}
	}
	return nil
}

// actorTable indexes the acquisition's actor observations. Invalid rows and conflicting
// duplicates are dropped (an actors invalid_metadata gap: authorization fails closed).
func (a *asm) actorTable() error {
	conflict := map[string]bool{}
	for i := range a.acq.Actors {
		ac := &a.acq.Actors[i]
		if !forgeRecordID(a.forge, ac.ID) || !a.boundOK(ac.ID) || (ac.Kind != acquisition.ActorHuman && ac.Kind != acquisition.ActorBot) {
			a.gap(acquisition.ScopeActors, acquisition.GapInvalidMetadata, 1)
			continue
		}
		info := &actorInfo{kind: ac.Kind, login: ac.Login}
		if a.forge == "forgejo" && a.operatorAttestedBot(ac) {
			// Forgejo has no provider-positive bot flag (docs/forgejo.md): for Forgejo, and
			// only there, the operator's registry is the bot attestation. A registered ID
			// (with its login, when the entry names one) is a bot whatever permission the
			// forge reports; everyone else stays human and meets the role threshold.
			info.kind = acquisition.ActorBot
		}
		if info.kind == acquisition.ActorHuman && ac.RoleVerified {
			if ac.Role == nil {
				a.gap(acquisition.ScopeActors, acquisition.GapInvalidMetadata, 1)
			} else if _, ok := roleRank[*ac.Role]; !ok {
				a.gap(acquisition.ScopeActors, acquisition.GapInvalidMetadata, 1)
			} else {
				info.role, info.verified = ac.Role, true
			}
		}
		if prev, dup := a.actors[ac.ID]; dup {
			if !sameActor(prev, info) {
				conflict[ac.ID] = true
			}
			continue
		}
		a.actors[ac.ID] = info
	}
	ids := make([]string, 0, len(conflict))
	for id := range conflict {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		delete(a.actors, id)
		a.gap(acquisition.ScopeActors, acquisition.GapInvalidMetadata, 1)
	}
	return nil
}

// operatorAttestedBot reports whether the operator's bot registry names this actor exactly:
// same ID and, when the entry gives a login, the same current login.
func (a *asm) operatorAttestedBot(ac *acquisition.Actor) bool {
	b, ok := a.bots[ac.ID]
	if !ok || b.BotRole == "" {
		return false
	}
	return b.Login == "" || ac.Login != nil && *ac.Login == b.Login
}

func sameActor(x, y *actorInfo) bool {
	eq := func(p, q *string) bool { return p == nil && q == nil || p != nil && q != nil && *p == *q }
	return x.kind == y.kind && eq(x.login, y.login) && eq(x.role, y.role) && x.verified == y.verified
}

// Admission outcomes.
const (
	admitted = iota
	notAuthorized
	invalidActor
)

// admit applies the admission rule to a record author: a human whose verified role meets the
// category threshold, or a provider-positive bot with an exact registry entry and a non-empty
// bot_role. Everything else (deleted, unknown, unverified, below threshold, unregistered bot)
// is not authorized; an ID outside the forge mapping is invalid metadata.
func (a *asm) admit(ref acquisition.ActorRef) int {
	if ref.ID == nil {
		return notAuthorized
	}
	if !forgeRecordID(a.forge, *ref.ID) || !a.boundOK(*ref.ID) {
		return invalidActor
	}
	info, ok := a.actors[*ref.ID]
	if !ok {
		return notAuthorized
	}
	if info.kind == acquisition.ActorBot {
		if a.botRegistered(*ref.ID, info) {
			return admitted
		}
		return notAuthorized
	}
	if info.verified && roleRank[*info.role] >= a.minRank {
		return admitted
	}
	return notAuthorized
}

func (a *asm) botRegistered(id string, info *actorInfo) bool {
	b, ok := a.bots[id]
	if !ok || b.BotRole == "" || info.kind != acquisition.ActorBot {
		return false
	}
	if b.Login != "" && (info.login == nil || *info.login != b.Login) {
		return false
	}
	return true
}

// login returns the filtered current login of an actor (nil when unknown, unsafe or empty),
// computed once per actor.
func (a *asm) login(id string) (*string, filter.Result, error) {
	info, ok := a.actors[id]
	if !ok || info.login == nil {
		return nil, filter.Result{Status: filter.StatusUnchanged}, nil
	}
	if !info.loginDone {
		v, r, ok, err := a.display(*info.login)
		if err != nil {
			return nil, r, err
		}
		info.loginDone, info.loginRes = true, r
		if ok {
			info.loginOut = &v
		}
	}
	return info.loginOut, info.loginRes, nil
}

// indexAuthor resolves a record author for index.json and folds its login filtering into the
// index-level filter summary.
func (a *asm) indexAuthor(id string) (*string, error) {
	l, err := a.docLogin(id, &a.idxStatus, a.idxFind)
	if err != nil {
		return nil, err
	}
	a.referenced[id] = true
	return l, nil
}

// docLogin resolves an actor's filtered login for a JSON document and folds its filtering into
// that document's filter summary (status and find): a login the pipeline changed into nothing
// (emptied or unsafe, so emitted as null) counts as rejected, any other outcome as itself.
func (a *asm) docLogin(id string, status *docStatus, find findings) (*string, error) {
	l, r, err := a.login(id)
	if err != nil {
		return nil, err
	}
	find.add(r.Findings)
	if l == nil && r.Status != filter.StatusUnchanged {
		status.add(filter.StatusRejected)
	} else {
		status.add(r.Status)
	}
	return l, nil
}

// quote renders a header value as an RFC 8785 JSON string.
func quote(s string) string {
	if jsonSafeASCII(s) {
		return `"` + s + `"`
	}
	q, err := canon.String(s)
	if err != nil { // unreachable for a Go string: JSON can encode any string
		return `""`
	}
	return q
}

// recordFile renders a self-contained record: the fixed four-line header, a blank line, the
// filtered body.
func recordFile(kind, id string, authorID *string, created string, body []byte) []byte {
	author := "null"
	if authorID != nil {
		author = quote(*authorID)
	}
	k, i, c := quote(kind), quote(id), quote(created)
	const h1, h2, h3, h4 = "Fullsend-Record: ", "\nSource-ID: ", "\nAuthor-ID: ", "\nCreated-At: "
	// Exactly sized: 100k records are held until the tree is written.
	b := make([]byte, 0, len(h1)+len(k)+len(h2)+len(i)+len(h3)+len(author)+len(h4)+len(c)+2+len(body))
	b = append(append(b, h1...), k...)
	b = append(append(b, h2...), i...)
	b = append(append(b, h3...), author...)
	b = append(append(b, h4...), c...)
	b = append(b, '\n', '\n')
	return append(b, body...)
}

func recordPath(orderKey, key string) string { return "records/" + orderKey + "-" + key + ".md" }

// ts parses and canonicalises a required timestamp.
func ts(s string) (time.Time, string, bool) {
	t, err := canon.ParseTime(s)
	if err != nil {
		return time.Time{}, "", false
	}
	return t, canon.FormatTime(t), true
}

// optTS canonicalises an optional timestamp ("" stays absent).
func optTS(s string) (string, bool) {
	if s == "" {
		return "", true
	}
	_, c, ok := ts(s)
	return c, ok
}

// entity stages the required singletons: entity metadata and the entity-body record. Every
// failure here aborts.
func (a *asm) entity() error {
	e := a.acq.Entity
	const sc = acquisition.ScopeEntity
	created, createdTS, updatedTS, err := a.checkEntity(&e)
	if err != nil {
		return err
	}
	var status docStatus
	find := findings{}
	title, tr, ok, err := a.display(e.Title)
	if err != nil {
		return err
	}
	if tr.Status == filter.StatusRejected {
		return abortf(sc, tr.Gap, "entity.title was rejected by the filter pipeline (a required singleton)")
	}
	if !ok {
		return abortf(sc, acquisition.GapInvalidMetadata, "entity.title is empty after filtering (a required singleton)")
	}
	status.add(tr.Status)
	find.add(tr.Findings)

	switch a.admit(e.Author) {
	case invalidActor:
		return abortf(sc, acquisition.GapInvalidMetadata, "entity.author.id does not match the %s ID mapping", a.forge)
	case notAuthorized:
		return abortf(sc, acquisition.GapAuthorizationFailed, "the entity body's author is missing, unverifiable or below the admission threshold")
	}
	authorID := *e.Author.ID
	a.referenced[authorID] = true
	author, err := a.docLogin(authorID, &status, find)
	if err != nil {
		return err
	}

	labels, err := a.labels(e.Labels, &status, find)
	if err != nil {
		return err
	}

	body, err := a.apply([]byte(e.Body), filter.RoleBody, a.prof.Bounds.MaxRecordBytes)
	if err != nil {
		return err
	}
	if body.Status == filter.StatusRejected {
		return abortf(sc, body.Gap, "the entity body was rejected by the filter pipeline")
	}
	a.src(acquisition.SourceEntity).Acquired = 1

	doc := entityJSON{
		Kind: e.Kind, ID: e.ID, Number: e.Number, Title: title, State: e.State, AuthorID: &authorID,
		Author: author, CreatedAt: createdTS, UpdatedAt: updatedTS, Labels: labels,
	}
	entityDoc, err := canon.JSON(doc)
	if err != nil {
		return err
	}
	a.addFile("entity/metadata.json", "entity_metadata", mediaJSON, entityDoc, &filterJSON{Status: status.get(), Findings: find.list()})

	key := a.key(canon.KindEntity, e.ID)
	a.entityPath = recordPath(canon.EntityOrderKey, key)
	bf := filterOf(body)
	a.addFile(a.entityPath, "entity_record", mediaMarkdown, recordFile(canon.KindEntity, e.ID, &authorID, createdTS, body.Output), &bf)
	idxAuthor, err := a.indexAuthor(authorID)
	if err != nil {
		return err
	}
	a.records = append(a.records, record{created: created, key: key, entry: recordJSON{
		Kind: canon.KindEntity, ID: e.ID, RecordKey: key, ContentPath: a.entityPath, AuthorID: &authorID,
		Author: idxAuthor, CreatedAt: createdTS, UpdatedAt: updatedTS, Filter: bf,
	}})
	s := a.src(acquisition.SourceEntity)
	s.Records, s.WithContent = 1, 1
	return nil
}

// checkEntity applies the entity's metadata rules (kind, ID mapping, number, state,
// timestamps); a violation aborts assembly as invalid_metadata.
func (a *asm) checkEntity(e *acquisition.Entity) (created time.Time, createdTS, updatedTS string, err error) {
	const sc = acquisition.ScopeEntity
	if e.Kind != a.prof.EntityKind {
		return created, "", "", abortf(sc, acquisition.GapInvalidMetadata, "entity.kind must equal the collection profile's entity_kind")
	}
	if !forgeRecordID(a.forge, e.ID) || !a.boundOK(e.ID) {
		return created, "", "", abortf(sc, acquisition.GapInvalidMetadata, "entity.id does not match the %s ID mapping", a.forge)
	}
	if e.Number < 1 || e.Number > maxSafeInteger {
		return created, "", "", abortf(sc, acquisition.GapInvalidMetadata, "entity.number must be a positive display number of at most 2^53-1")
	}
	switch {
	case e.State == "open" || e.State == "closed":
	case e.State == "merged" && e.Kind == acquisition.KindChangeProposal:
	default:
		return created, "", "", abortf(sc, acquisition.GapInvalidMetadata, "entity.state is not representable (open or closed; merged only for change proposals)")
	}
	created, createdTS, ok := ts(e.CreatedAt)
	if !ok {
		return created, "", "", abortf(sc, acquisition.GapInvalidMetadata, "entity.created_at is not an RFC 3339 timestamp")
	}
	_, updatedTS, ok = ts(e.UpdatedAt)
	if !ok {
		return created, "", "", abortf(sc, acquisition.GapInvalidMetadata, "entity.updated_at is not an RFC 3339 timestamp")
	}
	return created, createdTS, updatedTS, nil
}

// labels filters the entity's labels: each is filtered, unsafe or empty ones are dropped
// (their findings kept), the rest re-uniqued, sorted by UTF-8 bytes and cut to the first
// max_labels (the dropped ones are an entity profile_bound gap). The statuses and findings
// fold into the entity metadata document's.
func (a *asm) labels(in []string, status *docStatus, find findings) ([]string, error) {
	seen := map[string]bool{}
	labels := []string{}
	for _, l := range in {
		v, r, ok, err := a.display(l)
		if err != nil {
			return nil, err
		}
		find.add(r.Findings)
		if !ok {
			status.add(filter.StatusRejected)
			continue
		}
		status.add(r.Status)
		if !seen[v] {
			seen[v] = true
			labels = append(labels, v)
		}
	}
	sort.Strings(labels)
	if n := len(labels) - a.prof.Bounds.MaxLabels; n > 0 {
		labels = labels[:a.prof.Bounds.MaxLabels]
		a.gap(acquisition.ScopeEntity, acquisition.GapProfileBound, n)
		status.add(filter.StatusTruncated)
	}
	return labels, nil
}

// candidate is a record that passed metadata validation and admission, in canonical order.
type candidate struct {
	idx     int
	t       time.Time
	ts      string
	key     string
	updated string
}

func sortCandidates(c []candidate) {
	sort.Slice(c, func(i, j int) bool {
		if !c[i].t.Equal(c[j].t) {
			return c[i].t.Before(c[j].t)
		}
		return c[i].key < c[j].key
	})
}

// selectBound keeps the oldest or newest max_records_per_source candidates (already in
// canonical order) and reports the number dropped as the scope's profile_bound gap.
func (a *asm) selectBound(scope string, c []candidate) []candidate {
	n := a.prof.Bounds.MaxRecordsPerSource
	if len(c) <= n {
		return c
	}
	a.gap(scope, acquisition.GapProfileBound, len(c)-n)
	if a.prof.RecordSelection == "newest" {
		return c[len(c)-n:]
	}
	return c[:n]
}

// duplicateIDs returns the IDs that occur more than once: every copy of such an ID is
// invalid metadata (no copy is preferred, so input order cannot matter).
func duplicateIDs(n int, id func(int) string) map[string]bool {
	seen := make(map[string]int, n)
	for i := 0; i < n; i++ {
		seen[id(i)]++
	}
	dup := map[string]bool{}
	for k, v := range seen {
		if v > 1 {
			dup[k] = true
		}
	}
	return dup
}

// filterChunk is how many bodies filterBodies filters concurrently before handing them on:
// enough to keep every core busy, few enough that only a chunk of filtered bodies is held
// besides the record files they become.
const filterChunk = 256

// filterBodies runs the filter pipeline over n record bodies on every available core (the
// pipeline is safe for concurrent use; each body is filtered independently) and hands each
// result, in index order, to stage, which runs on the calling goroutine only. The tree is
// therefore byte-for-byte what filtering the bodies one by one produces, whatever the
// scheduling (TestParallelFilteringIsDeterministic); the first failure in index order wins.
//
// The bodies go in chunks of filterChunk, pipelined: while stage consumes one chunk's results
// the workers already filter the next, so the cores are not idle while records are staged.
// Only two chunks of results are ever held. The body accessor is only called by the workers,
// and only for the chunk being filtered, so stage may release the bodies it has consumed.
func (a *asm) filterBodies(n int, body func(i int) string, role filter.Role, maxBytes int, stage func(i int, r filter.Result) error) error {
	opts := filter.Options{Role: role, MaxBytes: maxBytes, MaxSourceBytes: a.prof.Bounds.MaxSourceBytes}
	type chunk struct {
		start int
		res   []filter.Result
		errs  []error
	}
	filterChunkAt := func(c *chunk, start int) {
		m := min(start+filterChunk, n) - start
		c.start, c.res, c.errs = start, c.res[:m], c.errs[:m]
		parallel.Do(m, func(j int) { c.res[j], c.errs[j] = a.cfg.Filter.Apply(a.ctx, []byte(body(start+j)), opts) })
	}
	var bufs [2]chunk
	for i := range bufs {
		bufs[i].res = make([]filter.Result, min(n, filterChunk))
		bufs[i].errs = make([]error, len(bufs[i].res))
	}
	if n == 0 {
		return nil
	}
	filterChunkAt(&bufs[0], 0)
	for k := 0; ; k++ {
		cur, next := &bufs[k%2], &bufs[(k+1)%2]
		var ahead chan struct{}
		if nextStart := cur.start + filterChunk; nextStart < n {
			ahead = make(chan struct{})
			go func() { defer close(ahead); filterChunkAt(next, nextStart) }()
		}
		err := a.stageChunk(cur.start, cur.res, cur.errs, stage)
		if ahead != nil {
			<-ahead // also on failure: no worker may still read a body when this returns
		}
		if err != nil || ahead == nil {
			return err
		}
	}
}

// stageChunk hands one filtered chunk to stage in index order, dropping each result once
// staged (the chunk's bodies go as soon as they are staged).
func (a *asm) stageChunk(start int, res []filter.Result, errs []error, stage func(i int, r filter.Result) error) error {
	for j := range res {
		r, err := a.accept(res[j], errs[j])
		res[j], errs[j] = filter.Result{}, nil
		if err != nil {
			return err
		}
		if err := stage(start+j, r); err != nil {
			return err
		}
	}
	return nil
}

// textRecord stages one filtered comment or review body. It returns the manifest record;
// a rejected body keeps its record (status rejected, no content path) and adds the scope's gap.
func (a *asm) textRecord(scope, kind, id, key string, c candidate, authorID string, r filter.Result) (recordJSON, bool, error) {
	author, err := a.indexAuthor(authorID)
	if err != nil {
		return recordJSON{}, false, err
	}
	aid := authorID
	rec := recordJSON{Kind: kind, ID: id, RecordKey: key, AuthorID: &aid, Author: author, CreatedAt: c.ts, UpdatedAt: c.updated, Filter: filterOf(r)}
	if r.Status == filter.StatusRejected {
		a.gap(scope, r.Gap, 1)
		return rec, false, nil
	}
	orderKey := canon.OrderKeyOf(c.t)
	rec.ContentPath = recordPath(orderKey, key)
	f := rec.Filter
	a.addFile(rec.ContentPath, kind+"_record", mediaMarkdown, recordFile(kind, id, &aid, c.ts, r.Output), &f)
	return rec, true, nil
}

// admitRecord applies the admission rule to the author of one comment or review in scope sc:
// an ID outside the forge mapping counts as invalid metadata, any other refusal as
// authorization_failed, and the record is left out. Both sources share this rule (the entity
// body's author aborts instead, see entity).
func (a *asm) admitRecord(sc string, author acquisition.ActorRef) bool {
	switch a.admit(author) {
	case invalidActor:
		a.gap(sc, acquisition.GapInvalidMetadata, 1)
		return false
	case notAuthorized:
		a.gap(sc, acquisition.GapAuthorizationFailed, 1)
		return false
	}
	return true
}

// stageText stages one selected comment or review through textRecord, appends its manifest
// record, updates the source's counts and remembers where a retained body's content went in
// content (keyed by forge ID; threads and review relationships point at it).
func (a *asm) stageText(sc, kind, id string, cd candidate, authorID string, body filter.Result, s *SourceSummary, content map[string]retained) error {
	rec, ok, err := a.textRecord(sc, kind, id, cd.key, cd, authorID, body)
	if err != nil {
		return err
	}
	a.records = append(a.records, record{created: cd.t, key: cd.key, entry: rec})
	s.Records++
	if ok {
		s.WithContent++
		content[id] = retained{key: cd.key, path: rec.ContentPath}
	} else {
		s.Rejected++
	}
	return nil
}

// stageBodies is the common tail of the comment and review sources: the candidates are
// ordered and bounded, the selected records' bodies filtered, and each selected record staged
// through stage with its filter result. With ReleaseBodies a body is dropped from the
// acquisition once it has been filtered, before the record is staged.
func stageBodies[T any](a *asm, sc string, cands []candidate, list []T, body func(*T) *string, stage func(r *T, cd candidate, res filter.Result) error) error {
	sortCandidates(cands)
	sel := a.selectBound(sc, cands)
	return a.filterBodies(len(sel), func(i int) string { return *body(&list[sel[i].idx]) }, filter.RoleBody, a.prof.Bounds.MaxRecordBytes,
		func(i int, res filter.Result) error {
			cd := sel[i]
			r := &list[cd.idx]
			if a.cfg.ReleaseBodies {
				*body(r) = ""
			}
			return stage(r, cd, res)
		})
}

// comments stages the comments source (conversation comments and review-thread comments).
func (a *asm) comments() error {
	if !a.prof.Includes(acquisition.SourceComments) {
		return nil
	}
	const sc = acquisition.ScopeComments
	list := a.acq.Comments
	s := a.src(acquisition.SourceComments)
	s.Acquired = len(list)
	dup := duplicateIDs(len(list), func(i int) string { return list[i].ID })
	cands := make([]candidate, 0, len(list))
	for i := range list {
		c := &list[i]
		if status.IsOwnComment(c.Body) {
			// forgectx's own status and receipt comments are not conversation: the sticky
			// status is a mutable summary (staging it would change the agent's context every
			// run and defeat prompt-cache reuse) and receipts are read back into
			// history/agent-runs.json. They are left out whoever wrote them and count in no
			// gap: leaving one out grants nothing.
			s.Own++
			continue
		}
		t, cts, ok := ts(c.CreatedAt)
		upd, uok := optTS(c.UpdatedAt)
		if dup[c.ID] || !forgeRecordID(a.forge, c.ID) || !a.boundOK(c.ID) || !ok || !uok {
			a.gap(sc, acquisition.GapInvalidMetadata, 1)
			continue
		}
		if !a.admitRecord(sc, c.Author) {
			continue
		}
		cands = append(cands, candidate{idx: i, t: t, ts: cts, key: a.key(canon.KindComment, c.ID), updated: upd})
	}
	err := stageBodies(a, sc, cands, list, func(c *acquisition.Comment) *string { return &c.Body },
		func(c *acquisition.Comment, cd candidate, body filter.Result) error {
			return a.stageText(sc, canon.KindComment, c.ID, cd, *c.Author.ID, body, s, a.commentContent)
		})
	if err != nil {
		return err
	}
	s.Omitted = s.Acquired - s.Own - s.Records
	return nil
}

var reviewStates = map[string]bool{"approved": true, "changes_requested": true, "commented": true, "dismissed": true}

// reviews stages formal reviews and their relationship rows.
func (a *asm) reviews() error {
	if !a.prof.Includes(acquisition.SourceReviews) {
		return nil
	}
	const sc = acquisition.ScopeReviews
	list := a.acq.Reviews
	s := a.src(acquisition.SourceReviews)
	s.Acquired = len(list)
	dup := duplicateIDs(len(list), func(i int) string { return list[i].ID })
	cands := make([]candidate, 0, len(list))
	for i := range list {
		r := &list[i]
		t, sts, ok := ts(r.SubmittedAt)
		upd, uok := optTS(r.UpdatedAt)
		// GitLab has no formal v1 review records (approvals carry no immutable record ID): a
		// review in a GitLab acquisition is invalid metadata, dropped and counted, never staged.
		valid := a.forge != "gitlab" && !dup[r.ID] && forgeRecordID(a.forge, r.ID) && a.boundOK(r.ID) && ok && uok && reviewStates[r.State] &&
			(r.ReviewedSHA == "" || a.oidOK(r.ReviewedSHA))
		if valid && r.State == "dismissed" {
			if r.DismissedAt != nil {
				if _, ok := optTS(*r.DismissedAt); !ok || *r.DismissedAt == "" {
					valid = false
				}
			}
			if r.DismissedBy != nil && r.DismissedBy.ID != nil && (!forgeRecordID(a.forge, *r.DismissedBy.ID) || !a.boundOK(*r.DismissedBy.ID)) {
				valid = false
			}
		}
		if !valid {
			a.gap(sc, acquisition.GapInvalidMetadata, 1)
			continue
		}
		if !a.admitRecord(sc, r.Author) {
			continue
		}
		cands = append(cands, candidate{idx: i, t: t, ts: sts, key: a.key(canon.KindReview, r.ID), updated: upd})
	}
	err := stageBodies(a, sc, cands, list, func(r *acquisition.Review) *string { return &r.Body },
		func(r *acquisition.Review, cd candidate, body filter.Result) error {
			return a.stageReview(sc, r, cd, body, s)
		})
	if err != nil {
		return err
	}
	s.Omitted = s.Acquired - s.Records
	// Formal review arrays sort by submitted_at, then review ID.
	sort.Slice(a.reviewOrder, func(i, j int) bool {
		ti, tj := a.reviewTimes[a.reviewOrder[i].ID], a.reviewTimes[a.reviewOrder[j].ID]
		if !ti.Equal(tj) {
			return ti.Before(tj)
		}
		return a.reviewOrder[i].ID < a.reviewOrder[j].ID
	})
	return nil
}

// stageReview stages one selected, filtered review: its record and its relationship row.
func (a *asm) stageReview(sc string, r *acquisition.Review, cd candidate, body filter.Result, s *SourceSummary) error {
	if err := a.stageText(sc, canon.KindReview, r.ID, cd, *r.Author.ID, body, s, a.reviewContent); err != nil {
		return err
	}
	a.reviewKept[r.ID] = cd.key
	a.reviewTimes[r.ID] = cd.t
	rel := reviewRelJSON{ID: r.ID, RecordKey: cd.key, State: r.State, ReviewedSHA: r.ReviewedSHA, SubmittedAt: cd.ts}
	if r.State == "dismissed" {
		var at, by *string
		if r.DismissedAt != nil {
			c, _ := optTS(*r.DismissedAt)
			at = &c
		}
		if r.DismissedBy != nil && r.DismissedBy.ID != nil {
			by = r.DismissedBy.ID
			a.referenced[*by] = true
		}
		rel.DismissedAt, rel.DismissedByActorID = nullable(at), nullable(by)
	}
	a.reviewOrder = append(a.reviewOrder, rel)
	return nil
}
