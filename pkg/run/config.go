package run

import (
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/forgectx/forgectx/pkg/acquisition"
	"github.com/forgectx/forgectx/pkg/forge"
	"github.com/forgectx/forgectx/pkg/harness"
	"github.com/forgectx/forgectx/pkg/stage"
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
}

var gitOID = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

// resolve validates o and fills the defaults: the forge from the registry (detected from the
// CI environment unless --forge names it), its CI defaults, then the forge-neutral rules.
// Every problem is a *ConfigError or *forge.ConfigError (exit 2).
func resolve(o *Options, start time.Time) (*config, error) {
	getenv := o.Getenv
	c := &config{actions: getenv("GITHUB_ACTIONS") == "true"}
	h := o.Harness
	if h == nil {
		if o.HarnessPath == "" {
			return nil, &ConfigError{Field: "--harness", Rule: "required"}
		}
		var err error
		if h, err = harness.Load(o.HarnessPath); err != nil {
			return nil, &ConfigError{Field: "--harness " + o.HarnessPath, Rule: "invalid", Err: err}
		}
	}
	c.h = h
	fg := o.Forge
	if fg == "" {
		fg = forge.Detect(getenv)
	}
	p, err := forge.Resolve("--forge", fg)
	if err != nil {
		return nil, err
	}
	c.provider = p
	job, err := p.CIDefaults(forge.JobInput{Getenv: getenv, Start: start, Log: o.Log, Repo: o.Repo, APIURL: o.APIURL,
		Number: o.Number, CommentAuthor: o.CommentAuthor, CommentAuthorID: o.CommentAuthorID})
	if err != nil {
		return nil, err
	}
	c.ref, c.kind, c.tokenEnv, c.author, c.selfID = job.Ref, job.Kind, job.TokenEnv, job.CommentAuthor, job.CommentAuthorID
	c.headSHA, c.runURL, c.receipt, c.summary = job.HeadSHA, job.RunURL, job.ReceiptID, job.Summary
	if c.ref.Number < 1 {
		return nil, &ConfigError{Field: "--number", Rule: "required: a positive issue, pull request or merge request number (default: from the CI job)"}
	}
	if o.Kind != "" {
		c.kind = o.Kind
	}
	if c.kind == "" && len(h.Profiles) == 1 {
		for k := range h.Profiles {
			c.kind = k
		}
	}
	if c.kind == "" {
		return nil, &ConfigError{Field: "--kind", Rule: "cannot tell from the CI job whether #" + strconv.Itoa(c.ref.Number) + " is an issue or a pull/merge request; pass work_item or change_proposal"}
	}
	if c.kind != acquisition.KindWorkItem && c.kind != acquisition.KindChangeProposal {
		return nil, &ConfigError{Field: "--kind", Rule: "must be work_item or change_proposal"}
	}
	prof, err := h.ProfileFor(c.kind)
	if err != nil {
		return nil, &ConfigError{Field: "--harness", Rule: "no collection profile for this entity", Err: err}
	}
	c.profile = prof

	if o.TokenEnv != "" {
		c.tokenEnv = o.TokenEnv
	}
	c.token = getenv(c.tokenEnv)
	if c.token == "" {
		return nil, &ConfigError{Field: "--token-env " + c.tokenEnv, Rule: "the environment variable is unset or empty"}
	}
	// The same refusal as harness.Load, again here with the token variable actually used and
	// for a Harness built in code (Options.Harness).
	if err := h.CheckAgentEnv(c.tokenEnv); err != nil {
		return nil, err
	}
	if o.HeadSHA != "" {
		// An explicit --head-sha must be a Git object ID (either hex case); a CI default that
		// is not one is omitted from the receipt.
		c.headSHA = strings.ToLower(o.HeadSHA)
		if !gitOID.MatchString(c.headSHA) {
			return nil, &ConfigError{Field: "--head-sha", Rule: "must be a 40- or 64-digit hex Git object ID"}
		}
	}
	if !gitOID.MatchString(c.headSHA) {
		c.headSHA = ""
	}
	if c.runURL != "" && !strings.HasPrefix(c.runURL, "https://") && !strings.HasPrefix(c.runURL, "http://") {
		c.runURL = ""
	}

	c.base, c.state = stagePlaces(o)
	for _, dir := range []*string{&c.base, &c.state} {
		abs, err := filepath.Abs(*dir)
		if err != nil {
			return nil, &ConfigError{Field: "--tree-dir/--state-dir", Rule: "cannot be made absolute", Err: err}
		}
		*dir = abs
		forbidden := map[string]string{"$GITHUB_WORKSPACE": getenv("GITHUB_WORKSPACE"), "$CI_PROJECT_DIR": getenv("CI_PROJECT_DIR")}
		for _, a := range o.ArtifactDirs {
			forbidden["--artifacts-dir "+a] = a
		}
		for _, name := range sortedKeys(forbidden) {
			ws := forbidden[name]
			if ws == "" {
				continue
			}
			if wabs, err := filepath.Abs(ws); err == nil && within(abs, wabs) {
				return nil, &ConfigError{Field: "--tree-dir/--state-dir", Rule: "must lie outside " + name + ": snapshot trees never land in the checkout or uploaded output"}
			}
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

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
