package reviewctx

import (
	"regexp"
	"strings"

	"github.com/forgectx/forgectx/pkg/reviewpub/pii"
)

// Identities are the display identities the forge edge saw during one acquisition — the
// merge request's author, the live bot and every note author of the read snapshot — and the
// forge's host. Context DLP rejects admitted text that reveals one of them (names, usernames
// and profile URLs are never model fields, through a field or through body text).
type Identities struct {
	Usernames []string
	Names     []string
	// Host is the forge's host[:port] (profile URLs are https://HOST/USERNAME).
	Host string
}

// Identifier finding codes (context DLP at admission, besides the filter's redact.* codes).
const (
	IdentEmail      = pii.CodeEmail
	IdentPhone      = pii.CodePhone
	IdentProfileURL = "identifier.profile_url"
	IdentUsername   = "identifier.username"
	IdentName       = "identifier.name"
)

var urlRE = regexp.MustCompile(`(?i)\bhttps?://([^\s/?#<>()\[\]"']+)(/[^\s?#<>()\[\]"']*)?`)

// identifierCodes returns the identifier codes s carries: the shared closed PII patterns
// (e-mail, phone), a profile or avatar URL (the forge host with a known username as its first
// path segment, GitLab's user avatar path, Gravatar), a known username (3+ characters) as a
// whole word, or a known display name (5+ characters) anywhere, case-insensitively.
func identifierCodes(s string, ids Identities) []string {
	codes := pii.Find(s)
	lower := strings.ToLower(s)
	for _, m := range urlRE.FindAllStringSubmatch(s, -1) {
		host, path := strings.ToLower(m[1]), strings.ToLower(m[2])
		first := strings.SplitN(strings.TrimPrefix(path, "/"), "/", 2)[0]
		if strings.Contains(path, "/user/avatar/") || host == "gravatar.com" || strings.HasSuffix(host, ".gravatar.com") ||
			(ids.Host != "" && host == strings.ToLower(ids.Host) && first != "" && containsFold(ids.Usernames, first)) {
			codes = append(codes, IdentProfileURL)
			break
		}
	}
	for _, u := range ids.Usernames {
		if len(u) >= 3 && wholeWord(lower, strings.ToLower(u)) {
			codes = append(codes, IdentUsername)
			break
		}
	}
	for _, n := range ids.Names {
		if len(n) >= 5 && strings.Contains(lower, strings.ToLower(n)) {
			codes = append(codes, IdentName)
			break
		}
	}
	return codes
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// wholeWord reports whether w occurs in s not adjacent to a username character.
func wholeWord(s, w string) bool {
	isWord := func(c byte) bool {
		return c == '_' || c == '-' || c == '.' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
	}
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		a, b := i+j, i+j+len(w)
		// a trailing dot ends a sentence, not a username
		if (a == 0 || !isWord(s[a-1])) && (b == len(s) || !isWord(s[b]) || (s[b] == '.' && (b+1 == len(s) || !isWord(s[b+1])))) {
			return true
		}
		i = a + 1
	}
}
