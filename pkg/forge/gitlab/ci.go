package gitlab

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/forgectx/forgectx/pkg/acquisition"
	"github.com/forgectx/forgectx/pkg/forge"
)

// CIEnv is what a GitLab CI job tells forgectx about where it runs (predefined CI/CD
// variables). Kind is empty when the pipeline is not a merge-request pipeline: GitLab has no
// predefined variable for an issue, so the caller must name the entity.
type CIEnv struct {
	Ref       forge.Ref
	Kind      string // change_proposal, or "" when no merge request is in scope
	ServerURL string // CI_SERVER_URL
	JobURL    string // CI_JOB_URL
	CommitSHA string // the revision the job checked out
	// TokenEnv names the variable to read the token from: GITLAB_TOKEN when it is set (an
	// access token the user configured), else CI_JOB_TOKEN when present; never the value.
	TokenEnv string
}

// CIDefaults derives the defaults from GitLab CI variables. It is pure: getenv is the only
// input. Rules:
//   - API URL: CI_API_V4_URL, else CI_SERVER_URL + "/api/v4";
//   - project: in a merge-request pipeline CI_MERGE_REQUEST_PROJECT_ID (the MR's target
//     project, which differs from CI_PROJECT_ID for fork pipelines), else CI_PROJECT_ID, else
//     CI_PROJECT_PATH; numeric ids are preferred because they survive renames;
//   - number: CI_MERGE_REQUEST_IID (kind change_proposal);
//   - commit: CI_MERGE_REQUEST_SOURCE_BRANCH_SHA when set (merged-results pipelines check out
//     a merge commit), else CI_COMMIT_SHA.
//
// It fails when GITLAB_CI is not "true" or when a present value is malformed, naming the
// variable.
func CIDefaults(getenv func(string) string) (CIEnv, error) {
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	if get("GITLAB_CI") != "true" {
		return CIEnv{}, errors.New("gitlab ci: GITLAB_CI is not \"true\": not running in a GitLab CI job")
	}
	var e CIEnv
	e.Ref.Forge = "gitlab"
	e.ServerURL = get("CI_SERVER_URL")
	switch api := get("CI_API_V4_URL"); {
	case api != "":
		e.Ref.APIURL = api
	case e.ServerURL != "":
		e.Ref.APIURL = strings.TrimSuffix(e.ServerURL, "/") + "/api/v4"
	default:
		return CIEnv{}, errors.New("gitlab ci: CI_API_V4_URL and CI_SERVER_URL: both unset")
	}
	if _, err := parseAPIURL(e.Ref.APIURL); err != nil {
		return CIEnv{}, fmt.Errorf("gitlab ci: api url: %w", err)
	}
	iid := get("CI_MERGE_REQUEST_IID")
	if iid != "" {
		n, err := strconv.Atoi(iid)
		if err != nil || n < 1 || !numericID.MatchString(iid) {
			return CIEnv{}, fmt.Errorf("gitlab ci: CI_MERGE_REQUEST_IID %q: must be a positive integer", iid)
		}
		e.Ref.Number = n
		e.Kind = acquisition.KindChangeProposal
	}
	for _, k := range projectVars(iid != "") {
		v := get(k)
		if v == "" {
			continue
		}
		if k != "CI_PROJECT_PATH" && !numericID.MatchString(v) {
			return CIEnv{}, fmt.Errorf("gitlab ci: %s %q: must be a positive integer", k, v)
		}
		e.Ref.Repo = v
		break
	}
	if e.Ref.Repo == "" {
		return CIEnv{}, errors.New("gitlab ci: CI_PROJECT_ID and CI_PROJECT_PATH: both unset")
	}
	e.JobURL = get("CI_JOB_URL")
	e.CommitSHA = get("CI_MERGE_REQUEST_SOURCE_BRANCH_SHA")
	if e.CommitSHA == "" {
		e.CommitSHA = get("CI_COMMIT_SHA")
	}
	if e.CommitSHA != "" && !validSHA(e.CommitSHA) {
		return CIEnv{}, fmt.Errorf("gitlab ci: commit sha %q: must be a lowercase Git object id", e.CommitSHA)
	}
	switch {
	case getenv("GITLAB_TOKEN") != "":
		e.TokenEnv = "GITLAB_TOKEN"
	case getenv("CI_JOB_TOKEN") != "":
		e.TokenEnv = "CI_JOB_TOKEN"
	}
	return e, nil
}

func projectVars(mr bool) []string {
	if mr {
		return []string{"CI_MERGE_REQUEST_PROJECT_ID", "CI_PROJECT_ID", "CI_PROJECT_PATH"}
	}
	return []string{"CI_PROJECT_ID", "CI_PROJECT_PATH"}
}
