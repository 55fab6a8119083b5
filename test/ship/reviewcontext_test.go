package ship

import (
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/forgectx/forgectx/internal/run/harness"
)

const reviewComponentPath = "templates/review-context.yml"

// Inputs of the review component that are not `forgectx review-context run` flags: wrapper
// plumbing and the three environment selectors (docs/review-context.md).
var (
	reviewPlumbing = []string{"auto-approve", "context-mode", "image", "job-name", "stage", "target-protection-mode", "version"}
	reviewFixed    = map[string]string{
		"preserve-private-artifacts": "a local diagnostic that forgectx refuses under GitLab CI merge request execution",
		"insecure-http":              "never a component input: the token in clear over a network is not something a copied pipeline should be able to switch on",
	}
	// reviewSelectors maps each selector input to the environment variable the job exports.
	reviewSelectors = map[string]string{
		"context-mode":           "OCR_REVIEW_CONTEXT_MODE",
		"target-protection-mode": "OCR_GITLAB_TARGET_PROTECTION_MODE",
		"auto-approve":           "OCR_AUTO_APPROVE",
	}
)

func loadReviewComponent(t testing.TB) (componentSpec, map[string]componentJob) {
	t.Helper()
	return loadComponentFile(t, reviewComponentPath)
}

// Every `forgectx review-context run` flag has an input of the same name (or a stated
// reason), every input is a flag, plumbing or a selector, and each reaches the script through
// a job variable, never spliced into the script.
func TestReviewContextComponentInputsMatchRunFlags(t *testing.T) {
	spec, jobs := loadReviewComponent(t)
	flags := commandFlags(t, "review-context", "run")
	job, ok := jobs["$[[ inputs.job-name ]]"]
	if !ok || len(jobs) != 1 {
		t.Fatalf("%s: want exactly one job named by the job-name input; have %v", reviewComponentPath, sortedKeys(jobs))
	}
	inputs := sortedKeys(spec.Spec.Inputs)
	checkInputDefaults(t, spec)
	script := strings.Join(job.Script, "\n")
	wired := func(in string) bool {
		for _, v := range job.Variables {
			if strings.TrimSpace(v) == "$[[ inputs."+in+" ]]" {
				return true
			}
		}
		return false
	}
	checkMapping(t, reviewComponentPath, inputs, reviewPlumbing, reviewFixed, flags, script, wired)
	for in, env := range reviewSelectors {
		if !wired(in) || !strings.Contains(script+"\n"+strings.Join(sortedKeys(job.Variables), "\n"), env) {
			t.Errorf("selector input %q does not reach %s", in, env)
		}
	}
	for _, line := range job.Script {
		if strings.Contains(line, "$[[") {
			t.Errorf("%s splices an input into its script", reviewComponentPath)
		}
	}
	if !strings.Contains(script, "review-context run") {
		t.Errorf("the job does not run forgectx review-context run")
	}
}

// The review example: its harness loads, has the snapshot profile and no scripts, and its
// pipeline includes the review component with inputs the component declares.
func TestReviewContextExample(t *testing.T) {
	h, err := harness.Load(filepath.Join(root, "examples", "gitlab", "review", "review.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.ProfileFor("change_proposal"); err != nil || h.PreScript != nil || h.PostScript != nil {
		t.Fatalf("review harness: profile %v, scripts %v %v", err, h.PreScript, h.PostScript)
	}
	var ci struct {
		Include []struct {
			Component string            `yaml:"component"`
			Inputs    map[string]string `yaml:"inputs"`
		} `yaml:"include"`
	}
	if err := yaml.Unmarshal([]byte(readFile(t, filepath.Join(root, "examples", "gitlab", "review", ".gitlab-ci.yml"))), &ci); err != nil {
		t.Fatal(err)
	}
	spec, _ := loadReviewComponent(t)
	if len(ci.Include) != 1 || !strings.Contains(ci.Include[0].Component, "/review-context@") {
		t.Fatalf("the example must include the review-context component: %+v", ci.Include)
	}
	for k, v := range ci.Include[0].Inputs {
		in, ok := spec.Spec.Inputs[k]
		if !ok {
			t.Errorf("example input %q is not a component input", k)
			continue
		}
		if len(in.Options) > 0 && !contains(in.Options, v) {
			t.Errorf("example input %s=%q is not among its options", k, v)
		}
	}
	if ci.Include[0].Inputs["auto-approve"] != "false" {
		t.Errorf("the enriched recipe keeps auto-approve false")
	}
}
