package filter

import (
	"bytes"
	"strings"
)

// Key-anchored detectors: "KEY=value", "key: value", "\"key\": \"value\"" (also with
// JSON-escaped quotes as CI logs print them), HTTP headers "Name: value". The scan anchors on
// the separator, reads the key backwards and classifies it; only then is the value parsed.

type keyClass uint8

const (
	keyNone keyClass = iota
	keyAuthorization
	keyAPIHeader
	keySecret
	keyPassword
)

var setKey = mkset("_-.")

var apiKeyHeaders = map[string]bool{
	"x-api-key": true, "api-key": true, "x-apikey": true, "x-auth-token": true, "private-token": true,
	"job-token": true, "deploy-token": true, "x-gitlab-token": true, "x-vault-token": true,
	"x-goog-api-key": true, "ocp-apim-subscription-key": true, "x-functions-key": true,
	"x-amz-security-token": true, "x-access-token": true, "x-hub-signature-256": false,
}

// secretSuffixes name a credential when the (lower-cased) key ends with one of them.
var secretSuffixes = []string{
	"token", "secret", "apikey", "api_key", "api-key", "secretkey", "secret_key", "secret-key",
	"privatekey", "private_key", "private-key", "accesskey", "access_key", "access-key",
	"signingkey", "signing_key", "encryptionkey", "encryption_key", "masterkey", "master_key",
	"authkey", "auth_key", "_auth",
}

var passwordSuffixes = []string{"password", "passwd", "passphrase", "_pass", "-pass", ".pass"}

// notSecretSuffixes are token-named keys that hold pagination or protocol state, not
// credentials.
var notSecretSuffixes = []string{"page_token", "pagetoken", "next_token", "nexttoken",
	"continuation_token", "continuationtoken", "sync_token", "cancellation_token", "max_token",
	"_secret_name", "secretname"}

func classifyKey(k string) keyClass {
	switch k {
	case "authorization", "proxy-authorization":
		return keyAuthorization
	case "pass", "auth":
		if k == "pass" {
			return keyPassword
		}
		return keySecret
	}
	if apiKeyHeaders[k] {
		return keyAPIHeader
	}
	for _, s := range notSecretSuffixes {
		if strings.HasSuffix(k, s) {
			return keyNone
		}
	}
	for _, s := range passwordSuffixes {
		if strings.HasSuffix(k, s) {
			return keyPassword
		}
	}
	for _, s := range secretSuffixes {
		if strings.HasSuffix(k, s) {
			return keySecret
		}
	}
	return keyNone
}

// keySuffixBytes: the last letters of every suffix above, for a cheap reject before
// lower-casing the key: a key whose last byte (folded) is none of these cannot match.
var keyLastByte = func() (t [256]bool) {
	all := append(append(append([]string{"authorization", "pass", "auth"}, secretSuffixes...), passwordSuffixes...), "x-api-key", "api-key", "x-apikey", "x-auth-token",
		"private-token", "job-token", "deploy-token", "x-gitlab-token", "x-vault-token", "x-goog-api-key",
		"ocp-apim-subscription-key", "x-functions-key", "x-amz-security-token", "x-access-token")
	for _, s := range all {
		c := s[len(s)-1]
		t[c] = true
		t[c-'a'+'A'] = true
	}
	return t
}()

var authSchemes = map[string]bool{
	"bearer": true, "basic": true, "token": true, "bot": true, "apikey": true, "api-key": true,
	"key": true, "sso-key": true, "jwt": true, "oauth": true, "gitlab-ci-token": true,
	"negotiate": true, "ntlm": true,
}

// rest-of-line schemes carry comma-separated parameters.
var authParamSchemes = map[string]bool{"digest": true, "aws4-hmac-sha256": true, "hmac": true, "signature": true}

// valueStop ends an unquoted value.
var valueStop = func() (s byteSet) {
	for _, c := range []byte(" \t\n\"'`&,{}])<>\\") {
		s[c] = true
	}
	return s
}()

// detectAssignment classifies the key before the separator at i and, for a secret-named key,
// returns the span of its value.
func detectAssignment(b []byte, i int) (span, bool) {
	n := len(b)
	if i+1 < n && (b[i+1] == b[i] || b[i+1] == '/') { // "::", "==", "://"
		return span{}, false
	}
	if i > 0 && (b[i-1] == '=' || b[i-1] == '!' || b[i-1] == '<' || b[i-1] == '>' || b[i-1] == ':') {
		return span{}, false
	}
	// key, read backwards over optional spaces and a closing quote (possibly JSON-escaped)
	j := i - 1
	for sp := 0; j >= 0 && (b[j] == ' ' || b[j] == '\t') && sp < 4; sp++ {
		j--
	}
	if j >= 0 && (b[j] == '"' || b[j] == '\'') {
		j--
		if j >= 0 && b[j] == '\\' {
			j--
		}
	}
	if j < 0 || !keyLastByte[b[j]] {
		return span{}, false
	}
	ke := j + 1
	for j >= 0 && ke-j <= 64 && setKey[b[j]] {
		j--
	}
	ks := j + 1
	if ks == ke || (ks >= 2 && b[ks-1] == '/' && b[ks-2] == '/') { // URL userinfo: detectURL's
		return span{}, false
	}
	if ks >= 2 && b[ks-1] == '{' && b[ks-2] == '$' { // shell ${NAME:-default}: a reference
		return span{}, false
	}
	var kbuf [64]byte
	key := kbuf[:0]
	for _, c := range b[ks:ke] {
		if isUpper(c) {
			c += 'a' - 'A'
		}
		key = append(key, c)
	}
	class := classifyKey(string(key))
	if class == keyNone {
		return span{}, false
	}
	// value
	v := i + 1
	for v < n && (b[v] == ' ' || b[v] == '\t') {
		v++
	}
	var quote []byte
	if v+1 < n && b[v] == '\\' && b[v+1] == '"' {
		quote = b[v : v+2]
		v += 2
	} else if v < n && (b[v] == '"' || b[v] == '\'') {
		quote = b[v : v+1]
		v++
	}
	switch class {
	case keyAuthorization:
		return authValue(b, v, quote)
	case keyAPIHeader:
		e := v
		for e < n && !valueStop[b[e]] {
			e++
		}
		if e-v < 8 || placeholder(b[v:e]) {
			return span{}, false
		}
		return span{v, e, cAPIKeyHeader}, true
	}
	var e int
	if quote != nil {
		limit := min(n, v+4096)
		k := bytes.Index(b[v:limit], quote)
		nl := bytes.IndexByte(b[v:limit], '\n')
		switch {
		case k >= 0 && (nl < 0 || k < nl):
			e = v + k
		case nl >= 0:
			e = v + nl
		default:
			e = limit
		}
	} else {
		e = v
		for e < n && !valueStop[b[e]] {
			e++
		}
	}
	val := b[v:e]
	if placeholder(val) || bytes.IndexByte(val, '(') >= 0 { // a reference or a call in code
		return span{}, false
	}
	ident, hump := identifier(val)
	if class == keyPassword {
		if len(val) < 4 || (ident && (hump || bytes.IndexByte(val, '.') >= 0)) {
			return span{}, false
		}
		return span{v, e, cSecretAssignment}, true
	}
	if len(val) < 8 || plainWord(val) || ident {
		return span{}, false
	}
	return span{v, e, cSecretAssignment}, true
}

// plainWord reports a value that reads as an identifier or word (lower-case letters, or
// upper-case letters, with '-', '_', '.'): a reference to a secret by name, not its value.
func plainWord(v []byte) bool {
	lower, upper := true, true
	for _, c := range v {
		switch {
		case isLower(c):
			upper = false
		case isUpper(c):
			lower = false
		case c == '-' || c == '_' || c == '.':
		default:
			return false
		}
	}
	return lower || upper
}

// identifier reports a value shaped like a code identifier or selector with no digit
// (accessToken, p.Password, cfg.ClientSecret) and whether it has a camelCase hump: in source
// code such a value names a variable, it is not the secret.
func identifier(v []byte) (ident, hump bool) {
	if len(v) == 0 || !(isUpper(v[0]) || isLower(v[0]) || v[0] == '_') {
		return false, false
	}
	for k, c := range v {
		switch {
		case isLower(c), c == '_':
		case isUpper(c):
			if k > 0 && isLower(v[k-1]) {
				hump = true
			}
		case c == '.':
			if k == len(v)-1 || !(isUpper(v[k+1]) || isLower(v[k+1]) || v[k+1] == '_') {
				return false, false
			}
		default:
			return false, false
		}
	}
	return true, hump
}

// authValue parses "scheme credentials" after an Authorization header and returns the span of
// the credentials (the scheme stays, it is not secret).
func authValue(b []byte, v int, quote []byte) (span, bool) {
	n := len(b)
	s := v
	for s < n && (isAlnum(b[s]) || b[s] == '-') {
		s++
	}
	scheme := strings.ToLower(string(b[v:s]))
	if s < n && b[s] == ' ' && (authSchemes[scheme] || authParamSchemes[scheme]) {
		c := s
		for c < n && b[c] == ' ' {
			c++
		}
		e := c
		if authParamSchemes[scheme] {
			for e < n && e-c < 4096 && b[e] != '\n' && (quote == nil || !bytes.HasPrefix(b[e:], quote)) {
				e++
			}
		} else {
			for e < n && !valueStop[b[e]] {
				e++
			}
		}
		if e-c < 8 || placeholder(b[c:e]) {
			return span{}, false
		}
		return span{c, e, cAuthorization}, true
	}
	// no recognised scheme: a bare credential, only when it looks like one
	e := v
	for e < n && !valueStop[b[e]] {
		e++
	}
	val := b[v:e]
	if len(val) < 16 || !hasDigit(val) || placeholder(val) {
		return span{}, false
	}
	return span{v, e, cAuthorization}, true
}
