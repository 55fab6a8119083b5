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
	"authkey", "auth_key", "_auth", "_pat", "secret_key_base", "accountkey", "account_key",
}

var passwordSuffixes = []string{"password", "passwd", "passphrase", "_pass", "-pass", ".pass", "_pwd", "-pwd"}

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
	if k == "" {
		return keyNone
	}
	last := k[len(k)-1]
	switch {
	case hasAnySuffix(k, notSecretByLast[last]):
		return keyNone
	case hasAnySuffix(k, passwordByLast[last]):
		return keyPassword
	case hasAnySuffix(k, secretByLast[last]):
		return keySecret
	}
	return keyNone
}

// The suffix lists above by their last byte: a key is only compared with the suffixes that
// end in its own last byte.
var (
	notSecretByLast = byLastByte(notSecretSuffixes)
	passwordByLast  = byLastByte(passwordSuffixes)
	secretByLast    = byLastByte(secretSuffixes)
)

func byLastByte(suffixes []string) (t [256][]string) {
	for _, s := range suffixes {
		t[s[len(s)-1]] = append(t[s[len(s)-1]], s)
	}
	return t
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
	ks, ke, ok := assignKey(b, i)
	if !ok {
		return span{}, false
	}
	var kbuf [64]byte
	class := classifyKey(string(appendLowerASCII(kbuf[:0], b[ks:ke])))
	if class == keyNone {
		return span{}, false
	}
	v, quote := valueStart(b, i+1)
	switch class {
	case keyAuthorization:
		return authValue(b, v, quote)
	case keyAPIHeader:
		e := unquotedEnd(b, v)
		if e-v < 8 || placeholder(b[v:e]) {
			return span{}, false
		}
		return span{v, e, cAPIKeyHeader}, true
	}
	e := assignValueEnd(b, v, quote)
	if !secretValue(class, b[v:e], b[ks:ke], b[i], quote) {
		return span{}, false
	}
	return span{v, e, cSecretAssignment}, true
}

// assignKey finds the key before the separator at i: read backwards over up to four spaces
// and a closing quote (possibly JSON-escaped). ok is false for a separator that cannot be an
// assignment ("::", "==", "://", "!=", "<=") or a key that is no secret name's shape.
func assignKey(b []byte, i int) (ks, ke int, ok bool) {
	if !assignSeparator(b, i) {
		return 0, 0, false
	}
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
		return 0, 0, false
	}
	ke = j + 1
	for j >= 0 && ke-j <= 64 && setKey[b[j]] {
		j--
	}
	ks = j + 1
	// a key right after a JSON or shell escape ("\npassword: …", "\tAuthorization: …")
	if ks > 0 && b[ks-1] == '\\' && ke-ks > 1 && (b[ks] == 'n' || b[ks] == 't' || b[ks] == 'r') {
		ks++
	}
	return ks, ke, keyIsName(b, ks, ke)
}

// assignSeparator reports whether the '=' or ':' at i can separate a key from its value: not
// "::", "==", "://", nor the second byte of "==", "!=", "<=", ">=", "::".
func assignSeparator(b []byte, i int) bool {
	if i+1 < len(b) && (b[i+1] == b[i] || b[i+1] == '/') {
		return false
	}
	return i == 0 || !(b[i-1] == '=' || b[i-1] == '!' || b[i-1] == '<' || b[i-1] == '>' || b[i-1] == ':')
}

// keyIsName reports whether b[ks:ke] is a key of its own: not empty, not the user part of a
// URL's userinfo (detectURL's), not the name in a shell ${NAME:-default} reference.
func keyIsName(b []byte, ks, ke int) bool {
	if ks == ke || (ks >= 2 && b[ks-1] == '/' && b[ks-2] == '/') {
		return false
	}
	return !(ks >= 2 && b[ks-1] == '{' && b[ks-2] == '$')
}

// valueStart skips the spaces after a separator and an opening quote (possibly
// JSON-escaped): the value starts at v, and quote is the quote that ends it (nil unquoted).
func valueStart(b []byte, v int) (int, []byte) {
	n := len(b)
	for v < n && (b[v] == ' ' || b[v] == '\t') {
		v++
	}
	switch {
	case v+1 < n && b[v] == '\\' && b[v+1] == '"':
		return v + 2, b[v : v+2]
	case v < n && (b[v] == '"' || b[v] == '\''):
		return v + 1, b[v : v+1]
	}
	return v, nil
}

// unquotedEnd returns the end of an unquoted value starting at v.
func unquotedEnd(b []byte, v int) int {
	e := v
	for e < len(b) && !valueStop[b[e]] {
		e++
	}
	return e
}

// assignValueEnd returns the end of the value starting at v: a quoted one runs to its closing
// quote on the same line (at most 4096 bytes), an unquoted one to a byte valueStop names.
func assignValueEnd(b []byte, v int, quote []byte) int {
	if quote == nil {
		return unquotedEnd(b, v)
	}
	limit := min(len(b), v+4096)
	k := bytes.Index(b[v:limit], quote)
	nl := bytes.IndexByte(b[v:limit], '\n')
	switch {
	case k >= 0 && (nl < 0 || k < nl):
		return v + k
	case nl >= 0:
		return v + nl
	}
	return limit
}

// secretValue decides whether val, the value of a secret- or password-named key (key, the
// separator sep and the value's quote as found), is a secret rather than a reference, a call
// or a variable name.
func secretValue(class keyClass, val, key []byte, sep byte, quote []byte) bool {
	if placeholder(val) || bytes.IndexByte(val, '(') >= 0 { // a reference or a call in code
		return false
	}
	ident, hump := identifier(val)
	// A quoted value is a string literal and the value of an upper-case NAME= (an environment
	// file or a shell assignment) is literal text: neither is ever a variable name, so a
	// value without a digit (about 1% of random 24-character secrets) is not an identifier
	// there. A dotted value after NAME= (secrets.GITHUB_TOKEN) is still a reference unless
	// envValue or opaqueDotted reads it as literal.
	if ident && (quote != nil || envKey(key, sep) && bytes.IndexByte(val, '.') < 0) {
		ident = false
	}
	if class == keyPassword {
		return len(val) >= 4 && !(ident && (hump || bytes.IndexByte(val, '.') >= 0) && !opaqueDotted(val))
	}
	if len(val) < 8 {
		return false
	}
	if (ident || plainWord(val)) && !envValue(key, sep, quote, val) && !opaqueDotted(val) {
		return false
	}
	return true
}

// opaqueMinRun is the length from which a separator-free run of lower-case letters in a
// dotted value is read as key material rather than a name.
const opaqueMinRun = 16

// nameWords are the words a name referring to a secret holds: a long run containing one
// ("githubpersonalaccesstoken") is still a name.
var nameWords = []string{"token", "secret", "key", "pass", "pwd", "auth", "cred", "cert", "pat"}

// opaqueDotted reports a dotted all-lower-case value that is no reference to a secret by
// name even though it has a name's letters: one of its runs between '.', '_' and '-' is at
// least opaqueMinRun letters long and holds none of nameWords ("s.abcdefghijklmnopqrstuvwx",
// a legacy Vault token in lower case; "abc.defghijklmnopqrstuvwx"). References name their
// parts with words ("secrets.github_token", "inputs.token", "config.api.secret"), and
// English words or identifier parts of 16 letters with no separator are rare.
func opaqueDotted(v []byte) bool {
	if bytes.IndexByte(v, '.') < 0 {
		return false
	}
	run := 0
	for k := 0; k <= len(v); k++ {
		if k < len(v) && isLower(v[k]) {
			run++
			continue
		}
		if k < len(v) && v[k] != '.' && v[k] != '_' && v[k] != '-' {
			return false // not all lower case: plainWord and identifier decide
		}
		if run >= opaqueMinRun && !hasNameWord(v[k-run:k]) {
			return true
		}
		run = 0
	}
	return false
}

func hasNameWord(r []byte) bool {
	for _, w := range nameWords {
		if bytes.Contains(r, []byte(w)) {
			return true
		}
	}
	return false
}

// envValue reports an environment-file or shell assignment (an upper-case KEY, '=', no
// spaces) whose value is a lower-case word, also a dotted one: in .env files and shell
// assignments such a value ("supersecretvalue", "abc.defghijklmnop") is the secret itself,
// while a reference to another variable would be written $NAME, in upper case, or with the
// secret's name in it (a GitHub Actions expression pasted without its ${{ }}).
func envValue(key []byte, sep byte, quote, val []byte) bool {
	if !envKey(key, sep) {
		return false
	}
	for _, c := range val {
		if isUpper(c) {
			return false
		}
	}
	// a dotted value is literal text there too, unless it names a secret
	// ("secrets.github_token", "steps.login.outputs.token", "github.token")
	return bytes.IndexByte(val, '.') < 0 || !hasNameWord(val)
}

// envKey reports an environment-file or shell assignment key: upper case, digits and '_',
// followed by '='.
func envKey(key []byte, sep byte) bool {
	if sep != '=' {
		return false
	}
	for _, c := range key {
		if !(isUpper(c) || isDigit(c) || c == '_') {
			return false
		}
	}
	return true
}

// flagValue parses the value of a long flag or a curl -u argument starting at v: quoted (to
// the closing quote on the same line, at most 4096 bytes) or up to the next byte valueStop
// names.
func flagValue(b []byte, v int) (start, end int) {
	n := len(b)
	if v < n && (b[v] == '"' || b[v] == '\'') {
		q := b[v]
		v++
		e := v
		for e < n && e-v < 4096 && b[e] != q && b[e] != '\n' {
			e++
		}
		return v, e
	}
	e := v
	for e < n && !valueStop[b[e]] && b[e] != ';' && b[e] != '|' { // an unquoted ';' or '|' ends the shell command
		e++
	}
	return v, e
}

// detectLongFlag matches a secret-named long flag whose value follows after a space
// ("--token VALUE", "--password 'VALUE'", "--client-secret VALUE"); the "--flag=VALUE" form is
// an assignment. Values that are references, paths or key=value pairs (docker's
// "--secret id=x,src=y") stay.
func detectLongFlag(b []byte, i int) (span, bool) {
	if i > 0 && !(b[i-1] == ' ' || b[i-1] == '\t' || b[i-1] == '\n' || b[i-1] == '"' || b[i-1] == '\'') {
		return span{}, false
	}
	ks := i + 2
	ke := setKey.run(b, ks)
	if ke-ks < 3 || ke-ks > 40 || ke >= len(b) || (b[ke] != ' ' && b[ke] != '\t') {
		return span{}, false
	}
	var kbuf [40]byte
	key := appendLowerASCII(kbuf[:0], b[ks:ke])
	if string(key) == "user" {
		return detectCurlUser(b, i, ke)
	}
	class := classifyKey(string(key))
	if class != keySecret && class != keyPassword {
		return span{}, false
	}
	v := ke
	for v < len(b) && (b[v] == ' ' || b[v] == '\t') {
		v++
	}
	vs, ve := flagValue(b, v)
	if !flagSecret(class, b[vs:ve]) {
		return span{}, false
	}
	return span{vs, ve, cSecretAssignment}, true
}

// flagSecret decides whether val, the value after a secret- or password-named long flag, is
// a secret. A plain word after the flag is prose or a placeholder ("add a --password option",
// "--token YOUR_TOKEN"), for password flags too; a value starting with '-' is the next flag,
// and one holding '=' or '(' is a key=value list or code.
func flagSecret(class keyClass, val []byte) bool {
	if len(val) < 4 || val[0] == '-' || placeholder(val) || bytes.IndexByte(val, '=') >= 0 || bytes.IndexByte(val, '(') >= 0 {
		return false
	}
	return (!plainWord(val) || opaqueDotted(val)) && (class != keySecret || len(val) >= 8)
}

var curlWord = []byte("curl ")

// detectCurlUser matches "curl … -u user:password" and "--user user:password" (v is where
// the argument starts): the password after the first ':' is redacted. Only on a line that
// runs curl, since "-u" means something else to other tools (docker run -u 1000:1000).
func detectCurlUser(b []byte, i, v int) (span, bool) {
	if i > 0 && b[i-1] != ' ' && b[i-1] != '\t' {
		return span{}, false
	}
	if !sameCommand(b, i, curlWord) {
		return span{}, false
	}
	for v < len(b) && b[v] == ' ' {
		v++
	}
	vs, ve := flagValue(b, v)
	c := bytes.IndexByte(b[vs:ve], ':')
	if c < 0 {
		return span{}, false
	}
	pw := b[vs+c+1 : ve]
	if len(pw) == 0 || placeholder(pw) {
		return span{}, false
	}
	return span{vs + c + 1, ve, cSecretAssignment}, true
}

// detectXMLElement matches a secret-named XML element whose start tag ends at the '>' at i
// (<password>VALUE</password>, <token>VALUE</token> in Maven or NuGet settings): the text up
// to the closing tag on the same line is the value; with no closing tag, the text up to the
// next '<' or the line end when it holds no space.
func detectXMLElement(b []byte, i int) (span, bool) {
	if i == 0 || !isAlnum(b[i-1]) || !keyLastByte[b[i-1]] {
		return span{}, false
	}
	j := i - 1
	for j >= 0 && i-j <= 48 && setKey[b[j]] {
		j--
	}
	if j < 0 || b[j] != '<' {
		return span{}, false
	}
	var kbuf [48]byte
	key := appendLowerASCII(kbuf[:0], b[j+1:i])
	class := classifyKey(string(key))
	if class != keySecret && class != keyPassword {
		return span{}, false
	}
	v := i + 1
	e := v
	for e < len(b) && e-v < 4096 && b[e] != '<' && b[e] != '\n' {
		e++
	}
	val := b[v:e]
	closed := e+1 < len(b) && b[e] == '<' && b[e+1] == '/'
	if !closed && bytes.ContainsAny(val, " \t") {
		// no closing tag on the line: only a value with no space (a cut or unclosed
		// element), never prose such as "<password> is required"
		return span{}, false
	}
	if placeholder(val) || len(val) < 4 || (class == keySecret && (len(val) < 8 || plainWord(val) && !opaqueDotted(val))) {
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

var (
	loginWord = []byte("login ")
	mysqlWord = []byte("mysql")
)

// detectPasswordFlag matches the short password flag where its meaning is certain: "-p VALUE"
// on a line that runs a registry login (docker/podman/helm … login), and "-pVALUE" on a line
// that runs a MySQL client (mysql, mysqldump, mysqladmin). Elsewhere -p means a port, a path
// or "parents".
func detectPasswordFlag(b []byte, i int) (span, bool) {
	if i > 0 && b[i-1] != ' ' && b[i-1] != '\t' {
		return span{}, false
	}
	var vs, ve int
	switch {
	case i+2 < len(b) && b[i+2] == ' ' && sameCommand(b, i, loginWord):
		vs, ve = flagValue(b, i+3)
	case i+2 < len(b) && b[i+2] != ' ' && b[i+2] != '\t' && b[i+2] != '=' && sameCommand(b, i, mysqlWord):
		vs, ve = flagValue(b, i+2)
	default:
		return span{}, false
	}
	val := b[vs:ve]
	if len(val) < 4 || val[0] == '-' || placeholder(val) {
		return span{}, false
	}
	return span{vs, ve, cSecretAssignment}, true
}

// sameCommand reports whether word occurs before i on the same line and in the same shell
// command: no "|", ";" or "&" lies between its last occurrence and i ("docker login … &&
// docker run -p 8080:80" is two commands).
func sameCommand(b []byte, i int, word []byte) bool {
	from := max(0, i-512)
	ls := bytes.LastIndexByte(b[from:i], '\n') + 1 + from
	k := bytes.LastIndex(b[ls:i], word)
	if k < 0 {
		return false
	}
	return !bytes.ContainsAny(b[ls+k:i], "|;&")
}
