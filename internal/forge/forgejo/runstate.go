package forgejo

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/forgectx/forgectx/internal/forge"
)

// actionsRunLink is a Forgejo/Gitea Actions run page, …/<owner>/<repo>/actions/runs/<n>,
// where n is the run's per-repository index (its run number): the link CIDefaults writes.
var actionsRunLink = regexp.MustCompile(`^https?://[^/?#]+(/[^?#]*)?/([^/?#]+)/([^/?#]+)/actions/runs/([0-9]{1,19})$`)

// doneStatuses are the run statuses after which nothing of the run executes: Gitea's API
// reports "completed" (with the outcome in conclusion), Forgejo's its own final states. Every
// other status (queued, waiting, blocked, in_progress, running, unknown, a new one) is not over.
var doneStatuses = map[string]bool{"completed": true, "success": true, "failure": true, "cancelled": true, "skipped": true}

// maxRunPages bounds the run listing RunState reads looking for one run number (newest
// first): a run older than that many pages is not looked for, and is Unknown.
const maxRunPages = 20

// actionRun is one entry of GET /repos/{owner}/{repo}/actions/runs: Gitea 1.24+ names the
// per-repository index run_number (ActionWorkflowRun), Forgejo index_in_repo (ActionRun).
type actionRun struct {
	ID          int64  `json:"id"`
	RunNumber   int64  `json:"run_number"`
	IndexInRepo int64  `json:"index_in_repo"`
	Status      string `json:"status"`
}

type actionRunList struct {
	Runs       []actionRun `json:"workflow_runs"`
	TotalCount int64       `json:"total_count"`
}

// RunState tells `forgectx status reconcile` whether the Actions run a status comment links
// to is over. The link names the run by its per-repository index, while GET
// /actions/runs/{run} takes the global run id, so RunState reads GET
// /repos/{owner}/{repo}/actions/runs (newest first, with run_number=n, which Forgejo filters on
// and Gitea ignores) until the run's number or an older one shows up.
//
// Fail safe: only a run the server lists as done, or a complete listing without it (deleted,
// never existed), lets reconcile finalise the comment. A run without a runner stays queued and
// is left alone. Unknown (left alone) are: a link that is not one of repo's run pages, a
// server without the runs API or with Actions off for the repository (404), a token the
// listing is refused to (403: Gitea lists runs only to the repository's owner or a site
// admin), entries without a run number this adapter can read, and a run older than
// maxRunPages pages. Any other failure is an error.
func (c *Client) RunState(ctx context.Context, repo, link string) (forge.RunState, error) {
	owner, name, err := splitRepo(repo)
	if err != nil {
		return forge.RunState{}, err
	}
	m := actionsRunLink.FindStringSubmatch(link)
	if m == nil || !strings.EqualFold(m[2], owner) || !strings.EqualFold(m[3], name) {
		return forge.RunState{Unknown: true}, nil
	}
	want, err := strconv.ParseInt(m[4], 10, 64)
	if err != nil || want <= 0 {
		return forge.RunState{Unknown: true}, nil
	}
	found, unknown, err := c.findRun(ctx, owner, name, want)
	switch {
	case err != nil:
		switch statusOf(err) {
		case http.StatusNotFound:
			c.log.Warn().Str("code", "actions_runs_unavailable").Msg("forgejo: the Actions runs API answered 404 (no such API, or Actions off for the repository)")
			return forge.RunState{Unknown: true}, nil
		case http.StatusForbidden:
			// Gitea 1.25 lists a repository's runs only to its owner or a site admin
			// (reqOwner), so the repository-admin token the docs recommend is refused here
			// although it may read each run by its global id, which the link does not carry.
			c.log.Warn().Str("code", "actions_runs_forbidden").Msg("forgejo: the token may not list the repository's Actions runs (Gitea: owner or site admin only)")
			return forge.RunState{Unknown: true}, nil
		}
		return forge.RunState{}, fmt.Errorf("forgejo: actions run %d: %w", want, err)
	case unknown:
		return forge.RunState{Unknown: true}, nil
	case found == nil:
		return forge.RunState{}, nil
	}
	return forge.RunState{Found: true, Status: found.Status, Completed: doneStatuses[found.Status]}, nil
}

// findRun reads the runs listing (newest first) until run number want, or an older run, shows
// up. unknown: an entry without a run number, or the run lies beyond maxRunPages pages.
func (c *Client) findRun(ctx context.Context, owner, name string, want int64) (found *actionRun, unknown bool, err error) {
	err = c.reader.Repo(owner, name).Actions.eachRun(ctx, want, maxRunPages, func(runs []actionRun) error {
		for i, r := range runs {
			num := max(r.RunNumber, r.IndexInRepo)
			switch {
			case num <= 0:
				unknown = true
				return errStopWalk
			case num == want:
				found = &runs[i]
				return errStopWalk
			case num < want:
				return errStopWalk
			}
		}
		return nil
	})
	if errors.Is(err, errWalkLimit) {
		unknown, err = true, nil
	}
	return found, unknown, err
}
