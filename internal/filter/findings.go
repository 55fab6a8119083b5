package filter

import (
	"regexp"
	"sort"
)

// code indexes the closed set of finding codes this filter version can emit. Counting into a
// fixed array keeps the hot paths allocation-free; codes are turned into sorted Findings once.
type code uint8

const (
	cInvalidUTF8 code = iota
	cTag
	cZeroWidth
	cBidiControl
	cVariationSelector
	cInterlinear
	cNUL
	cControl
	cTerminalEscape
	cBidiMark
	cWordJoiner
	cFormat
	cNFKC

	// redaction kinds: the order is the merge priority (earlier wins when spans overlap).
	cRunCredential
	cPrivateKey
	cAnthropicKey
	cOpenAIKey
	cGitHubToken
	cGitLabToken
	cSlackToken
	cSlackWebhook
	cGoogleAPIKey
	cGoogleOAuth
	cAWSAccessKey
	cStripeKey
	cSendGridKey
	cHuggingFaceToken
	cNPMToken
	cPyPIToken
	cVaultToken
	cAgeSecretKey
	cURLPassword
	cAuthorization
	cAPIKeyHeader
	cSecretAssignment
	cJWT
	cSSN
	cPaymentCard
	cIBAN

	// injection floor rules
	cInstructionOverride
	cSystemPrompt
	cUnrestrictedRole
	cConcealment
	cExfiltration
	cHiddenHTML
	cTranslateExecute

	// bound
	cTruncated

	numCodes
)

// codeNames are the wire codes, documented in docs/filter.md. The redaction kind (used in the
// replacement text "[REDACTED:<kind>]") is the code without its "redact." prefix.
var codeNames = [numCodes]string{
	cInvalidUTF8:       "unicode.invalid-utf8",
	cTag:               "unicode.tag",
	cZeroWidth:         "unicode.zero-width",
	cBidiControl:       "unicode.bidi-control",
	cVariationSelector: "unicode.variation-selector",
	cInterlinear:       "unicode.interlinear-annotation",
	cNUL:               "unicode.nul",
	cControl:           "unicode.control",
	cTerminalEscape:    "unicode.terminal-escape",
	cBidiMark:          "unicode.bidi-mark",
	cWordJoiner:        "unicode.word-joiner",
	cFormat:            "unicode.format",
	cNFKC:              "unicode.nfkc",

	cRunCredential:    "redact.run-credential",
	cPrivateKey:       "redact.private-key",
	cAnthropicKey:     "redact.anthropic-key",
	cOpenAIKey:        "redact.openai-key",
	cGitHubToken:      "redact.github-token",
	cGitLabToken:      "redact.gitlab-token",
	cSlackToken:       "redact.slack-token",
	cSlackWebhook:     "redact.slack-webhook",
	cGoogleAPIKey:     "redact.google-api-key",
	cGoogleOAuth:      "redact.google-oauth",
	cAWSAccessKey:     "redact.aws-access-key",
	cStripeKey:        "redact.stripe-key",
	cSendGridKey:      "redact.sendgrid-key",
	cHuggingFaceToken: "redact.huggingface-token",
	cNPMToken:         "redact.npm-token",
	cPyPIToken:        "redact.pypi-token",
	cVaultToken:       "redact.vault-token",
	cAgeSecretKey:     "redact.age-secret-key",
	cURLPassword:      "redact.url-password",
	cAuthorization:    "redact.authorization",
	cAPIKeyHeader:     "redact.api-key-header",
	cSecretAssignment: "redact.secret-assignment",
	cJWT:              "redact.jwt",
	cSSN:              "redact.ssn",
	cPaymentCard:      "redact.payment-card",
	cIBAN:             "redact.iban",

	cInstructionOverride: "injection.instruction-override",
	cSystemPrompt:        "injection.system-prompt",
	cUnrestrictedRole:    "injection.unrestricted-role",
	cConcealment:         "injection.concealment",
	cExfiltration:        "injection.exfiltration",
	cHiddenHTML:          "injection.hidden-html",
	cTranslateExecute:    "injection.translate-execute",

	cTruncated: "bound.truncated",
}

// replacements holds the exact replacement text of every redaction kind.
var replacements [numCodes][]byte

var findingCode = regexp.MustCompile(`^[a-z][a-z0-9._-]*$`)

func init() {
	for c := cRunCredential; c <= cIBAN; c++ {
		replacements[c] = []byte("[REDACTED:" + codeNames[c][len("redact."):] + "]")
	}
	for _, n := range codeNames {
		if !findingCode.MatchString(n) {
			panic("filter: finding code outside ^[a-z][a-z0-9._-]*$: " + n)
		}
	}
}

// Codes lists every finding code this filter version can emit, sorted.
func Codes() []string {
	out := make([]string, 0, numCodes)
	for _, n := range codeNames {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// counts accumulates findings per code.
type counts [numCodes]int

func (c *counts) any(from, to code) bool {
	for i := from; i <= to; i++ {
		if c[i] != 0 {
			return true
		}
	}
	return false
}

// findings returns the non-zero counts as Findings sorted by code.
func (c *counts) findings() []Finding {
	var out []Finding
	for i, n := range c {
		if n != 0 {
			out = append(out, Finding{Code: codeNames[i], Count: n})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out
}
