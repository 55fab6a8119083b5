package rework

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// Wire names of the two input schemas (docs/rework.md).
const (
	TargetSchema   = "gitea-agent.rework-input/v1"
	ContractSchema = "gitea-agent.rework-provider-contract/v1"
)

// MaxInputBytes bounds each input file. Both are small JSON documents; a larger file is refused
// without being read past the bound.
const MaxInputBytes = 64 << 10

// InputError is a refused input: File names which input ("target", "provider contract", a
// flag), Field the JSON path or flag, Rule the rule broken. It never carries a value from the
// file.
type InputError struct {
	File  string
	Field string
	Rule  string
}

func (e *InputError) Error() string {
	if e.Field == "" {
		return e.File + ": " + e.Rule
	}
	return e.File + ": " + e.Field + ": " + e.Rule
}

func inErr(file, field, format string, a ...any) error {
	return &InputError{File: file, Field: field, Rule: fmt.Sprintf(format, a...)}
}

// Target is a parsed gitea-agent.rework-input/v1 document.
type Target struct {
	Owner          string `json:"owner"`
	Repository     string `json:"repository"`
	Issue          int64  `json:"issue"`
	PR             int64  `json:"pr"`
	Head           string `json:"head"`
	ContractSHA256 string `json:"contract_sha256"`
}

// ownerRe is Gitea's user/organisation name rule (alphanumerics, '-', '_', '.'; starting and
// ending with an alphanumeric), at most 40 characters.
var ownerRe = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,38}[A-Za-z0-9])?$`)

// repoRe is Gitea's repository name rule (alphanumerics, '-', '_', '.'), at most 100 characters.
var repoRe = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,100}$`)

// positiveIntRe is the only accepted form of an ID: a JSON integer literal without sign,
// exponent, fraction or leading zero, at most 2^53-1 (checked after parsing).
var positiveIntRe = regexp.MustCompile(`^[1-9][0-9]{0,15}$`)

const maxSafeInt = 1<<53 - 1

// ValidOwner reports whether s is a strict Gitea owner name.
func ValidOwner(s string) bool {
	return ownerRe.MatchString(s) && !hasDoubleSpecial(s)
}

// ValidRepository reports whether s is a strict Gitea repository name.
func ValidRepository(s string) bool {
	if !repoRe.MatchString(s) || s == "." || s == ".." {
		return false
	}
	l := strings.ToLower(s)
	return !strings.HasSuffix(l, ".git") && !strings.HasSuffix(l, ".wiki")
}

// hasDoubleSpecial: Gitea refuses consecutive '-', '_' or '.' in user names.
func hasDoubleSpecial(s string) bool {
	for i := 1; i < len(s); i++ {
		if strings.ContainsRune("-_.", rune(s[i])) && strings.ContainsRune("-_.", rune(s[i-1])) {
			return true
		}
	}
	return false
}

// ParseTarget parses and validates a gitea-agent.rework-input/v1 document: closed field sets at
// every level, every field required, strict names, positive integer issue and pr that differ,
// head 40 and contract_sha256 64 lowercase hexadecimal digits.
func ParseTarget(b []byte) (*Target, error) {
	const file = "target"
	top, err := closedObject(file, "", b, []string{"schema", "target", "head", "contract_sha256"})
	if err != nil {
		return nil, err
	}
	schema, err := stringField(file, "schema", top["schema"])
	if err != nil {
		return nil, err
	}
	if schema != TargetSchema {
		return nil, inErr(file, "schema", "must be %s", TargetSchema)
	}
	inner, err := closedObject(file, "target", top["target"], []string{"owner", "repository", "issue", "pr"})
	if err != nil {
		return nil, err
	}
	t := &Target{}
	if t.Owner, err = stringField(file, "target.owner", inner["owner"]); err != nil {
		return nil, err
	}
	if !ValidOwner(t.Owner) {
		return nil, inErr(file, "target.owner", "must be a Gitea owner name (1-40 of A-Z a-z 0-9 - _ ., alphanumeric first and last, no two of - _ . in a row)")
	}
	if t.Repository, err = stringField(file, "target.repository", inner["repository"]); err != nil {
		return nil, err
	}
	if !ValidRepository(t.Repository) {
		return nil, inErr(file, "target.repository", "must be a Gitea repository name (1-100 of A-Z a-z 0-9 - _ ., not . or .., not ending in .git or .wiki)")
	}
	if t.Issue, err = positiveField(file, "target.issue", inner["issue"]); err != nil {
		return nil, err
	}
	if t.PR, err = positiveField(file, "target.pr", inner["pr"]); err != nil {
		return nil, err
	}
	if t.Issue == t.PR {
		return nil, inErr(file, "target.pr", "must differ from target.issue (the Source Issue and the pull request are different entities)")
	}
	if t.Head, err = stringField(file, "head", top["head"]); err != nil {
		return nil, err
	}
	if !isHex(t.Head, 40) {
		return nil, inErr(file, "head", "must be 40 lowercase hexadecimal digits")
	}
	if t.ContractSHA256, err = stringField(file, "contract_sha256", top["contract_sha256"]); err != nil {
		return nil, err
	}
	if !isHex(t.ContractSHA256, 64) {
		return nil, inErr(file, "contract_sha256", "must be 64 lowercase hexadecimal digits")
	}
	return t, nil
}

// Counter keys of counter_diagnostics, in receipt order.
const (
	CounterInline  = "inline"
	CounterPR      = "pr"
	CounterPRIssue = "pr_issue"
)

// Counter formula components (docs/rework.md, "Input: gitea-agent.rework-provider-contract/v1").
const (
	ComponentReviewInlineRecords = "review_inline_records" // this review's inline endpoint rows
	ComponentInlineRecords       = "inline_records"        // all reviews' inline rows
	ComponentReviews             = "reviews"               // review rows
	ComponentPRIssueComments     = "pr_issue_comments"     // the PR's conversation comments
)

// counterRules are the closed vocabularies: the native field each counter may read and the
// components its formula may sum.
var counterRules = map[string]struct {
	fields     []string
	components []string
}{
	CounterInline:  {fields: []string{"comments_count"}, components: []string{ComponentReviewInlineRecords}},
	CounterPR:      {fields: []string{"review_comments"}, components: []string{ComponentInlineRecords, ComponentReviews}},
	CounterPRIssue: {fields: []string{"comments"}, components: []string{ComponentPRIssueComments, ComponentReviews}},
}

// Inline endpoint declarations. Both are accepted in a contract; the initial gate requires the
// real endpoint whatever is declared (the spec forbids the counter-only fallback here).
const (
	InlineEndpointRequired      = "required"
	InlineEndpointPerReviewOrPR = "per_review_or_pr_count"
)

// Provider names a contract may bind.
const (
	ProviderGitea   = "gitea"
	ProviderForgejo = "forgejo"
)

// Formula is one declared counter: the native field read and the collection components whose
// sum is its expected value.
type Formula struct {
	Field      string   `json:"field"`
	Components []string `json:"components"`
}

// Role is a role actor's native binding.
type Role struct {
	ID    int64  `json:"id"`
	Login string `json:"login"`
}

// Contract is a parsed gitea-agent.rework-provider-contract/v1 document.
type Contract struct {
	Provider       string             `json:"provider"`
	APIVersion     string             `json:"api_version"`
	Counters       map[string]Formula `json:"counters"`
	SpecReviewer   Role               `json:"spec_reviewer"`
	CodeReviewer   Role               `json:"code_reviewer"`
	InlineEndpoint string             `json:"inline_endpoint"`
}

// apiVersionRe bounds the version string compared with GET /version: printable, no spaces.
var apiVersionRe = regexp.MustCompile(`^[0-9A-Za-z][0-9A-Za-z.+_~-]{0,63}$`)

// loginRe is the login form accepted for a role (the owner rule without the length cap beyond
// 40).
func validLogin(s string) bool { return ValidOwner(s) }

// ParseContract parses and validates a gitea-agent.rework-provider-contract/v1 document against
// actorID (the implementation agent's stable ID): closed fields, provider binding, the three
// counter formulas from the closed vocabularies, positive and distinct role IDs and the
// inline-endpoint declaration.
func ParseContract(b []byte, actorID int64) (*Contract, error) {
	const file = "provider contract"
	if actorID <= 0 || actorID > maxSafeInt {
		return nil, inErr("--actor-id", "", "must be a positive integer at most 2^53-1")
	}
	top, err := closedObject(file, "", b, []string{"schema", "provider", "counters", "roles", "inline_endpoint"})
	if err != nil {
		return nil, err
	}
	schema, err := stringField(file, "schema", top["schema"])
	if err != nil {
		return nil, err
	}
	if schema != ContractSchema {
		return nil, inErr(file, "schema", "must be %s", ContractSchema)
	}
	c := &Contract{Counters: map[string]Formula{}}
	prov, err := closedObject(file, "provider", top["provider"], []string{"name", "api_version"})
	if err != nil {
		return nil, err
	}
	if c.Provider, err = stringField(file, "provider.name", prov["name"]); err != nil {
		return nil, err
	}
	if c.Provider != ProviderGitea && c.Provider != ProviderForgejo {
		return nil, inErr(file, "provider.name", "must be gitea or forgejo")
	}
	if c.APIVersion, err = stringField(file, "provider.api_version", prov["api_version"]); err != nil {
		return nil, err
	}
	if !apiVersionRe.MatchString(c.APIVersion) {
		return nil, inErr(file, "provider.api_version", "must be the exact version string GET /version reports (1-64 of 0-9 A-Z a-z . + _ ~ -)")
	}
	counters, err := closedObject(file, "counters", top["counters"], []string{CounterInline, CounterPR, CounterPRIssue})
	if err != nil {
		return nil, err
	}
	for _, key := range []string{CounterInline, CounterPR, CounterPRIssue} {
		f, err := parseFormula(file, "counters."+key, counters[key], key)
		if err != nil {
			return nil, err
		}
		c.Counters[key] = f
	}
	roles, err := closedObject(file, "roles", top["roles"], []string{"spec_reviewer", "code_reviewer"})
	if err != nil {
		return nil, err
	}
	if c.SpecReviewer, err = parseRole(file, "roles.spec_reviewer", roles["spec_reviewer"]); err != nil {
		return nil, err
	}
	if c.CodeReviewer, err = parseRole(file, "roles.code_reviewer", roles["code_reviewer"]); err != nil {
		return nil, err
	}
	switch {
	case c.SpecReviewer.ID == actorID:
		return nil, inErr(file, "roles.spec_reviewer.id", "must differ from --actor-id (the implementation agent cannot review its own work)")
	case c.CodeReviewer.ID == actorID:
		return nil, inErr(file, "roles.code_reviewer.id", "must differ from --actor-id (the implementation agent cannot review its own work)")
	case c.SpecReviewer.ID == c.CodeReviewer.ID:
		return nil, inErr(file, "roles.code_reviewer.id", "must differ from roles.spec_reviewer.id (one actor cannot hold both roles)")
	case strings.EqualFold(c.SpecReviewer.Login, c.CodeReviewer.Login):
		return nil, inErr(file, "roles.code_reviewer.login", "must differ from roles.spec_reviewer.login (distinct IDs with one login are inconsistent)")
	}
	if c.InlineEndpoint, err = stringField(file, "inline_endpoint", top["inline_endpoint"]); err != nil {
		return nil, err
	}
	if c.InlineEndpoint != InlineEndpointRequired && c.InlineEndpoint != InlineEndpointPerReviewOrPR {
		return nil, inErr(file, "inline_endpoint", "must be required or per_review_or_pr_count")
	}
	return c, nil
}

func parseFormula(file, field string, raw json.RawMessage, key string) (Formula, error) {
	obj, err := closedObject(file, field, raw, []string{"field", "components"})
	if err != nil {
		return Formula{}, err
	}
	rule := counterRules[key]
	var f Formula
	if f.Field, err = stringField(file, field+".field", obj["field"]); err != nil {
		return Formula{}, err
	}
	if !contains(rule.fields, f.Field) {
		return Formula{}, inErr(file, field+".field", "must be one of %s", strings.Join(rule.fields, ", "))
	}
	var comps []json.RawMessage
	if err := strictUnmarshalArray(obj["components"], &comps); err != nil {
		return Formula{}, inErr(file, field+".components", "must be an array of strings")
	}
	if len(comps) == 0 {
		return Formula{}, inErr(file, field+".components", "must name at least one component")
	}
	for i, cr := range comps {
		s, err := stringField(file, fmt.Sprintf("%s.components[%d]", field, i), cr)
		if err != nil {
			return Formula{}, err
		}
		if !contains(rule.components, s) {
			return Formula{}, inErr(file, fmt.Sprintf("%s.components[%d]", field, i), "must be one of %s", strings.Join(rule.components, ", "))
		}
		if contains(f.Components, s) {
			return Formula{}, inErr(file, fmt.Sprintf("%s.components[%d]", field, i), "must not repeat a component")
		}
		f.Components = append(f.Components, s)
	}
	return f, nil
}

func parseRole(file, field string, raw json.RawMessage) (Role, error) {
	obj, err := closedObject(file, field, raw, []string{"id", "login"})
	if err != nil {
		return Role{}, err
	}
	var r Role
	if r.ID, err = positiveField(file, field+".id", obj["id"]); err != nil {
		return Role{}, err
	}
	if r.Login, err = stringField(file, field+".login", obj["login"]); err != nil {
		return Role{}, err
	}
	if !validLogin(r.Login) {
		return Role{}, inErr(file, field+".login", "must be a Gitea login (1-40 of A-Z a-z 0-9 - _ ., alphanumeric first and last)")
	}
	return r, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// closedObject decodes raw as one JSON object whose member names are exactly want (each
// required, no other, none repeated). A repeated name is refused because encoding/json would
// silently keep the last one, and two readers of the same file could then disagree.
func closedObject(file, field string, raw json.RawMessage, want []string) (map[string]json.RawMessage, error) {
	where := field
	if where == "" {
		where = "(document)"
	}
	if raw == nil {
		return nil, inErr(file, where, "is required")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, inErr(file, where, "must be a JSON object")
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, inErr(file, where, "must be a JSON object")
	}
	out := map[string]json.RawMessage{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, inErr(file, where, "is not valid JSON")
		}
		k, _ := kt.(string)
		name := k
		if field != "" {
			name = field + "." + k
		}
		if !contains(want, k) {
			return nil, inErr(file, where, "unknown field %s (allowed: %s)", strconv.Quote(k), strings.Join(want, ", "))
		}
		if _, dup := out[k]; dup {
			return nil, inErr(file, name, "appears twice")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, inErr(file, name, "is not valid JSON")
		}
		out[k] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, inErr(file, where, "is not valid JSON")
	}
	if field == "" {
		if _, err := dec.Token(); err != io.EOF {
			return nil, inErr(file, where, "must hold exactly one JSON object")
		}
	}
	missing := []string{}
	for _, k := range want {
		if _, ok := out[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		name := missing[0]
		if field != "" {
			name = field + "." + name
		}
		return nil, inErr(file, name, "is required")
	}
	return out, nil
}

func stringField(file, field string, raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		return "", inErr(file, field, "must be a string")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", inErr(file, field, "must be a string")
	}
	return s, nil
}

func positiveField(file, field string, raw json.RawMessage) (int64, error) {
	lit := string(bytes.TrimSpace(raw))
	if !positiveIntRe.MatchString(lit) {
		return 0, inErr(file, field, "must be a positive JSON integer (no sign, fraction, exponent, quotes or leading zero)")
	}
	n, err := strconv.ParseInt(lit, 10, 64)
	if err != nil || n > maxSafeInt {
		return 0, inErr(file, field, "must be at most 2^53-1")
	}
	return n, nil
}

func strictUnmarshalArray(raw json.RawMessage, out *[]json.RawMessage) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return errors.New("not an array")
	}
	return json.Unmarshal(raw, out)
}

// ReadInput reads path as a bounded regular file (no symlink as the final component, not a
// FIFO or device, at most MaxInputBytes) and checks its SHA-256 against wantHex (64 lowercase
// hexadecimal digits, from flag). The bytes returned are exactly the bytes digested.
func ReadInput(file, flag, path, wantHex string) ([]byte, error) {
	if !isHex(wantHex, 64) {
		return nil, inErr(flag+"-sha256", "", "must be 64 lowercase hexadecimal digits")
	}
	if path == "" {
		return nil, inErr(flag, "", "is required")
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, inErr(flag, "", "cannot open the %s file (%s); it must be a regular file, not a symlink", file, errnoText(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil, inErr(flag, "", "the %s file must be a regular file", file)
	}
	if st.Size() > MaxInputBytes {
		return nil, inErr(flag, "", "the %s file is larger than %d bytes", file, MaxInputBytes)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxInputBytes+1))
	if err != nil {
		return nil, inErr(flag, "", "cannot read the %s file (%s)", file, errnoText(err))
	}
	if len(b) > MaxInputBytes {
		return nil, inErr(flag, "", "the %s file is larger than %d bytes", file, MaxInputBytes)
	}
	sum := sha256.Sum256(b)
	if hex.EncodeToString(sum[:]) != wantHex {
		return nil, inErr(flag+"-sha256", "", "does not match the SHA-256 of the %s file's exact bytes", file)
	}
	return b, nil
}

// errnoText names the OS error without the path (paths may be sensitive in shared logs; the
// caller's message names the flag instead).
func errnoText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
