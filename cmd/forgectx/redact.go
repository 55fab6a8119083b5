package main

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode"

	"github.com/forgectx/forgectx/internal/filter"
)

// redactor is the one redaction every line forgectx itself prints to stderr passes through:
// the error line of exitCode and every log event. It is the filter's pattern floor (token
// shapes: GitHub, GitLab, Slack, AWS, JWT, private keys, …) plus the literal values of the
// environment's secret-looking variables, then control characters escaped so that no flag
// value or file name can drive the operator's terminal.
type redactor struct{ p *filter.Pipeline }

func newRedactor(environ func() []string) *redactor {
	var kv []string
	if environ != nil {
		kv = environ()
	}
	return &redactor{p: filter.New(filter.SecretEnvValues(kv, nil))}
}

// String returns s redacted and with its control characters escaped (newline and tab kept:
// a message may span lines).
func (r *redactor) String(s string) string {
	red, _ := r.p.Redact(s)
	return escapeControls(red)
}

// escapeControls writes every C0/C1 control character other than LF and TAB, DEL and an
// invalid byte as a Go escape (\x1b, \u0085, \ufffd).
func escapeControls(s string) string {
	if strings.IndexFunc(s, isEscaped) < 0 {
		return s
	}
	var b strings.Builder
	for _, c := range s {
		switch {
		case c == unicode.ReplacementChar:
			b.WriteString(`\ufffd`)
		case isEscaped(c) && c < 0x100:
			fmt.Fprintf(&b, `\x%02x`, c)
		case isEscaped(c):
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

func isEscaped(c rune) bool {
	return c == unicode.ReplacementChar || (c != '\n' && c != '\t' && unicode.IsControl(c)) ||
		c == '\u2028' || c == '\u2029' || unicode.Is(unicode.Bidi_Control, c)
}

// redactingWriter redacts each Write as one unit: the logger writes one event per Write.
type redactingWriter struct {
	w io.Writer
	r *redactor
}

func (rw redactingWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(rw.w, rw.r.String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// envNameFlags are the flags whose value names an environment variable. Their value is
// checked right after parsing, before anything reads the environment: it must be a variable
// name, and a value that is not one is never echoed (it may be the token itself, pasted in
// the wrong place).
var envNameFlags = map[string]bool{"token-env": true, "secret-env": true}

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// checkEnvName is the rule of an environment-variable-name flag value.
func checkEnvName(flagName, v string) error {
	if !envNameRE.MatchString(v) {
		return usagef("--%s: must name an environment variable (1 to 128 letters, digits and _, not starting with a digit), never hold a value; the value given is not shown", flagName)
	}
	if _, found := filter.New(nil).Redact(v); len(found) > 0 {
		return usagef("--%s: the value looks like a credential (%s), not the name of the environment variable holding one; it is not shown", flagName, found[0].Code)
	}
	return nil
}
