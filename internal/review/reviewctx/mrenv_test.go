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
	vars := map[string]string{envGitLabCI: "true", envPipelineSource: "merge_request_event",
		envMRProjectID: "42", envMRIID: "7", envMRSourceSHA: fxHead}
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
		{"no pipeline at all", map[string]string{envGitLabCI: "", envPipelineSource: "", envMRProjectID: "", envMRIID: "", envMRSourceSHA: ""}, envGitLabCI + ": unset"},
		{"not a merge request pipeline", map[string]string{envPipelineSource: "push"}, envPipelineSource + ": must be exactly merge_request_event"},
		{"GITLAB_CI not true", map[string]string{envGitLabCI: "yes"}, envGitLabCI + ": must be exactly true"},
		{"project missing", map[string]string{envMRProjectID: ""}, envMRProjectID + ": unset"},
		{"project contradicts", map[string]string{envMRProjectID: "43"}, envMRProjectID + ": contradicts"},
		{"project not decimal", map[string]string{envMRProjectID: "042"}, envMRProjectID + ": must be a positive decimal integer"},
		{"iid missing", map[string]string{envMRIID: ""}, envMRIID + ": unset"},
		{"iid contradicts", map[string]string{envMRIID: "8"}, envMRIID + ": contradicts"},
		{"source sha missing", map[string]string{envMRSourceSHA: ""}, envMRSourceSHA + " (or CI_COMMIT_SHA in a detached merge request pipeline): unset"},
		{"detached pipeline head contradicts", map[string]string{envMRSourceSHA: "", envCommitSHA: strings.Repeat("a", 40)}, envCommitSHA + ": contradicts"},
		{"source sha contradicts", map[string]string{envMRSourceSHA: strings.Repeat("a", 40)}, envMRSourceSHA + ": contradicts"},
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
	if err := checkMREnvironment(mrPipelineEnv(nil, map[string]string{envMRSourceSHA: "", envCommitSHA: fxHead}), tg); err != nil {
		t.Fatalf("detached pipeline: %v", err)
	}
	merge := strings.Repeat("c", 40)
	if err := checkMREnvironment(mrPipelineEnv(nil, map[string]string{envCommitSHA: merge}), tg); err != nil {
		t.Fatalf("merged-results pipeline with its merge commit: %v", err)
	}
}
