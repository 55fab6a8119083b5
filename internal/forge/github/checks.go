package github

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"

	gh "github.com/google/go-github/v66/github"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// actionsAppSlug identifies check runs created by GitHub Actions, whose job (same ID) exposes
// the immutable creation time the check-run object lacks.
const actionsAppSlug = "github-actions"

// readChecks reads every check run (all attempts: filter=all) for the head revision captured
// at collection start, maps it through the spec's status/conclusion table, takes each Actions
// check's created_at from its job (one jobs listing per workflow run of that revision), and
// reads the selected logs bounded by max_source_bytes.
//
// Decision (docs/github.md): a check run not created by GitHub Actions has no immutable
// creation time in any GitHub API (its started_at is set by the app and may be rewritten; the
// spec forbids runner time), so it is invalid_metadata and omitted.
func (r *run) readChecks(ctx context.Context) ([]acquisition.Check, gapList) {
	var gaps gapList
	runs := r.listCheckRuns(ctx)
	created, jobsFailed := r.actionsJobTimes(ctx, runs)
	var out []acquisition.Check
	var logJobs []logJob
	var undated loss // Actions checks omitted for want of a job creation time
	for _, cr := range runs {
		n := nativeCheck{
			NodeID:     cr.GetNodeID(),
			Name:       cr.GetName(),
			HeadSHA:    cr.GetHeadSHA(),
			Status:     cr.GetStatus(),
			Conclusion: cr.GetConclusion(),
			StartedAt:  ts(cr.GetStartedAt().Time),
			// completed_at is read only for completed checks by mapCheck.
			CompletedAt: ts(cr.GetCompletedAt().Time),
		}
		if cr.GetApp().GetSlug() == actionsAppSlug {
			if jobsFailed != "" && created[cr.GetID()] == "" {
				// The check is lost with its log, if the profile would have selected it.
				if undated == nil {
					undated = loss{acquisition.ScopeChecks: 0, acquisition.ScopeCheckLogs: 0}
				}
				undated[acquisition.ScopeChecks]++
				if c, _, ok := mapCheckConclusion(n.Conclusion); ok && n.Status == "completed" && r.profile.LogSelected(c) {
					undated[acquisition.ScopeCheckLogs]++
				}
				continue
			}
			n.CreatedAt = created[cr.GetID()]
		}
		ck, ok := mapCheck(n, r.head)
		if !ok {
			gaps.add(acquisition.GapInvalidMetadata, 1)
			continue
		}
		if r.profile.LogSelected(ck.Conclusion) {
			logJobs = append(logJobs, logJob{index: len(out), jobID: cr.GetID()})
		}
		out = append(out, ck)
	}
	if jobsFailed != "" {
		if undated == nil {
			undated = loss{acquisition.ScopeChecks: 0, acquisition.ScopeCheckLogs: 0}
		}
		r.incomplete(jobsFailed, undated)
	}
	// Logs download at once within the run's Fanout (in check order at concurrency 1); each
	// result lands in its own check, so the order of completion does not matter.
	b := r.fan.Batch()
	tasks := make([]func(), len(logJobs))
	for i, lj := range logJobs {
		tasks[i] = func() { out[lj.index].Log = r.readLog(ctx, lj.jobID) }
	}
	b.GoAll(tasks)
	b.Wait()
	return out, gaps
}

// listCheckRuns reads the head revision's check runs, checked against the listing's own
// total_count and read again when pages shifted or came back short. An incomplete listing
// loses checks (the count GitHub declared and did not serve) and the logs of the lost failed
// checks (how many is unknown: their conclusions were never read).
func (r *run) listCheckRuns(ctx context.Context) []*gh.CheckRun {
	total := -1
	read := func() ([]*gh.CheckRun, forge.Pagination, error) {
		items, pg, t, err := listREST(ctx, r, acquisition.SourceChecks, endpointCheckRuns, func() int { return total },
			func(ctx context.Context, opt gh.ListOptions) ([]*gh.CheckRun, int, *gh.Response, error) {
				res, resp, err := r.c.rest.Checks.ListCheckRunsForRef(ctx, r.owner, r.name, r.head, &gh.ListCheckRunsOptions{Filter: gh.String("all"), ListOptions: opt})
				if res == nil {
					return nil, -1, resp, err
				}
				return res.CheckRuns, res.GetTotal(), resp, err // the list's own size is the completeness reference
			})
		if t >= 0 {
			total = t
		}
		return items, pg, err
	}
	l := readConsistent(ctx, r, read, func(c *gh.CheckRun) string { return c.GetNodeID() }, func() int { return total })
	r.needListing("check_runs", l.pg, total)
	var lost int
	switch {
	case l.checkErr != nil:
		lost = 1
	case l.err != nil:
		lost = max(1, total-len(l.items))
	default:
		lost = l.dups + l.short + l.shifted
	}
	if lost > 0 {
		ls := loss{acquisition.ScopeChecks: lost}
		if r.profile.CheckLogSelection == "all" {
			ls[acquisition.ScopeCheckLogs] = lost // every lost check's log was selected
		}
		r.incomplete(listCheckRuns, ls)
	}
	return l.items
}

// logJob is a retained check whose log the profile selects.
type logJob struct {
	index int
	jobID int64
}

func dedupe[T any](items []T, id func(T) string) ([]T, int) {
	seen := make(map[string]bool, len(items))
	out := items[:0:0]
	for _, it := range items {
		if seen[id(it)] {
			continue
		}
		seen[id(it)] = true
		out = append(out, it)
	}
	return out, len(items) - len(out)
}

// actionsJobTimes returns the created_at of every Actions job of the head revision's workflow
// runs, keyed by job ID (= check-run ID). It lists the head revision's workflow runs once
// and each run's jobs once (all attempts), only when some check run is an Actions one.
// failed names the first listing (in dependency-map order) that ended incomplete, "" when
// none did.
func (r *run) actionsJobTimes(ctx context.Context, runs []*gh.CheckRun) (map[int64]string, string) {
	out := map[int64]string{}
	need := false
	for _, cr := range runs {
		if cr.GetApp().GetSlug() == actionsAppSlug {
			need = true
			break
		}
	}
	if !need {
		return out, ""
	}
	wfTotal := -1
	wf := readConsistent(ctx, r, func() ([]*gh.WorkflowRun, forge.Pagination, error) {
		items, pg, t, err := listREST(ctx, r, listWorkflowRuns, endpointRuns, func() int { return wfTotal },
			func(ctx context.Context, opt gh.ListOptions) ([]*gh.WorkflowRun, int, *gh.Response, error) {
				res, resp, err := r.c.rest.Actions.ListRepositoryWorkflowRuns(ctx, r.owner, r.name, &gh.ListWorkflowRunsOptions{HeadSHA: r.head, ListOptions: opt})
				if res == nil {
					return nil, -1, resp, err
				}
				return res.WorkflowRuns, res.GetTotalCount(), resp, err
			})
		if t >= 0 {
			wfTotal = t
		}
		return items, pg, err
	}, func(w *gh.WorkflowRun) string { return w.GetNodeID() }, func() int { return wfTotal })
	wfRuns := wf.items
	r.needListing(listWorkflowRuns, wf.pg, wfTotal)
	failed := ""
	if !wf.complete() {
		failed = listWorkflowRuns
	}
	ids := make([]int64, 0, len(wfRuns))
	for _, w := range wfRuns {
		ids = append(ids, w.GetID())
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	type result struct {
		jobs   []*gh.WorkflowJob
		pg     forge.Pagination
		total  int
		failed bool
	}
	results := make([]result, len(ids))
	b := r.fan.Batch()
	tasks := make([]func(), len(ids))
	for i, id := range ids {
		tasks[i] = func() {
			total := -1
			l := readConsistent(ctx, r, func() ([]*gh.WorkflowJob, forge.Pagination, error) {
				items, pg, t, err := listREST(ctx, r, listWorkflowJobs, endpointJobs, func() int { return total },
					func(ctx context.Context, opt gh.ListOptions) ([]*gh.WorkflowJob, int, *gh.Response, error) {
						res, resp, err := r.c.rest.Actions.ListWorkflowJobs(ctx, r.owner, r.name, id, &gh.ListWorkflowJobsOptions{Filter: "all", ListOptions: opt})
						if res == nil {
							return nil, -1, resp, err
						}
						return res.Jobs, res.GetTotalCount(), resp, err
					})
				if t >= 0 {
					total = t
				}
				return items, pg, err
			}, func(j *gh.WorkflowJob) string { return j.GetNodeID() }, func() int { return total })
			results[i] = result{jobs: l.items, pg: l.pg, total: total, failed: !l.complete()}
		}
	}
	b.GoAll(tasks)
	b.Wait()
	for _, res := range results {
		r.needListing(listWorkflowJobs, res.pg, res.total)
		if res.failed && failed == "" {
			failed = listWorkflowJobs
		}
		for _, j := range res.jobs {
			if t := ts(j.GetCreatedAt().Time); t != "" {
				out[j.GetID()] = t
			}
		}
	}
	return out, failed
}

// readLog downloads one Actions job log: the API answers with a redirect to a pre-signed URL,
// fetched without the token. A log whose announced or actual size exceeds max_source_bytes is
// never read past the bound and never decoded (source_too_large); no prefix is kept.
func (r *run) readLog(ctx context.Context, jobID int64) *acquisition.Log {
	limit := int64(r.profile.Bounds.MaxSourceBytes)
	r.needRequests("check_logs", 2)
	// The outcome is reported on the Log only: the assembler turns Log outcomes into
	// check_logs gaps (adding them to Outcomes as well would count them twice).
	fail := func(outcome string) *acquisition.Log { return &acquisition.Log{Outcome: outcome} }
	loc, err := r.c.jobLogLocation(ctx, r.owner, r.name, jobID)
	if err != nil {
		return fail(acquisition.LogFetchFailed)
	}
	req, err := http.NewRequestWithContext(withEndpoint(ctx, logDownloadEndpoint), http.MethodGet, loc.String(), nil)
	if err != nil {
		return fail(acquisition.LogFetchFailed)
	}
	resp, err := r.c.restNoAuth.Do(req)
	if err != nil {
		return fail(acquisition.LogFetchFailed)
	}
	defer resp.Body.Close()
	r.countPage(acquisition.SourceCheckLogs)
	if resp.StatusCode != http.StatusOK {
		return fail(acquisition.LogFetchFailed)
	}
	if limit > 0 && resp.ContentLength > limit {
		return fail(acquisition.LogSourceTooLarge)
	}
	var rd io.Reader = resp.Body
	if limit > 0 {
		// One byte past the bound tells "exactly at the bound" from "over it"; nothing read is
		// decoded or kept when over.
		rd = io.LimitReader(resp.Body, limit+1)
	}
	b, err := io.ReadAll(rd)
	if err != nil {
		return fail(acquisition.LogFetchFailed)
	}
	if limit > 0 && int64(len(b)) > limit {
		return fail(acquisition.LogSourceTooLarge)
	}
	return &acquisition.Log{Outcome: acquisition.LogFetched, Content: b}
}

// jobLogLocation asks the logs endpoint where a job's log is and returns the pre-signed URL
// of its 302 answer. The request goes through the REST client, whose redirect policy follows
// only a same-origin permanent move (a transferred repository) and never the 302 itself; the
// download is then made by the token-less client. (go-github's GetWorkflowJobLogs is not used:
// it follows a 301 to wherever Location points with the token attached.)
func (c *Client) jobLogLocation(ctx context.Context, owner, repo string, jobID int64) (*url.URL, error) {
	ctx = withEndpoint(ctx, "GET /repos/{owner}/{repo}/actions/jobs/{job_id}/logs")
	req, err := c.rest.NewRequest(http.MethodGet, fmt.Sprintf("repos/%s/%s/actions/jobs/%d/logs", url.PathEscape(owner), url.PathEscape(repo), jobID), nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.rest.Client().Do(req.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusFound {
		return nil, fmt.Errorf("github: job log: HTTP %d", resp.StatusCode)
	}
	loc, err := resp.Request.URL.Parse(resp.Header.Get("Location"))
	if err != nil || (loc.Scheme != "https" && loc.Scheme != "http") || loc.Host == "" {
		return nil, errors.New("github: job log: the redirect has no usable Location")
	}
	return loc, nil
}
