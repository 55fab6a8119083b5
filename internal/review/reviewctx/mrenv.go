package reviewctx

import (
	"errors"
	"fmt"
	"strconv"
)

// ErrMREnvironment wraps the refusal of an enriched run outside a validated GitLab
// merge-request pipeline: a missing variable, or one that contradicts what the API answered.
var ErrMREnvironment = errors.New("reviewctx: enriched requires a validated GitLab merge-request pipeline environment")

// GitLab merge-request pipeline variables an enriched run requires (GitLab sets them in
// merge_request_event pipelines).
const (
	envGitLabCI       = "GITLAB_CI"
	envPipelineSource = "CI_PIPELINE_SOURCE"
	envMRProjectID    = "CI_MERGE_REQUEST_PROJECT_ID"
	envMRIID          = "CI_MERGE_REQUEST_IID"
	envMRSourceSHA    = "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA"
	// envCommitSHA is the source head in a detached merge request pipeline (where
	// CI_MERGE_REQUEST_SOURCE_BRANCH_SHA is empty); in a merged-results pipeline it is the
	// merge commit, so it is read only when the source-branch variable is empty.
	envCommitSHA = "CI_COMMIT_SHA"
)

// checkMREnvironment validates the merge-request pipeline environment of an enriched run
// against the merge request the API answered (t): GITLAB_CI is exactly true,
// CI_PIPELINE_SOURCE is exactly merge_request_event, CI_MERGE_REQUEST_PROJECT_ID and
// CI_MERGE_REQUEST_IID are set and equal the API's project ID and IID, and the source head —
// CI_MERGE_REQUEST_SOURCE_BRANCH_SHA, or CI_COMMIT_SHA when that is empty (a detached merge
// request pipeline) — equals the API's head SHA. The error names the variable and the rule, never its value.
// off and metadata need no pipeline (local use); only enriched calls this.
func checkMREnvironment(env Env, t Target) error {
	get := func(name string) (string, error) {
		if env == nil {
			return "", fmt.Errorf("%w: %s: unset", ErrMREnvironment, name)
		}
		v, ok := env(name)
		if !ok || v == "" {
			return "", fmt.Errorf("%w: %s: unset", ErrMREnvironment, name)
		}
		return v, nil
	}
	exact := []struct{ name, want string }{
		{envGitLabCI, "true"}, {envPipelineSource, "merge_request_event"},
	}
	for _, x := range exact {
		v, err := get(x.name)
		if err != nil {
			return err
		}
		if v != x.want {
			return fmt.Errorf("%w: %s: must be exactly %s", ErrMREnvironment, x.name, x.want)
		}
	}
	ids := []struct {
		name string
		want int64
		what string
	}{{envMRProjectID, t.ProjectID, "project ID"}, {envMRIID, t.IID, "IID"}}
	for _, x := range ids {
		v, err := get(x.name)
		if err != nil {
			return err
		}
		n, perr := strconv.ParseInt(v, 10, 64)
		if perr != nil || n <= 0 || strconv.FormatInt(n, 10) != v {
			return fmt.Errorf("%w: %s: must be a positive decimal integer", ErrMREnvironment, x.name)
		}
		if n != x.want {
			return fmt.Errorf("%w: %s: contradicts the merge request's %s the API answered", ErrMREnvironment, x.name, x.what)
		}
	}
	// GitLab sets CI_MERGE_REQUEST_SOURCE_BRANCH_SHA only in merged-results pipelines; in a
	// (detached) merge request pipeline it is empty and CI_COMMIT_SHA is the source head.
	name := envMRSourceSHA
	v, err := get(name)
	if err != nil {
		name = envCommitSHA
		if v, err = get(name); err != nil {
			return fmt.Errorf("%w: %s (or %s in a detached merge request pipeline): unset", ErrMREnvironment, envMRSourceSHA, envCommitSHA)
		}
	}
	if v != t.ReviewedHead {
		return fmt.Errorf("%w: %s: contradicts the merge request's head SHA the API answered", ErrMREnvironment, name)
	}
	return nil
}
