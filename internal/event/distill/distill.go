// Package distill turns the webhook event that triggered a CI job into a lean, parseable excerpt
// for an agent's prompt. It implements the spec "Requirements: a forwarded event carries the
// instruction, not GitHub's metadata" (docs/contracts.md, "Event excerpt distillation"),
// Requirements 1–5 and its abuse cases, for GitHub, Forgejo and GitLab payloads. docs/distill.md lists every
// event's fields, the caps and the truncation marker.
//
// There is one distillation function. Excerpt takes a raw webhook payload; fromAPIObject wraps an
// object fetched from the forge's REST API into the container the webhook would carry and runs the
// same code, so both ingresses emit the same fields (Requirement 4).
//
// The excerpt is compact JSON written by an ordered encoder: keys appear in the documented order,
// never in map order. Only allow-listed fields are carried; an author is a bare login string;
// sender, repository and (for comments) issue objects and every API URL are left out. Every
// string passes the filter pipeline's Sanitize (Unicode safety and secret redaction); free text
// is then capped per field with a visible marker inside the value. Distillation never fails: a
// malformed payload, a wrong-typed container or a filter failure costs fields, never the event,
// and the worst case is the excerpt {} (Requirement 2.7, abuse case 4).
package distill

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strings"

	"github.com/forgectx/forgectx/internal/filter"
)

// Forge names the payload dialect.
type Forge string

// Forges.
const (
	gitHub  Forge = "github"
	gitLab  Forge = "gitlab"
	Forgejo Forge = "forgejo"
)

// ParseForge maps a --forge value to a Forge; ok is false for anything else.
func ParseForge(s string) (Forge, bool) {
	switch f := Forge(strings.ToLower(strings.TrimSpace(s))); f {
	case gitHub, gitLab, Forgejo:
		return f, true
	}
	return "", false
}

// Defaults for Options. The text cap bounds one field, not the excerpt: a 50 KB pasted log costs
// its tail, never a sibling field.
const (
	// DefaultMaxTextChars caps a free-text field (body, description, summary, note), in Unicode
	// code points, marker included.
	DefaultMaxTextChars = 2000
	// defaultMaxDisplayChars caps a short display string (title, name, label, login, state), in
	// code points, marker included.
	defaultMaxDisplayChars = 256
	// MinCapChars is the smallest accepted cap; smaller values are raised to it so the marker
	// always fits with some text before it.
	MinCapChars = 64
	// defaultMaxPayloadBytes bounds the payload Excerpt will parse (GitHub caps deliveries at
	// 25 MB).
	defaultMaxPayloadBytes = 32 << 20
	// maxStructuralBytes bounds a URL or path; longer values are omitted, never cut, because a
	// cut address points somewhere else.
	maxStructuralBytes = 4096
)

// Sanitizer is the part of the filter pipeline distillation uses: Unicode safety plus secret
// redaction, no injection scan and no bound ((*filter.Pipeline).Sanitize). It is an interface so
// that tests can inject a failing filter and prove the fail-safe rule.
type Sanitizer interface {
	Sanitize(s string) (string, []filter.Finding)
}

// Options tune one distillation. The zero value uses the defaults and filter.New(nil).
type Options struct {
	MaxTextChars    int       // 0 → DefaultMaxTextChars
	MaxDisplayChars int       // 0 → defaultMaxDisplayChars
	MaxPayloadBytes int       // 0 → defaultMaxPayloadBytes
	Filter          Sanitizer // nil → filter.New(nil)
}

func (o Options) withDefaults() Options {
	if o.MaxTextChars == 0 {
		o.MaxTextChars = DefaultMaxTextChars
	}
	if o.MaxDisplayChars == 0 {
		o.MaxDisplayChars = defaultMaxDisplayChars
	}
	o.MaxTextChars = max(o.MaxTextChars, MinCapChars)
	o.MaxDisplayChars = max(o.MaxDisplayChars, MinCapChars)
	if o.MaxPayloadBytes <= 0 {
		o.MaxPayloadBytes = defaultMaxPayloadBytes
	}
	if o.Filter == nil {
		o.Filter = filter.New(nil)
	}
	return o
}

// Warning codes in Report.Warning: why the excerpt is {}.
const (
	warnUnknownForge     = "unknown_forge"
	warnPayloadEmpty     = "payload_empty"
	warnPayloadTooLarge  = "payload_too_large"
	warnPayloadNotJSON   = "payload_not_json"
	warnPayloadNotObject = "payload_not_object"
	warnNothingKnown     = "nothing_recognised"
)

// Omission codes in Report.Omitted: why a present field was left out.
const (
	omitWrongType       = "wrong_type"        // not the JSON type the field rule expects
	OmitFilterError     = "filter_error"      // the filter failed; fail safe, the field goes
	omitUnsafeStructure = "unsafe_structural" // a URL, path or branch the filter would rewrite
	omitNotWebURL       = "not_web_url"       // not an absolute http(s) URL, or an API URL
	omitTooLong         = "too_long"          // a URL or path over 4096 bytes (never cut)
)

// Omission is one field left out of the excerpt. Field is the excerpt path (e.g.
// "comment.html_url"), never a value.
type Omission struct {
	Field string
	Code  string
}

// Report says what distillation did, in counts and field names only: it is safe to log.
type Report struct {
	Forge     Forge
	Event     string           // the event name as emitted ("" when not safe to emit)
	Rule      string           // the rule applied: an event name, "generic", or "" for none
	Warning   string           // set when the excerpt is {} (Warn* codes)
	Fields    int              // leaf fields emitted
	Truncated []string         // excerpt paths of capped fields, in output order
	Omitted   []Omission       // present fields left out, in output order
	Findings  []filter.Finding // filter findings over all carried strings, sorted by code
	// PayloadPath is the file FromCI read or tried to read ("-" for stdin), and PayloadFrom
	// where that name came from ("--payload", GITHUB_EVENT_PATH, TRIGGER_PAYLOAD), so a
	// payload_unreadable warning can name the file; PayloadErr is why it could not be read.
	PayloadPath string
	PayloadFrom string
	PayloadErr  error
}

// empty is the excerpt when distillation yields nothing.
var empty = []byte("{}")

// Excerpt distils a webhook payload of the named event. eventName is the forge's event name
// (GitHub/Forgejo: GITHUB_EVENT_NAME or X-GitHub-Event; GitLab: X-Gitlab-Event such as
// "Note Hook" or the payload's object_kind; empty means "take object_kind" on GitLab and "no rule
// of its own" elsewhere). It always returns valid JSON: at worst {} with Report.Warning set.
func Excerpt(forge Forge, eventName string, payload []byte, opts Options) ([]byte, Report) {
	opts = opts.withDefaults()
	rep := Report{Forge: forge}
	if _, ok := ParseForge(string(forge)); !ok || Forge(strings.ToLower(string(forge))) != forge {
		rep.Warning = warnUnknownForge
		return empty, rep
	}
	root, warn := decodeObject(payload, opts.MaxPayloadBytes)
	if warn != "" {
		rep.Warning = warn
		return empty, rep
	}
	return distil(forge, eventName, root, opts, rep)
}

// decodeObject parses payload as exactly one JSON object with numbers kept as json.Number. A
// payload over maxBytes is not parsed at all (warnPayloadTooLarge); any other refusal is the
// warning it returns.
func decodeObject(payload []byte, maxBytes int) (map[string]any, string) {
	if len(payload) > maxBytes {
		return nil, warnPayloadTooLarge
	}
	payload = bytes.TrimPrefix(payload, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(payload)) == 0 {
		return nil, warnPayloadEmpty
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, warnPayloadNotJSON
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, warnPayloadNotJSON
	}
	root, ok := v.(map[string]any)
	if !ok {
		return nil, warnPayloadNotObject
	}
	return root, ""
}

// safeEventName is what an event name must look like to be echoed into the excerpt; anything
// else (it came from the environment or a flag) is not carried.
var safeEventName = regexp.MustCompile(`^[a-z][a-z0-9_.]{0,63}$`)

// distil is the one distillation path: Excerpt and fromAPIObject both end here.
func distil(forge Forge, eventName string, root map[string]any, opts Options, rep Report) ([]byte, Report) {
	var r rule
	var event string
	switch forge {
	case gitLab:
		event, r = gitlabRule(eventName, root)
	default:
		event, r = githubRule(forge, eventName)
	}
	if !safeEventName.MatchString(event) {
		event = ""
	}
	st := &state{opts: opts, rep: &rep, root: root}
	var out object
	for _, c := range r.containers {
		if carriedAny(out, c.unlessCarried) {
			continue
		}
		if v, ok := st.container(c); ok {
			out = append(out, member{c.out, v})
		}
	}
	if len(out) == 0 {
		rep.Warning = warnNothingKnown
		rep.Fields = 0
		rep.Findings = nil
		return empty, rep
	}
	rep.Rule = r.name
	rep.Event = event
	var head object
	if event != "" && !r.implied {
		head = append(head, member{"event", str(event)})
	}
	if a, ok := st.leaf(field{out: "action", from: r.action, kind: kindEnum}, nil, "action"); ok {
		if s, _ := a.(str); contains(r.quietActions, string(s)) {
			rep.Fields--
		} else {
			head = append(head, member{"action", a})
		}
	}
	rep.Findings = filter.MergeFindings(st.findings)
	return encode(append(head, out...)), rep
}

// carriedAny reports whether out already has one of the keys.
func carriedAny(out object, keys []string) bool {
	for _, k := range keys {
		if out.has(k) {
			return true
		}
	}
	return false
}
