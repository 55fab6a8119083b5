package filter

import (
	"bytes"
	"slices"
)

// prefixRule is one vendor token: a case-sensitive literal prefix at a word start followed
// by a body drawn from set. Exact pattern semantics are part of filter_version and are
// documented in docs/filter.md.
type prefixRule struct {
	prefix   string
	set      *byteSet
	min, max int // body length bounds; max 0 means unbounded
	kind     code
	check    func(body []byte) bool // extra validation of the body, nil = none
	noFollow string                 // bytes that must not follow the body (a call or a selector in code)
}

var setUpperDigit = func() (s byteSet) {
	for b := '0'; b <= '9'; b++ {
		s[b] = true
	}
	for b := 'A'; b <= 'Z'; b++ {
		s[b] = true
	}
	return s
}()

// bech32 alphabet, upper case, for age secret keys.
var setBech32Upper = func() (s byteSet) {
	for _, b := range []byte("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L") {
		s[b] = true
	}
	return s
}()

func hasDigit(b []byte) bool {
	for _, c := range b {
		if isDigit(c) {
			return true
		}
	}
	return false
}

// mixed reports a body with an upper-case letter, a lower-case letter and a digit: random
// key material has all three, kebab-case words and identifiers rarely do.
func mixed(b []byte) bool {
	var u, l, d bool
	for _, c := range b {
		u = u || isUpper(c)
		l = l || isLower(c)
		d = d || isDigit(c)
	}
	return u && l && d
}

func mixedCase(b []byte) bool {
	var u, l bool
	for _, c := range b {
		u = u || isUpper(c)
		l = l || isLower(c)
	}
	return u && l
}

func allIn(set *byteSet) func([]byte) bool {
	return func(b []byte) bool {
		for _, c := range b {
			if !set[c] {
				return false
			}
		}
		return true
	}
}

var prefixRules [256][]prefixRule

func init() {
	add := func(r prefixRule) { prefixRules[r.prefix[0]] = append(prefixRules[r.prefix[0]], r) }
	for _, p := range []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"} {
		add(prefixRule{prefix: p, set: &setAlnum, min: 30, kind: cGitHubToken})
	}
	add(prefixRule{prefix: "github_pat_", set: &setAlnumU, min: 40, kind: cGitHubToken})
	for _, p := range []string{"glpat-", "gldt-", "glrt-", "glrtr-", "glcbt-", "glptt-", "glft-", "glimt-",
		"glagent-", "gloas-", "glsoat-", "glffct-", "glwt-", "glsst-"} {
		add(prefixRule{prefix: p, set: &setAlnumUD, min: 20, kind: cGitLabToken})
	}
	add(prefixRule{prefix: "GR1348941", set: &setAlnumUD, min: 20, kind: cGitLabToken})
	add(prefixRule{prefix: "GOCSPX-", set: &setAlnumUD, min: 24, kind: cGoogleOAuth})
	add(prefixRule{prefix: "ya29.", set: &setAlnumUD, min: 20, kind: cGoogleOAuth, check: hasDigit})
	add(prefixRule{prefix: "AIza", set: &setAlnumUD, min: 35, max: 35, kind: cGoogleAPIKey})
	for _, p := range []string{"AKIA", "ASIA", "ABIA", "ACCA"} {
		add(prefixRule{prefix: p, set: &setAlnum, min: 16, max: 16, kind: cAWSAccessKey, check: allIn(&setUpperDigit)})
	}
	// age keys are exactly 58 bech32 characters; a shorter or longer run (a key cut by a
	// wrapped line or pasted twice) is still key material.
	add(prefixRule{prefix: "AGE-SECRET-KEY-1", set: &setAlnum, min: 50, kind: cAgeSecretKey, check: allIn(&setBech32Upper)})
	// sk-ant- and the named OpenAI project/service-account/admin prefixes must come before sk-
	// (same first byte, rules are tried in order). The named prefixes are specific enough
	// that the body only needs a digit, whatever its letter case.
	add(prefixRule{prefix: "sk-ant-", set: &setAlnumUD, min: 32, kind: cAnthropicKey})
	for _, p := range []string{"sk-proj-", "sk-svcacct-", "sk-admin-", "sk-None-"} {
		add(prefixRule{prefix: p, set: &setAlnumUD, min: 20, kind: cOpenAIKey, check: hasDigit})
	}
	add(prefixRule{prefix: "sk_live_", set: &setAlnum, min: 20, kind: cStripeKey})
	add(prefixRule{prefix: "sk_test_", set: &setAlnum, min: 20, kind: cStripeKey})
	add(prefixRule{prefix: "sk-", set: &setAlnumUD, min: 32, kind: cOpenAIKey, check: mixed})
	// The legacy key's body is exactly 48 alphanumerics: that length after "sk-" is key
	// material whatever its letter classes (a body of one case, or with no digit, is rare in
	// random keys but still one); a longer kebab-case word or one continued by '-' or '_' is
	// not.
	add(prefixRule{prefix: "sk-", set: &setAlnum, min: 48, max: 48, kind: cOpenAIKey, noFollow: "-_"})
	add(prefixRule{prefix: "rk_live_", set: &setAlnum, min: 20, kind: cStripeKey})
	add(prefixRule{prefix: "rk_test_", set: &setAlnum, min: 20, kind: cStripeKey})
	add(prefixRule{prefix: "whsec_", set: &setAlnum, min: 32, kind: cStripeKey})
	add(prefixRule{prefix: "xoxe.", set: &setAlnumUD, min: 20, kind: cSlackToken, check: hasDigit})
	for _, p := range []string{"xoxa-", "xoxb-", "xoxc-", "xoxd-", "xoxe-", "xoxo-", "xoxp-", "xoxr-", "xoxs-", "xapp-"} {
		add(prefixRule{prefix: p, set: &setAlnumUD, min: 10, kind: cSlackToken, check: hasDigit})
	}
	add(prefixRule{prefix: "SG.", set: &setAlnumUDDot, min: 66, max: 66, kind: cSendGridKey,
		check: func(b []byte) bool {
			return b[22] == '.' && bytes.IndexByte(b[:22], '.') < 0 && bytes.IndexByte(b[23:], '.') < 0
		}})
	add(prefixRule{prefix: "hf_", set: &setAlnum, min: 30, kind: cHuggingFaceToken, check: mixedCase})
	add(prefixRule{prefix: "api_org_", set: &setAlnum, min: 30, kind: cHuggingFaceToken, check: mixedCase})
	for _, p := range []string{"hvs.", "hvb.", "hvr."} {
		add(prefixRule{prefix: p, set: &setAlnumUD, min: 24, kind: cVaultToken})
	}
	// Legacy Vault service tokens: "s." + exactly 24 base62 characters with all three classes;
	// not followed by '(' or '.' (code such as s.TrimSpace(…) or s.someLongFieldName.x).
	add(prefixRule{prefix: "s.", set: &setAlnum, min: 24, max: 24, kind: cVaultToken, check: mixed, noFollow: "(."})
	add(prefixRule{prefix: "npm_", set: &setAlnum, min: 36, kind: cNPMToken})
	// JSON Web Tokens (bearer credentials in logs and cookies): base64url header "eyJ…", a
	// payload that is JSON too, and a signature (JWS), or the five parts of a JWE.
	add(prefixRule{prefix: "eyJ", set: &setAlnumUDDot, min: 30, kind: cJWT, check: jwtParts})
	add(prefixRule{prefix: "pypi-AgE", set: &setAlnumUD, min: 60, kind: cPyPIToken})
	for c := range prefixRules {
		for _, r := range prefixRules[c] {
			prefixPair[pairKey(r.prefix[0], r.prefix[1])] = true
		}
	}
	prefixPair[pairKey(slackHost[0], slackHost[1])] = true
	for x := byte('A'); x <= 'Z'; x++ { // an IBAN opens with its two-letter country code
		for y := byte('A'); y <= 'Z'; y++ {
			prefixPair[pairKey(x, y)] = true
		}
	}
}

// prefixPair holds the first two bytes of every token prefix, of the Slack webhook host and of
// every IBAN country code: a word starting with any other pair cannot be one of them, and most
// words leave detectPrefix after one table lookup.
var prefixPair [1 << 16]bool

func pairKey(a, b byte) uint16 { return uint16(a)<<8 | uint16(b) }

// detectPrefix runs the vendor-token rules and the IBAN check at the word start i.
func detectPrefix(b []byte, i int) (span, bool) {
	if i+1 >= len(b) || !prefixPair[pairKey(b[i], b[i+1])] {
		return span{}, false
	}
	rest := b[i:]
	for k := range prefixRules[b[i]] {
		r := &prefixRules[b[i]][k]
		if len(rest) <= len(r.prefix) || string(rest[:len(r.prefix)]) != r.prefix {
			continue
		}
		bs := i + len(r.prefix)
		end := r.set.run(b, bs)
		n := end - bs
		if n < r.min || (r.max > 0 && n > r.max) {
			continue
		}
		// The body must end the token: a following alphanumeric means a longer, different word.
		if end < len(b) && isAlnum(b[end]) {
			continue
		}
		if r.check != nil && !r.check(b[bs:end]) {
			continue
		}
		if r.noFollow != "" && end < len(b) && bytes.IndexByte([]byte(r.noFollow), b[end]) >= 0 {
			continue
		}
		return span{i, end, r.kind}, true
	}
	if b[i] == 'h' {
		return detectSlackWebhook(b, i)
	}
	if isUpper(b[i]) {
		return detectIBAN(b, i)
	}
	return span{}, false
}

var beginMarker = []byte("-----BEGIN ")

// detectPrivateKey matches a PEM/OpenSSH/PGP private-key block from its BEGIN line through
// its END line. A block with no END line is redacted to the end of the text: a key cut short
// is still a key.
func detectPrivateKey(b []byte, i int) (span, bool) {
	ls := i + len(beginMarker)
	le := bytes.Index(b[ls:min(len(b), ls+80)], []byte("-----"))
	if le < 0 {
		return span{}, false
	}
	label := b[ls : ls+le]
	if !bytes.Contains(label, []byte("PRIVATE KEY")) || bytes.IndexByte(label, '\n') >= 0 {
		return span{}, false
	}
	after := ls + le + 5
	e := bytes.Index(b[after:], []byte("-----END "))
	if e < 0 {
		return span{i, len(b), cPrivateKey}, true
	}
	e += after + len("-----END ")
	t := bytes.Index(b[e:min(len(b), e+80)], []byte("-----"))
	if t < 0 {
		return span{i, len(b), cPrivateKey}, true
	}
	return span{i, e + t + 5, cPrivateKey}, true
}

// skipDataURI returns the end of a data:…;base64, payload whose ':' is at i, or i. Inline
// images are never secrets, and skipping them keeps random base64 from looking like tokens.
func skipDataURI(b []byte, i int) int {
	if i < 4 || !bytes.EqualFold(b[i-4:i], []byte("data")) || (i > 4 && isAlnum(b[i-5])) {
		return i
	}
	w := b[i+1 : min(len(b), i+100)]
	k := bytes.Index(w, []byte(";base64,"))
	if k < 0 || bytes.ContainsAny(w[:k], " \t\n\"'") {
		return i
	}
	j := i + 1 + k + len(";base64,")
	for j < len(b) && (isAlnum(b[j]) || b[j] == '+' || b[j] == '/' || b[j] == '=') {
		j++
	}
	return j
}

// urlStop ends the authority part of a URL. '?' and '#' do not: a pasted DSN often carries
// an unencoded password containing them.
var urlStop = func() (s byteSet) {
	for _, c := range []byte("/\"'<>`()[]{}\\ \t\n") {
		s[c] = true
	}
	return s
}()

// detectURL looks at the URL whose "://" (or JSON-escaped ":\/\/") starts at i: a password in
// its userinfo (scheme://user:password@host) is redacted.
func detectURL(b []byte, i int) (span, bool) {
	a := i + 3
	if b[i+1] == '\\' {
		a = i + 5
	}
	j, at := a, -1
	for j < len(b) && j-a < 2048 && !urlStop[b[j]] {
		if b[j] == '@' {
			at = j
		}
		j++
	}
	if at > a {
		if c := bytes.IndexByte(b[a:at], ':'); c >= 0 {
			pw := b[a+c+1 : at]
			if len(pw) > 0 && !placeholder(pw) {
				return span{a + c + 1, at, cURLPassword}, true
			}
		}
	}
	return span{}, false
}

var encodedScheme = []byte("%3a%2f%2f")

// detectEncodedURL is detectURL for a URL-encoded URL whose "%3A%2F%2F" starts at i (a
// redirect or callback parameter): the userinfo password between "%3A" and the last "%40" of
// the authority is redacted. The authority ends at "%2F", '&', or a byte that ends a URL.
func detectEncodedURL(b []byte, i int) (span, bool) {
	a := i + len(encodedScheme)
	j, at, colon := a, -1, -1
	for j < len(b) && j-a < 2048 && !urlStop[b[j]] && b[j] != '&' {
		if b[j] == '%' && j+2 < len(b) {
			switch {
			case b[j+1] == '2' && b[j+2]|0x20 == 'f':
				goto done
			case b[j+1] == '4' && b[j+2] == '0':
				at = j
			case b[j+1] == '3' && b[j+2]|0x20 == 'a' && colon < 0:
				colon = j
			}
		}
		j++
	}
done:
	if colon >= 0 && at > colon+3 {
		pw := b[colon+3 : at]
		if !placeholder(pw) {
			return span{colon + 3, at, cURLPassword}, true
		}
	}
	return span{}, false
}

// placeholder reports a value that is a reference or a mask, not a credential: empty, an
// earlier redaction (or a truncated piece of one), a variable or template reference ($NAME,
// ${…}, $(…), {{ … }}, {name}, %NAME%, <name>), a path (/…, ~/…, ./…), a boolean, null or a word
// naming a secret, or a run of mask characters (***, xxxx, ----).
func placeholder(v []byte) bool {
	// An earlier redaction, or a bound-truncated piece of one, is never redacted again: that
	// keeps the pipeline idempotent on its own output.
	if len(v) == 0 || bytes.HasPrefix(v, redactedMarker) || bytes.HasPrefix(redactedMarker, v) {
		return true
	}
	if ref, decided := referenceShape(v); decided {
		return ref
	}
	if maskWord(v) {
		return true
	}
	for _, c := range v {
		if c != '*' && c != 'x' && c != 'X' && c != '.' && c != '#' && c != '-' {
			return false
		}
	}
	return true
}

// referenceShape decides placeholder by the value's first byte where that byte alone
// settles it: a variable or template reference, a path, a mask tag.
func referenceShape(v []byte) (ref, decided bool) {
	switch v[0] {
	case '$': // $NAME, ${NAME}, ${{ expr }}, $(cmd)
		return len(v) > 1 && (v[1] == '{' || v[1] == '(' || v[1] == '_' || isUpper(v[1]) || isLower(v[1])), true
	case '%': // %NAME%, or a format verb (%s, %v, %T.) in code
		return len(v) <= 4 || (v[len(v)-1] == '%' && plainWord(v[1:len(v)-1])), true
	case '<': // <your-token>
		return v[len(v)-1] == '>', true
	case '/', '~': // a path to a secret file, not the secret
		return true, true
	case '{': // {{ expr }}, {name}
		return len(v) > 1 && (v[1] == '{' || plainWord(bytes.TrimSuffix(v[1:], []byte("}")))), true
	case '.':
		return len(v) > 1 && v[1] == '/', true
	}
	return false, false
}

// maskWords are values that name or mask a secret instead of holding one (compared
// case-insensitively).
var maskWords = []string{"null", "none", "nil", "true", "false", "undefined", "redacted", "masked", "hidden", "secret", "password", "token"}

// maskWord reports a value that is one of maskWords, in any letter case (Unicode case
// folding, as bytes.ToLower does: the Kelvin sign lower-cases to 'k'); an ASCII value is
// compared without the lower-cased copy.
func maskWord(v []byte) bool {
	if asciiPrefix(v) < len(v) {
		return slices.Contains(maskWords, string(bytes.ToLower(v)))
	}
	if len(v) < 3 || len(v) > 9 {
		return false
	}
	for _, w := range maskWords {
		if len(w) == len(v) && hasPrefixFold(v, w) {
			return true
		}
	}
	return false
}

var slackHost = []byte("hooks.slack.com")

// urlSep returns the length of a URL path separator at i: "/", the JSON-escaped "\/" or the
// URL-encoded "%2F" (either case); 0 when there is none.
func urlSep(b []byte, i int) int {
	switch {
	case i < len(b) && b[i] == '/':
		return 1
	case i+1 < len(b) && b[i] == '\\' && b[i+1] == '/':
		return 2
	case i+2 < len(b) && b[i] == '%' && b[i+1] == '2' && b[i+2]|0x20 == 'f':
		return 3
	}
	return 0
}

// detectSlackWebhook matches the secret path of a Slack webhook at the word start i
// ("hooks.slack.com/services/…", "/workflows/…", "/triggers/…"), also when the URL is
// JSON-escaped ("\/") or URL-encoded ("%2F"): everything after the kind segment is the
// credential and is replaced; the host and kind stay.
func detectSlackWebhook(b []byte, i int) (span, bool) {
	if !bytes.HasPrefix(b[i:], slackHost) {
		return span{}, false
	}
	j := i + len(slackHost)
	n := urlSep(b, j)
	if n == 0 {
		return span{}, false
	}
	j += n
	var kind string
	for _, k := range []string{"services", "workflows", "triggers"} {
		if bytes.HasPrefix(b[j:], []byte(k)) {
			kind = k
			break
		}
	}
	if kind == "" {
		return span{}, false
	}
	j += len(kind)
	if n = urlSep(b, j); n == 0 {
		return span{}, false
	}
	start := j + n
	e, body := start, 0
	for e < len(b) {
		if isAlnum(b[e]) || b[e] == '_' || b[e] == '-' {
			e++
			body++
			continue
		}
		if n := urlSep(b, e); n > 0 && e+n < len(b) && (isAlnum(b[e+n]) || b[e+n] == '_') {
			e += n
			continue
		}
		break
	}
	if body < 16 {
		return span{}, false
	}
	return span{start, e, cSlackWebhook}, true
}

// jwtParts validates the body of a JWT after its "eyJ": three dot-separated parts (JWS) whose
// payload also starts "eyJ" and whose signature has 16 or more characters, or five parts
// (JWE); every part but a JWE's empty key part has 8 or more characters.
func jwtParts(body []byte) bool {
	parts := bytes.Split(body, []byte("."))
	switch len(parts) {
	case 3:
		return len(parts[0]) >= 5 && len(parts[1]) >= 8 && bytes.HasPrefix(parts[1], []byte("eyJ")) && len(parts[2]) >= 16
	case 5:
		return len(parts[0]) >= 5 && len(parts[2]) >= 8 && len(parts[3]) >= 8 && len(parts[4]) >= 8
	}
	return false
}
