package run

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/platform/safeout"
	"github.com/forgectx/forgectx/internal/status"
)

var summaryIcons = map[string]string{
	StatusSuccess: "✅", StatusFailure: "❌", StatusSkipped: "⏭️", StatusCancelled: "⚠️", StatusTimedOut: "⚠️",
}

// SummaryReportFile is the GitLab job-directory file ($CI_PROJECT_DIR) the summary is also
// written to, so the component can keep it under artifacts: (templates/forgectx.yml).
const SummaryReportFile = "forgectx-summary.md"

// writeSummary writes the job summary to the job log (stderr) on every forge, appends it to
// $GITHUB_STEP_SUMMARY under GitHub Actions and, on GitLab, writes it to SummaryReportFile in
// the job directory. A failed write is logged, never fatal: the summary is a convenience for
// humans.
func (r *runner) writeSummary(out outcome) {
	var b strings.Builder
	if err := r.renderSummary(&b, out); err != nil {
		r.log.Warn().Err(err).Msg("forgectx run: job summary not rendered")
		return
	}
	if r.o.Stderr != nil {
		// GitLab and Forgejo have no step summary: the job log is where every forge shows it.
		if _, err := io.WriteString(r.o.Stderr, b.String()); err != nil {
			r.log.Warn().Err(err).Msg("forgectx run: job summary not written to the job log")
		}
	}
	if dir := r.o.Getenv("CI_PROJECT_DIR"); r.c.ref.Forge == "gitlab" && dir != "" {
		// Written through internal/platform/safeout like the step summary: a device or FIFO is refused.
		if err := safeout.WriteFile(filepath.Join(dir, SummaryReportFile), []byte(b.String()), safeout.Options{Perm: 0o644}); err != nil {
			r.log.Warn().Err(err).Msg("forgectx run: job summary report file not written")
		}
	}
	path := r.o.Getenv("GITHUB_STEP_SUMMARY")
	if !r.c.summary || path == "" {
		return
	}
	// Appended through internal/platform/safeout: $GITHUB_STEP_SUMMARY is a regular file the runner owns;
	// anything else it names (a device, a FIFO, a directory) is refused, never written into.
	if werr := safeout.Append(path, []byte(b.String()), safeout.Options{Perm: 0o644}); werr != nil {
		r.log.Warn().Err(werr).Msg("forgectx run: job summary not written")
	}
}

// renderSummary writes the Markdown summary: decision, agent status and duration, the failed
// checks of the head and the partial-context line, records per source (with forgectx's own status and receipt comments left out of the comments source),
// gaps and filter findings. It holds counts, codes, digests and the sanitised one-line
// detail only — never snapshot content.
func (r *runner) renderSummary(w io.Writer, out outcome) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s forgectx run: agent `%s` on #%d — %s\n\n", summaryIcons[out.status], r.c.h.Agent.Name, r.c.ref.Number, out.status)
	decision := "not reached"
	switch r.res.Decision {
	case "skip":
		decision = "skip"
	case "proceed":
		decision = "proceed"
	}
	if r.decision != nil {
		decision += " (" + string(r.decision.Basis) + ")"
	}
	agent := "not started"
	if r.res.AgentRan {
		agent = fmt.Sprintf("%s in %s", r.agentStatusOr(out), r.res.AgentDuration.Round(1e6))
	}
	b.WriteString("| | |\n|---|---|\n")
	fmt.Fprintf(&b, "| decision | %s |\n", decision)
	fmt.Fprintf(&b, "| agent | %s |\n", agent)
	if d := status.SanitizeDetail(r.pipe, out.detail); d != "" {
		fmt.Fprintf(&b, "| detail | %s |\n", mdCell(d))
	}
	fmt.Fprintf(&b, "| receipt | `%s` (%s) |\n", r.res.ReceiptID, posted(r.res.ReceiptPosted))
	fmt.Fprintf(&b, "| input revision | `%s` |\n", r.res.InputRevision)
	fmt.Fprintf(&b, "| status comment | %s |\n\n", posted(r.res.StatusPosted))
	s := r.res.Summary
	if s == nil {
		b.WriteString("No snapshot was assembled.\n\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	if r.status != nil {
		summaryContext(&b, r.pipe, r.status.report)
	}
	fmt.Fprintf(&b, "**What the agent saw** (%s #%d, %d files, %d bytes, index `%s`)\n\n", s.EntityKind, s.EntityNumber, s.Files, s.Bytes, s.IndexSHA256)
	b.WriteString("| source | acquired | records | with file | rejected | omitted | forgectx's own |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, src := range s.Sources {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d |\n", src.Source, src.Acquired, src.Records, src.WithContent, src.Rejected, src.Omitted, src.Own)
	}
	b.WriteString("\n**What was withheld**\n\n")
	mdTable(&b, len(s.Gaps), "Gaps: none (every selected source is complete).\n\n", "| scope | code | usability | count |\n|---|---|---|---:|\n",
		func(i int) {
			g := s.Gaps[i]
			fmt.Fprintf(&b, "| %s | %s | %s | %d |\n", g.Scope, g.Code, g.Usability, g.Count)
		})
	mdTable(&b, len(s.Findings), "Filter findings: none.\n\n", "| filter finding | count |\n|---|---:|\n",
		func(i int) {
			f := s.Findings[i]
			fmt.Fprintf(&b, "| %s | %d |\n", f.Code, f.Count)
		})
	_, err := io.WriteString(w, b.String())
	return err
}

// mdTable writes one Markdown section of the step summary: the none paragraph when there are
// no rows, else the table header, the n rows and the blank line that ends the table.
func mdTable(b *strings.Builder, n int, none, header string, row func(i int)) {
	if n == 0 {
		b.WriteString(none)
		return
	}
	b.WriteString(header)
	for i := range n {
		row(i)
	}
	b.WriteString("\n")
}

func (r *runner) agentStatusOr(out outcome) string {
	if r.agentStatus != "" {
		return r.agentStatus
	}
	return out.status
}

func posted(ok bool) string {
	if ok {
		return "posted"
	}
	return "not posted"
}

// mdCell keeps a sanitised detail inside one table cell.
func mdCell(s string) string {
	return "`" + strings.NewReplacer("|", "¦", "`", "'").Replace(s) + "`"
}

// summaryContext writes the failed checks of the head as a table (at most
// status.MaxListedChecks rows, then a row counting the rest) and the partial-context line, each
// followed by a blank line; nothing for what c does not have. Names and first error lines are
// sanitised as in the status comment (status.SanitizeCheck) and kept inside their cells.
func summaryContext(b *strings.Builder, p *filter.Pipeline, c *status.Context) {
	if c == nil {
		return
	}
	if n := len(c.Failed); n > 0 {
		fmt.Fprintf(b, "**Failed checks** (%d)\n\n| check | category | first error |\n|---|---|---|\n", n)
		for _, fc := range c.Failed[:min(n, status.MaxListedChecks)] {
			s := status.SanitizeCheck(p, fc)
			if s.NoLog {
				fmt.Fprintf(b, "| %s | — | %s |\n", mdCell(s.Name), status.NoLogWords)
				continue
			}
			first := ""
			if s.FirstError != "" {
				first = mdCell(s.FirstError)
			}
			fmt.Fprintf(b, "| %s | %s | %s |\n", mdCell(s.Name), s.Category, first)
		}
		if n > status.MaxListedChecks {
			fmt.Fprintf(b, "| and %d more | | |\n", n-status.MaxListedChecks)
		}
		b.WriteString("\n")
	}
	if line := status.PartialLine(c.Gaps); line != "" {
		b.WriteString(line)
		b.WriteString("\n\n")
	}
}
