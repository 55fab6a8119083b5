package gitlab

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/forgectx/forgectx/internal/forge"
)

// ciLink is a GitLab CI job or pipeline page: …/<project path>/-/jobs/<id> (CI_JOB_URL, the
// run link forgectx writes under GitLab CI) or …/-/pipelines/<id>.
var ciLink = regexp.MustCompile(`^https?://[^/?#]+(/[^?#]*)/-/(jobs|pipelines)/([0-9]{1,19})$`)

// completedStatuses are the job and pipeline statuses after which nothing of the job runs
// any more (GitLab's doc/api/jobs.md and pipelines.md). Every other status — created,
// waiting_for_resource, preparing, pending, running, canceling, manual, scheduled, and any
// status a later GitLab adds — counts as not over, so reconcile leaves the comment alone.
var completedStatuses = map[string]bool{"success": true, "failed": true, "canceled": true, "skipped": true}

// RunState tells `forgectx status reconcile` whether the CI job (GET
// /projects/:id/jobs/:job_id) or pipeline (GET /projects/:id/pipelines/:pipeline_id) a status
// comment links to is over. A 404 is a job GitLab no longer knows (erased with its pipeline,
// or never existed): Found false. A link that is not a job or pipeline page of repo (another
// project, another shape) cannot be looked up: Unknown, and the comment is left alone; a
// numeric repo is first resolved to its path (GET /projects/:id) for that comparison. Any
// other failure is an error (a token without read access to CI on the project included).
func (c *Client) RunState(ctx context.Context, repo, link string) (forge.RunState, error) {
	pid, err := projectID(repo)
	if err != nil {
		return forge.RunState{}, err
	}
	path := repo
	if _, numeric := pid.(int64); numeric {
		// A numeric project id (GitLab CI's CI_MERGE_REQUEST_PROJECT_ID) cannot be compared
		// with the link's path, and a fork's job (a fork MR pipeline runs in the source
		// project) would answer 404 here, which must not read as "gone": compare the
		// project's own path first.
		p, _, err := c.gl.Projects.GetProject(pid, nil, gl.WithContext(ctx))
		if err != nil {
			return forge.RunState{}, fmt.Errorf("gitlab: CI run state: project: %w", quiet(err))
		}
		if path = p.PathWithNamespace; path == "" {
			return forge.RunState{Unknown: true}, nil
		}
	}
	kind, id, ok := parseCILink(path, link)
	if !ok {
		return forge.RunState{Unknown: true}, nil
	}
	var st string
	if kind == "jobs" {
		var j *gl.Job
		j, _, err = c.gl.Jobs.GetJob(pid, id, gl.WithContext(ctx))
		if j != nil {
			st = j.Status
		}
	} else {
		var p *gl.Pipeline
		p, _, err = c.gl.Pipelines.GetPipeline(pid, id, gl.WithContext(ctx))
		if p != nil {
			st = p.Status
		}
	}
	if err != nil {
		if statusOf(err) == http.StatusNotFound {
			return forge.RunState{}, nil
		}
		return forge.RunState{}, fmt.Errorf("gitlab: CI %s %d: %w", strings.TrimSuffix(kind, "s"), id, quiet(err))
	}
	return forge.RunState{Found: true, Status: st, Completed: completedStatuses[st]}, nil
}

// parseCILink returns "jobs" or "pipelines" and the id of a GitLab CI page link, when the
// link is the project's at path: its path ends in /<path>/-/… (any relative URL root before
// it; compared case-insensitively, as GitLab routes paths).
func parseCILink(path, link string) (string, int64, bool) {
	m := ciLink.FindStringSubmatch(link)
	if m == nil {
		return "", 0, false
	}
	id, err := strconv.ParseInt(m[3], 10, 64)
	if err != nil || id <= 0 {
		return "", 0, false
	}
	// The wanted suffix starts with '/', so a suffix match is a whole-segment match.
	if !strings.HasSuffix(strings.ToLower(m[1]), "/"+strings.ToLower(path)) {
		return "", 0, false
	}
	return m[2], id, true
}
