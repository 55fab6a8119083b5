package forge

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/forge/retry"
	"github.com/forgectx/forgectx/internal/forge/stats"
)

// Provider is one forge as the rest of forgectx sees it: detection from the CI environment,
// the CI defaults of a run, and the construction of every client from one Options. Each forge
// package exports one (github.Provider, gitlab.Provider, forgejo.Provider); the registration
// list (internal/forge/providers) is the only place that names them.
type Provider interface {
	// Name is the --forge value and source.forge: "github", "gitlab", "forgejo".
	Name() string
	// Detect reports whether the process runs under this forge's CI system.
	Detect(getenv func(string) string) bool
	// Policy is what the commands need to know before building anything.
	Policy() Policy
	// CIDefaults resolves what a run needs from the CI job and the explicit flags in in.
	// Every problem is a *ConfigError naming the flag or variable and the rule.
	CIDefaults(in JobInput) (Job, error)
	// Open builds the clients from o (APIURL already defaulted and policy-checked). It makes
	// no request. A problem with o is a *ConfigError.
	Open(o Options) (*Conn, error)
}

// Policy is a provider's static configuration rules, used to default and check the flags.
type Policy struct {
	// DefaultAPIURL is used when --api-url is empty (and no cassette names one); "" means
	// --api-url is required, for the reason APIURLRule gives.
	DefaultAPIURL string
	APIURLRule    string
	// DefaultTokenEnv is the variable read when --token-env is not given; "" means none is
	// read and the forge is read unauthenticated (TokenRule is then empty too).
	DefaultTokenEnv string
	// TokenRule says why a token is required ("" with a DefaultTokenEnv: required, no reason).
	TokenRule string
	// TokenOptional allows reading without a token (logged as a warning).
	TokenOptional bool
	// RepoRule is the --repo rule shown when ValidateRepo refuses.
	RepoRule string
	// ValidateRepo checks --repo before any request.
	ValidateRepo func(repo string) error
}

// JobInput is what CIDefaults reads: the environment, the run's start and the explicit flags
// (which win over the CI defaults).
type JobInput struct {
	Getenv          func(string) string
	Start           time.Time
	Log             zerolog.Logger
	Repo, APIURL    string
	Number          int
	CommentAuthor   string
	CommentAuthorID int64
}

// Job is a run's entity and identity, resolved from the CI job and the flags.
type Job struct {
	Ref             Ref
	Kind            string // work_item, change_proposal, or "" when the CI job does not say
	TokenEnv        string // variable holding the token
	CommentAuthor   string // login forgectx's comments are written as (GitHub)
	CommentAuthorID int64  // user id forgectx's comments are written as (Forgejo; 0: ask)
	HeadSHA         string // revision checked out ("" when unknown; checked by the caller)
	RunURL          string // link to the CI run ("" when none)
	ReceiptID       string // receipt id of this run
	Actions         bool   // GitHub Actions (or its Forgejo compatibility): GITHUB_OUTPUT relay
	Summary         bool   // write $GITHUB_STEP_SUMMARY
}

// Options configure every client of one provider. The zero value of each field takes the
// provider's default.
type Options struct {
	APIURL string
	// Token authenticates every request; never logged, never recorded. TokenEnv is the name
	// of the variable it came from (GitLab tells a job token from it).
	Token, TokenEnv string
	// Transport is the innermost round-tripper (cassette recorder or replayer, a test's);
	// nil means a clone of http.DefaultTransport. Retries, statistics and the redirect policy
	// wrap it.
	Transport http.RoundTripper
	// SourceHost overrides source.host (a replay keeps the recorded host).
	SourceHost string
	// Record, when non-empty, is a cassette directory every exchange is recorded into, the
	// token stripped (--record). Connect wraps Transport with the recorder before the provider
	// opens, so recording is the same for every forge and no adapter knows of it. A replay is
	// a Transport too (the Session's cassette.Replayer, with the Offline retry timing).
	Record string
	// Retry is the retry policy; zero fields take DefaultRetry's.
	Retry Retry
	// InsecureHTTP allows plain http to a non-loopback host (--insecure-http; logged).
	InsecureHTTP bool
	Log          zerolog.Logger
	// CommentAuthor, CommentAuthorID and Kind are the comment identity and the entity kind
	// the commenter writes for (a run); OwnReceipts reads back only receipts written by that
	// identity (a run) instead of every author's (a snapshot: the bot registry decides).
	CommentAuthor   string
	CommentAuthorID int64
	Kind            string
	OwnReceipts     bool
	// WithCommenter asks Open for a commenter (a run, reconcile); a snapshot needs none.
	WithCommenter bool
	// Concurrency is how many requests one run keeps in flight per host (--concurrency,
	// 1..MaxConcurrency; 0 takes DefaultConcurrency). 1 reads in today's strict order.
	Concurrency int
	// Pool is the run's request pool (NewPool(Concurrency)): Connect makes one when nil, and
	// every client built from these Options sends through it (Pool.Wrap on Transport; its
	// RetryLimiter in the retry policy), so the per-host limit holds across clients.
	Pool *Pool
}

// Request-pool sizes: the default and the largest a run may ask for.
const (
	DefaultConcurrency = 4
	MaxConcurrency     = 8
)

// Retry is the one retry policy's numbers (internal/forge/retry applies them); zero fields take
// the adapter's defaults.
type Retry = retry.Limits

// Offline is the retry timing of a replay: recorded waits need not be waited again.
var Offline = Retry{WaitMin: time.Millisecond, WaitMax: time.Millisecond, MaxServerWait: time.Millisecond}

// Conn is what Open built: the clients one command uses.
type Conn struct {
	Acquirer Acquirer
	// Commenter is nil unless Options.WithCommenter.
	Commenter Commenter
	// ResolveIdentity settles the token's comment identity once before the status lookup and
	// the acquisition both need it (nil: nothing to settle). A failure is not fatal: both try
	// again on their own terms.
	ResolveIdentity func(ctx context.Context) error
	// RunState tells a dead CI run from a live one for `status reconcile`, from the run link
	// in a status comment (nil: the forge cannot tell; a started comment is then finalised
	// only with --current-run or when it has no link).
	RunState func(ctx context.Context, repo, link string) (RunState, error)
	// Stats returns the statistics of the last acquisition (nil before one).
	Stats func() *Stats
}

// RunState is a CI run's state as the forge reports it.
type RunState struct {
	Found     bool   // false: the forge does not know the run (deleted, never existed)
	Completed bool   // the run is over
	Status    string // the forge's own word for it
	// Unknown: the forge cannot say (the link is not one of this repository's runs, or the
	// server has no runs API to ask). Reconcile then leaves the comment alone: finalising a
	// live run's comment would be wrong, leaving a dead one is only untidy.
	Unknown bool
}

// Stats is every adapter's `snapshot --stats` document: one shape (internal/forge/stats).
type Stats = stats.Stats

// StatsSummary are the counts every adapter reports on the acquisition's log line.
type StatsSummary = stats.Summary

// ConfigError is a configuration problem found before any request: the field (a flag or a
// variable) and the rule it breaks.
type ConfigError struct {
	Field string
	Rule  string
	Err   error
}

func (e *ConfigError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Field, e.Rule, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Field, e.Rule)
}

func (e *ConfigError) Unwrap() error { return e.Err }

// DefaultForge is the forge assumed when no provider detects its CI system (a local run).
const DefaultForge = "github"

var (
	regMu    sync.RWMutex
	registry []Provider
)

// Register adds p to the registry. Registration order is detection order: a CI system that
// imitates another (Forgejo Actions sets GITHUB_ACTIONS) registers first. Registering a
// name twice panics: it is a programming error in the registration list.
func Register(p Provider) {
	regMu.Lock()
	defer regMu.Unlock()
	for _, q := range registry {
		if q.Name() == p.Name() {
			panic("forge: provider " + p.Name() + " registered twice")
		}
	}
	registry = append(registry, p)
}

// Lookup returns the registered provider named name.
func Lookup(name string) (Provider, bool) {
	regMu.RLock()
	defer regMu.RUnlock()
	for _, p := range registry {
		if p.Name() == name {
			return p, true
		}
	}
	return nil, false
}

// Names lists the registered providers, sorted.
func Names() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	out := make([]string, 0, len(registry))
	for _, p := range registry {
		out = append(out, p.Name())
	}
	sort.Strings(out)
	return out
}

// Detect returns the name of the first registered provider whose CI system this process runs
// under, else DefaultForge.
func Detect(getenv func(string) string) string {
	regMu.RLock()
	defer regMu.RUnlock()
	for _, p := range registry {
		if p.Detect(getenv) {
			return p.Name()
		}
	}
	return DefaultForge
}

// Resolve returns the provider for --forge (name) or an error naming the field and the
// registered values.
func Resolve(field, name string) (Provider, error) {
	if p, ok := Lookup(name); ok {
		return p, nil
	}
	return nil, &ConfigError{Field: field, Rule: "must be one of " + joinNames(Names())}
}

func joinNames(names []string) string {
	switch len(names) {
	case 0:
		return "the registered forges (none in this build)"
	case 1:
		return names[0]
	}
	s := ""
	for i, n := range names {
		switch {
		case i == 0:
		case i == len(names)-1:
			s += " or "
		default:
			s += ", "
		}
		s += n
	}
	return s
}
