// Package harness loads and validates the harness file that drives `forgectx run`
// (docs/harness.md): the agent, its category (which sets the snapshot admission threshold),
// the pre- and post-scripts, the collection profiles, the bot registry, the secret environment
// variables registered with the filter, and the timeouts.
//
// Decoding is strict (unknown keys are errors) and every error names the field path and the
// rule, never a value: a harness can reference secrets by name and a message must not leak one.
package harness

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/forgectx/forgectx/internal/platform/inputfile"

	"go.yaml.in/yaml/v3"

	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// MaxFileBytes bounds a harness file.
const MaxFileBytes = 256 << 10

// Version is the harness file format version this package reads.
const Version = 1

// Default timeouts, used when the harness does not set one.
const (
	DefaultScriptTimeout = 10 * time.Minute
	DefaultAgentTimeout  = 60 * time.Minute
	DefaultTotalTimeout  = 90 * time.Minute
)

// Categories of an agent.
const (
	CategoryObservation = "observation"
	CategoryMutation    = "mutation"
)

// Harness is a validated harness file.
type Harness struct {
	Version    int
	Agent      Agent
	PreScript  *Script // nil: no pre-script (the decision is "proceed")
	PostScript *Script // nil: no post-script
	// Profiles holds the collection profile per entity kind the harness handles; a run on an
	// entity kind with no profile is a configuration error.
	Profiles map[string]acquisition.Profile
	Bots     []snapshot.BotIdentity
	// Secrets names environment variables whose literal values are registered with the filter
	// (redacted everywhere) and withheld from the agent.
	Secrets []string
	// TotalTimeout bounds the whole run.
	TotalTimeout time.Duration
}

// Agent is the agent command and its admission category.
type Agent struct {
	Name     string
	Category string
	Command  []string
	// Env names the host environment variables passed to the agent (never a forge token or a
	// registered secret; Load refuses those).
	Env     []string
	Timeout time.Duration
}

// Script is a pre- or post-script: argv, the host variables it receives, and its timeout.
type Script struct {
	Command []string
	Env     []string
	Timeout time.Duration
}

// Error is a harness validation error: the field path and the rule.
type Error struct {
	Field string
	Rule  string
}

func (e *Error) Error() string { return fmt.Sprintf("harness: %s: %s", e.Field, e.Rule) }

type fileDoc struct {
	Version    *int                `yaml:"version"`
	Agent      *agentDoc           `yaml:"agent"`
	PreScript  *scriptDoc          `yaml:"pre_script"`
	PostScript *scriptDoc          `yaml:"post_script"`
	Profiles   map[string]*profDoc `yaml:"profiles"`
	Bots       []botDoc            `yaml:"bots"`
	Secrets    []string            `yaml:"secrets"`
	Timeouts   *struct {
		Total string `yaml:"total"`
	} `yaml:"timeouts"`
}

type agentDoc struct {
	Name     string   `yaml:"name"`
	Category string   `yaml:"category"`
	Command  []string `yaml:"command"`
	Env      []string `yaml:"env"`
	Timeout  string   `yaml:"timeout"`
}

type scriptDoc struct {
	Command []string `yaml:"command"`
	Env     []string `yaml:"env"`
	Timeout string   `yaml:"timeout"`
}

type profDoc struct {
	IncludedSources   []string `yaml:"included_sources"`
	RecordSelection   string   `yaml:"record_selection"`
	CheckLogSelection string   `yaml:"check_log_selection"`
	Bounds            struct {
		MaxRecordsPerSource    int `yaml:"max_records_per_source"`
		MaxSourceBytes         int `yaml:"max_source_bytes"`
		MaxRecordBytes         int `yaml:"max_record_bytes"`
		MaxLogBytes            int `yaml:"max_log_bytes"`
		MaxMetadataStringBytes int `yaml:"max_metadata_string_bytes"`
		MaxLabels              int `yaml:"max_labels"`
	} `yaml:"bounds"`
}

type botDoc struct {
	ID      string `yaml:"id"`
	Login   string `yaml:"login"`
	BotRole string `yaml:"bot_role"`
}

var (
	agentName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	envName   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// forgeCredentialNames are the common names of forge and CI credentials (upper-cased).
var forgeCredentialNames = map[string]bool{
	"GITHUB_TOKEN": true, "GH_TOKEN": true, "GH_ENTERPRISE_TOKEN": true, "GITHUB_ENTERPRISE_TOKEN": true,
	"GITHUB_PAT": true, "GITLAB_TOKEN": true, "GL_TOKEN": true, "CI_JOB_TOKEN": true, "CI_JOB_JWT": true,
	"CI_JOB_JWT_V1": true, "CI_JOB_JWT_V2": true, "CI_REGISTRY_PASSWORD": true, "CI_DEPLOY_PASSWORD": true,
	"CI_DEPENDENCY_PROXY_PASSWORD": true, "FORGEJO_TOKEN": true, "GITEA_TOKEN": true,
}

// forgePrefixes are the variable families of forges, CI runners and action inputs; a name in
// one of them carrying a credential word (credentialWords) is a forge credential.
var forgePrefixes = []string{"GITHUB_", "GH_", "GITLAB_", "GL_", "FORGEJO_", "GITEA_", "CI_", "RUNNER_", "ACTIONS_", "INPUT_"}

var credentialWords = map[string]bool{
	"TOKEN": true, "TOKENS": true, "PAT": true, "PASSWORD": true, "PASSWD": true, "JWT": true,
	"SECRET": true, "SECRETS": true, "KEY": true, "CREDENTIAL": true, "CREDENTIALS": true, "AUTH": true,
}

// IsForgeCredentialName reports whether an environment variable name is one of the common
// names a forge or CI credential travels under, compared case-insensitively:
//
//   - the well-known names (GITHUB_TOKEN, GH_TOKEN, GITLAB_TOKEN, CI_JOB_TOKEN, CI_JOB_JWT*,
//     CI_REGISTRY_PASSWORD, FORGEJO_TOKEN, GITEA_TOKEN, …);
//   - a name of the GITHUB_, GH_, GITLAB_, GL_, FORGEJO_, GITEA_, CI_, RUNNER_, ACTIONS_ or
//     INPUT_ family with a credential word (TOKEN, PAT, PASSWORD, JWT, SECRET, KEY,
//     CREDENTIALS, AUTH, …) as one of its segments (split at _ and -). This covers the
//     runner's ACTIONS_RUNTIME_TOKEN, ACTIONS_ID_TOKEN_REQUEST_TOKEN and
//     ACTIONS_ID_TOKEN_REQUEST_URL, and the copies GitHub Actions makes of `with:` inputs
//     (`token:` arrives as INPUT_TOKEN, `github-token:` as INPUT_GITHUB-TOKEN).
//
// The agent never receives such a variable: Load refuses it in agent.env, and `forgectx run`
// withholds the value of every such variable of its environment from the agent, under any
// name (docs/run.md, "What the agent never receives").
func IsForgeCredentialName(name string) bool {
	n := strings.ToUpper(name)
	if forgeCredentialNames[n] {
		return true
	}
	for _, p := range forgePrefixes {
		if !strings.HasPrefix(n, p) {
			continue
		}
		for _, seg := range strings.FieldsFunc(n[len(p):], func(r rune) bool { return r == '_' || r == '-' }) {
			if credentialWords[seg] {
				return true
			}
		}
	}
	return false
}

// CheckAgentEnv refuses an agent.env that names a forge credential (IsForgeCredentialName),
// a registered secret, or tokenEnv (the variable `forgectx run --token-env` reads; "" skips
// that check). Load applies it without tokenEnv; `forgectx run` applies it again with the
// token variable it uses, also to a Harness built in code.
func (h *Harness) CheckAgentEnv(tokenEnv string) error {
	secret := map[string]bool{}
	for _, s := range h.Secrets {
		secret[s] = true
	}
	for i, n := range h.Agent.Env {
		if IsForgeCredentialName(n) || secret[n] || (tokenEnv != "" && n == tokenEnv) {
			return &Error{Field: fmt.Sprintf("agent.env[%d]", i), Rule: "the agent runs without forge tokens and registered secrets; " + n + " cannot be passed to it"}
		}
	}
	return nil
}

// ValidAgentName reports whether name is a valid agent.name (the rule AgentNameRule states):
// the name is a marker in status comments, so a flag that gives it is held to the same rule.
func ValidAgentName(name string) bool { return agentName.MatchString(name) }

// AgentNameRule is the agent name rule as error text.
func AgentNameRule() string { return "must match " + agentName.String() }

// Load reads and validates the harness file at path (an input file: internal/platform/inputfile).
func Load(path string) (*Harness, error) {
	f, err := inputfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("harness: %w", err)
	}
	defer f.Close()
	return Read(f)
}

// Read decodes and validates a harness document.
func Read(r io.Reader) (*Harness, error) {
	data, err := io.ReadAll(inputfile.NewReader(r, "harness", MaxFileBytes))
	if errors.Is(err, inputfile.ErrTooLarge) {
		return nil, &Error{Field: "(file)", Rule: fmt.Sprintf("larger than %d bytes", MaxFileBytes)}
	}
	if err != nil {
		return nil, fmt.Errorf("harness: read: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var doc fileDoc
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{Field: "(file)", Rule: "empty document"}
		}
		var root yaml.Node
		if yaml.Unmarshal(data, &root) != nil {
			root = yaml.Node{}
		}
		return nil, &Error{Field: "(file)", Rule: "is not a valid harness: " + yamlErr(err, &root)}
	}
	var extra fileDoc
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, &Error{Field: "(file)", Rule: "must hold exactly one YAML document"}
	}
	return validate(&doc)
}

// yamlErr describes a YAML error as "line L, column C: CAUSE" (the column when the document
// parsed far enough to locate the node). The cause is yaml.v3's own words with the offending
// value removed — yaml.v3 quotes scalars in type errors, and a scalar may be a secret pasted by
// mistake; key names are kept (a key is a name from the file's structure, not a value).
// root is the document parsed as a node tree, nil when it does not parse.
func yamlErr(err error, root *yaml.Node) string {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msg := describeYAML(te.Errors[0], root)
		if n := len(te.Errors); n > 1 {
			msg += fmt.Sprintf(" (and %d more)", n-1)
		}
		return msg
	}
	return describeYAML(strings.TrimPrefix(err.Error(), "yaml: "), root)
}

var (
	lineRe     = regexp.MustCompile(`^line ([0-9]+): `)
	unknownRe  = regexp.MustCompile(`^field ([A-Za-z0-9_]+) not found in type .*`)
	dupRe      = regexp.MustCompile(`^mapping key "([A-Za-z0-9_]+)" already defined at line ([0-9]+)`)
	unmarshRe  = regexp.MustCompile("^cannot unmarshal (!![a-z]+)(?: `.*`)? into (.*)$")
	goTypeName = strings.NewReplacer("harness.", "", "*", "", "[]", "a list of ", "map[string]", "a mapping of ")
)

// describeYAML reduces one yaml.v3 message to position and cause.
func describeYAML(msg string, root *yaml.Node) string {
	line := 0
	if m := lineRe.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	}
	var cause, key, tag string
	switch {
	case unknownRe.MatchString(msg):
		key = unknownRe.FindStringSubmatch(msg)[1]
		cause = "unknown key " + key + " (not a documented harness key)"
	case dupRe.MatchString(msg):
		m := dupRe.FindStringSubmatch(msg)
		key = m[1]
		cause = "duplicate key " + key + " (first defined at line " + m[2] + ")"
	case unmarshRe.MatchString(msg):
		m := unmarshRe.FindStringSubmatch(msg)
		tag = m[1]
		cause = "wrong type: a " + strings.TrimPrefix(tag, "!!") + " where " + goType(m[2]) + " is expected"
	default:
		// A parser or scanner problem: yaml.v3's fixed phrases ("did not find expected key",
		// "found character that cannot start any token", …), which carry no value.
		cause = "syntax error: " + strings.TrimSpace(strings.SplitN(msg, "`", 2)[0])
		if strings.Contains(msg, "found character that cannot start any token") {
			cause += " (a tab in indentation?)"
		}
	}
	if line == 0 {
		return cause
	}
	if col := column(root, line, key, tag); col > 0 {
		return fmt.Sprintf("line %d, column %d: %s", line, col, cause)
	}
	return fmt.Sprintf("line %d: %s", line, cause)
}

// goType names a decoding target in words.
func goType(t string) string {
	switch t = strings.TrimSpace(t); t {
	case "int", "int64", "uint32", "int32":
		return "an integer"
	case "bool":
		return "true or false"
	case "string":
		return "a string"
	case "time.Duration":
		return "a duration (10m)"
	}
	if strings.HasPrefix(t, "[]") {
		return "a list"
	}
	if strings.HasPrefix(t, "map[") || strings.HasPrefix(t, "harness.") || strings.HasPrefix(t, "*harness.") {
		return "a mapping"
	}
	return goTypeName.Replace(t)
}

// column finds the column of the node a message is about: the mapping key named key on line,
// else the first node on line with the tag, else the first node on line.
func column(root *yaml.Node, line int, key, tag string) int {
	if root == nil {
		return 0
	}
	best, first := 0, 0
	var walk func(n *yaml.Node, isKey bool)
	walk = func(n *yaml.Node, isKey bool) {
		if n.Line == line {
			if first == 0 {
				first = n.Column
			}
			// A key error is about a mapping key; a type error about a value, never a key.
			if best == 0 && ((key != "" && isKey && n.Value == key) || (tag != "" && !isKey && n.Tag == tag)) {
				best = n.Column
			}
		}
		for i, c := range n.Content {
			walk(c, n.Kind == yaml.MappingNode && i%2 == 0)
		}
	}
	walk(root, false)
	if best > 0 {
		return best
	}
	return first
}

// validate applies every field rule, in the order of the file's sections (version, agent,
// scripts, secrets, profiles, bots, timeouts): the first broken rule is the error, naming its
// field.
func validate(d *fileDoc) (*Harness, error) {
	if d.Version == nil {
		return nil, &Error{Field: "version", Rule: "required (1)"}
	}
	if *d.Version != Version {
		return nil, &Error{Field: "version", Rule: fmt.Sprintf("%d is not supported (this build reads %d)", *d.Version, Version)}
	}
	h := &Harness{Version: *d.Version, Profiles: map[string]acquisition.Profile{}}
	var err error
	if h.Agent, err = validateAgent(d.Agent); err != nil {
		return nil, err
	}
	if h.PreScript, err = script("pre_script", d.PreScript); err != nil {
		return nil, err
	}
	if h.PostScript, err = script("post_script", d.PostScript); err != nil {
		return nil, err
	}
	if err := checkEnvNames("secrets", d.Secrets); err != nil {
		return nil, err
	}
	h.Secrets = append([]string(nil), d.Secrets...)
	sort.Strings(h.Secrets)
	if err := h.CheckAgentEnv(""); err != nil {
		return nil, err
	}
	if h.Profiles, err = validateProfiles(d.Profiles); err != nil {
		return nil, err
	}
	if h.Bots, err = validateBots(d.Bots); err != nil {
		return nil, err
	}
	total := ""
	if d.Timeouts != nil {
		total = d.Timeouts.Total
	}
	if h.TotalTimeout, err = duration("timeouts.total", total, DefaultTotalTimeout); err != nil {
		return nil, err
	}
	return h, nil
}

// validateAgent applies the agent section's rules: name, category, command, timeout, env.
func validateAgent(a *agentDoc) (Agent, error) {
	if a == nil {
		return Agent{}, &Error{Field: "agent", Rule: "required"}
	}
	if !agentName.MatchString(a.Name) {
		return Agent{}, &Error{Field: "agent.name", Rule: "must match " + agentName.String()}
	}
	if a.Category != CategoryObservation && a.Category != CategoryMutation {
		return Agent{}, &Error{Field: "agent.category", Rule: "must be observation or mutation"}
	}
	if err := checkCommand("agent.command", a.Command); err != nil {
		return Agent{}, err
	}
	t, err := duration("agent.timeout", a.Timeout, DefaultAgentTimeout)
	if err != nil {
		return Agent{}, err
	}
	if err := checkEnvNames("agent.env", a.Env); err != nil {
		return Agent{}, err
	}
	return Agent{Name: a.Name, Category: a.Category, Command: a.Command, Env: a.Env, Timeout: t}, nil
}

// validateProfiles applies the profile rules in sorted key order, so the error for a file with
// several broken profiles is always the same one.
func validateProfiles(docs map[string]*profDoc) (map[string]acquisition.Profile, error) {
	if len(docs) == 0 {
		return nil, &Error{Field: "profiles", Rule: "required: at least one of work_item, change_proposal"}
	}
	kinds := make([]string, 0, len(docs))
	for k := range docs {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	out := make(map[string]acquisition.Profile, len(kinds))
	for _, kind := range kinds {
		p, err := validateProfile(kind, docs[kind])
		if err != nil {
			return nil, err
		}
		out[kind] = p
	}
	return out, nil
}

// validateProfile checks one profile's key and fields (snapshot.ValidateProfile's rules, with
// the field named under profiles.KIND).
func validateProfile(kind string, pd *profDoc) (acquisition.Profile, error) {
	field := "profiles." + kind
	if kind != acquisition.KindWorkItem && kind != acquisition.KindChangeProposal {
		return acquisition.Profile{}, &Error{Field: field, Rule: "key must be work_item or change_proposal"}
	}
	if pd == nil {
		return acquisition.Profile{}, &Error{Field: field, Rule: "must be a mapping"}
	}
	sources := append([]string(nil), pd.IncludedSources...)
	sort.Strings(sources)
	p := acquisition.Profile{
		EntityKind: kind, IncludedSources: sources, RecordSelection: pd.RecordSelection,
		CheckLogSelection: pd.CheckLogSelection,
		Bounds: acquisition.Bounds{
			MaxRecordsPerSource: pd.Bounds.MaxRecordsPerSource, MaxSourceBytes: pd.Bounds.MaxSourceBytes,
			MaxRecordBytes: pd.Bounds.MaxRecordBytes, MaxLogBytes: pd.Bounds.MaxLogBytes,
			MaxMetadataStringBytes: pd.Bounds.MaxMetadataStringBytes, MaxLabels: pd.Bounds.MaxLabels,
		},
	}
	if err := snapshot.ValidateProfile(p); err != nil {
		var ce *snapshot.ConfigError
		if errors.As(err, &ce) {
			return acquisition.Profile{}, &Error{Field: field + "." + ce.Field, Rule: ce.Rule}
		}
		return acquisition.Profile{}, &Error{Field: field, Rule: err.Error()}
	}
	return p, nil
}

// validateBots checks the bot registry (snapshot.ValidateBots's rules).
func validateBots(docs []botDoc) ([]snapshot.BotIdentity, error) {
	var bots []snapshot.BotIdentity
	for _, b := range docs {
		bots = append(bots, snapshot.BotIdentity{ID: b.ID, Login: b.Login, BotRole: b.BotRole})
	}
	if err := snapshot.ValidateBots(bots); err != nil {
		var ce *snapshot.ConfigError
		if errors.As(err, &ce) {
			return nil, &Error{Field: ce.Field, Rule: ce.Rule}
		}
		return nil, &Error{Field: "bots", Rule: err.Error()}
	}
	return bots, nil
}

// ProfileFor returns the collection profile for an entity kind.
func (h *Harness) ProfileFor(kind string) (acquisition.Profile, error) {
	p, ok := h.Profiles[kind]
	if !ok {
		return p, &Error{Field: "profiles." + kind, Rule: "the harness has no profile for this entity kind"}
	}
	return p, nil
}

func script(field string, d *scriptDoc) (*Script, error) {
	if d == nil {
		return nil, nil
	}
	if err := checkCommand(field+".command", d.Command); err != nil {
		return nil, err
	}
	if err := checkEnvNames(field+".env", d.Env); err != nil {
		return nil, err
	}
	t, err := duration(field+".timeout", d.Timeout, DefaultScriptTimeout)
	if err != nil {
		return nil, err
	}
	return &Script{Command: d.Command, Env: d.Env, Timeout: t}, nil
}

func checkCommand(field string, argv []string) error {
	if len(argv) == 0 || argv[0] == "" {
		return &Error{Field: field, Rule: "required: a non-empty list, the program then its arguments"}
	}
	for i, a := range argv {
		if bytes.ContainsAny([]byte(a), "\x00") {
			return &Error{Field: fmt.Sprintf("%s[%d]", field, i), Rule: "must not contain NUL"}
		}
	}
	return nil
}

func checkEnvNames(field string, names []string) error {
	seen := map[string]bool{}
	for i, n := range names {
		if !envName.MatchString(n) {
			return &Error{Field: fmt.Sprintf("%s[%d]", field, i), Rule: "must be an environment variable name (" + envName.String() + ")"}
		}
		if seen[n] {
			return &Error{Field: fmt.Sprintf("%s[%d]", field, i), Rule: "duplicate name"}
		}
		seen[n] = true
	}
	return nil
}

func duration(field, s string, def time.Duration) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, &Error{Field: field, Rule: "must be a positive Go duration such as 90s, 10m or 1h30m"}
	}
	return d, nil
}
