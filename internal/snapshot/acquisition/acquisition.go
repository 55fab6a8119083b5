// Package acquisition is the provider-neutral model a forge adapter fills and the snapshot
// assembler consumes (entity-context-snapshot v1: everything "after the API calls").
//
// An Acquisition is what one collection run read from a forge, already mapped through the
// spec's exhaustive native-value tables (states, review states, check status/conclusion), but
// NOT yet admitted, filtered, selected or bounded: admission, the filter pipeline, selection,
// bounds, canonical bytes and gaps belong to the assembler (internal/snapshot), so every forge gets
// them identically.
//
// Its JSON form is a versioned interchange (docs/acquisition.md): `forgectx snapshot
// --from-acquisition FILE` assembles from it, so the assembler is testable without a forge and
// users can feed sources of their own. Timestamps are RFC 3339 strings in any offset or
// precision; the assembler canonicalises them. Unknown fields are rejected.
//
// Adapters set Source.Host with canon.Host (lowercase, ":port" only when not 443) and leave any
// native value they cannot map as it is: the assembler counts it as invalid_metadata rather than
// letting an adapter invent a substitute.
package acquisition

// Version is the acquisition interchange version this package reads and writes.
const Version = 1

// Scopes of the spec's gap model (index.json gaps[].scope).
const (
	ScopeEntity    = "entity"
	ScopeComments  = "comments"
	ScopeReviews   = "reviews"
	ScopeChecks    = "checks"
	ScopeCheckLogs = "check_logs"
	ScopeAgentRuns = "agent_runs"
	ScopeActors    = "actors"
)

// Gap codes (index.json gaps[].code).
const (
	GapProfileBound        = "profile_bound"
	GapHistoryUnavailable  = "history_unavailable"
	GapUnsupported         = "unsupported"
	GapAuthorizationFailed = "authorization_failed"
	GapFetchFailed         = "fetch_failed"
	GapSourceTooLarge      = "source_too_large"
	GapInvalidMetadata     = "invalid_metadata"
	GapUnsafeContent       = "unsafe_content"
)

// Entity kinds.
const (
	KindWorkItem       = "work_item"
	KindChangeProposal = "change_proposal"
)

// Acquisition is everything one run acquired for one entity.
type Acquisition struct {
	Version   int        `json:"acquisition_version"`
	Source    Source     `json:"source"`
	Entity    Entity     `json:"entity"`
	Comments  []Comment  `json:"comments"`
	Reviews   []Review   `json:"reviews"`
	Threads   []Thread   `json:"threads"`
	Checks    []Check    `json:"checks"`
	AgentRuns []AgentRun `json:"agent_runs"`
	Actors    []Actor    `json:"actors"`
	// Outcomes records, per optional scope, what the adapter could not deliver: a failed page,
	// an API that has no such history, an unmappable native value. An empty outcome means the
	// adapter read the source completely.
	Outcomes Outcomes `json:"outcomes"`
}

// New returns an empty acquisition of the current Version, every list empty rather than nil:
// the interchange encodes each list as an array (never null), and an adapter appends to them
// as it reads. Each forge adapter starts its Acquire from here.
func New() *Acquisition {
	return &Acquisition{
		Version:   Version,
		Comments:  []Comment{},
		Reviews:   []Review{},
		Threads:   []Thread{},
		Checks:    []Check{},
		AgentRuns: []AgentRun{},
		Actors:    []Actor{},
	}
}

// Source identifies the forge repository; it feeds record keys (forge, host, repository_id)
// and navigation (repository).
type Source struct {
	Forge        string `json:"forge"`         // github, gitlab or forgejo
	Host         string `json:"host"`          // lowercase DNS name, ":port" only when not 443
	RepositoryID string `json:"repository_id"` // GitHub node_id, GitLab/Forgejo numeric id
	Repository   string `json:"repository"`    // owner/name (GitLab: path_with_namespace)
}

// ActorRef is a reference to an actor as a record carries it. ID is nil when the forge
// withholds or deleted the actor; Login is the current login when known.
type ActorRef struct {
	ID    *string `json:"id"`
	Login *string `json:"login"`
}

// Entity is the handled issue or change proposal, with its state already mapped to open,
// closed or merged.
type Entity struct {
	Kind      string   `json:"kind"`
	ID        string   `json:"id"`
	Number    int      `json:"number"`
	Title     string   `json:"title"`
	State     string   `json:"state"`
	Author    ActorRef `json:"author"`
	Labels    []string `json:"labels"`
	Body      string   `json:"body"`
	CreatedAt string   `json:"created_at"`
	UpdatedAt string   `json:"updated_at"`
	// HeadSHA is the change proposal's head revision captured at collection start; only
	// checks for exactly this revision are retained. Empty for work items.
	HeadSHA string `json:"head_sha,omitempty"`
}

// Comment is one conversation record: an issue/PR comment or a review-thread comment (a
// thread lists the IDs of its comments). Review bodies are Reviews, not Comments.
type Comment struct {
	ID        string   `json:"id"`
	Author    ActorRef `json:"author"`
	CreatedAt string   `json:"created_at"`
	UpdatedAt string   `json:"updated_at,omitempty"`
	Body      string   `json:"body"`
}

// Review is one submitted formal review, state already mapped (approved, changes_requested,
// commented, dismissed). SubmittedAt is the canonical submission time (record created_at).
type Review struct {
	ID          string   `json:"id"`
	Author      ActorRef `json:"author"`
	State       string   `json:"state"`
	SubmittedAt string   `json:"submitted_at"`
	UpdatedAt   string   `json:"updated_at,omitempty"`
	Body        string   `json:"body"`
	ReviewedSHA string   `json:"reviewed_sha,omitempty"`
	// Dismissal: set only for dismissed reviews. A nil DismissedBy.ID or DismissedAt records
	// that the forge exposes the disposition but not the actor or time.
	DismissedAt *string   `json:"dismissed_at,omitempty"`
	DismissedBy *ActorRef `json:"dismissed_by,omitempty"`
}

// Reply is a reply edge inside a thread, by forge record ID.
type Reply struct {
	ID       string `json:"id"`
	ParentID string `json:"parent_id"`
}

// Thread is one review thread: its comment IDs in forge order, reply edges, location and
// mutable state.
type Thread struct {
	ID                string    `json:"id"`
	CreatedAt         string    `json:"created_at"`
	CommentIDs        []string  `json:"comment_ids"`
	Replies           []Reply   `json:"replies"`
	ReviewID          string    `json:"review_id,omitempty"`
	ReviewedSHA       string    `json:"reviewed_sha,omitempty"`
	Path              string    `json:"path,omitempty"`
	Line              int       `json:"line,omitempty"`
	Side              string    `json:"side,omitempty"` // left or right (lowercased)
	StartLine         int       `json:"start_line,omitempty"`
	OriginalLine      int       `json:"original_line,omitempty"`
	OriginalStartLine int       `json:"original_start_line,omitempty"`
	OriginalSide      string    `json:"original_side,omitempty"`
	Resolved          bool      `json:"resolved"`
	ResolvedBy        *ActorRef `json:"resolved_by,omitempty"`
	Outdated          bool      `json:"outdated"`
	Minimized         *bool     `json:"minimized,omitempty"`
}

// Check is one check run / CI job, status and conclusion already mapped to the v1 vocabulary.
type Check struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Status       string `json:"status"` // queued, in_progress, completed
	Conclusion   string `json:"conclusion,omitempty"`
	CreatedAt    string `json:"created_at"`
	StartedAt    string `json:"started_at,omitempty"`
	CompletedAt  string `json:"completed_at,omitempty"`
	NeverStarted *bool  `json:"never_started,omitempty"`
	HeadSHA      string `json:"head_sha"` // the revision the forge reports for this check
	Log          *Log   `json:"log,omitempty"`
}

// Log outcomes.
const (
	LogFetched        = "fetched"
	LogSourceTooLarge = "source_too_large" // larger than max_source_bytes: never decoded
	LogFetchFailed    = "fetch_failed"
	LogUnsupported    = "unsupported" // the forge API offers no log for this check
)

// Log is the raw log of a check (or why there is none). Content is the raw bytes, which need
// not be valid UTF-8 (JSON: base64).
type Log struct {
	Outcome string `json:"outcome"`
	Content []byte `json:"content_base64,omitempty"`
}

// AgentRun is one forge-observable run receipt read back from the forge. Author is who posted
// it; the assembler admits only receipts by a registered bot identity.
type AgentRun struct {
	ID                 string   `json:"id"`
	Author             ActorRef `json:"author"`
	Agent              string   `json:"agent"`
	Status             string   `json:"status"`
	InputRevision      string   `json:"input_revision"`
	InputHeadSHA       string   `json:"input_head_sha,omitempty"`
	ResultRecordKeys   []string `json:"result_record_keys"`
	ResultingCommitSHA string   `json:"resulting_commit_sha,omitempty"`
	StartedAt          string   `json:"started_at,omitempty"`
	CompletedAt        string   `json:"completed_at"`
}

// Actor kinds.
const (
	ActorHuman = "human"
	ActorBot   = "bot"
)

// Actor is the adapter's observation of one referenced actor: its kind (bot only when the
// provider positively says so) and, for humans, the verified effective repository role.
type Actor struct {
	ID    string  `json:"id"`
	Login *string `json:"login"`
	Kind  string  `json:"kind"`
	// Role is admin, maintain, write, triage, read, none or external when RoleVerified; nil
	// when the lookup failed or was not possible (consumers fail closed).
	Role         *string `json:"role"`
	RoleVerified bool    `json:"role_verified"`
}

// Gap is an adapter-observed gap for a scope; the assembler aggregates it with its own.
type Gap struct {
	Code  string `json:"code"`
	Count int    `json:"count"`
}

// Outcomes holds the adapter-observed gaps per optional scope. Entity-scope failures are
// errors, not outcomes: without the entity there is no snapshot.
type Outcomes struct {
	Comments  []Gap `json:"comments,omitempty"`
	Reviews   []Gap `json:"reviews,omitempty"`
	Checks    []Gap `json:"checks,omitempty"`
	CheckLogs []Gap `json:"check_logs,omitempty"`
	AgentRuns []Gap `json:"agent_runs,omitempty"`
	Actors    []Gap `json:"actors,omitempty"`
}

// Add records count occurrences of code for scope. Unknown scopes are ignored by design
// (the entity scope has no outcome).
func (o *Outcomes) Add(scope, code string, count int) {
	if count <= 0 {
		return
	}
	var p *[]Gap
	switch scope {
	case ScopeComments:
		p = &o.Comments
	case ScopeReviews:
		p = &o.Reviews
	case ScopeChecks:
		p = &o.Checks
	case ScopeCheckLogs:
		p = &o.CheckLogs
	case ScopeAgentRuns:
		p = &o.AgentRuns
	case ScopeActors:
		p = &o.Actors
	default:
		return
	}
	for i := range *p {
		if (*p)[i].Code == code {
			(*p)[i].Count += count
			return
		}
	}
	*p = append(*p, Gap{Code: code, Count: count})
}

// EachActorRef calls f with every actor reference a holds, in acquisition order (entity
// author, comments, reviews with their dismissers, thread resolvers, agent runs); a reference a
// record does not carry (nil DismissedBy, ResolvedBy) is passed as nil. The adapters walk it to
// look each referenced actor up once, in an order that does not depend on which reader
// finished first.
func (a *Acquisition) EachActorRef(f func(*ActorRef)) {
	f(&a.Entity.Author)
	for i := range a.Comments {
		f(&a.Comments[i].Author)
	}
	for i := range a.Reviews {
		f(&a.Reviews[i].Author)
		f(a.Reviews[i].DismissedBy)
	}
	for i := range a.Threads {
		f(a.Threads[i].ResolvedBy)
	}
	for i := range a.AgentRuns {
		f(&a.AgentRuns[i].Author)
	}
}
