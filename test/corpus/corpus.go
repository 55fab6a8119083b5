// Package corpus makes deterministic test and benchmark text for forgectx: CI logs with ANSI
// escape codes, markdown issue/PR threads, and a sprinkling of fake secrets of every family
// the filter's redaction floor covers, plus look-alikes that must NOT be redacted (git SHAs,
// UUIDs, sha256 digests, base64 images, timestamps, phone numbers, order IDs, versions).
//
// The same seed and size always produce the same bytes. Every planted secret is returned with
// its family so a scanner's recall can be measured; every value is fake (random), shaped
// like the real thing.
package corpus

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Families are the secret families Plant can make, named like the filter's redaction kinds.
var Families = []string{
	"run-credential", "private-key", "anthropic-key", "openai-key", "github-token", "gitlab-token",
	"slack-token", "slack-webhook", "google-api-key", "aws-access-key", "stripe-key", "sendgrid-key",
	"huggingface-token", "npm-token", "pypi-token", "vault-token", "age-secret-key", "url-password",
	"authorization", "secret-assignment", "ssn", "payment-card", "iban", "api-key-header", "google-oauth", "jwt",
}

// Secret is one planted secret: Value is the exact secret text that must not survive
// filtering; Family names the kind.
type Secret struct {
	Family string
	Value  string
}

// Corpus is generated text plus what was planted in it.
type Corpus struct {
	Text    []byte
	Secrets []Secret
	// RunCredentials are the literal values a pipeline must be told about (the
	// run-credential family has no pattern of its own).
	RunCredentials []string
}

const (
	alnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	urlB64 = alnum + "_-"
	b64    = alnum + "+/"
	upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	hexd   = "0123456789abcdef"
	bech32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
)

type gen struct {
	r *rand.Rand
	b strings.Builder
	c Corpus
}

func newGen(seed uint64) *gen {
	return &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

func (g *gen) str(alpha string, n int) string {
	var sb strings.Builder
	sb.Grow(n)
	for range n {
		sb.WriteByte(alpha[g.r.IntN(len(alpha))])
	}
	return sb.String()
}

// mixed returns n characters of alpha that include an upper-case letter, a lower-case letter
// and a digit (real key material does; all three keep the fake realistic).
func (g *gen) mixed(alpha string, n int) string {
	for {
		s := g.str(alpha, n)
		if strings.ContainsAny(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") && strings.ContainsAny(s, "abcdefghijklmnopqrstuvwxyz") && strings.ContainsAny(s, "0123456789") {
			return s
		}
	}
}

// letters returns n random letters of both cases with no digit (but at least one of each
// case, as random key material has).
func (g *gen) letters(n int) string {
	const az = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	for {
		s := g.str(az, n)
		if strings.ContainsAny(s, az[:26]) && strings.ContainsAny(s, az[26:]) {
			return s
		}
	}
}

func (g *gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func luhnDigit(d string) byte {
	sum := 0
	double := true
	for k := len(d) - 1; k >= 0; k-- {
		v := int(d[k] - '0')
		if double {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
		double = !double
	}
	return byte('0' + (10-sum%10)%10)
}

func ibanCheck(cc, bban string) string {
	s := bban + cc + "00"
	rem := 0
	for _, c := range s {
		if c >= '0' && c <= '9' {
			rem = (rem*10 + int(c-'0')) % 97
		} else {
			rem = (rem*100 + int(c-'A'+10)) % 97
		}
	}
	return fmt.Sprintf("%s%02d%s", cc, 98-rem, bban)
}

// secretValue makes a fresh fake value of a family.
func (g *gen) secretValue(family string) string {
	switch family {
	case "run-credential":
		// A run has a handful of registered credentials that recur; reuse up to three.
		if len(g.c.RunCredentials) >= 3 {
			return g.c.RunCredentials[g.r.IntN(3)]
		}
		return g.mixed(alnum, 40)
	case "private-key":
		var sb strings.Builder
		sb.WriteString("-----BEGIN " + g.pick("RSA ", "EC ", "OPENSSH ", "") + "PRIVATE KEY-----\n")
		for range 6 {
			sb.WriteString(g.str(b64, 64) + "\n")
		}
		sb.WriteString(g.str(b64, 20) + "==\n")
		s := sb.String()
		label := s[len("-----BEGIN "):strings.Index(s, "-----\n")]
		return s + "-----END " + label + "-----"
	case "anthropic-key":
		return "sk-ant-api03-" + g.mixed(urlB64, 93) + "AA"
	case "openai-key":
		return "sk-proj-" + g.mixed(urlB64, 74) + "T3BlbkFJ" + g.mixed(urlB64, 74)
	case "github-token":
		if g.r.IntN(3) == 0 {
			return "github_pat_11" + g.mixed(alnum, 20) + "_" + g.mixed(alnum, 59)
		}
		return g.pick("ghp_", "gho_", "ghs_", "ghu_", "ghr_") + g.mixed(alnum, 36)
	case "gitlab-token":
		return g.pick("glpat-", "glpat-", "gldt-", "glrt-t1_", "glcbt-64_") + g.mixed(alnum, 20)
	case "slack-token":
		return g.pick("xoxb-", "xoxp-") + g.str("0123456789", 12) + "-" + g.str("0123456789", 13) + "-" + g.mixed(alnum, 24)
	case "slack-webhook":
		return "T" + g.str(upper, 8) + "/B" + g.str(upper, 8) + "/" + g.mixed(alnum, 24)
	case "google-api-key":
		return "AIza" + g.mixed(urlB64, 35)
	case "aws-access-key":
		return g.pick("AKIA", "AKIA", "ASIA") + g.str(upper, 16)
	case "api-key-header":
		return g.mixed(alnum, 32)
	case "google-oauth":
		return "GOCSPX-" + g.mixed(urlB64, 28)
	case "jwt":
		return "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJ" + g.mixed(urlB64, 120) + "." + g.mixed(urlB64, 86)
	case "stripe-key":
		return g.pick("sk_live_", "rk_live_", "sk_test_") + g.mixed(alnum, 24)
	case "sendgrid-key":
		return "SG." + g.mixed(urlB64, 22) + "." + g.mixed(urlB64, 43)
	case "huggingface-token":
		return "hf_" + g.str("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", 34)
	case "npm-token":
		return "npm_" + g.mixed(alnum, 36)
	case "pypi-token":
		return "pypi-AgEIcHlwaS5vcmc" + g.mixed(urlB64, 70)
	case "vault-token":
		if g.r.IntN(3) == 0 {
			return "s." + g.mixed(alnum, 24)
		}
		return "hvs." + g.mixed(urlB64, 90)
	case "age-secret-key":
		return "AGE-SECRET-KEY-1" + g.str(bech32, 58)
	case "url-password", "secret-assignment", "authorization":
		return g.mixed(alnum+"!#%+", 20)
	case "ssn":
		area := 1 + g.r.IntN(665)
		return fmt.Sprintf("%03d-%02d-%04d", area, 1+g.r.IntN(99), 1+g.r.IntN(9999))
	case "payment-card":
		if g.r.IntN(4) == 0 { // American Express, 15 digits, printed 4-6-5
			d := g.pick("34", "37") + g.str("0123456789", 12)
			d += string(luhnDigit(d))
			return d[0:4] + " " + d[4:10] + " " + d[10:15]
		}
		d := g.pick("4", "51", "55") + g.str("0123456789", 14)
		d = d[:15]
		d += string(luhnDigit(d))
		switch g.r.IntN(3) {
		case 0:
			return d[0:4] + " " + d[4:8] + " " + d[8:12] + " " + d[12:16]
		case 1:
			return d[0:4] + "-" + d[4:8] + "-" + d[8:12] + "-" + d[12:16]
		}
		return d
	case "iban":
		if g.r.IntN(2) == 0 {
			return ibanCheck("GB", g.str("ABCDEFGHIJKLMNOPQRSTUVWXYZ", 4)+g.str("0123456789", 14))
		}
		return ibanCheck("DE", g.str("0123456789", 18))
	}
	panic("corpus: unknown family " + family)
}

// plant writes a line carrying a fresh secret of family in a realistic context and records it.
func (g *gen) plant(family string) string {
	v := g.secretValue(family)
	g.c.Secrets = append(g.c.Secrets, Secret{Family: family, Value: v})
	if family == "run-credential" && len(g.c.RunCredentials) < 3 {
		g.c.RunCredentials = append(g.c.RunCredentials, v)
	}
	switch family {
	case "private-key":
		if g.r.IntN(3) == 0 { // a service-account JSON key as a log prints it: escaped newlines
			v = strings.ReplaceAll(v, "\n", `\n`)
			g.c.Secrets[len(g.c.Secrets)-1].Value = v
			return `{"type": "service_account", "private_key": "` + v + `\n", "client_email": "ci@example.iam.gserviceaccount.com"}`
		}
		return "Loaded deploy key:\n" + v
	case "slack-webhook":
		if g.r.IntN(3) == 0 { // JSON with escaped slashes
			v = strings.ReplaceAll(v, "/", `\/`)
			g.c.Secrets[len(g.c.Secrets)-1].Value = v
			return `{"webhook_url":"https:\/\/hooks.slack.com\/services\/` + v + `"}`
		}
		return "POST https://hooks.slack.com/services/" + v + " -> 200"
	case "github-token":
		switch g.r.IntN(4) {
		case 0:
			return "remote: https://x-access-token:" + v + "@github.com/example/project.git"
		case 1:
			return `{\"token\":\"` + v + `\",\"expires_at\":\"2026-12-01T00:00:00Z\"}`
		case 2:
			return "GET /oauth/callback?state=abc&redirect=%2Fhome%3Ftoken%3D" + v + "%26x%3D1"
		}
	case "url-password":
		switch g.r.IntN(4) {
		case 0:
			return `{"database_url":"postgres:\/\/app:` + v + `@db.internal:5432\/app"}`
		case 1:
			return "next=postgres%3A%2F%2Fapp%3A" + v + "%40db.internal%3A5432%2Fapp"
		}
		return "Connecting to " + g.pick("postgres", "mysql", "redis", "amqp", "mongodb") + "://app:" + v + "@db.internal:5432/app"
	case "authorization":
		return g.pick(`curl -sS -H "Authorization: Bearer `+v+`" https://api.example.com/v1/items`,
			`git -c http.extraheader="AUTHORIZATION: basic `+v+`" fetch origin`,
			`{"headers":{"Authorization":"token `+v+`"}}`,
			"> Proxy-Authorization: Basic "+v)
	case "jwt":
		return g.pick("Set-Cookie: session="+v+"; Path=/; HttpOnly", `{"access_token_jwt_claims":null,"session":"`+v+`"}`, "debug: verifying "+v)
	case "api-key-header":
		return g.pick("curl -H 'X-API-Key: "+v+"' https://api.example.com", "PRIVATE-TOKEN: "+v, `"x-api-key": "`+v+`"`)
	case "secret-assignment":
		if g.r.IntN(4) == 0 {
			// about 1% of random 24-28-character secrets have no digit: in an environment
			// file or a JSON document such a value is still the secret, not a variable name
			v = g.letters(24 + g.r.IntN(5))
			g.c.Secrets[len(g.c.Secrets)-1].Value = v
			return g.pick("REDIS_PASSWORD=", "export SERVICE_SECRET=", `{"api_key": "`, `{"password": "`, `\"client_secret\": \"`) + v + g.pick("", `"}`, " ")
		}
		if g.r.IntN(8) == 0 {
			return "      <password>" + v + "</password>"
		}
		return g.pick("DB_PASSWORD=", "export SERVICE_SECRET=", "  client_secret: ", `{"password": "`, "curl -fsS -u deploy:",
			"+ ./release --token ", `\"aws_secret_access_key\": \"`) + v + g.pick("", "", "", `"}`, " https://example.com")
	case "ssn":
		return g.pick("customer ssn=", `{"ssn":"`, "SSN: ") + v + " flagged by validation"
	case "payment-card":
		return "charge failed for card " + v + " (declined)"
	case "iban":
		return "refund to IBAN " + v + " queued"
	case "run-credential":
		return "using credential " + v + " for upload"
	}
	return g.pick("  env: TOKEN=", "export API_TOKEN=", "token: ", "Using key ", "key=", `"apiKey": "`) + v + g.pick("", "", `"`, " (masked?)")
}

// lookalike returns a line of non-secret data that must stay byte-identical.
func (g *gen) lookalike() string {
	switch g.r.IntN(18) {
	case 0:
		return "HEAD is now at " + g.str(hexd, 40) + " Merge pull request #" + fmt.Sprint(1+g.r.IntN(9999))
	case 1:
		return "request-id: " + g.str(hexd, 8) + "-" + g.str(hexd, 4) + "-4" + g.str(hexd, 3) + "-a" + g.str(hexd, 3) + "-" + g.str(hexd, 12)
	case 2:
		return "digest: sha256:" + g.str(hexd, 64) + " size: " + fmt.Sprint(g.r.IntN(100000))
	case 3:
		return "Cache restored from key: go-" + g.str(hexd, 64)
	case 4:
		return "Order ORD-2026-" + fmt.Sprintf("%06d", g.r.IntN(999999)) + " placed; call +1 (555) " + fmt.Sprintf("%03d-%04d", g.r.IntN(1000), g.r.IntN(10000))
	case 5:
		return "go: downloading golang.org/x/text v0." + fmt.Sprint(g.r.IntN(50)) + ".0"
	case 6:
		return "![screenshot](data:image/png;base64," + g.str(b64, 120) + "==)"
	case 7:
		return "elapsed=" + fmt.Sprint(g.r.IntN(100000)) + "ms at 1764460800" + fmt.Sprintf("%03d", g.r.IntN(1000)) + " build 1.2." + fmt.Sprint(g.r.IntN(100))
	case 8:
		return "commit " + g.str(hexd, 40) + " (tag: v2." + fmt.Sprint(g.r.IntN(20)) + ".1)"
	case 9:
		return "token_count=" + fmt.Sprint(g.r.IntN(9000)) + " max_tokens=4096 next_page_token=" + g.str(hexd, 16)
	case 10:
		return "phone: 555-867-5309 ext 12, ticket #" + fmt.Sprint(100000+g.r.IntN(900000))
	case 11:
		return "npm integrity sha512-" + g.str(b64, 86) + "=="
	case 12:
		return "Pulled docker.io/library/alpine@sha256:" + g.str(hexd, 64) + ` "integrity": "sha512-` + g.str(b64, 86) + `=="`
	case 13:
		return `{"id":"` + g.str(hexd, 8) + "-" + g.str(hexd, 4) + "-4" + g.str(hexd, 3) + "-8" + g.str(hexd, 3) + "-" + g.str(hexd, 12) + `","created_at":"2026-11-30T06:05:30.123456789Z","sha":"` + g.str(hexd, 40) + `"}`
	case 14:
		return `echo "$REGISTRY_PASSWORD" | docker login ghcr.io -u bot --password-stdin && mkdir -p dist && docker run -p 8080:80 -u 1000:1000 app`
	case 15:
		return "s.TrimSpace(line) s.Contains(key) token: ${{ secrets.GITHUB_TOKEN }} password: $DB_PASSWORD api_key: <your-api-key>"
	case 16: // digit-free values that name a variable or a placeholder, not a secret
		return g.pick("  password: cfg.Password", "    client_secret: clientSecret,", "GITHUB_TOKEN=secrets.GITHUB_TOKEN make release",
			`{"api_key": "YOUR_API_KEY", "token": "your-token-here"}`, "const apiKey = process.env.API_KEY", "API_TOKEN=API_TOKEN_PROD ./deploy.sh")
	}
	return "go.sum: golang.org/x/text v0.14.0 h1:" + g.str(b64, 43) + "= and request " + g.str(hexd, 32)
}

var ansi = []string{"\x1b[36;1m", "\x1b[0m", "\x1b[32m", "\x1b[31;1m", "\x1b[1m", "\x1b[33m", "\x1b[2K"}

func (g *gen) logLine(ts int) string {
	stamp := fmt.Sprintf("2026-11-30T06:%02d:%02d.%07dZ ", (ts/60)%60, ts%60, g.r.IntN(10000000))
	switch g.r.IntN(14) {
	case 0:
		return stamp + "##[group]Run " + g.pick("actions/checkout@v4", "actions/setup-go@v5", "make test")
	case 1:
		return stamp + ansi[0] + "go test ./... -count=1" + ansi[1]
	case 2:
		return stamp + "ok  \tgithub.com/example/project/pkg/" + g.pick("api", "store", "auth", "web") + "\t" + fmt.Sprintf("%d.%03ds", g.r.IntN(9), g.r.IntN(1000))
	case 3:
		return stamp + ansi[3] + "--- FAIL: Test" + g.pick("Login", "Checkout", "Parse", "Sync") + " (0." + fmt.Sprint(g.r.IntN(99)) + "s)" + ansi[1]
	case 4:
		return stamp + "    " + g.pick("handler_test.go", "store_test.go") + ":" + fmt.Sprint(g.r.IntN(400)) + ": expected status 200, got 500: internal error"
	case 5:
		return stamp + ansi[2] + "✓" + ansi[1] + " " + g.pick("builds the bundle", "renders the page", "parses the config") + " (" + fmt.Sprint(g.r.IntN(900)) + " ms)"
	case 6:
		return stamp + "npm WARN deprecated " + g.pick("inflight@1.0.6", "glob@7.2.3", "rimraf@3.0.2") + ": This module is not supported, and leaks memory."
	case 7:
		return stamp + g.lookalike()
	case 8:
		return stamp + ansi[6] + "\r" + "Downloading layer " + g.str(hexd, 12) + " [" + strings.Repeat("=", g.r.IntN(40)) + ">] " + fmt.Sprint(g.r.IntN(100)) + "%"
	case 9:
		return stamp + "##[endgroup]"
	case 10:
		return stamp + "Step " + fmt.Sprint(g.r.IntN(30)) + "/30 : RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates"
	case 11:
		return stamp + ansi[4] + "warning" + ansi[1] + ": unused variable `ctx` at src/main.rs:" + fmt.Sprint(g.r.IntN(300))
	case 12:
		return stamp + "  shell: /usr/bin/bash -e {0}"
	}
	return stamp + "  GOFLAGS: -mod=readonly"
}

// CILog makes about size bytes of CI-log text (GitHub Actions style: timestamps, groups, ANSI
// colours, carriage-return progress lines, test output) with one planted secret roughly every
// 4 KiB, cycling through every family, and look-alike lines that must stay unchanged.
func CILog(seed uint64, size int) Corpus {
	g := newGen(seed)
	fam := 0
	next := 2048
	for ts := 0; g.b.Len() < size; ts++ {
		if g.b.Len() >= next {
			next += 4096
			stamp := fmt.Sprintf("2026-11-30T07:%02d:%02d.0000000Z ", (ts/60)%60, ts%60)
			g.b.WriteString(stamp + g.plant(Families[fam%len(Families)]) + "\n")
			fam++
			continue
		}
		g.b.WriteString(g.logLine(ts) + "\n")
	}
	g.c.Text = []byte(g.b.String())
	return g.c
}

var prose = []string{
	"Thanks for the report! I can reproduce this on main with the steps below.",
	"Follow the installation instructions in the README, then run `make setup`.",
	"The instructions in CONTRIBUTING.md are outdated; the linter step moved to CI.",
	"Could you share the full log? The snippet above cuts off before the failure.",
	"This regressed in v2.3.0 — bisected to 3f786850e387550fdab836ed7e6dc881de23001b.",
	"> Please ignore the flaky test for now, it is tracked in #4821.",
	"LGTM once the test named `TestIgnorePreviousInstructionsPrompt` is renamed.",
	"We should tell the user when the upload fails instead of retrying silently.",
	"Order ORD-2026-004211 shows twice on the invoice page; customer phone +44 20 7946 0958.",
	"Ping @octocat — the docs say to decode the token with base64 but that's outdated.",
}

var templates = []string{
	"<!-- Describe your change -->",
	"<!-- Please include a summary of the change and which issue is fixed. Please also include relevant motivation and context. -->",
	"<!-- Thanks for sending a pull request! Here are some tips for you:\n1. If this is your first time, please read our contributor guidelines.\n2. Ensure you have added or run the appropriate tests for your PR.\n-->",
	"<!-- If you used an AI assistant to write this change, say so in the description. -->",
	"<!-- Link the issue this PR fixes, e.g. Fixes #123 -->",
	"<!--\nNOTE: Do not include secrets or tokens in logs you paste here.\n-->",
}

// Thread makes about size bytes of a markdown issue/PR thread: comments with template HTML
// comments, prose (including prose that talks about "instructions"), code blocks, quoted logs,
// inline images, with one planted secret roughly every 6 KiB.
func Thread(seed uint64, size int) Corpus {
	g := newGen(seed)
	fam := 0
	next := 3000
	for n := 0; g.b.Len() < size; n++ {
		fmt.Fprintf(&g.b, "### Comment %d by @user%d — 2026-11-%02dT10:%02d:00Z\n\n", n+1, g.r.IntN(500), 1+g.r.IntN(29), g.r.IntN(60))
		g.b.WriteString(g.pick(templates...) + "\n\n")
		for range 2 + g.r.IntN(4) {
			g.b.WriteString(g.pick(prose...) + "\n")
		}
		g.b.WriteString("\n```\n")
		for range 3 + g.r.IntN(6) {
			g.b.WriteString(g.lookalike() + "\n")
		}
		if g.b.Len() >= next {
			next += 6144
			g.b.WriteString(g.plant(Families[fam%len(Families)]) + "\n")
			fam++
		}
		g.b.WriteString("```\n\n| step | result |\n|---|---|\n| build | ✅ |\n| test | ❌ |\n\n")
	}
	g.c.Text = []byte(g.b.String())
	return g.c
}

// Mixed makes about size bytes that alternate between CI-log stretches and markdown-thread
// stretches of about 16 KiB each (one generator, so planted secrets and run credentials are
// recorded once): the corpus the filter's throughput target is measured on.
func Mixed(seed uint64, size int) Corpus {
	g := newGen(seed)
	fam, next, ts := 0, 2048, 0
	for block := 0; g.b.Len() < size; block++ {
		end := min(size, g.b.Len()+16<<10)
		for g.b.Len() < end {
			if g.b.Len() >= next {
				next += 4096 + 2048*(block%2)
				if block%2 == 0 {
					g.b.WriteString(fmt.Sprintf("2026-11-30T07:%02d:%02d.0000000Z ", (ts/60)%60, ts%60))
				}
				g.b.WriteString(g.plant(Families[fam%len(Families)]) + "\n")
				fam++
				continue
			}
			if block%2 == 0 {
				g.b.WriteString(g.logLine(ts) + "\n")
				ts++
			} else {
				g.comment(block)
			}
		}
	}
	g.c.Text = []byte(g.b.String())
	return g.c
}

// comment writes one markdown thread comment (header, template, prose, a code block of
// look-alikes and a table).
func (g *gen) comment(n int) {
	fmt.Fprintf(&g.b, "### Comment %d by @user%d — 2026-11-%02dT10:%02d:00Z\n\n", n+1, g.r.IntN(500), 1+g.r.IntN(29), g.r.IntN(60))
	g.b.WriteString(g.pick(templates...) + "\n\n")
	for range 2 + g.r.IntN(4) {
		g.b.WriteString(g.pick(prose...) + "\n")
	}
	g.b.WriteString("\n```\n")
	for range 3 + g.r.IntN(6) {
		g.b.WriteString(g.lookalike() + "\n")
	}
	g.b.WriteString("```\n\n| step | result |\n|---|---|\n| build | ✅ |\n| test | ❌ |\n\n")
}

// lineLeads open every line of the hostile corpus: each is changed by NFKC (an ideographic
// space, full-width parentheses and letters, a circled digit), so no line of it is already
// in normal form.
var lineLeads = []string{"\u3000", "（注）", "① ", "ｎｏｔｅ ", "\u3000\u3000"}

// cjk is CJK-heavy markdown prose with full-width punctuation (NFKC folds "，", "：", "（）",
// "！" to ASCII) and half-width katakana with voicing marks (NFKC composes them).
var cjk = []string{
	"このバグは再現できます。手順は以下の通りです：（１）ビルド，（２）テスト！",
	"修复了登录页面的问题，请查看日志（见下文）。测试全部通过！",
	"ﾃｽﾄが失敗しました：ﾊﾟｯｹｰｼﾞのﾊﾞｰｼﾞｮﾝを確認してください。",
	"한국어 설명：빌드가 실패했습니다（로그 참조）．",
	"## 変更点\n- ドキュメントを更新，ＣＩの設定を修正\n- ＲＥＡＤＭＥの例を追加",
}

// zalgo returns a letter followed by n combining marks in no canonical order (NFKC reorders
// them and, past 30 in a row, inserts U+034F).
func (g *gen) zalgo(n int) string {
	var sb strings.Builder
	sb.WriteString(g.pick("Z", "a", "l", "g", "o"))
	for range n {
		sb.WriteRune(rune(0x300 + g.r.IntN(0x70)))
	}
	return sb.String()
}

// Hostile makes about size bytes of text that is not NFKC anywhere: the Mixed corpus with a
// compatibility character at the start of every line, CJK-heavy markdown paragraphs, and
// combining-mark runs (some longer than 30). Every planted secret is still in the text
// verbatim (ASCII), so recall is measured as on the other corpora. It is the "hostile
// author" benchmark: a filter that is linear in the text runs it at a throughput comparable
// to the plain corpora.
func Hostile(seed uint64, size int) Corpus {
	base := Mixed(seed, size)
	g := newGen(seed ^ 0x5eed)
	lines := strings.SplitAfter(string(base.Text), "\n")
	var sb strings.Builder
	sb.Grow(size + size/4)
	for k, l := range lines {
		if l == "" {
			continue
		}
		// a private key's body lines are left alone: the key must stay one block
		if !strings.HasPrefix(l, "-----END") && !(len(l) == 65 && !strings.Contains(l, " ")) {
			sb.WriteString(lineLeads[k%len(lineLeads)])
		}
		sb.WriteString(l)
		switch k % 7 {
		case 0, 3:
			sb.WriteString(g.pick(cjk...) + "\n")
		case 5:
			sb.WriteString(g.zalgo(4+g.r.IntN(40)) + " " + g.pick(cjk...) + "\n")
		}
	}
	base.Text = []byte(sb.String())
	return base
}
