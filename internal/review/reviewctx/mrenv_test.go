package reviewctx

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/test/httpfake"
)

// mrPipelineEnv adds the GitLab merge-request pipeline variables of the fixtures' merge
// request (project 42, IID 7, head fxHead) to base; over replaces (or, with "", removes) some.
func mrPipelineEnv(base Env, over map[string]string) Env {
	vars := map[string]string{EnvGitLabCI: "true", EnvPipelineSource: "merge_request_event",
		EnvMRProjectID: "42", EnvMRIID: "7", EnvMRSourceSHA: fxHead}
	for k, v := range over {
		vars[k] = v
	}
	return func(n string) (string, bool) {
		if v, ok := vars[n]; ok {
			return v, v != ""
		}
		if base != nil {
			return base(n)
		}
		return "", false
	}
}

// Spec: enriched "requires a validated GitLab merge-request environment". Every missing or
// contradictory pipeline variable stops the run after the merge request is read (to compare
// against it) and before the policy or any source is read; the error names the variable and
// never its value. metadata needs no pipeline.
func TestEnrichedRequiresValidatedMergeRequestEnvironment(t *testing.T) {
	for _, tc := range []struct {
		name string
		over map[string]string
		want string
	}{
		{"no pipeline at all", map[string]string{EnvGitLabCI: "", EnvPipelineSource: "", EnvMRProjectID: "", EnvMRIID: "", EnvMRSourceSHA: ""}, EnvGitLabCI + ": unset"},
		{"not a merge request pipeline", map[string]string{EnvPipelineSource: "push"}, EnvPipelineSource + ": must be exactly merge_request_event"},
		{"GITLAB_CI not true", map[string]string{EnvGitLabCI: "yes"}, EnvGitLabCI + ": must be exactly true"},
		{"project missing", map[string]string{EnvMRProjectID: ""}, EnvMRProjectID + ": unset"},
		{"project contradicts", map[string]string{EnvMRProjectID: "43"}, EnvMRProjectID + ": contradicts"},
		{"project not decimal", map[string]string{EnvMRProjectID: "042"}, EnvMRProjectID + ": must be a positive decimal integer"},
		{"iid missing", map[string]string{EnvMRIID: ""}, EnvMRIID + ": unset"},
		{"iid contradicts", map[string]string{EnvMRIID: "8"}, EnvMRIID + ": contradicts"},
		{"source sha missing", map[string]string{EnvMRSourceSHA: ""}, EnvMRSourceSHA + " (or CI_COMMIT_SHA in a detached merge request pipeline): unset"},
		{"detached pipeline head contradicts", map[string]string{EnvMRSourceSHA: "", EnvCommitSHA: strings.Repeat("a", 40)}, EnvCommitSHA + ": contradicts"},
		{"source sha contradicts", map[string]string{EnvMRSourceSHA: strings.Repeat("a", 40)}, EnvMRSourceSHA + ": contradicts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeGL(t)
			f.Expect("GET", api+"/merge_requests/7", httpfake.JSON(200, fx(t, "merge_request")))
			f.Expect("GET", api+"/repository/branches/main", httpfake.JSON(200, fx(t, "branch_main")))
			_, err := Acquire(context.Background(), f.edge(t), AcquireOptions{Mode: ModeEnriched, Protection: protectionRequired,
				StoreDir: t.TempDir() + "/s", Env: mrPipelineEnv(nil, tc.over)})
			if !errors.Is(err, ErrMREnvironment) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want ErrMREnvironment naming %q", err, tc.want)
			}
			if strings.Contains(err.Error(), strings.Repeat("a", 40)) || strings.Contains(err.Error(), "043") {
				t.Fatal("the error echoes a value")
			}
		})
	}
}

// A detached merge request pipeline has no CI_MERGE_REQUEST_SOURCE_BRANCH_SHA; its
// CI_COMMIT_SHA is the source head. A merged-results pipeline's CI_COMMIT_SHA is the merge
// commit and is not read when the source-branch variable is set.
func TestMREnvironmentSourceHeadPerPipelineKind(t *testing.T) {
	tg := Target{ProjectID: 42, IID: 7, ReviewedHead: fxHead}
	if err := checkMREnvironment(mrPipelineEnv(nil, nil), tg); err != nil {
		t.Fatalf("merged-results pipeline: %v", err)
	}
	if err := checkMREnvironment(mrPipelineEnv(nil, map[string]string{EnvMRSourceSHA: "", EnvCommitSHA: fxHead}), tg); err != nil {
		t.Fatalf("detached pipeline: %v", err)
	}
	merge := strings.Repeat("c", 40)
	if err := checkMREnvironment(mrPipelineEnv(nil, map[string]string{EnvCommitSHA: merge}), tg); err != nil {
		t.Fatalf("merged-results pipeline with its merge commit: %v", err)
	}
}
