package checkdigest

import (
	"bytes"
	"slices"
	"strings"
	"unicode/utf8"
)

// Formats Digest.Format names.
const (
	formatGitHub  = "github-actions"
	formatGitLab  = "gitlab"
	formatForgejo = "forgejo"
	formatPlain   = "plain"
)

// Limits bound a digest. A zero field takes its default (defaultLimits).
type Limits struct {
	MaxKeyLines   int // key lines kept per check
	Context       int // context lines kept before and after each key line
	MaxLineBytes  int // a kept line's text is cut to at most this many bytes, then "…" is added
	MaxBytes      int // bytes of kept line text per check (key lines first, then their context)
	MaxTotalBytes int // bytes of kept line text across all checks of a tree (FromSnapshot)
}

// defaultLimits are the bounds used when a field is zero: about 3 KiB of text per check and
// 12 KiB per tree, enough for the first failures with their assertion lines.
func defaultLimits() Limits {
	return Limits{MaxKeyLines: 8, Context: 2, MaxLineBytes: 240, MaxBytes: 3072, MaxTotalBytes: 12288}
}

func (l Limits) withDefaults() Limits {
	d := defaultLimits()
	// A bound that is not positive takes the default: no bound is ever zero or negative.
	or := func(v, def int) int {
		if v <= 0 {
			return def
		}
		return v
	}
	l.MaxKeyLines, l.Context = or(l.MaxKeyLines, d.MaxKeyLines), or(l.Context, d.Context)
	l.MaxLineBytes, l.MaxBytes = or(l.MaxLineBytes, d.MaxLineBytes), or(l.MaxBytes, d.MaxBytes)
	l.MaxTotalBytes = or(l.MaxTotalBytes, d.MaxTotalBytes)
	// A cut line is at most MaxLineBytes plus the ellipsis; the first key line always fits.
	l.MaxLineBytes = max(1, min(l.MaxLineBytes, l.MaxBytes-len(ellipsis)))
	return l
}

// ellipsis marks a line cut at MaxLineBytes.
const ellipsis = "…"

// hit is one key line found by the scan.
type hit struct {
	line int // 0-based line index
	rule int // index into rules
	step string
	cmd  string // the command running (step name or last "$ command"), for the step table
}

// scan is the state of one pass over a log.
type scan struct {
	lines   [][]byte // raw lines (no LF), for context
	format  string
	job     string
	steps   []string // open section names (GitLab) or the current step (others)
	last    string   // the last step that printed a line, for a key line outside every section
	cmd     string   // the running command: the step's name or the last "$ command" echoed
	script  bool     // inside a GitHub "Run" group, which echoes the step's whole script
	spec    []hit    // specific key lines, the first MaxKeyLines
	gen     []hit    // generic key lines, the first MaxKeyLines
	nSpec   int      // all specific key lines
	nGen    int      // all generic key lines
	best    int      // earliest rule (table order) of a specific key line, -1 when none
	cand    []bool   // classify's scratch
	scratch []byte   // normalisation's scratch
}

// Of derives the digest of one check's log: the log's format, job and failing step, the key
// lines (those the rule table recognises) with a little context, their 1-based line numbers,
// and the category of the earliest rule (in table order) that matched. It reads nothing but
// log, and the same log and limits always give the same digest.
func Of(log []byte, lim Limits) Digest {
	lim = lim.withDefaults()
	s := &scan{best: -1, cand: make([]bool, len(rules))}
	s.lines = splitLines(log)
	for i, raw := range s.lines {
		s.line(i, raw, lim)
	}
	return s.digest(lim)
}

// splitLines splits at LF; a final LF ends the last line rather than starting an empty one.
func splitLines(b []byte) [][]byte {
	if len(b) == 0 {
		return nil
	}
	n := bytes.Count(b, []byte{'\n'})
	out := make([][]byte, 0, n+1)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, b)
			break
		}
		out = append(out, b[:i])
		b = b[i+1:]
	}
	return out
}

// line processes one raw line: section markers, then classification.
func (s *scan) line(i int, raw []byte, lim Limits) {
	// A carriage return overwrites the terminal line (GitLab's "\r\e[0K"): every segment may
	// hold a section marker, and the last visible segment is the line's text.
	var text []byte
	annotated := false
	if bytes.IndexByte(raw, '\r') < 0 {
		text, annotated, _ = s.normalise(raw)
	} else {
		for seg := range bytes.SplitSeq(raw, []byte{'\r'}) {
			t, ann, marker := s.normalise(seg)
			if marker || len(t) == 0 {
				continue
			}
			// normalise may return its scratch buffer, which the next segment reuses.
			text, annotated = append(text[:0:0], t...), ann
		}
	}
	if len(text) == 0 || isNoise(text) {
		return
	}
	if s.script {
		s.scriptLine(text)
	}
	st := s.step()
	if st != "" {
		s.last = st
	} else {
		// GitLab prints "ERROR: Job failed" after the script's section has ended: the failing
		// step is the last one that printed anything.
		st = s.last
	}
	r := classify(text, s.cand)
	if r < 0 && annotated {
		r = ruleGHAError
	}
	if r < 0 {
		return
	}
	h := hit{line: i, rule: r, step: st, cmd: s.cmd}
	if rules[r].generic() {
		s.nGen++
		if len(s.gen) < lim.MaxKeyLines {
			s.gen = append(s.gen, h)
		}
		return
	}
	s.nSpec++
	if len(s.spec) < lim.MaxKeyLines {
		s.spec = append(s.spec, h)
	}
	if s.best < 0 || r < s.best {
		s.best = r
	}
}

// ruleGHAError is the generic rule of a runner ##[error] line no specific rule recognised.
var ruleGHAError = slices.IndexFunc(rules, func(r ruleRow) bool { return r.ID == "error-prefix" })

func (s *scan) step() string {
	if len(s.steps) == 0 {
		return ""
	}
	return s.steps[len(s.steps)-1]
}

// maxScriptBytes bounds the script text a step's command gathers for the step table.
const maxScriptBytes = 1024

// scriptLine adds a line of the script GitHub echoes under "Run <first line>" to the running
// command, so a step whose first line is "set -e" or "cd web" is still known by the tool it
// runs. The step's inputs ("with:"), shell and environment end the script.
func (s *scan) scriptLine(text []byte) {
	if bytes.HasPrefix(text, []byte("shell: ")) || bytes.Equal(text, []byte("with:")) || bytes.Equal(text, []byte("env:")) {
		s.script = false
		return
	}
	if len(s.cmd)+1+len(text) <= maxScriptBytes {
		s.cmd += "\n" + string(text)
	}
}

// maxNameBytes bounds a job or step name taken from the log.
const maxNameBytes = 120

// normalise strips one segment's ANSI escapes, timestamp and runner prefixes and handles the
// forges' section markers. It returns the text, whether the runner marked it ##[error], and
// whether the segment was a marker only.
func (s *scan) normalise(seg []byte) (text []byte, annotated, marker bool) {
	seg = s.clean(seg)
	seg = stripTimestamp(seg)
	seg = bytes.TrimRight(seg, " \t")
	if len(seg) == 0 {
		return nil, false, false
	}
	switch {
	case seg[0] == '#' && bytes.HasPrefix(seg, []byte("##[")):
		s.detect(formatGitHub)
		return s.ghCommand(seg)
	case seg[0] == ':' && bytes.HasPrefix(seg, []byte("::")):
		return s.wfCommand(seg)
	case bytes.HasPrefix(seg, []byte("section_start:")):
		s.detect(formatGitLab)
		s.steps = append(s.steps, sectionName(seg[len("section_start:"):]))
		return nil, false, true
	case bytes.HasPrefix(seg, []byte("section_end:")):
		s.detect(formatGitLab)
		if len(s.steps) > 0 {
			s.steps = s.steps[:len(s.steps)-1]
		}
		return nil, false, true
	}
	if seg[0] == '[' {
		seg = s.actPrefix(seg)
	}
	seg = stripBuildKit(seg)
	s.plainMarkers(seg)
	return seg, false, false
}

// ghCommand handles a GitHub runner line ##[command]rest.
func (s *scan) ghCommand(seg []byte) ([]byte, bool, bool) {
	end := bytes.IndexByte(seg, ']')
	if end < 0 {
		return seg, false, false
	}
	cmd, rest := string(seg[3:end]), seg[end+1:]
	switch cmd {
	case "group":
		name, ok := bytes.CutPrefix(rest, []byte("Run "))
		if ok {
			s.setStep(name)
		}
		s.script = ok
		return nil, false, true
	case "endgroup", "section":
		s.script = false
		return nil, false, true
	case "error":
		return rest, true, false
	case "warning", "notice", "debug", "command":
		return rest, false, false
	}
	return seg, false, false
}

// wfCommand handles a workflow command echoed raw (act_runner keeps them): ::group::name,
// ::endgroup::, ::error file=…::message.
func (s *scan) wfCommand(seg []byte) ([]byte, bool, bool) {
	rest := seg[2:]
	end := bytes.Index(rest, []byte("::"))
	if end < 0 {
		return seg, false, false
	}
	cmd, _, _ := bytes.Cut(rest[:end], []byte(" "))
	msg := rest[end+2:]
	switch string(cmd) {
	case "group":
		s.setStep(bytes.TrimPrefix(msg, []byte("Run ")))
		return nil, false, true
	case "endgroup", "add-mask", "debug", "set-output", "save-state":
		return nil, false, true
	case "error":
		return msg, true, false
	case "warning", "notice":
		return msg, false, false
	}
	return seg, false, false
}

// actPrefix strips act's "[workflow/job] " line prefix, taking the job name from it.
func (s *scan) actPrefix(seg []byte) []byte {
	end := bytes.Index(seg, []byte("] "))
	if end < 0 || end > 2*maxNameBytes {
		return seg
	}
	_, job, ok := bytes.Cut(seg[1:end], []byte("/"))
	if !ok || len(job) == 0 || bytes.ContainsAny(job, "[]") {
		return seg
	}
	s.detect(formatForgejo)
	if s.job == "" {
		s.job = name(job)
	}
	return seg[end+2:]
}

// plainMarkers recognises the marker lines that are also text: act_runner's step lines,
// GitLab's runner banner and GitHub's job name line.
func (s *scan) plainMarkers(seg []byte) {
	seg = bytes.TrimLeft(seg, " ")
	switch {
	case bytes.HasPrefix(seg, []byte("⭐ Run ")):
		s.detect(formatForgejo)
		st := bytes.TrimLeft(seg[len("⭐ Run "):], " ")
		st = bytes.TrimPrefix(st, []byte("Main "))
		s.setStep(st)
	case bytes.HasPrefix(seg, []byte("✅ ")), bytes.HasPrefix(seg, []byte("❌ ")), bytes.HasPrefix(seg, []byte("🏁 ")):
		s.detect(formatForgejo)
	case bytes.HasPrefix(seg, []byte("$ ")):
		// The shell's echo of the command it runs (GitLab echoes every script line).
		s.cmd = name(seg[2:])
	case bytes.HasPrefix(seg, []byte("Running with gitlab-runner")):
		s.detect(formatGitLab)
	case bytes.HasPrefix(seg, []byte("Complete job name: ")):
		s.detect(formatGitHub)
		if s.job == "" {
			s.job = name(seg[len("Complete job name: "):])
		}
	case bytes.HasPrefix(seg, []byte("Current runner version: ")):
		s.detect(formatGitHub)
	}
}

// detect sets the log's format from the first marker seen: the runner writes its own markers
// before any step runs, so a marker a test prints later cannot change the format.
func (s *scan) detect(f string) {
	if s.format == "" {
		s.format = f
	}
}

func (s *scan) setStep(b []byte) {
	n := name(b)
	s.cmd = n
	if len(s.steps) == 0 {
		s.steps = append(s.steps, n)
	} else {
		s.steps[len(s.steps)-1] = n
	}
}

// name is a job or step name: its first line, trimmed, at most maxNameBytes.
func name(b []byte) string {
	return cut(strings.TrimSpace(string(b)), maxNameBytes)
}

// sectionName is the name of a GitLab section_start:<unix>:<name>[options] marker.
func sectionName(b []byte) string {
	_, rest, ok := bytes.Cut(b, []byte(":"))
	if !ok {
		return ""
	}
	if i := bytes.IndexByte(rest, '['); i >= 0 {
		rest = rest[:i]
	}
	return name(rest)
}

// noise are whole lines that are never key or context lines: runner housekeeping.
var noise = []string{
	"Cleaning up project directory and file based variables",
	"Cleaning up orphan processes",
	"Post job cleanup.",
	"Cleaning up file based variables",
}

func isNoise(t []byte) bool {
	for _, n := range noise {
		if bytes.HasPrefix(t, []byte(n)) {
			return true
		}
	}
	return false
}

// clean removes ANSI escape sequences (CSI "ESC [ … final", OSC "ESC ] … BEL|ESC \",
// two-byte "ESC x") and every other C0 control but TAB. The snapshot's filter already
// removes terminal escapes from logs; this keeps Of total on any input (fuzzing, a log from
// elsewhere) without a dependency. It returns seg itself when there is nothing to remove.
func (s *scan) clean(seg []byte) []byte {
	i := 0
	for i < len(seg) && (seg[i] >= 0x20 || seg[i] == '\t') && seg[i] != 0x7f {
		i++
	}
	if i == len(seg) {
		return seg
	}
	out := append(s.scratch[:0], seg[:i]...)
	for i < len(seg) {
		c := seg[i]
		switch {
		case c == 0x1b:
			i = skipEscape(seg, i)
			continue
		case c < 0x20 && c != '\t', c == 0x7f:
		default:
			out = append(out, c)
		}
		i++
	}
	s.scratch = out
	return out
}

// skipEscape returns the index after the escape sequence starting at seg[i] (ESC).
func skipEscape(seg []byte, i int) int {
	i++
	if i >= len(seg) {
		return i
	}
	switch seg[i] {
	case '[':
		for i++; i < len(seg); i++ {
			if seg[i] >= 0x40 && seg[i] <= 0x7e {
				return i + 1
			}
		}
		return i
	case ']':
		for i++; i < len(seg); i++ {
			if seg[i] == 0x07 {
				return i + 1
			}
			if seg[i] == 0x1b && i+1 < len(seg) && seg[i+1] == '\\' {
				return i + 2
			}
		}
		return i
	}
	return i + 1
}

// stripTimestamp removes a leading RFC 3339 timestamp and its space
// (2024-01-02T03:04:05.1234567Z), and the stream marker GitLab's timestamped traces add
// after it ("00O ", "01E+ ").
func stripTimestamp(b []byte) []byte {
	i := timestampEnd(b)
	if i < 0 {
		return b
	}
	b = b[i:]
	// GitLab: two digits, O or E, an optional +, a space.
	if len(b) >= 4 && isDigit(b[0]) && isDigit(b[1]) && (b[2] == 'O' || b[2] == 'E') {
		switch {
		case b[3] == ' ':
			b = b[4:]
		case b[3] == '+' && len(b) >= 5 && b[4] == ' ':
			b = b[5:]
		}
	}
	return b
}

// timestampEnd is the index after a leading "YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM) ", or -1.
func timestampEnd(b []byte) int {
	const shape = "dddd-dd-ddTdd:dd:dd"
	if len(b) < len(shape)+2 {
		return -1
	}
	for i := 0; i < len(shape); i++ {
		if shape[i] == 'd' && !isDigit(b[i]) || shape[i] != 'd' && b[i] != shape[i] {
			return -1
		}
	}
	i := len(shape)
	if b[i] == '.' {
		i++
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	switch {
	case i < len(b) && b[i] == 'Z':
		i++
	case i+6 <= len(b) && (b[i] == '+' || b[i] == '-') && b[i+3] == ':':
		i += 6
	default:
		return -1
	}
	if i >= len(b) || b[i] != ' ' {
		return -1
	}
	return i + 1
}

// stripBuildKit removes the step prefix of docker build's plain progress output
// ("#8 1.204 "), so the tool's own line underneath is classified as the tool prints it.
func stripBuildKit(b []byte) []byte {
	if len(b) < 3 || b[0] != '#' || !isDigit(b[1]) {
		return b
	}
	i := 1
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	if i >= len(b) || b[i] != ' ' {
		return b
	}
	rest := b[i+1:]
	j := 0
	for j < len(rest) && (isDigit(rest[j]) || rest[j] == '.') {
		j++
	}
	if j > 0 && j < len(rest) && rest[j] == ' ' {
		return rest[j+1:]
	}
	return rest
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// cut bounds s to max bytes at a character boundary, adding the ellipsis when it cuts; invalid
// UTF-8 becomes U+FFFD first, so the digest is always valid text.
func cut(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + ellipsis
}

// context is the text of line i as a context line: not for noise, markers, or a key line
// (one the bounds left out is counted in OmittedLines, not shown unmarked).
func (s *scan) context(i int, lim Limits) (string, bool) {
	t, ok := s.text(i, lim)
	if !ok {
		return "", false
	}
	probe := &scan{cand: s.cand}
	raw := s.lines[i]
	if j := bytes.LastIndexByte(raw, '\r'); j >= 0 {
		raw = raw[j+1:]
	}
	v, ann, marker := probe.normalise(raw)
	if marker || ann || (len(v) > 0 && classify(v, s.cand) >= 0) {
		return "", false
	}
	return t, true
}

// text is the normalised, bounded text of line i (the last visible carriage-return segment).
func (s *scan) text(i int, lim Limits) (string, bool) {
	var t []byte
	for seg := range bytes.SplitSeq(s.lines[i], []byte{'\r'}) {
		c := stripTimestamp(s.clean(seg))
		c = bytes.TrimRight(c, " \t")
		if len(c) == 0 || bytes.HasPrefix(c, []byte("section_start:")) || bytes.HasPrefix(c, []byte("section_end:")) {
			continue
		}
		t = append(t[:0:0], c...) // clean may return its scratch buffer
	}
	if len(t) == 0 || isNoise(t) {
		return "", false
	}
	if bytes.HasPrefix(t, []byte("##[")) || bytes.HasPrefix(t, []byte("::")) {
		var marker bool
		probe := &scan{}
		if t[0] == '#' {
			t, _, marker = probe.ghCommand(t)
		} else {
			t, _, marker = probe.wfCommand(t)
		}
		if marker || len(t) == 0 {
			return "", false
		}
	} else if t[0] == '[' {
		t = (&scan{job: "x"}).actPrefix(t)
	}
	t = stripBuildKit(t)
	return cut(string(t), lim.MaxLineBytes), true
}

// category decides the digest's category: the earliest rule (table order) of a specific key
// line; a step named for a linter turns a compile rule into lint; with only generic key lines,
// the step table on the command that was running when the first key line was printed. A log
// without any key line is unknown: nothing says it failed at all.
func (s *scan) category(order []hit) (Category, string) {
	st := -1
	if len(order) > 0 {
		st = stepRule(order[0].cmd)
	}
	switch {
	case s.best >= 0 && st >= 0 && rules[s.best].Category == catCompile && stepRules[st].Category == catLint:
		return catLint, stepRules[st].ID
	case s.best >= 0:
		return rules[s.best].Category, rules[s.best].ID
	case st >= 0:
		return stepRules[st].Category, stepRules[st].ID
	}
	return catUnknown, ""
}

// digest selects the kept lines within the limits: specific key lines in log order, then
// generic ones, each with its context, while the byte bound allows.
func (s *scan) digest(lim Limits) Digest {
	d := Digest{Format: s.format, Job: s.job, Category: catUnknown, Lines: []Line{}}
	if d.Format == "" {
		d.Format = formatPlain
	}
	order := append(append([]hit(nil), s.spec...), s.gen...)
	d.Category, d.Rule = s.category(order)
	total := s.nSpec + s.nGen
	if len(order) > 0 {
		d.Step = order[0].step
	}
	kept := map[int]Line{}
	size, keys := 0, 0
	for _, h := range order {
		if keys == lim.MaxKeyLines {
			break
		}
		if l, ok := kept[h.line]; ok && l.Key {
			continue
		}
		t, _ := s.text(h.line, lim)
		if size+len(t) > lim.MaxBytes {
			break
		}
		if old, ok := kept[h.line]; ok {
			size -= len(old.Text) // a context line promoted to key
		}
		kept[h.line] = Line{Number: h.line + 1, Text: t, Key: true}
		size += len(t)
		keys++
		if d.FirstError == "" {
			d.FirstError = t
		}
		for j := max(0, h.line-lim.Context); j <= min(len(s.lines)-1, h.line+lim.Context); j++ {
			if _, ok := kept[j]; ok {
				continue
			}
			ct, ok := s.context(j, lim)
			if !ok || size+len(ct) > lim.MaxBytes {
				continue
			}
			kept[j] = Line{Number: j + 1, Text: ct}
			size += len(ct)
		}
	}
	for _, l := range kept {
		d.Lines = append(d.Lines, l)
	}
	slices.SortFunc(d.Lines, func(a, b Line) int { return a.Number - b.Number })
	d.OmittedLines = total - keys
	return d
}
