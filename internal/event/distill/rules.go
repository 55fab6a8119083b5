package distill

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/forgectx/forgectx/internal/filter"
)

// kind is how a field's value is checked and carried.
type kind int

const (
	kindText    kind = iota // free text: filter, then the text cap with the marker
	kindDisplay             // short attacker-controllable text: filter, then the display cap
	kindEnum                // a forge keyword (state, status, action): display, lower-cased
	kindURL                 // web address: filter must leave it unchanged; http(s), not an API URL; never cut
	kindPath                // file path or branch name: filter must leave it unchanged; never cut
	kindInt                 // JSON integer
	kindBool                // JSON boolean
	kindObject              // nested object of sub fields
	kindCustom              // computed by fn
)

// path addresses a value: from the container, or from the payload root when root is set.
type path struct {
	root bool
	keys []string
}

// p is a container-relative path; rp a root-relative one.
func p(keys ...string) path  { return path{keys: keys} }
func rp(keys ...string) path { return path{root: true, keys: keys} }

// field is one allow-listed key of an excerpt container.
type field struct {
	out  string
	from []path // tried in order; the first present, non-null value is used
	kind kind
	// unless: skip this field when the container already emitted that key (original_line is a
	// fallback for an outdated comment's null line).
	unless string
	// when: carry the field only if the predicate holds on the container.
	when func(c map[string]any) bool
	// inURL: leave the field out when the container also carries name and an html_url whose
	// path ends in /<this value> (a run's id repeated by its address; the name is its
	// identity, Requirement 2.3), so the excerpt does not say it twice.
	inURL bool
	conv  func(string) string                                        // kindEnum: map a forge keyword to the excerpt's
	sub   []field                                                    // kindObject
	fn    func(st *state, c map[string]any, at string) (value, bool) // kindCustom
}

// container is one object of the excerpt, read from one object of the payload.
type container struct {
	out string
	src []string // keys from the root to the payload object; empty means the root itself
	// scalar: the container is emitted as its single field's value ("label":"bug").
	scalar bool
	fields []field
	// actions: carry the container only for these root actions (labeled, unlabeled).
	actions []string
	// requires: keys the payload object must hold as strings for the container to apply (the
	// status event's fields live at the payload root, which every event has).
	requires []string
	// unlessCarried: leave the container out when the excerpt already carries one of these
	// containers (the generic rule: a comment's or review's html_url names the issue or pull
	// request it lives on, which Requirement 1.2 keeps out).
	unlessCarried []string
}

// rule is the ordered container list for one event.
type rule struct {
	name       string
	action     []path
	containers []container
	// implied: the rule's containers say which event happened (a named GitHub or Forgejo
	// rule), so the excerpt carries no "event" key repeating it.
	implied bool
	// quietActions are actions the excerpt leaves out because the container already shows
	// what they mean: a comment excerpt is the comment as it now stands, whether it was just
	// created or edited ("deleted" is carried: that comment is no longer an instruction).
	quietActions []string
}

// state carries one distillation's options and accumulating report.
type state struct {
	opts     Options
	rep      *Report
	root     map[string]any
	findings []filter.Finding
}

// lookup walks keys from start; ok is false for an absent key, JSON null or a non-object on the
// way.
func lookup(start map[string]any, keys []string) (any, bool) {
	var cur any = start
	for _, k := range keys {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur, ok = m[k]
		if !ok || cur == nil {
			return nil, false
		}
	}
	return cur, cur != nil
}

func (st *state) container(c container) (value, bool) {
	if len(c.actions) > 0 {
		a, _ := st.root["action"].(string)
		if !contains(c.actions, a) {
			return nil, false
		}
	}
	src := st.root
	if len(c.src) > 0 {
		v, ok := lookup(st.root, c.src)
		if !ok {
			return nil, false
		}
		m, ok := v.(map[string]any)
		if !ok {
			// A wrong-typed container yields nothing for it (abuse case 4).
			st.omit(c.out, omitWrongType)
			return nil, false
		}
		src = m
	}
	for _, k := range c.requires {
		if _, ok := src[k].(string); !ok {
			return nil, false
		}
	}
	if c.scalar {
		return st.leaf(c.fields[0], src, c.out)
	}
	obj, ok := st.fields(c.fields, src, c.out)
	return obj, ok
}

func (st *state) fields(fs []field, src map[string]any, at string) (object, bool) {
	var obj object
	for _, f := range fs {
		if f.unless != "" && obj.has(f.unless) {
			continue
		}
		if f.when != nil && !f.when(src) {
			continue
		}
		if v, ok := st.leaf(f, src, at+"."+f.out); ok {
			obj = append(obj, member{f.out, v})
		}
	}
	for _, f := range fs {
		if f.inURL {
			obj = st.dropRepeatedID(obj, f.out)
		}
	}
	return obj, len(obj) > 0
}

// dropRepeatedID removes key from obj when obj carries a name and an html_url whose path ends
// in "/" + key's value: the address already holds the id (a check run's /runs/<id>, a
// workflow run's /actions/runs/<id>).
func (st *state) dropRepeatedID(obj object, key string) object {
	var id, u string
	hasName := false
	for _, m := range obj {
		switch m.key {
		case key:
			if n, ok := m.val.(num); ok {
				id = strconv.FormatInt(int64(n), 10)
			}
		case "name":
			hasName = true
		case "html_url":
			if s, ok := m.val.(str); ok {
				if pu, err := url.Parse(string(s)); err == nil {
					u = pu.Path
				}
			}
		}
	}
	if id == "" || !hasName || !strings.HasSuffix(u, "/"+id) {
		return obj
	}
	out := make(object, 0, len(obj)-1)
	for _, m := range obj {
		if m.key != key {
			out = append(out, m)
		}
	}
	st.rep.Fields--
	return out
}

func (o object) has(key string) bool {
	for _, m := range o {
		if m.key == key {
			return true
		}
	}
	return false
}

// leaf produces one field's value; ok is false when the field is absent or left out.
func (st *state) leaf(f field, c map[string]any, at string) (value, bool) {
	switch f.kind {
	case kindObject:
		return st.fields(f.sub, c, at)
	case kindCustom:
		v, ok := f.fn(st, c, at)
		if ok {
			st.rep.Fields++
		}
		return v, ok
	}
	raw, found := st.find(f.from, c)
	if !found {
		return nil, false
	}
	v, ok := st.convert(f, raw, at)
	if ok {
		st.rep.Fields++
	}
	return v, ok
}

func (st *state) find(from []path, c map[string]any) (any, bool) {
	for _, pa := range from {
		start := c
		if pa.root {
			start = st.root
		}
		if start == nil {
			continue
		}
		if v, ok := lookup(start, pa.keys); ok {
			return v, true
		}
	}
	return nil, false
}

func (st *state) convert(f field, raw any, at string) (value, bool) {
	switch f.kind {
	case kindInt:
		n, ok := raw.(json.Number)
		if !ok {
			st.omit(at, omitWrongType)
			return nil, false
		}
		i, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil {
			st.omit(at, omitWrongType)
			return nil, false
		}
		return num(i), true
	case kindBool:
		b, ok := raw.(bool)
		if !ok {
			st.omit(at, omitWrongType)
			return nil, false
		}
		return boolV(b), true
	}
	s, ok := raw.(string)
	if !ok {
		st.omit(at, omitWrongType)
		return nil, false
	}
	return st.text(f.kind, f.conv, s, at)
}

// text carries one string of the given kind; see the kind constants for the rules.
func (st *state) text(k kind, conv func(string) string, s, at string) (value, bool) {
	if s == "" {
		return nil, false
	}
	clean, ok := st.sanitize(s, at)
	if !ok {
		return nil, false
	}
	switch k {
	case kindURL, kindPath:
		if clean != s {
			// Structural strings are never rewritten: a rewritten URL or path names
			// something else. Leave it out instead.
			st.omit(at, omitUnsafeStructure)
			return nil, false
		}
		if len(s) > maxStructuralBytes {
			st.omit(at, omitTooLong)
			return nil, false
		}
		if k == kindURL && !isWebURL(s) {
			st.omit(at, omitNotWebURL)
			return nil, false
		}
		return str(s), true
	case kindEnum:
		clean = strings.ToLower(clean)
		if conv != nil {
			clean = conv(clean)
		}
	}
	limit := st.opts.MaxDisplayChars
	if k == kindText {
		limit = st.opts.MaxTextChars
	}
	capped, cut := capText(clean, limit)
	if cut {
		st.rep.Truncated = append(st.rep.Truncated, at)
	}
	if capped == "" {
		return nil, false
	}
	return str(capped), true
}

// sanitize runs the filter. A filter that panics or returns invalid UTF-8 has failed: the field
// is left out (fail safe), the event is not.
func (st *state) sanitize(s, at string) (out string, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			out, ok = "", false
			st.omit(at, OmitFilterError)
		}
	}()
	clean, findings := st.opts.Filter.Sanitize(s)
	if !utf8.ValidString(clean) {
		st.omit(at, OmitFilterError)
		return "", false
	}
	st.findings = append(st.findings, findings...)
	return clean, true
}

func (st *state) omit(at, code string) {
	st.rep.Omitted = append(st.rep.Omitted, Omission{Field: at, Code: code})
}

// apiPath matches the REST and GraphQL prefixes of the three forges, also under a relative URL
// root: GitLab /api/v4, Forgejo /api/v1, GitHub Enterprise Server /api/v3 and /api/graphql.
var apiPath = regexp.MustCompile(`(^|/)api/(v[0-9]+|graphql)(/|$)`)

// apiHosts are API-only hosts that have no "api" label: GitHub's upload API.
var apiHosts = map[string]bool{"uploads.github.com": true}

// isWebURL accepts an absolute http(s) URL with a host that is not an API endpoint: no host
// with an "api" label (api.github.com, and api.<host> of an Enterprise Server), no known
// API-only host, no API path (escaped or not), no credentials, and an ASCII host (an IDN host
// arrives as punycode; a non-ASCII one could pass for another host).
func isWebURL(s string) bool {
	u, err := url.Parse(s)
	if err != nil || u.User != nil || u.Host == "" {
		return false
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return false
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	for i := 0; i < len(host); i++ {
		if host[i] >= utf8.RuneSelf {
			return false
		}
	}
	if apiHosts[host] {
		return false
	}
	for _, label := range strings.Split(host, ".") {
		if label == "api" {
			return false
		}
	}
	return !apiPath.MatchString(strings.ToLower(u.EscapedPath())) && !apiPath.MatchString(strings.ToLower(u.Path))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
