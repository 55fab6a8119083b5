package rework

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/forge/forgejo"
	"github.com/forgectx/forgectx/internal/snapshot/canon"
)

// ReceiptSchema is the wire name of the receipt.
const ReceiptSchema = "gitea-agent.rework-input-gate/v1"

// Captures is the number of complete captures the gate makes and compares.
const Captures = 2

// ContractBinding is the receipt's record of the provider contract.
type ContractBinding struct {
	Schema   string    `json:"schema"`
	SHA256   string    `json:"sha256"`
	Contract *Contract `json:"contract"`
}

// CaptureSummary describes one capture.
type CaptureSummary struct {
	Complete       bool   `json:"complete"`
	RawInputSHA256 string `json:"raw_input_sha256"`
}

// Receipt is the gitea-agent.rework-input-gate/v1 document (docs/rework.md, "Receipt").
type Receipt struct {
	Schema                  string                   `json:"schema"`
	Target                  *Target                  `json:"target"`
	TargetSHA256            string                   `json:"target_sha256"`
	ProviderContract        ContractBinding          `json:"provider_contract"`
	ActorID                 int64                    `json:"actor_id"`
	APIHost                 string                   `json:"api_host"`
	Captures                []CaptureSummary         `json:"captures"`
	Drift                   []string                 `json:"drift"`
	RawInputSnapshot        *Snapshot                `json:"raw_input_snapshot"`
	RawInputSHA256          string                   `json:"raw_input_sha256"`
	Timeline                []TimelineEntry          `json:"timeline"`
	Decision                Decision                 `json:"decision"`
	CounterDiagnostics      *CounterDiagnostics      `json:"counter_diagnostics"`
	SourceIssueCommentCheck *SourceIssueCommentCheck `json:"source_issue_comment_check"`
}

// Options configure Run. Paths and digests come from the canonical invocation's flags.
type Options struct {
	TargetPath, TargetSHA256     string
	ContractPath, ContractSHA256 string
	ActorID                      int64
	OutputPath                   string
	// APIURL is the forge's API base (…/api/v1).
	APIURL string
	// TokenEnv names the environment variable holding the token; Getenv reads it, and only
	// after every input and the output have been validated.
	TokenEnv string
	Getenv   func(string) string
	// Transport is the innermost round-tripper of the shared forge client (nil: a clone of
	// http.DefaultTransport); Retry overrides DefaultRetry field by field; InsecureHTTP allows
	// plain http to a non-loopback host (--insecure-http).
	Transport    http.RoundTripper
	Retry        forge.Retry
	InsecureHTTP bool
	// Concurrency is --concurrency: requests in flight to the forge, and declared list pages
	// read at once (0: forge.DefaultConcurrency).
	Concurrency int
	// Timeout bounds both captures (default 10 minutes).
	Timeout time.Duration
	Log     zerolog.Logger
}

// Result is what Run reports after publishing a receipt.
type Result struct {
	Decision      Decision
	OutputPath    string
	ReceiptSHA256 string
	ReceiptBytes  int
	// Requests counts the HTTP attempts that reached the transport.
	Requests int64
}

// ErrToken is returned when the token variable is unset or empty.
var ErrToken = errors.New("the token environment variable is unset or empty")

// Run executes the gate: inputs, output preflight, token, two captures, timeline, decision,
// receipt, publication. Input and output refusals happen before the token is read and before
// any request. A published receipt is returned whatever the decision; an error means no
// receipt was written.
func Run(ctx context.Context, o Options) (*Result, error) {
	tb, err := ReadInput("target", "--target", o.TargetPath, o.TargetSHA256)
	if err != nil {
		return nil, err
	}
	target, err := ParseTarget(tb)
	if err != nil {
		return nil, err
	}
	cb, err := ReadInput("provider contract", "--provider-contract", o.ContractPath, o.ContractSHA256)
	if err != nil {
		return nil, err
	}
	contract, err := ParseContract(cb, o.ActorID)
	if err != nil {
		return nil, err
	}
	if _, err := ParseAPIURL(o.APIURL); err != nil {
		return nil, err
	}
	// The transport rule, before the token is read; NewReadOnlyClient applies (and logs) it again.
	if err := forge.CheckAPIURL(o.APIURL, o.InsecureHTTP, zerolog.Nop()); err != nil {
		var ce *forge.ConfigError
		if errors.As(err, &ce) {
			return nil, inErr("--api-url", "", "%s", ce.Rule)
		}
		return nil, inErr("--api-url", "", "%v", err)
	}
	host, err := canon.Host(o.APIURL)
	if err != nil {
		return nil, inErr("--api-url", "", "has no canonical host")
	}
	if o.TokenEnv == "" {
		return nil, inErr("--token-env", "", "is required")
	}
	if err := PreflightOutput(o.OutputPath); err != nil {
		return nil, err
	}
	token := o.Getenv(o.TokenEnv)
	if token == "" {
		return nil, fmt.Errorf("--token-env %s: %w", o.TokenEnv, ErrToken)
	}
	var counter atomic.Int64
	conc := cmp.Or(o.Concurrency, forge.DefaultConcurrency)
	hc, err := forgejo.NewReadOnlyClient(forge.Options{APIURL: o.APIURL, Token: token, TokenEnv: o.TokenEnv, Transport: o.Transport,
		Retry: o.Retry, InsecureHTTP: o.InsecureHTTP, Log: o.Log, Pool: forge.NewPool(conc, o.Log)}, DefaultRetry, &counter)
	if err != nil {
		return nil, err
	}
	lim := readerLimits
	lim.Concurrency = conc
	g, err := forgejo.NewReader(o.APIURL, hc, lim)
	if err != nil {
		return nil, err
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	r := &Receipt{
		Schema: ReceiptSchema, Target: target, TargetSHA256: o.TargetSHA256,
		ProviderContract: ContractBinding{Schema: ContractSchema, SHA256: o.ContractSHA256, Contract: contract},
		ActorID:          o.ActorID, APIHost: host, Captures: []CaptureSummary{}, Drift: []string{}, Timeline: []TimelineEntry{},
	}
	if err := evaluate(cctx, g, r, target, contract, o.ActorID); err != nil {
		return nil, err
	}
	data, err := canon.JSON(r)
	if err != nil {
		return nil, fmt.Errorf("serialize the receipt: %w", err)
	}
	if len(data) > MaxReceiptBytes {
		return nil, &OutputError{Rule: "refused", Err: ErrReceiptTooLarge}
	}
	if err := Publish(o.OutputPath, data); err != nil {
		return nil, err
	}
	reasons := make([]string, 0, len(r.Decision.BlockingReasons))
	for _, b := range r.Decision.BlockingReasons {
		reasons = append(reasons, string(b.Reason))
	}
	o.Log.Info().Str("decision", r.Decision.Decision).Strs("blocking_reasons", reasons).Int("reviews", len(r.Timeline)).
		Int64("requests", counter.Load()).Int("receipt_bytes", len(data)).Str("receipt_sha256", canon.SHA256Hex(data)).Msg("rework: input gate receipt published")
	return &Result{Decision: r.Decision, OutputPath: o.OutputPath, ReceiptSHA256: canon.SHA256Hex(data), ReceiptBytes: len(data), Requests: counter.Load()}, nil
}

// evaluate fills r from two captures. Capture failures become blocking reasons; only an
// internal serialization failure is an error.
func evaluate(ctx context.Context, g *forgejo.Reader, r *Receipt, t *Target, c *Contract, actorID int64) error {
	var pre []Blocking
	s1, m1, err1 := capture(ctx, g, t)
	r.RawInputSnapshot = s1
	b1, err := canon.JSON(s1)
	if err != nil {
		return fmt.Errorf("serialize the raw snapshot: %w", err)
	}
	r.RawInputSHA256 = canon.SHA256Hex(b1)
	r.Captures = append(r.Captures, CaptureSummary{Complete: err1 == nil, RawInputSHA256: r.RawInputSHA256})
	if err1 != nil {
		pre = append(pre, blockingOf(err1, ""))
		finish(r, t, c, actorID, nil, pre)
		return nil
	}
	s2, _, err2 := capture(ctx, g, t)
	b2, err := canon.JSON(s2)
	if err != nil {
		return fmt.Errorf("serialize the second snapshot: %w", err)
	}
	r.Captures = append(r.Captures, CaptureSummary{Complete: err2 == nil, RawInputSHA256: canon.SHA256Hex(b2)})
	if err2 != nil {
		pre = append(pre, blockingOf(err2, "second capture: "))
	} else if r.Drift = driftOf(s1, s2); len(r.Drift) > 0 {
		for _, res := range r.Drift {
			pre = append(pre, Blocking{Reason: ReasonCaptureDrift, Subject: res, Rule: "the two captures differ"})
		}
	}
	pre = append(pre, bindings(t, c, actorID, m1)...)
	d := diagnose(c, m1)
	r.CounterDiagnostics = &d
	for _, rc := range d.Inline.Reviews {
		if rc.Status != StatusMatch {
			pre = append(pre, Blocking{Reason: ReasonReviewCommentsCountMismatch, Subject: fmt.Sprintf("review %d", rc.ReviewID),
				Rule: "the review's comments_count is " + rc.Status + " against its inline endpoint's records"})
		}
	}
	sc := sourceIssueCheck(m1)
	r.SourceIssueCommentCheck = &sc
	if sc.Status != StatusMatch {
		pre = append(pre, Blocking{Reason: ReasonSourceIssueCommentsMismatch, Subject: "source_issue",
			Rule: "the Source Issue's comments counter is " + sc.Status + " against its collected comments"})
	}
	finish(r, t, c, actorID, m1, pre)
	return nil
}

// finish derives the timeline and decision (no timeline without a complete first capture).
func finish(r *Receipt, t *Target, c *Contract, actorID int64, m *model, pre []Blocking) {
	var blocks []Blocking
	if m == nil {
		blocks = pre
		r.Decision = Decision{Decision: DecisionBlocked, Route: RouteNone, ReworkReviewIDs: []int64{}, MissingCurrentReview: []string{}}
	} else {
		r.Timeline, blocks, r.Decision = timeline(t, c, actorID, m, pre)
	}
	order := map[Reason]int{}
	for i, x := range AllReasons {
		order[x] = i
	}
	sort.SliceStable(blocks, func(i, j int) bool {
		if order[blocks[i].Reason] != order[blocks[j].Reason] {
			return order[blocks[i].Reason] < order[blocks[j].Reason]
		}
		return blocks[i].Subject < blocks[j].Subject
	})
	if blocks == nil {
		blocks = []Blocking{} // a list in every receipt, never null
	}
	r.Decision.BlockingReasons = blocks
}

func blockingOf(err error, prefix string) Blocking {
	var ce *captureError
	if errors.As(err, &ce) {
		b := ce.Blocking
		b.Subject = prefix + b.Subject
		return b
	}
	return Blocking{Reason: ReasonCaptureFailed, Subject: prefix + "capture", Rule: "the capture failed"}
}

// driftOf names the resources that differ between the captures, compared by content: each
// review's inline rows as a set keyed by their native ID (Gitea serves them in no fixed order:
// it iterates a map, so one unchanged review reads in a different order from one request to
// the next), and so the pull request's and the Source Issue's member sets (unorderedMembers:
// Gitea 1.27.3 serves requested_reviewers in a different order on every read); every other
// list in the order served (that order is the forge's, by creation or ID, so a reordering
// there is a change). An edit, an addition or a removal of any row is drift. The raw snapshot
// keeps the provider's order untouched: only the comparison sorts.
func driftOf(a, b *Snapshot) []string {
	pairs := []struct {
		name string
		x, y any
	}{
		{"version", a.Version, b.Version}, {"repository", a.Repository, b.Repository},
		{"pull_request", setsByID(a.PullRequest), setsByID(b.PullRequest)}, {"source_issue", setsByID(a.SourceIssue), setsByID(b.SourceIssue)},
		{"source_issue_comments", a.SourceIssueComments, b.SourceIssueComments},
		{"pr_issue_comments", a.PRIssueComments, b.PRIssueComments}, {"reviews", a.Reviews, b.Reviews},
		{"inline", inlineByID(a.Inline), inlineByID(b.Inline)}, {"provenance", a.Provenance, b.Provenance},
	}
	out := []string{}
	for _, p := range pairs {
		x, _ := canon.JSON(p.x)
		y, _ := canon.JSON(p.y)
		if !bytes.Equal(x, y) {
			out = append(out, p.name)
		}
	}
	return out
}

// unorderedMembers are the arrays of a pull request or issue object that are sets of native
// objects keyed by ID: who is asked to review, who is assigned, which labels. Their order is
// not the forge's statement of anything.
var unorderedMembers = []string{"requested_reviewers", "requested_reviewers_teams", "assignees", "labels"}

// setsByID returns v (a decoded object) with each unorderedMembers array sorted by its rows'
// native IDs (sortByID); v itself is not modified. Anything else is returned as it is.
func setsByID(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		out[k] = x
	}
	for _, k := range unorderedMembers {
		if rows, ok := m[k].([]any); ok {
			out[k] = sortByID(rows)
		}
	}
	return out
}

// inlineByID returns a copy of the inline lists (in review row order) with each review's rows
// sorted by native ID (sortByID). The input is not modified.
func inlineByID(ls []InlineList) []InlineList {
	out := make([]InlineList, len(ls))
	for i, l := range ls {
		out[i] = InlineList{ReviewID: l.ReviewID, Records: sortByID(l.Records)}
	}
	return out
}

// sortByID returns a copy of rows sorted by native ID; rows without a readable ID (a capture
// refuses those among inline rows) sort last, by their canonical bytes.
func sortByID(rows []any) []any {
	type row struct {
		id  int64
		ok  bool
		key []byte
		v   any
	}
	rs := make([]row, len(rows))
	for j, v := range rows {
		id, ok := nativeID(v)
		k, _ := canon.JSON(v)
		rs[j] = row{id: id, ok: ok, key: k, v: v}
	}
	sort.SliceStable(rs, func(x, y int) bool {
		if rs[x].ok != rs[y].ok {
			return rs[x].ok
		}
		if rs[x].id != rs[y].id {
			return rs[x].id < rs[y].id
		}
		return bytes.Compare(rs[x].key, rs[y].key) < 0
	})
	out := make([]any, len(rs))
	for j, r := range rs {
		out[j] = r.v
	}
	return out
}

// nativeID reads a decoded row's integer "id" (decodeRow keeps numbers as json.Number).
func nativeID(v any) (int64, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return 0, false
	}
	n, ok := m["id"].(json.Number)
	if !ok {
		return 0, false
	}
	id, err := n.Int64()
	return id, err == nil
}
