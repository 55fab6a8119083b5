package ship

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// actionFile is the part of action.yml the wrappers' contract lives in.
type actionFile struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Author      string `yaml:"author"`
	Branding    struct {
		Icon  string `yaml:"icon"`
		Color string `yaml:"color"`
	} `yaml:"branding"`
	Inputs map[string]struct {
		Description string  `yaml:"description"`
		Required    bool    `yaml:"required"`
		Default     *string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Description string `yaml:"description"`
		Value       string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string       `yaml:"using"`
		Steps []actionStep `yaml:"steps"`
	} `yaml:"runs"`
}

type actionStep struct {
	ID    string            `yaml:"id"`
	Name  string            `yaml:"name"`
	If    string            `yaml:"if"`
	Uses  string            `yaml:"uses"`
	Shell string            `yaml:"shell"`
	Run   string            `yaml:"run"`
	Env   map[string]string `yaml:"env"`
}

// componentSpec is the header document of templates/forgectx.yml.
type componentSpec struct {
	Spec struct {
		Inputs map[string]struct {
			Type        string   `yaml:"type"`
			Default     *string  `yaml:"default"`
			Description string   `yaml:"description"`
			Options     []string `yaml:"options"`
			Regex       string   `yaml:"regex"`
		} `yaml:"inputs"`
	} `yaml:"spec"`
}

type componentJob struct {
	Stage string `yaml:"stage"`
	Image struct {
		Name       string   `yaml:"name"`
		Entrypoint []string `yaml:"entrypoint"`
	} `yaml:"image"`
	Variables map[string]string `yaml:"variables"`
	Script    []string          `yaml:"script"`
	Artifacts struct {
		Reports map[string]string `yaml:"reports"`
	} `yaml:"artifacts"`
}

func loadAction(t testing.TB) actionFile {
	t.Helper()
	var a actionFile
	dec := yaml.NewDecoder(bytes.NewReader([]byte(readFile(t, filepath.Join(root, "action.yml")))))
	dec.KnownFields(true)
	if err := dec.Decode(&a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	return a
}

const componentPath = "templates/forgectx.yml"

func loadComponent(t testing.TB) (componentSpec, map[string]componentJob) {
	t.Helper()
	return loadComponentFile(t, componentPath)
}

// loadComponentFile reads a component's spec and job documents.
func loadComponentFile(t testing.TB, path string) (componentSpec, map[string]componentJob) {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader([]byte(readFile(t, filepath.Join(root, path)))))
	var spec componentSpec
	if err := dec.Decode(&spec); err != nil {
		t.Fatalf("%s spec: %v", path, err)
	}
	jobs := map[string]componentJob{}
	if err := dec.Decode(&jobs); err != nil {
		t.Fatalf("%s jobs: %v", path, err)
	}
	return spec, jobs
}

// Inputs that are wrapper plumbing, not `forgectx run` flags.
var (
	actionPlumbing    = []string{"download-url", "sha256", "sudo", "token", "version"}
	componentPlumbing = []string{"image", "job-name", "stage", "version"}
)

// Flags deliberately without an input, with the reason. Each must still be a real flag.
var (
	actionFixed = map[string]string{
		"state-dir":     "the action keeps forgectx's private state in $RUNNER_TEMP (run's default), outside the workspace",
		"tree-dir":      "the action keeps snapshot trees in $RUNNER_TEMP (run's default), outside the workspace",
		"token-env":     "the action passes the token input as FORGECTX_TOKEN",
		"dotenv":        "GitHub gets the decision in $GITHUB_OUTPUT (the step outputs); the dotenv report is GitLab's relay",
		"insecure-http": "never a wrapper input: the token in clear over a network is not something a copied workflow should be able to switch on (GitHub's API is https)",
		"replay":        "an offline try of a run against a recorded cassette (docs/run.md): a workflow step always reads the live forge",
	}
	componentFixed = map[string]string{
		"state-dir":     "the job keeps forgectx's private state in the default temporary directory, outside the project",
		"tree-dir":      "the job keeps snapshot trees in the default temporary directory, outside the project",
		"dotenv":        "the job writes the decision to forgectx.env, its artifacts:reports:dotenv file",
		"insecure-http": "never a component input: the token in clear over a network is not something a copied pipeline should be able to switch on",
		"replay":        "an offline try of a run against a recorded cassette (docs/run.md): a pipeline job always reads the live forge",
	}
)

// scriptFlag is a long option in a wrapper script.
var scriptFlag = regexp.MustCompile(`(?:^|[\s"(])--([a-z][a-z0-9-]*)`)

func flagsIn(script string) []string {
	seen := map[string]bool{}
	for _, m := range scriptFlag.FindAllStringSubmatch(script, -1) {
		seen[m[1]] = true
	}
	return sortedKeys(seen)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkMapping is the no-drift rule shared by both wrappers: every input is plumbing or a run
// flag; every run flag has an input or a stated reason; every fixed flag is real; the script
// passes only real flags, and passes each mapped input as its flag.
func checkMapping(t *testing.T, what string, inputs, plumbing []string, fixed map[string]string, flags []string, script string, wired func(input string) bool) {
	t.Helper()
	for _, in := range inputs {
		if contains(plumbing, in) {
			continue
		}
		if !contains(flags, in) {
			t.Errorf("%s: input %q is not a `forgectx run` flag (flags: %s)", what, in, strings.Join(flags, ", "))
			continue
		}
		if !contains(flagsIn(script), in) {
			t.Errorf("%s: input %q is never passed as --%s", what, in, in)
		}
		if !wired(in) {
			t.Errorf("%s: input %q does not reach the script", what, in)
		}
	}
	for _, f := range flags {
		if f == "help" || f == "h" {
			continue
		}
		if !contains(inputs, f) {
			if _, ok := fixed[f]; !ok {
				t.Errorf("%s: `forgectx run --%s` has no input", what, f)
			}
		}
	}
	for _, f := range sortedKeys(fixed) {
		if !contains(flags, f) {
			t.Errorf("%s: fixed flag %q is no longer a `forgectx run` flag", what, f)
		}
	}
	for _, f := range flagsIn(script) {
		if !contains(flags, f) {
			t.Errorf("%s: the script passes --%s, which `forgectx run` does not have", what, f)
		}
	}
}

func TestActionInputsMatchRunFlags(t *testing.T) {
	a := loadAction(t)
	flags := runFlags(t)
	if a.Runs.Using != "composite" {
		t.Fatalf("runs.using = %q, want composite", a.Runs.Using)
	}
	var runStep *actionStep
	for i := range a.Runs.Steps {
		if a.Runs.Steps[i].ID == "run" {
			runStep = &a.Runs.Steps[i]
		}
	}
	if runStep == nil {
		t.Fatal("action.yml has no step with id run")
	}
	inputs := sortedKeys(a.Inputs)
	for _, in := range inputs {
		if strings.TrimSpace(a.Inputs[in].Description) == "" {
			t.Errorf("input %q has no description", in)
		}
	}
	if !a.Inputs["harness"].Required {
		t.Error("input harness must be required: forgectx run refuses to start without --harness")
	}
	checkMapping(t, "action.yml", inputs, actionPlumbing, actionFixed, flags, runStep.Run, func(in string) bool {
		for _, v := range runStep.Env {
			if strings.TrimSpace(v) == "${{ inputs."+in+" }}" {
				return true
			}
		}
		return false
	})
	// The token reaches forgectx by name only.
	if runStep.Env["FORGECTX_TOKEN"] != "${{ inputs.token }}" || !strings.Contains(runStep.Run, "--token-env FORGECTX_TOKEN") {
		t.Error("the token input must reach forgectx as FORGECTX_TOKEN named by --token-env")
	}
}

// relayedKeys are the $GITHUB_OUTPUT keys forgectx run writes itself: the decision
// (docs/prescript.md, "Relay formats"; pkg/cirelay) and the run's own outputs (docs/run.md,
// "Outputs"; run.OutputStatus, run.OutputContextDir).
var relayedKeys = []string{"context-dir", "reason", "skip-reason", "skipped", "status"}

var (
	outputRef = regexp.MustCompile(`^\$\{\{ steps\.([a-z-]+)\.outputs\.([a-z-]+) \}\}$`)
	echoKey   = regexp.MustCompile(`echo "([a-z][a-z-]*)=`)
)

func TestActionOutputsAreRelayedOrWritten(t *testing.T) {
	a := loadAction(t)
	steps := map[string]actionStep{}
	for _, s := range a.Runs.Steps {
		steps[s.ID] = s
	}
	for _, want := range []string{"skipped", "skip-reason", "status", "context-dir"} {
		if _, ok := a.Outputs[want]; !ok {
			t.Errorf("action.yml lacks output %q", want)
		}
	}
	for _, name := range sortedKeys(a.Outputs) {
		o := a.Outputs[name]
		m := outputRef.FindStringSubmatch(o.Value)
		if m == nil {
			t.Errorf("output %q: value %q is not a step output", name, o.Value)
			continue
		}
		s, ok := steps[m[1]]
		if !ok {
			t.Errorf("output %q: no step %q", name, m[1])
			continue
		}
		written := map[string]bool{}
		for _, e := range echoKey.FindAllStringSubmatch(s.Run, -1) {
			written[e[1]] = true
		}
		if !written[m[2]] && !(m[1] == "run" && contains(relayedKeys, m[2])) {
			t.Errorf("output %q: step %q never writes %q", name, m[1], m[2])
		}
	}
}

func TestComponentInputsMatchRunFlags(t *testing.T) {
	spec, jobs := loadComponent(t)
	flags := runFlags(t)
	job, ok := jobs["$[[ inputs.job-name ]]"]
	if !ok || len(jobs) != 1 {
		t.Fatalf("%s: want exactly one job, named by the job-name input; have %v", componentPath, sortedKeys(jobs))
	}
	inputs := sortedKeys(spec.Spec.Inputs)
	checkInputDefaults(t, spec)
	script := strings.Join(job.Script, "\n")
	checkMapping(t, componentPath, inputs, componentPlumbing, componentFixed, flags, script, func(in string) bool {
		for _, v := range job.Variables {
			if strings.TrimSpace(v) == "$[[ inputs."+in+" ]]" {
				return true
			}
		}
		return false
	})
	if job.Artifacts.Reports["dotenv"] != "forgectx.env" || !strings.Contains(script, "--dotenv forgectx.env") {
		t.Error("the job must write its decision with --dotenv forgectx.env and report it as artifacts:reports:dotenv")
	}
	if !strings.HasPrefix(job.Image.Name, "$[[ inputs.image ]]:$[[ inputs.version ]]") {
		t.Errorf("job image %q must be built from the image and version inputs", job.Image.Name)
	}
}

// checkInputDefaults: every component input has a type and a description; harness and version
// are required (no default: GitLab then requires them, and guessing `latest` would run another
// release's image); every other input has a default within its options and regex.
func checkInputDefaults(t *testing.T, spec componentSpec) {
	t.Helper()
	for _, name := range sortedKeys(spec.Spec.Inputs) {
		in := spec.Spec.Inputs[name]
		if in.Type == "" || strings.TrimSpace(in.Description) == "" {
			t.Errorf("input %q: type and description are required", name)
		}
		// Required: the harness, and the image version (GitLab cannot default an input to the
		// component's own version, and guessing `latest` would run another release's image).
		if name == "harness" || name == "version" {
			if in.Default != nil {
				t.Errorf("input %s must have no default (GitLab then requires it)", name)
			}
			continue
		}
		if in.Default == nil {
			t.Errorf("input %q has no default", name)
			continue
		}
		if len(in.Options) > 0 && !contains(in.Options, *in.Default) {
			t.Errorf("input %q: default %q is not among its options", name, *in.Default)
		}
		if in.Regex != "" {
			re, err := regexp.Compile(in.Regex)
			if err != nil {
				t.Errorf("input %q: regex: %v", name, err)
			} else if !re.MatchString(*in.Default) {
				t.Errorf("input %q: default %q does not match its regex", name, *in.Default)
			}
		}
	}
}

// TestInputRegexesMatchGitLabValues checks the component's regexes accept and refuse what
// their descriptions promise.
func TestInputRegexesMatchGitLabValues(t *testing.T) {
	spec, _ := loadComponent(t)
	cases := []struct {
		input string
		value string
		ok    bool
	}{
		{"job-name", "forgectx", true}, {"job-name", "triage-agent_2", true}, {"job-name", "a b", false}, {"job-name", "x:", false},
		{"version", "latest", true}, {"version", "v1.2.3", true}, {"version", "1.2", false}, {"version", "v1.2.3; rm", false},
		{"number", "", true}, {"number", "42", true}, {"number", "0", false}, {"number", "4a", false},
		{"kind", "", true}, {"kind", "work_item", true}, {"kind", "issue", false},
		{"api-url", "https://gitlab.example.com/api/v4", true}, {"api-url", "ftp://x", false},
		{"token-env", "", true}, {"token-env", "GITLAB_TOKEN", true}, {"token-env", "A-B", false}, {"token-env", "1A", false},
		{"comment-author-id", "", true}, {"comment-author-id", "-2", true}, {"comment-author-id", "x", false},
		{"concurrency", "", true}, {"concurrency", "1", true}, {"concurrency", "8", true}, {"concurrency", "0", false}, {"concurrency", "9", false}, {"concurrency", "4; x", false},
		{"head-sha", "", true}, {"head-sha", strings.Repeat("a", 40), true}, {"head-sha", "main", false},
	}
	for _, c := range cases {
		in, ok := spec.Spec.Inputs[c.input]
		if !ok || in.Regex == "" {
			t.Errorf("input %q has no regex", c.input)
			continue
		}
		if got := regexp.MustCompile(in.Regex).MatchString(c.value); got != c.ok {
			t.Errorf("input %q regex on %q = %v, want %v", c.input, c.value, got, c.ok)
		}
	}
}

// TestNoExpressionInScripts: values reach scripts through env/variables only, so an input
// (an issue title in a workflow expression, say) can never become shell.
func TestNoExpressionInScripts(t *testing.T) {
	a := loadAction(t)
	for _, s := range a.Runs.Steps {
		if strings.Contains(s.Run, "${{") {
			t.Errorf("action.yml step %q splices an expression into its script", s.ID)
		}
		if s.Shell != "bash" {
			t.Errorf("action.yml step %q: shell %q, want bash", s.ID, s.Shell)
		}
	}
	_, jobs := loadComponent(t)
	for name, j := range jobs {
		for _, line := range j.Script {
			if strings.Contains(line, "$[[") {
				t.Errorf("%s job %q splices an input into its script", componentPath, name)
			}
		}
	}
	for _, p := range []string{"action.yml", componentPath} {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Error(err)
		}
	}
}
