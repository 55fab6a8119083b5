package verify

import (
	"fmt"
	"io"
)

// WriteText writes the report in the `forgectx verify` text form: a single line
// "ok files=N bytes=N records=N threads=N gaps=N index_sha256=HEX" for a passing tree, or one
// line per violation, "PATH: RULE: DETAIL", sorted by path and rule.
func (r Report) WriteText(w io.Writer) error {
	if r.OK() {
		_, err := fmt.Fprintf(w, "ok files=%d bytes=%d records=%d threads=%d gaps=%d index_sha256=%s\n",
			r.Files, r.Bytes, r.Records, r.Threads, r.Gaps, r.IndexSHA256)
		return err
	}
	for _, v := range r.Violations {
		if _, err := fmt.Fprintln(w, v.String()); err != nil {
			return err
		}
	}
	return nil
}
