package verify

import (
	"bytes"
	"context"
	"unicode/utf8"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/snapshot/treefs"
)

// Check verifies the tree at dir exactly as Dir (and Load) do — the same rules, violations,
// counts and IndexSHA256 — in bounded memory: the record files and check logs (by path, see
// summarized), almost all of a tree's bytes, are not held. Each is hashed and reduced to its
// textFacts (UTF-8 validity, byte-order mark, CR, the four header lines and the blank line,
// how it ends) right after it is read, on the walker's cores, and its bytes are dropped; the
// digest check and the text and record-header rules use only those. The JSON documents and
// order files are held as Load holds them; index.json only until the manifest is decoded.
//
// A manifest that lists such a path with a role whose rules need the whole bytes (a JSON or
// order role: already a role_mismatch), or a record whose header lines are longer than
// maxFactsHead, has that one file read again and used only when its size and SHA-256 equal
// those of the first read; otherwise the file is reported replaced_while_reading.
//
// The error is non-nil only when the tree could not be examined at all, as for Dir.
func Check(ctx context.Context, dir string, opts Options) (Report, error) {
	_, rep, err := load(ctx, dir, opts, modeCheck)
	return rep, err
}

// CheckSums is Check that also returns, for a tree that passes, the SHA-256 of every file but
// the root index.json: the digests the verification computed when it compared each file with
// its manifest entry (the form stage.Build's builders return), not a second hash of the tree.
// They are nil when the tree does not pass.
func CheckSums(ctx context.Context, dir string, opts Options) (Report, treefs.Sums, error) {
	snap, rep, err := load(ctx, dir, opts, modeCheck)
	if snap == nil {
		return rep, nil, err
	}
	return rep, snap.sums, err
}

// maxFactsHead bounds the header bytes (the first five lines) textFacts keeps of a
// summarized file; a v1 record header is a few hundred bytes.
const maxFactsHead = 16 << 10

// textFacts is what the text and record-header rules read of a file: recordFile and
// textRules use only these, for held and summarized files alike, so both verdicts are one
// function of the same facts.
type textFacts struct {
	size           int64
	valid, bom, cr bool
	// last2 holds the file's last two bytes (fewer when it is shorter).
	last2 [2]byte
	// lines are the first nLines (at most five) LF-terminated lines without their LF, and
	// headLen the bytes they span with their LFs: kept only when nLines is 5.
	lines   [5]string
	nLines  int
	headLen int64
	// partial: the five header lines span more than maxFactsHead bytes and were not kept.
	partial bool
	// floorAt is the byte offset of the first rune in a Unicode floor class (filter.IndexFloor),
	// -1 when there is none, and floorCode its finding code: found in the same read as the
	// rest, so the floor rule costs no second pass over the file.
	floorAt   int64
	floorCode string
	// strippedAt and strippedCode are the same for the first rune this build's filter version
	// strips (filter.IndexStripped: the floor and the shipped extras).
	strippedAt   int64
	strippedCode string
}

// floorCodes are the finding codes of the floor classes (filter.FloorCode's codes).
var floorCodes = func() map[string]bool {
	m := map[string]bool{}
	for _, r := range []rune{0xE0000, 0x200B, 0x202A, 0xFE00, 0xFFF9} {
		code, _ := filter.FloorCode(r)
		m[code] = true
	}
	return m
}()

// textFactsOf computes the facts of b; bounded keeps the header lines only up to
// maxFactsHead bytes (Check's summaries), else always (held bytes).
func textFactsOf(b []byte, bounded bool) *textFacts {
	t := &textFacts{size: int64(len(b)), valid: utf8.Valid(b), bom: bytes.HasPrefix(b, []byte("\xef\xbb\xbf")), cr: bytes.IndexByte(b, '\r') >= 0}
	// One scan finds the first rune this build's filter strips; only when that rune is not a
	// floor rune is the rest scanned for the floor (a foreign filter version is judged on the
	// floor alone).
	at, code := filter.IndexStripped(b)
	t.strippedAt, t.strippedCode = int64(at), code
	t.floorAt, t.floorCode = -1, ""
	switch {
	case at < 0:
	case floorCodes[code]:
		t.floorAt, t.floorCode = int64(at), code
	default:
		if f, fc := filter.IndexFloor(b[at:]); f >= 0 {
			t.floorAt, t.floorCode = int64(at+f), fc
		}
	}
	copy(t.last2[:], b[max(len(b)-2, 0):])
	rest := b
	var ends [5]int
	for t.nLines < 5 {
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			break
		}
		t.headLen += int64(nl) + 1
		ends[t.nLines] = int(t.headLen) - 1
		t.nLines++
		rest = rest[nl+1:]
	}
	if t.nLines < 5 {
		return t
	}
	if bounded && t.headLen > maxFactsHead {
		t.partial = true
		return t
	}
	head := string(b[:t.headLen]) // one allocation for the five lines
	start := 0
	for i, e := range ends {
		t.lines[i], start = head[start:e], e+1
	}
	return t
}

// endsOneLF reports whether the last n bytes of the file (n ≥ 1; its body, or all of it) end
// with exactly one LF: a last LF not preceded by another within those n bytes.
func (t *textFacts) endsOneLF(n int64) bool {
	l := len(t.last2)
	if t.size < 2 {
		l = int(t.size)
	}
	last := t.last2[:l]
	if len(last) == 0 || last[len(last)-1] != '\n' {
		return false
	}
	return !(n >= 2 && len(last) == 2 && last[0] == '\n')
}

// holdNeeded reads again, before the rules run, the intact summarized files whose rules need
// their bytes (see Check).
func (c *checker) holdNeeded() {
	if len(c.summ) == 0 {
		return
	}
	for _, f := range c.man.Files {
		s, ok := c.summ[f.Path]
		if !ok || !c.intact(f.Path) {
			continue
		}
		_, isJSON := schemaForRole[f.Role]
		switch {
		case isJSON, isOrderRole(f.Role), s.facts == nil, s.facts.partial:
		default:
			continue
		}
		b, why := rereadVerified(c.dir, f.Path, s.size, s.sum)
		if why != "" {
			c.add(f.Path, RuleReplaced, "file changed while the tree was verified")
			delete(c.sums, f.Path)
			continue
		}
		delete(c.summ, f.Path)
		c.files[f.Path] = b
	}
}

// isOrderRole reports whether a manifest role is one of an order or view file.
func isOrderRole(role string) bool {
	switch role {
	case "thread_order", "timeline_view", "unresolved_review_view", "review_view":
		return true
	}
	return false
}

// textFactsAt returns the facts of a file read (held or summarized).
func (c *checker) textFactsAt(p string) *textFacts {
	if b, ok := c.files[p]; ok {
		return textFactsOf(b, false)
	}
	return c.summ[p].facts
}
