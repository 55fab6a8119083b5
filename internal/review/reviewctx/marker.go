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
const markerSchema = "ocr.remediation-marker/v1"

var markerRE = regexp.MustCompile(`^<!-- ocr\.remediation-marker/v1 fingerprint=([0-9a-f]{64}) -->$`)

// FormatMarker returns the marker line for fingerprint (64 lowercase hex; not checked here —
// ParseMarker is the verifier).
func FormatMarker(fingerprint string) string {
	return "<!-- " + markerSchema + " fingerprint=" + fingerprint + " -->"
}

// ParseMarker finds the single valid marker line in body. It returns the fingerprint and the
// body without the marker line. No marker, a malformed marker or more than one marker line
// (anything mentioning the schema name) is not a valid marker.
func ParseMarker(body string) (fingerprint, rest string, ok bool) {
	lines := strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n")
	idx := -1
	for i, l := range lines {
		if strings.Contains(l, markerSchema) {
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

// slashCommandRE: a line starting with a GitLab quick action (/word, deliberately broad) is
// lifecycle control.
var slashCommandRE = regexp.MustCompile(`^/[a-z_]+(\s|$)`)

// commandNames are the command words that are lifecycle control anywhere in a line: GitLab's
// quick actions that change review state and the toolkit's own review commands. Written as
// /name after the start of the line or whitespace, and followed by the end, whitespace or
// punctuation, they make the line a command (GitLab itself runs quick actions only at a line
// start; an engine reading "please /approve" mid-line must not see it either).
var commandNames = []string{
	"approve", "assign", "assign_reviewer", "close", "draft", "label", "merge", "ocr", "ready", "rebase",
	"recheck", "relabel", "reopen", "request_review", "rerun", "resolve", "retry", "review", "submit_review",
	"unapprove", "unassign", "unassign_reviewer", "unlabel", "unresolve",
}

var inlineCommandRE = regexp.MustCompile(`(?:^|\s)/(?:` + strings.Join(commandNames, "|") + `)(?:$|[\s.,;:!?)\]])`)

// stripCommands removes lifecycle-control lines, which are never model text: a line starting
// with a slash command, a line holding one of commandNames as /name anywhere, and a line that
// mentions the live bot by username anywhere ("Fixed, @bot please recheck" addresses the bot:
// the whole line is the command). Mentions are matched as GitLab does (case-insensitive, an @
// not preceded by a word character, dot or hyphen). It reports how many lines it removed.
func stripCommands(body, botUsername string) (string, int) {
	lines := strings.Split(body, "\n")
	out := lines[:0:0]
	n := 0
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if slashCommandRE.MatchString(t) || inlineCommandRE.MatchString(t) || mentionsUser(t, botUsername) {
			n++
			continue
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n")), n
}

// mentionsUser reports whether line mentions username (case-insensitive) anywhere.
func mentionsUser(line, username string) bool {
	if username == "" || !strings.Contains(line, "@") {
		return false
	}
	found := false
	replaceMentions(line, func(u string) string {
		if strings.EqualFold(u, username) {
			found = true
		}
		return ""
	})
	return found
}
