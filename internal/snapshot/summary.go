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
	if len(s.Gaps) == 0 {
		fmt.Fprintln(tw, "gaps: none (every selected source is complete)")
	} else {
		fmt.Fprintln(tw, "gaps (partial: usable but incomplete; unusable: no authority or completeness decision):")
		fmt.Fprintln(tw, "  scope\tcode\tusability\tcount")
		for _, g := range s.Gaps {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\n", g.Scope, g.Code, g.Usability, g.Count)
		}
	}
	fmt.Fprintln(tw)
	if len(s.Findings) == 0 {
		fmt.Fprintln(tw, "filter findings: none")
	} else {
		fmt.Fprintln(tw, "filter findings:")
		fmt.Fprintln(tw, "  code\tcount")
		for _, f := range s.Findings {
			fmt.Fprintf(tw, "  %s\t%d\n", f.Code, f.Count)
		}
	}
	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "files: %d (%d bytes)\n", s.Files, s.Bytes)
	fmt.Fprintf(tw, "index.json sha256: %s\n", s.IndexSHA256)
	return tw.Flush()
}
