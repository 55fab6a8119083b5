package harness

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

func TestExampleHarnessLoads(t *testing.T) {
	h, err := Load("../../../examples/harness/triage.yml")
	if err != nil {
		t.Fatal(err)
	}
	if h.Agent.Name != "triage" || h.Agent.Category != CategoryObservation || h.Agent.Timeout != 30*time.Minute {
		t.Errorf("agent = %+v", h.Agent)
	}
	if h.PreScript == nil || h.PreScript.Timeout != 2*time.Minute || h.PostScript != nil {
		t.Errorf("scripts = %+v %+v", h.PreScript, h.PostScript)
	}
	p, err := h.ProfileFor(acquisition.KindChangeProposal)
	if err != nil || p.EntityKind != acquisition.KindChangeProposal || !p.Includes("check_logs") {
		t.Errorf("change_proposal profile = %+v, %v", p, err)
	}
	if strings.Join(p.IncludedSources, ",") != "agent_runs,check_logs,checks,comments,entity,reviews" {
		t.Errorf("sources not sorted: %v", p.IncludedSources)
	}
	if len(h.Bots) != 1 || h.Bots[0].BotRole != "triage" || h.TotalTimeout != 45*time.Minute {
		t.Errorf("bots/timeouts = %+v %v", h.Bots, h.TotalTimeout)
	}
}

const minimal = `version: 1
agent:
  name: a
  category: mutation
  command: [true]
profiles:
  work_item:
    included_sources: [entity, comments]
    record_selection: oldest
    check_log_selection: none
    bounds: {max_records_per_source: 1, max_source_bytes: 1, max_record_bytes: 1, max_log_bytes: 1, max_metadata_string_bytes: 1, max_labels: 0}
`

func TestMinimalHarnessDefaults(t *testing.T) {
	h, err := Read(strings.NewReader(minimal))
	if err != nil {
		t.Fatal(err)
	}
	if h.PreScript != nil || h.Agent.Timeout != DefaultAgentTimeout || h.TotalTimeout != DefaultTotalTimeout {
		t.Errorf("defaults: %+v", h)
	}
	if _, err := h.ProfileFor(acquisition.KindChangeProposal); err == nil || !strings.Contains(err.Error(), "profiles.change_proposal") {
		t.Errorf("missing profile: %v", err)
	}
}

// Every validation error names the field and the rule, and never echoes a value.
func TestValidationErrorsNameFieldAndRule(t *testing.T) {
	const secretish = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	cases := []struct{ name, doc, field string }{
		{"missing version", strings.Replace(minimal, "version: 1\n", "", 1), "version"},
		{"bad version", strings.Replace(minimal, "version: 1", "version: 2", 1), "version"},
		{"unknown key", minimal + "extra: " + secretish + "\n", "unknown key extra"},
		{"bad category", strings.Replace(minimal, "mutation", secretish, 1), "agent.category"},
		{"bad name", strings.Replace(minimal, "name: a", "name: "+"\"a b\"", 1), "agent.name"},
		{"empty command", strings.Replace(minimal, "command: [true]", "command: []", 1), "agent.command"},
		{"bad timeout", strings.Replace(minimal, "command: [true]", "command: [true]\n  timeout: "+secretish, 1), "agent.timeout"},
		{"token to agent", strings.Replace(minimal, "command: [true]", "command: [true]\n  env: [GITHUB_TOKEN]", 1), "agent.env[0]"},
		{"secret to agent", strings.Replace(minimal, "command: [true]", "command: [true]\n  env: [API_KEY]", 1) + "secrets: [API_KEY]\n", "agent.env[0]"},
		{"bad env name", strings.Replace(minimal, "command: [true]", "command: [true]\n  env: [\"A-B\"]", 1), "agent.env[0]"},
		{"work item selects checks", strings.Replace(minimal, "[entity, comments]", "[entity, checks]", 1), "profiles.work_item.included_sources"},
		{"bad profile kind", strings.Replace(minimal, "work_item:", "conversation:", 1), "profiles.conversation"},
		{"no profiles", strings.SplitN(minimal, "profiles:", 2)[0], "profiles"},
		{"bad bounds", strings.Replace(minimal, "max_record_bytes: 1,", "max_record_bytes: 0,", 1), "profiles.work_item.bounds.max_record_bytes"},
		{"wrong type", strings.Replace(minimal, "command: [true]", "command: "+secretish, 1), "line"},
		{"bad total", minimal + "timeouts: {total: -1m}\n", "timeouts.total"},
		{"bot without role", minimal + "bots: [{id: B_1, login: x}]\n", "bots[0]"},
		{"two documents", minimal + "---\nversion: 1\n", "exactly one"},
		{"duplicate key", minimal + "version: 1\n", "duplicate key version"},
		{"duplicate nested key", strings.Replace(minimal, "name: a", "name: a\n  name: "+secretish, 1), "duplicate key name"},
		{"empty", "", "empty"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(c.doc))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), c.field) {
				t.Errorf("error %q does not name %q", err, c.field)
			}
			if strings.Contains(err.Error(), secretish) {
				t.Errorf("error echoes a value: %q", err)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	if _, err := Load("/nonexistent/harness.yml"); err == nil || !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("missing file: %v", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

func FuzzRead(f *testing.F) {
	f.Add(minimal)
	f.Add("version: 1\nagent: [1]\n")
	f.Fuzz(func(t *testing.T, doc string) {
		h, err := Read(strings.NewReader(doc))
		if err != nil {
			return
		}
		if h.Agent.Name == "" || len(h.Agent.Command) == 0 || len(h.Profiles) == 0 {
			t.Fatalf("accepted an incomplete harness: %+v", h)
		}
	})
}

// The agent runs without forge tokens: every common name a forge or CI credential travels
// under is refused in agent.env, whatever its case; ordinary variables and the agent's own
// model key are not.
func TestForgeCredentialNamesRefusedInAgentEnv(t *testing.T) {
	refused := []string{
		"GITHUB_TOKEN", "GH_TOKEN", "github_token", "Gh_Token", "GH_ENTERPRISE_TOKEN", "GITHUB_PAT",
		"INPUT_TOKEN", "INPUT_GITHUB_TOKEN", "INPUT_GITHUB-TOKEN", "INPUT_REPO_TOKEN",
		"ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL",
		"CI_JOB_TOKEN", "CI_JOB_JWT", "CI_JOB_JWT_V2", "CI_REGISTRY_PASSWORD", "GITLAB_TOKEN", "GL_TOKEN",
		"FORGEJO_TOKEN", "GITEA_TOKEN", "GITHUB_APP_PRIVATE_KEY", "GH_AUTH", "RUNNER_TOKEN",
	}
	allowed := []string{"PATH", "HOME", "ANTHROPIC_API_KEY", "MODEL_TOKEN", "GITHUB_SHA", "GITHUB_REPOSITORY",
		"RUNNER_TEMP", "INPUT_HARNESS", "ACTIONS_RUNTIME_URL", "CI_PROJECT_DIR", "TOKEN_COPY", "GITHUB_TOKENIZER_MODE"}
	for _, n := range refused {
		if !IsForgeCredentialName(n) {
			t.Errorf("IsForgeCredentialName(%q) = false", n)
		}
		if !envName.MatchString(n) {
			continue // a hyphenated name cannot even be listed
		}
		doc := strings.Replace(minimal, "command: [true]", "command: [true]\n  env: [PATH, "+n+"]", 1)
		_, err := Read(strings.NewReader(doc))
		var he *Error
		if !errors.As(err, &he) || he.Field != "agent.env[1]" {
			t.Errorf("agent.env [PATH, %s]: err = %v, want a refusal naming agent.env[1]", n, err)
		}
	}
	for _, n := range allowed {
		if IsForgeCredentialName(n) {
			t.Errorf("IsForgeCredentialName(%q) = true", n)
		}
		doc := strings.Replace(minimal, "command: [true]", "command: [true]\n  env: ["+n+"]", 1)
		if _, err := Read(strings.NewReader(doc)); err != nil {
			t.Errorf("agent.env [%s]: %v", n, err)
		}
	}
}

// CheckAgentEnv is the one rule harness.Load and forgectx run share: it also refuses the
// variable forgectx run reads the token from and a registered secret, in a Harness built in
// code.
func TestCheckAgentEnvRefusesTokenVariableAndSecrets(t *testing.T) {
	h := &Harness{Agent: Agent{Env: []string{"PATH", "MY_BOT_PAT"}}, Secrets: []string{"MODEL_KEY"}}
	if err := h.CheckAgentEnv("MY_BOT_PAT"); err == nil || !strings.Contains(err.Error(), "agent.env[1]") {
		t.Errorf("token variable: %v", err)
	}
	if err := h.CheckAgentEnv("OTHER"); err != nil {
		t.Errorf("unrelated token variable: %v", err)
	}
	h.Agent.Env = []string{"MODEL_KEY"}
	if err := h.CheckAgentEnv(""); err == nil || !strings.Contains(err.Error(), "agent.env[0]") {
		t.Errorf("registered secret: %v", err)
	}
	h.Agent.Env = []string{"INPUT_TOKEN"}
	if err := h.CheckAgentEnv(""); err == nil {
		t.Error("INPUT_TOKEN accepted in a Harness built in code")
	}
}
