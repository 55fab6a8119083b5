package reviewctx

import (
	"regexp"
	"strings"
)

// Identities are the display identities the forge edge saw during one acquisition: the
// merge request's author, the live bot and every note author of the read snapshot. Names, usernames and profile URLs are never model fields, through a field or
// through body text: context DLP rejects a record with a profile URL and rewrites a name or
// username to "someone".
type Identities struct {
	Usernames []string
	Names     []string
}

// Identifier finding codes (context DLP at admission, besides the filter's redact.* codes).
const (
	identEmail      = "pii.email"
	identPhone      = "pii.phone"
	identProfileURL = "identifier.profile_url"
)

var urlRE = regexp.MustCompile(`(?i)\bhttps?://([^\s/?#<>()\[\]"']+)(/[^\s?#<>()\[\]"']*)?`)

// identifierCodes returns the identifier codes s carries: the shared closed PII patterns
// (e-mail, phone) and a profile or avatar URL (any http(s) URL whose first path segment is a
// known username — the forge's own profile pages and other hosts' alike —, GitLab's user
// avatar path, Gravatar). A record carrying one is rejected.
func identifierCodes(s string, ids Identities) []string {
	codes := FindPII(s)
	for _, m := range urlRE.FindAllStringSubmatch(s, -1) {
		host, path := strings.ToLower(m[1]), strings.ToLower(m[2])
		first := strings.TrimRight(strings.SplitN(strings.TrimPrefix(path, "/"), "/", 2)[0], ".,;:!?")
		if strings.Contains(path, "/user/avatar/") || host == "gravatar.com" || strings.HasSuffix(host, ".gravatar.com") ||
			(len(first) >= 3 && containsFold(ids.Usernames, first)) {
			codes = append(codes, identProfileURL)
			break
		}
	}
	return codes
}

// unname rewrites every display identity of a known participant in s to "someone": a display
// name (5+ characters) anywhere and a username (3+ characters) as a whole word, both
// case-insensitive. This is the normalization the spec prescribes for mentions (identity
// replaced, text kept), applied to the same identities written without an @ — a branch named
// alice/fix becomes someone/fix instead of losing the whole record.
func unname(s string, ids Identities) string {
	for _, n := range ids.Names {
		if len(n) >= 5 {
			s = replaceFold(s, n, false)
		}
	}
	for _, u := range ids.Usernames {
		if len(u) >= 3 {
			s = replaceFold(s, u, true)
		}
	}
	return s
}

// replaceFold replaces the case-insensitive occurrences of w in s (whole words only when
// word is set) with "someone". Only ASCII case folding is used, so byte offsets of the
// lower-cased copy match s.
func replaceFold(s, w string, word bool) string {
	lower, lw := asciiLower(s), asciiLower(w)
	var b strings.Builder
	last := 0
	for i := 0; i < len(lower); {
		j := strings.Index(lower[i:], lw)
		if j < 0 {
			break
		}
		a, e := i+j, i+j+len(lw)
		if word && !isWholeWord(lower, a, e) {
			i = a + 1
			continue
		}
		b.WriteString(s[last:a])
		b.WriteString("someone")
		last, i = e, e
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// isWholeWord reports whether s[a:b] is not adjacent to a username character (a trailing dot
// followed by a non-word character ends a sentence, not a username).
func isWholeWord(s string, a, b int) bool {
	isWord := func(c byte) bool {
		return c == '_' || c == '-' || c == '.' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
	}
	before := a == 0 || !isWord(s[a-1])
	after := b == len(s) || !isWord(s[b]) || (s[b] == '.' && (b+1 == len(s) || !isWord(s[b+1])))
	return before && after
}
