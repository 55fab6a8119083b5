package rework

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
)

// Marker formats (docs/rework.md, "Markers"). The code-review marker is the FIRST line of a
// code reviewer's review body; the spec-review marker is the LAST line of a spec reviewer's
// review body, preceded by the result text and exactly one LF (the separator).
const (
	CodeMarkerPrefix = "<!-- gitea-agent:code-review/v1 "
	SpecMarkerPrefix = "<!-- gitea-agent:spec-review/v1 "
	// SpecCorrelationTag is the first field of the correlation input.
	SpecCorrelationTag = "gitea-agent:spec-review/v1"
)

// Marker verdicts.
const (
	VerdictApproved       = "approved"
	VerdictRequestChanges = "request_changes"
	VerdictBlockedSpec    = "blocked_spec"
)

var (
	codeMarkerRe = regexp.MustCompile(`^<!-- gitea-agent:code-review/v1 verdict=(approved|request_changes) head=([0-9a-f]{40}) contract=([0-9a-f]{64}) -->$`)
	specMarkerRe = regexp.MustCompile(`^<!-- gitea-agent:spec-review/v1 verdict=(approved|request_changes|blocked_spec) head=([0-9a-f]{40}) contract=([0-9a-f]{64}) result=([0-9a-f]{64}) correlation=([0-9a-f]{64}) -->$`)
)

// Marker is the canonical marker found in a review body. Kind is "code", "spec" or "none";
// Problem is empty for a well-formed marker in its canonical position.
type Marker struct {
	Kind        string `json:"kind"`
	Verdict     string `json:"verdict"`
	Head        string `json:"head"`
	Contract    string `json:"contract"`
	Result      string `json:"result"`
	Correlation string `json:"correlation"`
	Problem     string `json:"problem"`
	// resultText is the result text the spec marker's digest covers (never serialised).
	resultText string
}

// firstLine and lastLine split on LF only: a CR is part of the line, so a CRLF body does not
// carry a canonical marker.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// ParseMarker finds the canonical marker of body: a code marker on the first line, a spec
// marker on the last line. A line that starts like a marker but does not match its format, a
// marker in the wrong position, or both kinds in one body is reported in Problem.
func ParseMarker(body string) Marker {
	first := firstLine(body)
	lastIdx := strings.LastIndexByte(body, '\n')
	last := body[lastIdx+1:]
	var code, spec *Marker
	if strings.HasPrefix(first, CodeMarkerPrefix) {
		m := Marker{Kind: "code"}
		if g := codeMarkerRe.FindStringSubmatch(first); g != nil {
			m.Verdict, m.Head, m.Contract = g[1], g[2], g[3]
		} else {
			m.Problem = "the first line starts like a code-review marker but does not match its format"
		}
		code = &m
	}
	if strings.HasPrefix(last, SpecMarkerPrefix) {
		m := Marker{Kind: "spec"}
		switch g := specMarkerRe.FindStringSubmatch(last); {
		case g == nil:
			m.Problem = "the last line starts like a spec-review marker but does not match its format"
		case lastIdx < 0:
			m.Verdict, m.Head, m.Contract, m.Result, m.Correlation = g[1], g[2], g[3], g[4], g[5]
			m.Problem = "the spec-review marker must follow the result text and one LF separator"
		default:
			m.Verdict, m.Head, m.Contract, m.Result, m.Correlation = g[1], g[2], g[3], g[4], g[5]
			m.resultText = body[:lastIdx]
		}
		spec = &m
	}
	switch {
	case code != nil && spec != nil:
		return Marker{Kind: "code", Problem: "the body carries both a code-review and a spec-review marker"}
	case code != nil:
		if code.Problem == "" && strings.Contains(body[len(first):], "\n"+SpecMarkerPrefix) {
			code.Problem = "a spec-review marker appears on a line other than the last"
		}
		return *code
	case spec != nil:
		return *spec
	}
	if strings.Contains(body, CodeMarkerPrefix) || strings.Contains(body, SpecMarkerPrefix) {
		return Marker{Kind: "none", Problem: "a marker appears outside its canonical line"}
	}
	return Marker{Kind: "none"}
}

// SpecResultDigest is the lowercase hex SHA-256 of the result text's UTF-8 bytes: everything
// before the LF separator that precedes the spec-review marker line.
func SpecResultDigest(resultText string) string {
	sum := sha256.Sum256([]byte(resultText))
	return hex.EncodeToString(sum[:])
}

// SpecCorrelation is the lowercase hex SHA-256 of the correlation fields joined by single LF
// separators (no trailing LF): the tag, owner/repository, issue, pr, head, contract digest and
// result digest.
func SpecCorrelation(t *Target, head, contract, result string) string {
	s := strings.Join([]string{SpecCorrelationTag, t.Owner + "/" + t.Repository, strconv.FormatInt(t.Issue, 10), strconv.FormatInt(t.PR, 10), head, contract, result}, "\n")
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// RenderCodeMarker returns the canonical code-review marker line (for reviewers and tests).
func RenderCodeMarker(verdict, head, contract string) string {
	return CodeMarkerPrefix + "verdict=" + verdict + " head=" + head + " contract=" + contract + " -->"
}

// RenderSpecReview returns a complete spec-review body: resultText, one LF, the marker line.
func RenderSpecReview(t *Target, resultText, verdict, head, contract string) string {
	result := SpecResultDigest(resultText)
	return resultText + "\n" + SpecMarkerPrefix + "verdict=" + verdict + " head=" + head + " contract=" + contract +
		" result=" + result + " correlation=" + SpecCorrelation(t, head, contract, result) + " -->"
}
