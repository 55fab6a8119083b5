// Package github is the GitHub adapter (docs/github.md): it reads an issue or pull request and its
// selected sources from the GitHub REST (go-github) and GraphQL APIs into the provider-neutral
// acquisition model, applying the GitHub mappings of entity-context-snapshot v1 ("Stable records
// and mutable state" for node IDs, "Checks" for the status/conclusion table, "Relationships,
// history, and collection profiles" for review states, timestamps and actor roles).
//
// Completeness is the adapter's first duty: every list is read to its last page and checked
// against the size GitHub reports; a page that fails after retries, or a list that stays
// inconsistent after one fresh re-read, is a fetch_failed gap on that scope, never a silently
// shorter list. Values the spec's tables do not cover are invalid_metadata. docs/github.md
// lists every endpoint, mapping and decision.
package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	gh "github.com/google/go-github/v66/github"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// PerPage is the page size of every list (GitHub's maximum).
const PerPage = 100

// defaultAcquireTimeout bounds an acquisition whose context carries no deadline.
const defaultAcquireTimeout = 15 * time.Minute

var _ forge.Acquirer = (*Client)(nil)

// run is the state of one Acquire call.
type run struct {
	c           *Client
	owner, name string
	number      int
	profile     acquisition.Profile
	acq         *acquisition.Acquisition
	head        string
	isPR        bool

	totals entityTotals

	// fan bounds the run's goroutines (its sources and the lookups they start); lookups is
	// the batch the permission lookups started early run on.
	fan     *forge.Fanout
	lookups *forge.Batch
	ctx     context.Context // the Acquire call's, for the lookups lookAhead starts

	mu     sync.Mutex
	short  []shortfall
	pages  map[string]int
	bound  map[string]int
	actors map[string]*actorSeen
}

// entityTotals are the list sizes GitHub reported with the entity, used to prove completeness.
type entityTotals struct {
	Comments, Reviews, Threads int
}

// Acquire reads ref into the neutral model under profile. Entity-scope failures are
// *forge.EntityError; optional-scope failures are acquisition.Outcomes gaps.
func (c *Client) Acquire(ctx context.Context, ref forge.Ref, profile acquisition.Profile) (*acquisition.Acquisition, error) {
	owner, name, err := parseRepo(ref.Repo)
	if err != nil {
		return nil, entityErr(acquisition.GapInvalidMetadata, "repo", err)
	}
	if ref.Number <= 0 {
		return nil, invalidEntity("number", "%d: must be positive", ref.Number)
	}
	if _, ok := ctx.Deadline(); !ok {
		// Every network call runs under a deadline, even when the caller set none.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultAcquireTimeout)
		defer cancel()
	}
	r := &run{
		c: c, owner: owner, name: name, number: ref.Number, profile: profile,
		pages: map[string]int{}, bound: map[string]int{}, actors: map[string]*actorSeen{},
		acq: acquisition.New(), fan: forge.NewFanout(c.concurrency), ctx: ctx,
	}
	r.lookups = r.fan.Batch()
	defer r.lookups.Wait() // a lookup started early whose actor no record kept still ends here
	// Statistics are kept for failed runs too (--stats explains a failure).
	defer c.finishStats(r)
	if err := r.readEntity(ctx); err != nil {
		return nil, err
	}
	if profile.EntityKind != "" && profile.EntityKind != r.acq.Entity.Kind {
		return nil, invalidEntity("entity_kind", "#%d is a %s but the collection profile's entity_kind is %s", ref.Number, r.acq.Entity.Kind, profile.EntityKind)
	}

	r.lookAhead(&r.acq.Entity.Author)
	res := r.readSources(ctx)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("github: acquisition interrupted: %w", err)
	}
	r.merge(res)
	r.resolveActors(ctx)
	sortOutcomes(&r.acq.Outcomes)
	return r.acq, nil
}

// sourceResults are the optional sources' records and gaps, one field per reader, so the
// concurrent readers never share a write.
type sourceResults struct {
	comments, threadComments  []acquisition.Comment
	reviews                   []acquisition.Review
	threads                   []acquisition.Thread
	checks                    []acquisition.Check
	agentRuns                 []acquisition.AgentRun
	gComments, gReviews, gThr gapList
	gChecks, gAgentRuns       gapList
}

// readSources reads the profile's optional sources. Sources are independent: they are read
// at once within the run's Fanout (the transport also bounds in-flight requests), and one
// after another in the order below at concurrency 1. Each writes only its own result; merge
// adds gaps in a fixed order so the acquisition does not depend on scheduling.
func (r *run) readSources(ctx context.Context) *sourceResults {
	var res sourceResults
	profile := r.profile
	b := r.fan.Batch()
	spawn := b.Go
	// With the comment receipt reader, receipts come from the comments listing: one listing
	// serves both sources when both are selected; agent_runs alone lists for receipts alone.
	cr, commentRcpts := r.c.receipts.(commentReceipts)
	wantComments, wantRuns := profile.Includes(acquisition.SourceComments), profile.Includes(acquisition.SourceAgentRuns)
	// Each source starts its records' permission lookups as soon as it is read (lookAhead).
	comments := func(cs []acquisition.Comment) {
		for i := range cs {
			r.lookAhead(&cs[i].Author)
		}
	}
	runs := func(rs []acquisition.AgentRun) {
		for i := range rs {
			r.lookAhead(&rs[i].Author)
		}
	}
	if wantComments {
		spawn(func() {
			l := r.listComments(ctx, acquisition.SourceComments)
			res.comments, res.gComments = r.readComments(l)
			if wantRuns && commentRcpts {
				res.agentRuns, res.gAgentRuns = r.receiptsFrom(l, cr.login)
			}
			comments(res.comments)
			if wantRuns && commentRcpts {
				runs(res.agentRuns)
			}
		})
	}
	if r.isPR && profile.Includes(acquisition.SourceReviews) {
		spawn(func() {
			res.reviews, res.gReviews = r.readReviews(ctx)
			for i := range res.reviews {
				r.lookAhead(&res.reviews[i].Author, res.reviews[i].DismissedBy)
			}
		})
	}
	// Review-thread comments are comment records; threads are review relationships. Either
	// source needs the thread read (the assembler emits threads only with reviews selected).
	if r.isPR && (profile.Includes(acquisition.SourceReviews) || profile.Includes(acquisition.SourceComments)) {
		spawn(func() {
			res.threads, res.threadComments, res.gThr = r.readThreads(ctx)
			comments(res.threadComments)
			if profile.Includes(acquisition.SourceReviews) {
				for i := range res.threads {
					r.lookAhead(res.threads[i].ResolvedBy)
				}
			}
		})
	}
	if r.isPR && profile.Includes(acquisition.SourceChecks) {
		spawn(func() { res.checks, res.gChecks = r.readChecks(ctx) })
	}
	if wantRuns && !(wantComments && commentRcpts) {
		spawn(func() {
			res.agentRuns, res.gAgentRuns = r.readReceipts(ctx)
			runs(res.agentRuns)
		})
	}
	b.Wait()
	return &res
}

// merge adds the sources' records and gaps to the acquisition, in a fixed order.
func (r *run) merge(res *sourceResults) {
	a, profile := r.acq, r.profile
	a.Comments = append(append(a.Comments, res.comments...), res.threadComments...)
	a.Reviews = append(a.Reviews, res.reviews...)
	if profile.Includes(acquisition.SourceReviews) {
		a.Threads = append(a.Threads, res.threads...)
	}
	a.Checks = append(a.Checks, res.checks...)
	a.AgentRuns = append(a.AgentRuns, res.agentRuns...)
	res.gComments.addTo(&a.Outcomes, acquisition.ScopeComments)
	res.gReviews.addTo(&a.Outcomes, acquisition.ScopeReviews)
	// A failed thread read loses review relationships (reviews scope) and the review-thread
	// comment records themselves (comments scope).
	if profile.Includes(acquisition.SourceReviews) {
		res.gThr.addTo(&a.Outcomes, acquisition.ScopeReviews)
	}
	if profile.Includes(acquisition.SourceComments) {
		res.gThr.addTo(&a.Outcomes, acquisition.ScopeComments)
	}
	res.gChecks.addTo(&a.Outcomes, acquisition.ScopeChecks)
	res.gAgentRuns.addTo(&a.Outcomes, acquisition.ScopeAgentRuns)
	_, commentRcpts := r.c.receipts.(commentReceipts)
	r.applyShortfalls(func(scope string) bool {
		switch scope {
		case acquisition.ScopeActors:
			return true
		case acquisition.ScopeAgentRuns:
			// Receipts depend on the comments listing only when they are read from it.
			return commentRcpts && profile.Includes(acquisition.SourceAgentRuns)
		case acquisition.ScopeCheckLogs:
			return profile.Includes(acquisition.SourceCheckLogs) && profile.CheckLogSelection != "none" && profile.CheckLogSelection != ""
		}
		return profile.Includes(scope)
	})
}

// gapList is a scope's adapter-observed gaps, merged into Outcomes once all readers finish.
type gapList []acquisition.Gap

func (g *gapList) add(code string, count int) {
	if count <= 0 {
		return
	}
	for i := range *g {
		if (*g)[i].Code == code {
			(*g)[i].Count += count
			return
		}
	}
	*g = append(*g, acquisition.Gap{Code: code, Count: count})
}

func (g gapList) addTo(o *acquisition.Outcomes, scope string) {
	for _, x := range g {
		o.Add(scope, x.Code, x.Count)
	}
}

func sortOutcomes(o *acquisition.Outcomes) {
	for _, s := range []*[]acquisition.Gap{&o.Comments, &o.Reviews, &o.Checks, &o.CheckLogs, &o.AgentRuns, &o.Actors} {
		sort.Slice(*s, func(i, j int) bool { return (*s)[i].Code < (*s)[j].Code })
	}
}

func (r *run) countPage(source string) {
	r.mu.Lock()
	r.pages[source]++
	r.mu.Unlock()
}

// needPages records, for the request-ratio lower bound, the pages strictly needed to read n
// items of a list (at least one request even for an empty list).
func (r *run) needPages(part string, n int) {
	p := (n + PerPage - 1) / PerPage
	if p < 1 {
		p = 1
	}
	r.mu.Lock()
	r.bound[part] += p
	r.mu.Unlock()
}

func (r *run) needRequests(part string, n int) {
	r.mu.Lock()
	r.bound[part] += n
	r.mu.Unlock()
}

// pageRetries is how many times one page is read when its body arrives truncated or
// malformed (the transport already retried HTTP-level failures).
const pageRetries = 3

// readPage runs fetch, re-running it when the body was truncated or malformed.
func readPage(ctx context.Context, fetch func() error) error {
	var err error
	for range pageRetries {
		if err = fetch(); err == nil || !retryablePageError(err) || ctx.Err() != nil {
			return err
		}
	}
	return err
}

// listREST reads every page of a go-github list. It returns what it read, the pagination as
// the server answered it and, when the listing ended incomplete, why: the error of the page
// that ended it, or forge.ErrIncomplete when failed pages were skipped (their rows are lost,
// the rest was read).
//
// declared is the listing's declared size (-1 when none): it bounds a server that keeps
// announcing empty pages past it. A size the pages' bodies declare (restFetch's total) takes
// its place from the first page that declares one, and is returned (-1: none did).
func listREST[T any](ctx context.Context, r *run, source, endpoint string, declared func() int, fetch restFetch[T]) ([]T, forge.Pagination, int, error) {
	var all []T
	pg, total, err := pagesREST(withEndpoint(ctx, endpoint), r.c.concurrency, endpoint, declared, fetch, func(items []T) {
		r.countPage(source)
		all = append(all, items...)
	})
	return all, pg, total, err
}

// pageFault reports a page failure that may be the page's own (a 5xx, a timeout, a broken
// body) rather than the listing's (an HTTP 4xx answer).
func pageFault(err error) bool {
	var er *gh.ErrorResponse
	var rl *gh.RateLimitError
	var ab *gh.AbuseRateLimitError
	switch {
	case errors.As(err, &rl), errors.As(err, &ab):
		return false // the next page would meet the same limit
	case errors.As(err, &er) && er.Response != nil:
		return er.Response.StatusCode >= 500
	}
	return true
}

// errBeyondDeclared is an empty page announcing another past everything declared and read.
var errBeyondDeclared = fmt.Errorf("%w: empty pages announced past the declared size", forge.ErrIncomplete)

// errPaginationBackwards is a NextPage at or before the page just read.
var errPaginationBackwards = errors.New("pagination went backwards")

// pagesREST is the one REST pagination of this adapter: go-github's NextPage through the
// shared forge.Paginate, each page handed to each as it arrives, a transient page failure
// retried (readPage), a next page that goes backwards refused. A page that still fails (a 5xx,
// a timeout, a broken body: pageFault) is skipped (forge.Page.Err) while rows are declared
// beyond the pages tried — the declared size
// (declared, nil or -1 when none) or the pages an earlier answer's Link rel="last" names —
// so only its own rows are lost. With workers > 1 the pages up to the first answer's
// rel="last" are asked for that many at a time (forge.PaginatePrefetch) and taken in page
// order, so the outcome is the sequential one. When the first page fails (a 5xx, a timeout, a broken body;
// not a 4xx or a rate limit) no answer named the last page yet: the listing is read on from
// page 2, whose answer does (or is empty and ends it).
//
// An empty page that announces another is not the end; but once the pages read cover the
// declared size and the rows read, at the largest page seen, with a whole page to spare, an
// empty page that still announces another ends the listing in errBeyondDeclared (a server
// that loops), never in an endless walk.
func pagesREST[T any](ctx context.Context, workers int, endpoint string, declared func() int, fetch restFetch[T], each func([]T)) (forge.Pagination, int, error) {
	last := 0 // the last page an answer named (rel="last"), 0 while none did
	pages, rows, largest := 0, 0, 0
	firstFailed := false
	// bodyTotal is the size the last page taken declared in its body (total_count), -1 while
	// none did. It is set when a page is taken, in page order, never when a page read ahead
	// arrives: a page read ahead must not change the size an earlier page is checked against.
	bodyTotal := -1
	// stated is the declared size (the body's, else the caller's), or what rel="last" states
	// when nothing was declared; size is the most either says (a declared size read before
	// rows were added may be short).
	stated := func() int {
		if bodyTotal >= 0 {
			return bodyTotal
		}
		if declared != nil && declared() >= 0 {
			return declared()
		}
		return last * largest
	}
	size := func() int { return max(stated(), last*largest) }
	get := func(ctx context.Context, page int) restAnswer[T] {
		var a restAnswer[T]
		a.err = readPage(ctx, func() error {
			var err error
			a.items, a.total, a.resp, err = fetch(ctx, gh.ListOptions{Page: page, PerPage: PerPage})
			return err
		})
		return a
	}
	take := func(page int, a restAnswer[T]) (forge.Page[int], error) {
		items, resp, err := a.items, a.resp, a.err
		if err != nil {
			if ctx.Err() != nil || !pageFault(err) {
				// A 4xx or a rate limit is the listing's, not the page's: the next page would
				// answer the same.
				return forge.Page[int]{}, err
			}
			firstFailed = firstFailed || page == 0
			return forge.Page[int]{Err: err, Next: max(page, 1) + 1}, nil
		}
		each(items)
		if a.total >= 0 {
			bodyTotal = a.total
		}
		pages, rows, largest = pages+1, rows+len(items), max(largest, len(items))
		if resp != nil && resp.LastPage > last {
			last = resp.LastPage
		}
		p := forge.Page[int]{Rows: len(items), Total: size()}
		if resp != nil && resp.NextPage != 0 {
			if resp.NextPage <= max(page, 1) {
				return p, fmt.Errorf("github: %s: %w (page %d after %d)", endpoint, errPaginationBackwards, resp.NextPage, page)
			}
			p.HasNext, p.Next = true, resp.NextPage
			if len(items) == 0 && largest > 0 && pages*largest >= max(stated(), rows)+largest {
				return p, fmt.Errorf("github: %s: %w (%d pages for %d declared rows)", endpoint, errBeyondDeclared, pages, stated())
			}
		}
		return p, nil
	}
	read := func(first int) (forge.Pagination, error) {
		return forge.PaginatePrefetch(first, forge.PageRules{}, forge.Prefetch[int, restAnswer[T]]{
			Workers: workers, Context: ctx, Get: get, Take: take, Declared: declaredREST[T], Key: strconv.Itoa,
		})
	}
	pg, err := read(0)
	if err != nil && firstFailed && pg.Pages == 0 && pg.Failed == 0 && ctx.Err() == nil {
		first := err
		pg, err = read(2)
		pg.Failed++
		if err == nil {
			err = fmt.Errorf("%w: the first page failed: %w", forge.ErrIncomplete, first)
		}
	}
	return pg, bodyTotal, err
}

// restFetch reads one page of a REST list: its rows, the list's size when the answer's body
// declares one (total_count; -1 when it does not) and the response. It may run concurrently
// with other pages' reads (PaginatePrefetch), so it must not set anything the listing reads.
type restFetch[T any] func(ctx context.Context, opt gh.ListOptions) (items []T, total int, resp *gh.Response, err error)

// restRows is a restFetch for a list whose answers declare no size in their body.
func restRows[T any](list func(ctx context.Context, opt gh.ListOptions) ([]T, *gh.Response, error)) restFetch[T] {
	return func(ctx context.Context, opt gh.ListOptions) ([]T, int, *gh.Response, error) {
		items, resp, err := list(ctx, opt)
		return items, -1, resp, err
	}
}

// restAnswer is one REST page's raw answer, after readPage's retries.
type restAnswer[T any] struct {
	items []T
	total int // the size the body declared, -1: none
	resp  *gh.Response
	err   error
}

// declaredREST are the pages after the one read up to the last its Link rel="last" names (at
// most forge.MaxPages): GitHub's declared page count.
func declaredREST[T any](page int, a restAnswer[T]) []int {
	if a.resp == nil || a.resp.LastPage <= max(page, 1) {
		return nil
	}
	var out []int
	for n := max(page, 1) + 1; n <= min(a.resp.LastPage, forge.MaxPages); n++ {
		out = append(out, n)
	}
	return out
}

// listRead is one consistency-checked read of a list (readConsistent).
type listRead[T any] struct {
	items []T // unique items of the final read
	pg    forge.Pagination
	// dups and short are the repeated items and the shortfall against the expected size of
	// the final read; shifted the rows its drift check found possibly shifted out.
	dups, short, shifted int
	// err ended the listing (a page failed past its retries, or failed pages were skipped:
	// forge.ErrIncomplete); checkErr is a drift check that could not be made.
	err, checkErr error
}

// complete reports a read that ended with everything the provider declared, consistent.
func (l listRead[T]) complete() bool {
	return l.err == nil && l.checkErr == nil && l.dups+l.short+l.shifted == 0
}

// readConsistent reads a list up to twice: a list whose items repeat (pages shifted by an
// insertion between reads), that is shorter than the size GitHub reported (shifted by a
// deletion, or a lost page) or whose drift check finds shifted pages (driftCheck) is read
// again from the start. expected is evaluated after each read (a listing may declare its own
// total), -1 when nothing is declared. A listing that failed is not read again: its failure
// already persisted past the retries.
func readConsistent[T any](ctx context.Context, r *run, read func() ([]T, forge.Pagination, error), id func(T) string, expected func() int) listRead[T] {
	var l listRead[T]
	for attempt := 0; attempt < 2; attempt++ {
		raw, pg, err := read()
		l = listRead[T]{pg: pg, err: err}
		l.items, l.dups = dedupe(raw, id)
		if err != nil {
			l.dups = 0
			return l
		}
		// More than expected are records added since the entity was read: more, not fewer.
		l.short = max(0, expected()-len(l.items))
		if l.dups == 0 && l.short == 0 {
			ids := make([]string, len(raw))
			for i, it := range raw {
				ids[i] = id(it)
			}
			if l.shifted, l.checkErr = r.driftCheck(ctx, ids, pg); l.checkErr != nil {
				return l
			}
		}
		if l.dups == 0 && l.short == 0 && l.shifted == 0 {
			return l
		}
	}
	return l
}

// driftCheck is the drift check of a REST listing of more than one page (docs/github.md,
// "Page drift"). REST pages are offsets: a row deleted from a page already read moves every
// later row up by one, so the first row of the next page is never served — and a row added
// meanwhile keeps every count in agreement. A row inserted before a page boundary repeats a
// row (dedupe sees it); a row deleted before one is found here: when every row of the pages
// before the last one still exists once the last page was read, no page shifted. One Exists
// request checks 1,000 node IDs (ids are the rows as served, in order); a one-page listing
// costs none. It returns how many of those rows were deleted (each may have shifted one row
// out of the listing).
func (r *run) driftCheck(ctx context.Context, ids []string, pg forge.Pagination) (int, error) {
	if pg.Pages < 2 || pg.Failed > 0 {
		return 0, nil
	}
	prefix := min(len(ids), pg.Rows-pg.RowsPerPage[len(pg.RowsPerPage)-1])
	check := make([]string, 0, prefix)
	for _, id := range ids[:prefix] {
		if validNodeID(id) {
			check = append(check, id)
		}
	}
	deleted := 0
	const perRequest = existsAliases * 100
	for lo := 0; lo < len(check); lo += perRequest {
		chunk := check[lo:min(len(check), lo+perRequest)]
		var d map[string][]*struct {
			ID string `json:"id"`
		}
		err := readPage(ctx, func() error { return r.c.graphqlPost(ctx, "Exists", ExistsVars(chunk), &d, true) })
		if err != nil {
			return 0, err
		}
		present := map[string]bool{}
		for _, nodes := range d {
			for _, n := range nodes {
				if n != nil {
					present[n.ID] = true
				}
			}
		}
		for _, id := range chunk {
			if !present[id] {
				deleted++
			}
		}
	}
	return deleted, nil
}

// fixed is an expected size known before the listing is read.
func fixed(n int) func() int { return func() int { return n } }

// needListing records, for the request-ratio lower bound, the pages a perfect run needs for a
// listing of max(total, rows read) rows at the page size the server actually used: the
// largest page that was followed by another (PerPage when the listing had one page).
func (r *run) needListing(part string, pg forge.Pagination, total int) {
	size := 0
	for i, n := range pg.RowsPerPage {
		if i < len(pg.RowsPerPage)-1 {
			size = max(size, n)
		}
	}
	if size == 0 {
		size = PerPage
	}
	n := max(total, pg.Rows)
	r.mu.Lock()
	r.bound[part] += max(1, (n+size-1)/size)
	r.mu.Unlock()
}

// isNotFound reports whether a REST error is a 404.
func isNotFound(err error) bool {
	var er *gh.ErrorResponse
	return errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusNotFound
}
