package status

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// MaxListedChecks is how many failed checks a status comment or job summary lists; the rest
// are counted ("and N more"), so a head with hundreds of red checks still gives a short body.
const MaxListedChecks = 5

// NoLogWords is what a failed check without a log in the snapshot shows instead of a category.
const NoLogWords = "no log in the snapshot"

// maxPartialPhrases bounds the partial-context line: the phrases after it are counted.
const maxPartialPhrases = 6

// Caps of a failed check's one-line fields, in bytes after sanitising.
const (
	maxCheckNameBytes  = 100
	maxFirstErrorBytes = 200
)

// FailedCheck is one failed check of the head as a human reads it in the status comment and
// the job summary. Name and FirstError come from the snapshot tree (filtered, but still text a
// contributor controls): they are sanitised again where they are rendered.
type FailedCheck struct {
	Name       string // the check's name; untrusted
	Category   string // the digest's category, a closed set of lowercase words
	FirstError string // the first error line of its log; untrusted, may be empty
	// NoLog is a failed check whose log is not in the snapshot (not selected, unavailable,
	// too large or unsafe: a check_logs gap says which): it is listed without a category.
	NoLog bool
}

// Gap is one row of the snapshot's gaps: what the partial-context line is derived from.
type Gap struct {
	Scope string
	Code  string
	Count int
}

// Context is what a final status comment and the job summary tell a human about the agent's
// context: the failed checks of the head and the gaps of the snapshot. The zero value says
// nothing (no section, no line).
type Context struct {
	Failed []FailedCheck // every failed check, in the tree's order; at most MaxListedChecks are listed
	Gaps   []Gap
}

// categoryPattern is what a category may look like to be shown; anything else shows as unknown.
var categoryPattern = regexp.MustCompile(`^[a-z][a-z_]{0,31}$`)

// SanitizeCheck returns c made safe for one line of Markdown, before the caller's own escaping
// (a code span in the comment, a table cell in the summary): the name and first error pass
// the same sanitising as a status detail (SanitizeDetail's rules, capped at 100 and 200
// bytes), and a category outside the closed pattern becomes "unknown". A check without a log
// keeps its name only.
func SanitizeCheck(p *filter.Pipeline, c FailedCheck) FailedCheck {
	out := FailedCheck{
		Name:       sanitizeLine(p, c.Name, maxCheckNameBytes),
		Category:   c.Category,
		FirstError: sanitizeLine(p, c.FirstError, maxFirstErrorBytes),
		NoLog:      c.NoLog,
	}
	if c.NoLog {
		out.Category, out.FirstError = "", ""
	}
	if !c.NoLog && !categoryPattern.MatchString(out.Category) {
		out.Category = "unknown"
	}
	if out.Name == "" {
		out.Name = "(unnamed check)"
	}
	return out
}

// renderContext writes the final status comment's context block: the failed checks as a list
// and the partial-context line, each after a blank line. Nothing when c says nothing.
func renderContext(b *strings.Builder, p *filter.Pipeline, c *Context) {
	if c == nil {
		return
	}
	if n := len(c.Failed); n > 0 {
		fmt.Fprintf(b, "\n**Failed checks** (%d):\n", n)
		for _, fc := range c.Failed[:min(n, MaxListedChecks)] {
			s := SanitizeCheck(p, fc)
			if s.NoLog {
				fmt.Fprintf(b, "- %s — %s\n", codeSpan(s.Name), NoLogWords)
				continue
			}
			fmt.Fprintf(b, "- %s — %s", codeSpan(s.Name), s.Category)
			if s.FirstError != "" {
				b.WriteString(": ")
				b.WriteString(codeSpan(s.FirstError))
			}
			b.WriteString("\n")
		}
		if n > MaxListedChecks {
			fmt.Fprintf(b, "- and %d more\n", n-MaxListedChecks)
		}
	}
	if line := PartialLine(c.Gaps); line != "" {
		b.WriteString("\n")
		b.WriteString(line)
		b.WriteString("\n")
	}
}

// gapWords says, per gap code, what happened to the items counted, after "<count> <items>".
// The order of this list is the order of the phrases in the line: what was withheld first,
// then what did not fit, what the forge did not give, and what was not valid.
var gapWords = []struct{ code, words string }{
	{acquisition.GapAuthorizationFailed, "withheld (author not authorized)"},
	{acquisition.GapUnsafeContent, "withheld (unsafe content)"},
	{acquisition.GapSourceTooLarge, "over the size bound"},
	{acquisition.GapProfileBound, "over the collection bound"},
	{acquisition.GapFetchFailed, "not fetched (the forge request failed)"},
	{acquisition.GapUnsupported, "unsupported on this forge"},
	{acquisition.GapInvalidMetadata, "left out (invalid forge data)"},
	{acquisition.GapHistoryUnavailable, "without full history on this forge"},
}

// scopeNouns names, per gap scope, one item and several; the order is the phrases' second key.
var scopeNouns = []struct{ scope, one, many string }{
	{acquisition.ScopeEntity, "entity detail", "entity details"},
	{acquisition.ScopeComments, "comment", "comments"},
	{acquisition.ScopeReviews, "review", "reviews"},
	{acquisition.ScopeChecks, "check", "checks"},
	{acquisition.ScopeCheckLogs, "check log", "check logs"},
	{acquisition.ScopeAgentRuns, "run receipt", "run receipts"},
	{acquisition.ScopeActors, "actor record", "actor records"},
}

func indexOf[T any](list []T, match func(T) bool) int {
	for i, v := range list {
		if match(v) {
			return i
		}
	}
	return -1
}

// PartialLine returns the one plain-words line saying what the agent did not see and why, or
// "" when nothing is partial (no gap with a positive count). Each (scope, code) row becomes
// "<count> <items> <reason>"; phrases are ordered by reason then scope (gapWords, scopeNouns),
// at most six are written and the rest counted, and a scope or code this build has no words
// for is summed into "N other items missing" without repeating it, so the line is made only of
// fixed words and numbers and its length is bounded.
func PartialLine(gaps []Gap) string {
	type phrase struct {
		code, scope int
		text        string
	}
	var phrases []phrase
	other := 0
	for _, g := range gaps {
		if g.Count <= 0 {
			continue
		}
		ci := indexOf(gapWords, func(w struct{ code, words string }) bool { return w.code == g.Code })
		si := indexOf(scopeNouns, func(n struct{ scope, one, many string }) bool { return n.scope == g.Scope })
		if ci < 0 || si < 0 {
			other += g.Count
			continue
		}
		noun := scopeNouns[si].many
		if g.Count == 1 {
			noun = scopeNouns[si].one
		}
		phrases = append(phrases, phrase{ci, si, fmt.Sprintf("%d %s %s", g.Count, noun, gapWords[ci].words)})
	}
	if len(phrases) == 0 && other == 0 {
		return ""
	}
	sort.SliceStable(phrases, func(i, j int) bool {
		if phrases[i].code != phrases[j].code {
			return phrases[i].code < phrases[j].code
		}
		if phrases[i].scope != phrases[j].scope {
			return phrases[i].scope < phrases[j].scope
		}
		return phrases[i].text < phrases[j].text
	})
	var parts []string
	for i, ph := range phrases {
		if i == maxPartialPhrases {
			parts = append(parts, fmt.Sprintf("and %d more kinds of gap", len(phrases)-maxPartialPhrases))
			break
		}
		parts = append(parts, ph.text)
	}
	if other > 0 {
		parts = append(parts, fmt.Sprintf("%d other items missing", other))
	}
	return "Partial context: " + strings.Join(parts, ", ") + "."
}
