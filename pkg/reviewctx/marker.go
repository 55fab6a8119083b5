package reviewctx

import (
	"regexp"
	"strings"
)

// The remediation marker is the toolkit-owned line part 2 writes into every finding comment
// it posts, and the only way a root note can be verified as remediation (together with its
// author being the live bot):
//
//	<!-- ocr.remediation-marker/v1 fingerprint=<64 lowercase hex> -->
//
// It must appear exactly once, on a line of its own. The fingerprint is the finding's
// SHA-256 fingerprint as part 2 computes it; this package only checks its form.
const MarkerSchema = "ocr.remediation-marker/v1"

var markerRE = regexp.MustCompile(`^<!-- ocr\.remediation-marker/v1 fingerprint=([0-9a-f]{64}) -->$`)

// FormatMarker returns the marker line for fingerprint (64 lowercase hex; not checked here —
// ParseMarker is the verifier).
func FormatMarker(fingerprint string) string {
	return "<!-- " + MarkerSchema + " fingerprint=" + fingerprint + " -->"
}

// ParseMarker finds the single valid marker line in body. It returns the fingerprint and the
// body without the marker line. No marker, a malformed marker or more than one marker line
// (anything mentioning the schema name) is not a valid marker.
func ParseMarker(body string) (fingerprint, rest string, ok bool) {
	lines := strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n")
	idx := -1
	for i, l := range lines {
		if strings.Contains(l, MarkerSchema) {
			if idx >= 0 {
				return "", "", false
			}
			m := markerRE.FindStringSubmatch(strings.TrimSpace(l))
			if m == nil {
				return "", "", false
			}
			idx, fingerprint = i, m[1]
		}
	}
	if idx < 0 {
		return "", "", false
	}
	rest = strings.TrimSpace(strings.Join(append(lines[:idx:idx], lines[idx+1:]...), "\n"))
	return fingerprint, rest, true
}

// slashCommands are GitLab quick actions; a line starting with one is lifecycle control.
var slashCommandRE = regexp.MustCompile(`^/[a-z_]+(\s|$)`)

// stripCommands removes recognized slash-command lines and lines that address the live bot
// by username (mention commands), which are lifecycle control and never model text. It
// reports how many lines it removed.
func stripCommands(body, botUsername string) (string, int) {
	lines := strings.Split(body, "\n")
	out := lines[:0:0]
	n := 0
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if slashCommandRE.MatchString(t) || (botUsername != "" && (t == "@"+botUsername || strings.HasPrefix(t, "@"+botUsername+" "))) {
			n++
			continue
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n")), n
}
