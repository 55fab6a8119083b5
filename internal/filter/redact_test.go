package filter_test

import (
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/filter"
)

const (
	ghToken  = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"
	awsKey   = "AKIAIOSFODNN7EXAMPLE"
	openai   = "sk-proj-Ab3De5Fg7Hj9Kl1Mn3Pq5Rs7Tu9Vw1Xy3Za5Bc7De9Fg1"
	anthro   = "sk-ant-api03-Ab3De5Fg7Hj9Kl1Mn3Pq5Rs7Tu9Vw1Xy3Za5Bc7De9Fg1Hj3Kl5-AA"
	glToken  = "glpat-Ab3De5Fg7Hj9Kl1Mn3Pq"
	slackTok = "xoxb-123456789012-1234567890123-Ab3De5Fg7Hj9Kl1Mn3Pq5Rs7"
	googKey  = "AIzaSyAb3De5Fg7Hj9Kl1Mn3Pq5Rs7Tu9Vw1Xy3"
	stripe   = "sk_live_Ab3De5Fg7Hj9Kl1Mn3Pq5Rs7T"
	sendgrid = "SG.Ab3De5Fg7Hj9Kl1Mn3Pq5R.Ab3De5Fg7Hj9Kl1Mn3Pq5Rs7Tu9Vw1Xy3Za5Bc7De9F"
	hfToken  = "hf_AbcDefGhiJklMnoPqrStuVwxYzaBcdEfgHi"
	npmTok   = "npm_Ab3De5Fg7Hj9Kl1Mn3Pq5Rs7Tu9Vw1Xy3Za5B"
	pypiTok  = "pypi-AgEIcHlwaS5vcmcCJDAwMDAwMDAwLTAwMDAtMDAwMC0wMDAwLTAwMDAwMDAwMDAwMAACKlsxLFsiYWJjIl1dAAIsWzIsWyJkZWYiXV0AAAYgAb3De5Fg7Hj9"
	vaultTok = "hvs.CAESIAb3De5Fg7Hj9Kl1Mn3Pq5Rs7Tu9Vw1Xy3Za5Bc7De9"
	ageKey   = "AGE-SECRET-KEY-1QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQPZRY9X8GF2TVDW0S3JN54KHCE"
)

// TestRedactionFloorPositives: every family of the v1 redaction floor is detected and
// replaced by its documented "[REDACTED:<kind>]" marker; the surrounding text stays.
func TestRedactionFloorPositives(t *testing.T) {
	p := filter.New([]string{"s3cr3t-run-value-42"})
	for _, c := range []struct{ name, in, out string }{
		{"run credential literal", "echo s3cr3t-run-value-42 done", "echo [REDACTED:run-credential] done"},
		{"github classic", "token " + ghToken + ".", "token [REDACTED:github-token]."},
		{"github fine-grained", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456", "[REDACTED:github-token]"},
		{"digit-free env password (v1.4)", "REDIS_PASSWORD=xvgIWVProsmlIcrIASvstKFW", "REDIS_PASSWORD=[REDACTED:secret-assignment]"},
		{"digit-free env secret (v1.4)", "export SERVICE_SECRET=pWynKiDnVSYjSiqTRCugRsKHNfbC", "export SERVICE_SECRET=[REDACTED:secret-assignment]"},
		{"digit-free JSON api_key (v1.4)", `{"api_key": "pWynKiDnVSYjSiqTRCugRsKHNfbC"}`, `{"api_key": "[REDACTED:secret-assignment]"}`},
		{"digit-free JSON password with hump (v1.4)", `{"password": "xvgIWVProsmlIcr"}`, `{"password": "[REDACTED:secret-assignment]"}`},
		{"digit-free escaped JSON (v1.4)", `{\"aws_secret_access_key\": \"pWynKiDnVSYjSiqTRCugRsKHNfbCxyzAbc\"}`, `{\"aws_secret_access_key\": \"[REDACTED:secret-assignment]\"}`},
		{"github split by ZWSP", "gh\u200bp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A", "[REDACTED:github-token]"},
		{"github split by word joiner and tag", "ghp_aB3dE5fG7h\u2060J9kL1mN3pQ5rS7\U000E0041tU9vW1xY3z5A", "[REDACTED:github-token]"},
		{"github fullwidth", "ｇｈｐ＿aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A", "[REDACTED:github-token]"},
		{"gitlab", "PRIVATE-TOKEN " + glToken, "PRIVATE-TOKEN [REDACTED:gitlab-token]"},
		{"openai", "OPENAI " + openai, "OPENAI [REDACTED:openai-key]"},
		{"anthropic", "key " + anthro, "key [REDACTED:anthropic-key]"},
		{"slack token", slackTok, "[REDACTED:slack-token]"},
		{"slack webhook", "https://hooks.slack.com/services/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", "https://hooks.slack.com/services/[REDACTED:slack-webhook]"},
		{"google api key", "key=" + googKey, "key=[REDACTED:google-api-key]"},
		{"aws access key", "aws " + awsKey + " id", "aws [REDACTED:aws-access-key] id"},
		{"stripe", stripe, "[REDACTED:stripe-key]"},
		{"sendgrid", sendgrid, "[REDACTED:sendgrid-key]"},
		{"hugging face", hfToken, "[REDACTED:huggingface-token]"},
		{"npm", "//registry.npmjs.org/:_authToken=" + npmTok, "//registry.npmjs.org/:_authToken=[REDACTED:npm-token]"},
		{"pypi", pypiTok, "[REDACTED:pypi-token]"},
		{"vault", "VAULT " + vaultTok, "VAULT [REDACTED:vault-token]"},
		{"age", ageKey, "[REDACTED:age-secret-key]"},
		{"private key block", "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\nnext", "key:\n[REDACTED:private-key]\nnext"},
		{"private key unterminated", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA", "[REDACTED:private-key]"},
		{"authorization bearer", `curl -H "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig123"`, `curl -H "Authorization: Bearer [REDACTED:authorization]"`},
		{"authorization basic", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic [REDACTED:authorization]"},
		{"proxy authorization token", "proxy-authorization: token 0123456789abcdef", "proxy-authorization: token [REDACTED:authorization]"},
		{"api key header", "X-API-Key: 9f8e7d6c5b4a39281706", "X-API-Key: [REDACTED:api-key-header]"},
		{"gitlab private-token header", "PRIVATE-TOKEN: Zx9Yw8Vu7Ts6Rq5Po4", "PRIVATE-TOKEN: [REDACTED:api-key-header]"},
		{"env assignment", "export DEPLOY_TOKEN=Zx9Yw8Vu7Ts6Rq5Po4", "export DEPLOY_TOKEN=[REDACTED:secret-assignment]"},
		{"yaml password", "  password: hunter22", "  password: [REDACTED:secret-assignment]"},
		{"json client secret", `{"client_secret": "Zx9Yw8Vu7Ts6Rq5Po4", "id": 1}`, `{"client_secret": "[REDACTED:secret-assignment]", "id": 1}`},
		{"escaped json in a log", `{\"apiKey\":\"Zx9Yw8Vu7Ts6Rq5Po4\"}`, `{\"apiKey\":\"[REDACTED:secret-assignment]\"}`},
		{"cli flag", "mysql --password=Pa55word!", "mysql --password=[REDACTED:secret-assignment]"},
		{"query string", "GET /cb?access_token=Zx9Yw8Vu7Ts6Rq5Po4&x=1", "GET /cb?access_token=[REDACTED:secret-assignment]&x=1"},
		{"database url", "postgres://app:s3cretPw@db.internal:5432/app", "postgres://app:[REDACTED:url-password]@db.internal:5432/app"},
		{"url with unencoded #", "redis://:pa#ss?w0rd@cache:6379", "redis://:[REDACTED:url-password]@cache:6379"},
		{"git credential url", "https://x-access-token:" + ghToken + "@github.com/o/r", "https://x-access-token:[REDACTED:github-token]@github.com/o/r"},
		{"ssn", "SSN 123-45-6789.", "SSN [REDACTED:ssn]."},
		{"visa spaced", "card 4111 1111 1111 1111 ok", "card [REDACTED:payment-card] ok"},
		{"amex", "378282246310005", "[REDACTED:payment-card]"},
		{"mastercard dashed", "5555-5555-5555-4444", "[REDACTED:payment-card]"},
		{"iban grouped", "DE89 3704 0044 0532 0130 00", "[REDACTED:iban]"},
		{"iban compact", "GB82WEST12345698765432", "[REDACTED:iban]"},
		// real-world shapes: CI logs, escaped JSON, URL-encoded text, curl, .env, XML settings
		{"openai project key, lower case body", "sk-proj-abcdefghijklmnopqrstuvwxyzabcdefghijklmnop1234567890", "[REDACTED:openai-key]"},
		{"openai service account", "key sk-svcacct-AbCdEf1234567890AbCdEf1234567890", "key [REDACTED:openai-key]"},
		{"github all prefixes", "gho_16C7e42F292c6912E7710c838347Ae178B4a ghu_16C7e42F292c6912E7710c838347Ae178B4a ghs_16C7e42F292c6912E7710c838347Ae178B4a ghr_16C7e42F292c6912E7710c838347Ae178B4a",
			"[REDACTED:github-token] [REDACTED:github-token] [REDACTED:github-token] [REDACTED:github-token]"},
		{"github token after a JSON \\n escape", `{"body":"my token\nghp_16C7e42F292c6912E7710c838347Ae178B4a\nthanks"}`, `{"body":"my token\n[REDACTED:github-token]\nthanks"}`},
		{"github token after a JSON \\u escape", `"q":"token\u003dghp_16C7e42F292c6912E7710c838347Ae178B4a\u0026a=1"`, `"q":"token\u003d[REDACTED:github-token]\u0026a=1"`},
		{"github token URL-encoded", "state=token%3Dghp_16C7e42F292c6912E7710c838347Ae178B4a%26x", "state=token%3D[REDACTED:github-token]%26x"},
		{"gitlab other prefixes", "gldt-AbCdEfGhIjKlMnOpQrSt glrt-t1_AbCdEfGhIjKlMnOpQrSt glcbt-64_AbCdEfGhIjKlMnOpQrSt",
			"[REDACTED:gitlab-token] [REDACTED:gitlab-token] [REDACTED:gitlab-token]"},
		{"gitlab token in a clone URL", "git clone https://oauth2:glpat-abcdefghij1234567890@gitlab.com/o/r.git", "git clone https://oauth2:[REDACTED:gitlab-token]@gitlab.com/o/r.git"},
		{"slack webhook JSON-escaped", `"url":"https:\/\/hooks.slack.com\/services\/TABC12345\/BABC12345\/abcdefGHIJKLmnop12345678"`, `"url":"https:\/\/hooks.slack.com\/services\/[REDACTED:slack-webhook]"`},
		{"slack webhook URL-encoded", "u=https%3A%2F%2Fhooks.slack.com%2Fservices%2FTABC12345%2FBABC12345%2FabcdefGHIJKLmnop12345678&x=1", "u=https%3A%2F%2Fhooks.slack.com%2Fservices%2F[REDACTED:slack-webhook]&x=1"},
		{"aws session key id", "ASIAY34FZKBOKMUTVV7A", "[REDACTED:aws-access-key]"},
		{"aws secret in credentials file", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key = [REDACTED:secret-assignment]"},
		{"aws secret in JSON", `"SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",`, `"SecretAccessKey": "[REDACTED:secret-assignment]",`},
		{"stripe restricted", "rk_live_51H8xYzABCDEFGhijklmnop1234567890", "[REDACTED:stripe-key]"},
		{"vault legacy service token", "VAULT_ADDR=x s.Lu5bRvwI0sIcUUNKhnp9MEB4 ok", "VAULT_ADDR=x [REDACTED:vault-token] ok"},
		{"private key in escaped JSON", `{"private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n", "client_email": "x@y"}`, `{"private_key": "[REDACTED:private-key]\n", "client_email": "x@y"}`},
		{"private key unterminated in JSON", `{"private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC`, `{"private_key": "[REDACTED:private-key]`},
		{"private key after a YAML key", "passphrase: -----BEGIN RSA PRIVATE KEY-----\n  MIIEpAIBAAKCAQEA3Tz2mr7\n  -----END RSA PRIVATE KEY-----\nnext: 1", "passphrase: [REDACTED:private-key]\nnext: 1"},
		{"authorization after a JSON \\n escape", `{"h":"x\nAuthorization: Bearer abcdef0123456789abcdef"}`, `{"h":"x\nAuthorization: Bearer [REDACTED:authorization]"}`},
		{"git extraheader", `git -c http.extraheader="AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hz" fetch`, `git -c http.extraheader="AUTHORIZATION: basic [REDACTED:authorization]" fetch`},
		{"curl -u", "curl -fsS -u admin:S3cr3tP@ss https://example.com", "curl -fsS -u admin:[REDACTED:secret-assignment] https://example.com"},
		{"curl --user", "curl --user admin:S3cr3tP@ss https://example.com", "curl --user admin:[REDACTED:secret-assignment] https://example.com"},
		{"long flag with a space", "gh api --token abcdef0123456789abcdef /user", "gh api --token [REDACTED:secret-assignment] /user"},
		{"long flag at a line start", "./release \\\n--token abcdef0123456789abcdef", "./release \\\n--token [REDACTED:secret-assignment]"},
		{"slack session token", "xoxc-1234567890-1234567890-abcdefabcdef", "[REDACTED:slack-token]"},
		{"docker login -p", "docker login -u user -p S3cr3tP@ssw0rd registry.example.com", "docker login -u user -p [REDACTED:secret-assignment] registry.example.com"},
		{"mysql -p", "mysql -uroot -pS3cr3tP@ssw0rd app", "mysql -uroot -p[REDACTED:secret-assignment] app"},
		{"maven settings password", "<password>S3cr3tP@ssw0rd</password>", "<password>[REDACTED:secret-assignment]</password>"},
		{"unclosed settings element", "      <password>S3cr3tP4ss\n", "      <password>[REDACTED:secret-assignment]\n"},
		{"jwt in a cookie", "Set-Cookie: session=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c; Path=/",
			"Set-Cookie: session=[REDACTED:jwt]; Path=/"},
		{".env lower-case word value", "JWT_SECRET=supersecretvalue", "JWT_SECRET=[REDACTED:secret-assignment]"},
		{"rails secret_key_base", "SECRET_KEY_BASE=0123456789abcdef0123456789abcdef", "SECRET_KEY_BASE=[REDACTED:secret-assignment]"},
		{"_pwd suffix", "DB_PWD=S3cr3tP4ss", "DB_PWD=[REDACTED:secret-assignment]"},
		{"azure account key", "AccountName=acct;AccountKey=Ab3De5Fg7Hj9Kl1Mn3Pq5Rs7Tu9Vw1Xy3Za5Bc7==;EndpointSuffix=core.windows.net", "AccountName=acct;AccountKey=[REDACTED:secret-assignment]"},
		{"database url JSON-escaped", `"url":"postgres:\/\/app:S3cr3tP4ss@db:5432\/app"`, `"url":"postgres:\/\/app:[REDACTED:url-password]@db:5432\/app"`},
		{"database url URL-encoded", "next=postgres%3A%2F%2Fapp%3AS3cr3tP4ss%40db%3A5432%2Fapp", "next=postgres%3A%2F%2Fapp%3A[REDACTED:url-password]%40db%3A5432%2Fapp"},
		{"jdbc password parameter", "jdbc:postgresql://db:5432/app?user=app&password=S3cr3tP4ss", "jdbc:postgresql://db:5432/app?user=app&password=[REDACTED:secret-assignment]"},
		{"ssn in JSON", `{"ssn":"078-05-1120"}`, `{"ssn":"[REDACTED:ssn]"}`},
		{"discover card", "6011111111111117", "[REDACTED:payment-card]"},
		{"jcb card", "3530111333300000", "[REDACTED:payment-card]"},
		{"card as a value", "card_number=4111111111111111", "card_number=[REDACTED:payment-card]"},
		{"mastercard 2-series", "2223003122003222", "[REDACTED:payment-card]"},
		{"amex grouped 4-6-5", "3714 496353 98431", "[REDACTED:payment-card]"},
		{"iban FR with letters", "FR1420041010050500013M02606", "[REDACTED:iban]"},
	} {
		got, findings := p.Sanitize(c.in)
		if got != c.out {
			t.Errorf("%s: got %q want %q", c.name, got, c.out)
		}
		if len(findings) == 0 {
			t.Errorf("%s: no findings", c.name)
		}
	}
}

// TestRedactionFloorNegatives: SHAs, UUIDs, digests, base64 images, cache keys, timestamps,
// phone numbers, order IDs, version strings and secret references are NOT secrets.
func TestRedactionFloorNegatives(t *testing.T) {
	p := filter.New(nil)
	for _, in := range []string{
		"HEAD is now at 3f786850e387550fdab836ed7e6dc881de23001b",
		"id 123e4567-e89b-12d3-a456-426614174000",
		"digest: sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"integrity sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==",
		"![x](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkAKIUhPf4/AKIAGkmHvZ/ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A==)",
		"Cache restored from key: Linux-go-4f1e2d3c4b5a69788796a5b4c3d2e1f0",
		"2026-11-30T06:05:30.1234567Z started at 1764482730123",
		"call +1 (555) 123-4567 or 555-867-5309",
		"Order ORD-2026-004211 and order #4012345678",
		"go: downloading golang.org/x/text v0.44.0 and v1.2.3-rc.1",
		"password: ${{ secrets.DB_PASSWORD }}",
		"GITHUB_TOKEN: ***",
		"token: $GITHUB_TOKEN",
		"secretName: db-credentials",
		// digit-free values that name a variable (v1.4 keeps them: unquoted and not NAME=)
		"password: cfg.Password",
		"client_secret: clientSecret,",
		"token = this.accessToken",
		"GITHUB_TOKEN=secrets.GITHUB_TOKEN",
		"API_TOKEN=API_TOKEN_PROD",
		// a pagination cursor that passes the Luhn check with a Visa prefix (v1.4 keeps it)
		"next_page_token=4357453325289900",
		`{"continuation_token": "4111111111111111"}`,
		`{"api_key": "YOUR_API_KEY", "token": "your-token-here"}`,
		"max_tokens: 4096, token_count=12, next_page_token=abcdef0123456789",
		"Authorization: required for admin endpoints",
		"authorization: Bearer $TOKEN",
		"sk-this-is-a-long-kebab-case-identifier-name-for-tests",
		"card 4111 1111 1111 1112 fails Luhn",
		"SSN 000-12-3456 666-12-3456 900-12-3456 123-00-4567",
		"IBAN DE89 3704 0044 0532 0130 01 bad checksum",
		"ghp_short and AKIA-not-a-key",
		"std::string key == other; a := b; x != y",
		"the token: expected identifier",
		"GITEA__mailer__PASSWD=\"${GITEA__mailer__PASSWD:?GITEA__mailer__PASSWD not set}\"",
		"username = {username}\npassword = {password}",
		"&Transport{ClientSecret: clientSecret, AccessToken: cfg.AccessToken}",
		"VCSPassword: String(\"p\"), Password: strings.TrimSpace(password), Password: p.Password,",
		// precision on real-world look-alikes
		"docker.io/library/alpine@sha256:1e42bbe2508154c9126d48c2b8a75420c3544343bf86fd041fb7527e017a4b4a",
		`"integrity": "sha512-Ky7vdgAJ1iUjIr3tSMfpXl1Rj5sF0qtd1Nd9GE2XSKnnuwiP1VhTnT6Ga/I4dsN4Q7+ZbPXF9hN3Nh8QEqdlpw==",`,
		"cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e",
		"golang.org/x/text v0.14.0 h1:ScX5w1eTa3QqT8oi6+ziP7dTV1S2+ALU0bHJmWNFtM0=",
		"Cache hit for key: node-cache-Linux-x64-npm-8f3b1c2d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5",
		"uses: actions/checkout@b4ffde65f46336ab88eb53be808477a3936bae11 # v4.1.1",
		"request-id: 7f3a1b2c-4d5e-6f70-8192-a3b4c5d6e7f8 X-Request-Id: 0123456789abcdef0123456789abcdef",
		"2026-11-30 06:05:30,123 INFO started 1764482730123",
		"Call +1-555-123-4567, (555) 123-4567, +44 20 7946 0958 or 555.123.4567",
		"Amazon order 111-2222222-3333333, tracking 1Z999AA10123456784, ISBN 978-3-16-148410-0",
		"arn:aws:iam::123456789012:role/deploy i-0abcd1234efgh5678 account 123456789012",
		"token_type: bearer, \"max_tokens\": 4096, input_tokens=1234, password_min_length: 12",
		"api_key: YOUR_API_KEY_HERE and OPENAI_API_KEY=sk-... and token: xxxxxxxxxxxxxxxxxxxx",
		"s.TrimSpace(x) s.Contains(foo) this.s.getElementById('abc') s.gif",
		"Bearer realm=\"api\", error=\"invalid_token\"; WWW-Authenticate: Basic realm=\"Restricted\"",
		"mkdir -p /tmp/foo && docker run -p 8080:80 -u 1000:1000 nginx && git push -u origin main",
		"echo \"$PW\" | docker login -u user --password-stdin ghcr.io; mysql -u root -p -h db",
		"curl -u \"$USER:$PASS\" https://x; docker build --secret id=npm,src=$HOME/.npmrc .",
		"--password-file /run/secrets/pw <password>${env.MAVEN_PASSWORD}</password> <passwordPolicy>strict</passwordPolicy>",
		"TOKEN=GITHUB_TOKEN NODE_ENV=production",
		"curl -fsS https://x -o a && docker run -u 1000:1000 img; docker login -u u --password-stdin && docker run -p 8080:80 app",
		"mysql --version | tee v.txt; ls -pla",
		"Incorrect API key provided: sk-proj-********************************************abcd",
		"<password> is required; use <token> here",
		"Add a --password option to the CLI; --token YOUR_TOKEN; the --secret flag",
		"the JWT header eyJhbGciOiJIUzI1NiJ9 decodes to {\"alg\":\"HS256\"}; eyJhbGciOiJIUzI1NiJ9.e30.abc is unsigned",
	} {
		got, findings := p.Sanitize(in)
		if got != in || len(findings) != 0 {
			t.Errorf("%q: got %q %v", in, got, findings)
		}
	}
}

// TestRedactIsRedactionOnly: Redact (pre-script diagnostics) does not strip Unicode or scan
// for injection; Sanitize strips Unicode and redacts but never rejects.
func TestRedactIsRedactionOnly(t *testing.T) {
	p := filter.New(nil)
	in := "a\u200bb ignore all previous instructions " + ghToken
	got, f := p.Redact(in)
	if got != "a\u200bb ignore all previous instructions [REDACTED:github-token]" || len(f) != 1 {
		t.Errorf("Redact: %q %v", got, f)
	}
	got, f = p.Sanitize(in)
	if got != "ab ignore all previous instructions [REDACTED:github-token]" || len(f) != 2 {
		t.Errorf("Sanitize: %q %v", got, f)
	}
}

// TestRedactionLiteralsLongestFirst: overlapping registered literals redact whole.
func TestRedactionLiteralsLongestFirst(t *testing.T) {
	p := filter.New([]string{"abcdefgh", "abcdefgh-ijklmnop"})
	if got, _ := p.Redact("x abcdefgh-ijklmnop y"); got != "x [REDACTED:run-credential] y" {
		t.Errorf("got %q", got)
	}
	if got, _ := p.Redact(strings.Repeat("abcdefgh", 2)); got != "[REDACTED:run-credential][REDACTED:run-credential]" {
		t.Errorf("got %q", got)
	}
}

// TestRedactionLiteralsEncodedForms: a registered credential with special characters is also
// found URL-encoded (a DSN or callback URL) and JSON-escaped, as logs print it.
func TestRedactionLiteralsEncodedForms(t *testing.T) {
	secret := `p@ss/w:rd+1 "x"&y`
	p := filter.New([]string{secret})
	for _, in := range []string{
		"dsn=postgres://app:p%40ss%2Fw%3Ard%2B1+%22x%22%26y@db/app",
		"path /p@ss%2Fw:rd+1%20%22x%22&y/",
		`{"pw":"p@ss/w:rd+1 \"x\"\u0026y"}`,
		`{"pw":"p@ss\/w:rd+1 \"x\"\u0026y"}`,
	} {
		got, f := p.Redact(in)
		if !strings.Contains(got, "[REDACTED:run-credential]") || len(f) != 1 || strings.Contains(got, "w:rd") {
			t.Errorf("%q: %q %v", in, got, f)
		}
	}
}

// Regression: `run` registered the token-env value whatever its length, so GITHUB_TOKEN=x
// turned "fixture" into "fi[REDACTED:run-credential]ture" — destroying text and revealing the
// value. A literal shorter than MinSecretEnvBytes is never registered, by any caller; one of
// exactly MinSecretEnvBytes still is.
func TestShortLiteralsAreNotRegistered(t *testing.T) {
	for _, short := range []string{"x", "ix", "true", "main", "1234567"} {
		p := filter.New([]string{short})
		text := "fixture main 1234567 is true"
		if got, findings := p.Redact(text); got != text || len(findings) != 0 {
			t.Errorf("literal %q (%d bytes): %q -> %q", short, len(short), text, got)
		}
	}
	long := strings.Repeat("k", filter.MinSecretEnvBytes)
	if got, _ := filter.New([]string{long}).Redact("a " + long + " b"); strings.Contains(got, long) {
		t.Errorf("a %d-byte literal was not redacted: %q", filter.MinSecretEnvBytes, got)
	}
}
