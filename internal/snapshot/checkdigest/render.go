package checkdigest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/forgectx/forgectx/internal/snapshot/canon"
	"github.com/forgectx/forgectx/internal/snapshot/verify"
)

// Check is the digest of one retained check whose log is in a snapshot tree.
type Check struct {
	Name       string `json:"name"`       // the check's filtered name, from its metadata file
	Conclusion string `json:"conclusion"` // from its metadata file ("" while not completed)
	Path       string `json:"path"`       // the log's tree path, checks/<record-key>/log.txt
	Digest     Digest `json:"digest"`
}

// checkMeta is the part of a check metadata file a digest shows.
type checkMeta struct {
	Name       string `json:"name"`
	Conclusion string `json:"conclusion"`
}

// Metadata reads a check record's name and conclusion from its verified metadata document
// (a file changed since verification fails with verify.ErrChanged).
func Metadata(s *verify.Snapshot, path string) (name, conclusion string, err error) {
	b, err := s.ReadFile(path)
	if err != nil {
		return "", "", fmt.Errorf("checkdigest: %w", err)
	}
	var m checkMeta
	if err := json.Unmarshal(b, &m); err != nil {
		return "", "", fmt.Errorf("checkdigest: %s: check metadata is not a JSON object with string name and conclusion", path)
	}
	return m.Name, m.Conclusion, nil
}

// FromSnapshot digests every retained check whose log is in the verified tree, in the
// manifest's record order, and then applies lim.MaxTotalBytes across them: a check past the
// total keeps fewer lines (or none) and counts what it lost in OmittedLines. It reads only the
// verified bytes (a file changed since verification fails with verify.ErrChanged).
func FromSnapshot(s *verify.Snapshot, lim Limits) ([]Check, error) {
	if s == nil || s.Manifest == nil {
		return nil, fmt.Errorf("checkdigest: the snapshot has not been verified")
	}
	lim = lim.withDefaults()
	var out []Check
	left := lim.MaxTotalBytes
	for _, r := range s.Manifest.Records {
		if r.Kind != canon.KindCheck || r.LogPath == "" {
			continue
		}
		c := Check{Path: r.LogPath}
		if r.MetadataPath != "" {
			var err error
			if c.Name, c.Conclusion, err = Metadata(s, r.MetadataPath); err != nil {
				return nil, err
			}
		}
		log, err := s.ReadFile(r.LogPath)
		if err != nil {
			return nil, fmt.Errorf("checkdigest: %w", err)
		}
		c.Digest = Of(log, lim)
		left -= trim(&c.Digest, left)
		out = append(out, c)
	}
	return out, nil
}

// trim drops the digest's last lines (in log order) until its text fits budget bytes, counts
// the key lines dropped in OmittedLines, and returns the bytes kept.
func trim(d *Digest, budget int) int {
	size := 0
	for _, l := range d.Lines {
		size += len(l.Text)
	}
	for size > budget && len(d.Lines) > 0 {
		l := d.Lines[len(d.Lines)-1]
		d.Lines = d.Lines[:len(d.Lines)-1]
		size -= len(l.Text)
		if l.Key {
			d.OmittedLines++
		}
	}
	// Context left without any key line says nothing.
	if lastKey(d.Lines) < 0 {
		d.Lines, size = d.Lines[:0], 0
	}
	return size
}

func lastKey(ls []Line) int {
	for i := len(ls) - 1; i >= 0; i-- {
		if ls[i].Key {
			return i
		}
	}
	return -1
}

// Render is the digest as compact text: the check, the format, job and step, the category
// and deciding rule, the kept lines numbered as in the log file (">" marks a key line, "..."
// a gap), and the omission marker. The same Check always renders the same bytes.
func Render(c Check) string {
	var b strings.Builder
	d := c.Digest
	head := "check"
	if c.Name != "" {
		head += " " + strconv.Quote(c.Name)
	}
	if c.Conclusion != "" {
		head += " (" + c.Conclusion + ")"
	}
	if c.Path != "" {
		head += ": " + c.Path
	}
	b.WriteString(head + "\n")
	b.WriteString("format: " + d.Format + "\n")
	if d.Job != "" {
		b.WriteString("job: " + d.Job + "\n")
	}
	if d.Step != "" {
		b.WriteString("step: " + d.Step + "\n")
	}
	b.WriteString("category: " + string(d.Category))
	if d.Rule != "" {
		b.WriteString(" (rule " + d.Rule + ")")
	}
	b.WriteString("\n")
	if len(d.Lines) == 0 && d.OmittedLines == 0 {
		b.WriteString("no error line recognised; read the log\n")
		return b.String()
	}
	width := 1
	if n := len(d.Lines); n > 0 {
		width = len(strconv.Itoa(d.Lines[n-1].Number))
	}
	prev := 0
	for _, l := range d.Lines {
		if prev != 0 && l.Number != prev+1 {
			b.WriteString(strings.Repeat(" ", width+2) + "...\n")
		}
		prev = l.Number
		mark := " "
		if l.Key {
			mark = ">"
		}
		fmt.Fprintf(&b, "%s%*d | %s\n", mark, width, l.Number, l.Text)
	}
	if m := omittedMarker(d.OmittedLines); m != "" {
		b.WriteString(m + "\n")
	}
	return b.String()
}

// omittedMarker is the line that says how many key lines the bounds left out ("" for none).
func omittedMarker(n int) string {
	switch {
	case n <= 0:
		return ""
	case n == 1:
		return "… 1 more error line not shown"
	}
	return "… " + strconv.Itoa(n) + " more error lines not shown"
}
