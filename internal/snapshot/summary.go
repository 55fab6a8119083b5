package snapshot

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteText renders the summary for a human: records per source, gaps with their usability,
// filter findings, file count and the index digest. It contains counts, codes and digests
// only, never content.
func (s Summary) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "entity-context-snapshot v1: %s #%d (%s)\n\n", s.EntityKind, s.EntityNumber, s.EntityID)
	fmt.Fprintln(tw, "records per source:")
	fmt.Fprintln(tw, "  source\tacquired\trecords\twith file\trejected\tomitted")
	for _, src := range s.Sources {
		fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%d\t%d\n", src.Source, src.Acquired, src.Records, src.WithContent, src.Rejected, src.Omitted)
	}
	fmt.Fprintln(tw)
	table(tw, len(s.Gaps), "gaps: none (every selected source is complete)",
		"gaps (partial: usable but incomplete; unusable: no authority or completeness decision):\n  scope\tcode\tusability\tcount",
		func(i int) {
			g := s.Gaps[i]
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\n", g.Scope, g.Code, g.Usability, g.Count)
		})
	table(tw, len(s.Findings), "filter findings: none", "filter findings:\n  code\tcount",
		func(i int) {
			f := s.Findings[i]
			fmt.Fprintf(tw, "  %s\t%d\n", f.Code, f.Count)
		})
	fmt.Fprintf(tw, "files: %d (%d bytes)\n", s.Files, s.Bytes)
	fmt.Fprintf(tw, "index.json sha256: %s\n", s.IndexSHA256)
	return tw.Flush()
}

// table writes one section of the summary followed by a blank line: the none line when there
// are no rows, else the heading lines and the n rows.
func table(tw io.Writer, n int, none, heading string, row func(i int)) {
	if n == 0 {
		fmt.Fprintln(tw, none)
	} else {
		fmt.Fprintln(tw, heading)
		for i := range n {
			row(i)
		}
	}
	fmt.Fprintln(tw)
}
