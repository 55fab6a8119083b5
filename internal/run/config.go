package run

import (
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/internal/run/harness"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/internal/snapshot/stage"
)

// config is Options resolved against the environment: everything a run needs, validated
// before anything is posted.
type config struct {
	h        *harness.Harness
	ref      forge.Ref
	kind     string
	profile  acquisition.Profile
	token    string
	tokenEnv string
	author   string
	headSHA  string
	runURL   string
	receipt  string // receipt id
	base     string // stage Base: host tree and sandbox copy
	state    string // stage state root
	actions  bool   // running under GitHub Actions (or Forgejo Actions' compatibility)
	summary  bool   // write $GITHUB_STEP_SUMMARY
	selfID   int64  // Forgejo: the token's user id (0: GET /user)
	provider forge.Provider
	replayer *cassette.Replayer // --replay: every forge read answered from the cassette
}

var gitOID = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

// resolve validates o and fills the defaults: the forge from the registry (detected from the
// CI environment unless --forge names it), its CI defaults, then the forge-neutral rules.
// Every problem is a *ConfigError or *forge.ConfigError (exit 2).
func resolve(o *Options, start time.Time) (*config, error) {
	c := &config{actions: o.Getenv("GITHUB_ACTIONS") == "true"}
	for _, step := range []func(*Options, *config, time.Time) error{resolveHarness, replayStep, resolveJob, resolveKind, resolveToken, resolveHeadSHA, resolvePlaces} {
		if err := step(o, c, start); err != nil {
			return nil, err
		}
	}
	if _, err := stage.ParseMode(string(o.Immutability)); err != nil {
		return nil, &ConfigError{Field: "--immutability", Rule: "must be auto, ownership or bind-mount"}
	}
	if (o.AgentUID != 0) != (o.AgentGID != 0) || o.AgentUID < 0 || o.AgentGID < 0 {
		return nil, &ConfigError{Field: "--agent-uid/--agent-gid", Rule: "give both, as positive numbers"}
	}
	return c, nil
}

// resolveHarness loads the harness (Options.Harness, else --harness).
func resolveHarness(o *Options, c *config, _ time.Time) error {
	c.h = o.Harness
	if c.h != nil {
		return nil
	}
	if o.HarnessPath == "" {
		return &ConfigError{Field: "--harness", Rule: "required"}
	}
	h, err := harness.Load(o.HarnessPath)
	if err != nil {
		return &ConfigError{Field: "--harness " + o.HarnessPath, Rule: "invalid", Err: err}
	}
	c.h = h
	return nil
}

// replayStep is resolveReplay as a resolve step.
func replayStep(o *Options, c *config, _ time.Time) error { return resolveReplay(o, c) }

// resolveJob asks the forge's provider for the CI defaults of the run (the flags win).
func resolveJob(o *Options, c *config, start time.Time) error {
	fg := o.Forge
	if fg == "" {
		fg = forge.Detect(o.Getenv)
	}
	p, err := forge.Resolve("--forge", fg)
	if err != nil {
		return err
	}
	c.provider = p
	job, err := p.CIDefaults(forge.JobInput{Getenv: o.Getenv, Start: start, Log: o.Log, Repo: o.Repo, APIURL: o.APIURL,
		Number: o.Number, CommentAuthor: o.CommentAuthor, CommentAuthorID: o.CommentAuthorID})
	if err != nil {
		return err
	}
	c.ref, c.kind, c.tokenEnv, c.author, c.selfID = job.Ref, job.Kind, job.TokenEnv, job.CommentAuthor, job.CommentAuthorID
	c.headSHA, c.runURL, c.receipt, c.summary = job.HeadSHA, job.RunURL, job.ReceiptID, job.Summary
	if c.ref.Number < 1 {
		return &ConfigError{Field: "--number", Rule: "required: a positive issue, pull request or merge request number (default: from the CI job)"}
	}
	if c.runURL != "" && !strings.HasPrefix(c.runURL, "https://") && !strings.HasPrefix(c.runURL, "http://") {
		c.runURL = ""
	}
	return nil
}

// resolveKind settles the entity kind (--kind, the CI job, else the harness's only profile)
// and its collection profile.
func resolveKind(o *Options, c *config, _ time.Time) error {
	if o.Kind != "" {
		c.kind = o.Kind
	}
	if c.kind == "" && len(c.h.Profiles) == 1 {
		for k := range c.h.Profiles {
			c.kind = k
		}
	}
	if c.kind == "" {
		return &ConfigError{Field: "--kind", Rule: "cannot tell from the CI job whether #" + strconv.Itoa(c.ref.Number) + " is an issue or a pull/merge request; pass work_item or change_proposal"}
	}
	if c.kind != acquisition.KindWorkItem && c.kind != acquisition.KindChangeProposal {
		return &ConfigError{Field: "--kind", Rule: "must be work_item or change_proposal"}
	}
	prof, err := c.h.ProfileFor(c.kind)
	if err != nil {
		return &ConfigError{Field: "--harness", Rule: "no collection profile for this entity", Err: err}
	}
	c.profile = prof
	return nil
}

// resolveToken reads the token from --token-env (default: the CI job's variable).
func resolveToken(o *Options, c *config, _ time.Time) error {
	if o.TokenEnv != "" {
		c.tokenEnv = o.TokenEnv
	}
	c.token = o.Getenv(c.tokenEnv)
	if c.token == "" && c.replayer != nil {
		// Offline: nothing is sent, so no token is needed. A token that is set is still
		// withheld from the agent and redacted like in a live run.
		c.token = offlineToken
	}
	if c.token == "" {
		return &ConfigError{Field: "--token-env " + c.tokenEnv, Rule: "the environment variable is unset or empty"}
	}
	// The same refusal as harness.Load, again here with the token variable actually used and
	// for a Harness built in code (Options.Harness).
	return c.h.CheckAgentEnv(c.tokenEnv)
}

// resolveHeadSHA: an explicit --head-sha must be a Git object ID (either hex case); a CI
// default that is not one is omitted from the receipt.
func resolveHeadSHA(o *Options, c *config, _ time.Time) error {
	if o.HeadSHA != "" {
		c.headSHA = strings.ToLower(o.HeadSHA)
		if !gitOID.MatchString(c.headSHA) {
			return &ConfigError{Field: "--head-sha", Rule: "must be a 40- or 64-digit hex Git object ID"}
		}
	}
	if !gitOID.MatchString(c.headSHA) {
		c.headSHA = ""
	}
	return nil
}

// resolvePlaces makes the tree and state directories absolute and refuses any inside the
// workspace or a retained artifact directory.
func resolvePlaces(o *Options, c *config, _ time.Time) error {
	c.base, c.state = stagePlaces(o)
	forbidden := map[string]string{"$GITHUB_WORKSPACE": o.Getenv("GITHUB_WORKSPACE"), "$CI_PROJECT_DIR": o.Getenv("CI_PROJECT_DIR")}
	for _, a := range o.ArtifactDirs {
		forbidden["--artifacts-dir "+a] = a
	}
	for _, dir := range []*string{&c.base, &c.state} {
		abs, err := filepath.Abs(*dir)
		if err != nil {
			return &ConfigError{Field: "--tree-dir/--state-dir", Rule: "cannot be made absolute", Err: err}
		}
		*dir = abs
		for _, name := range sortedKeys(forbidden) {
			ws := forbidden[name]
			if ws == "" {
				continue
			}
			if wabs, err := filepath.Abs(ws); err == nil && within(abs, wabs) {
				return &ConfigError{Field: "--tree-dir/--state-dir", Rule: "must lie outside " + name + ": snapshot trees never land in the checkout or uploaded output"}
			}
		}
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
