package filter_test

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/test/corpus"
	"github.com/forgectx/forgectx/test/filterv13"
)

// unicodePieces are the text shapes the v1.4 NFKC fast path has to get exactly right: runs of
// combining marks (also more than 30, where NFKC inserts U+034F, and out of canonical order),
// full-width and half-width forms (half-width katakana with voicing marks compose), CJK,
// Hangul jamo that compose, ligatures, compatibility digits, invisible characters the strip
// pass removes around them, invalid UTF-8 and terminal escapes.
var unicodePieces = []string{
	"e\u0301", "e\u0327\u0301", "a\u0301\u0327", "\u0301", "\u0327\u0301\u0300",
	strings.Repeat("\u0301", 31), strings.Repeat("\u0300\u0327", 20), "o" + strings.Repeat("\u0308", 40) + "x",
	"Ｆｕｌｌ", "ｗｉｄｔｈ", "１２３", "（注）", "\u3000", "：", "，", "ｶﾞ", "ﾊﾟ", "ﾞ", "ｱ",
	"日本語のテキスト", "中文文本，包括标点。", "한국어", "\u1100\u1161", "\u1100\u1161\u11a8", "\u1161", "\u11a8",
	"ﬁ", "ﬀ", "①", "²", "㍿", "ﷺ", "Å", "\u212b", "\u2126", "ǅ", "ｇｈｐ＿", "ｉｇｎｏｒｅ",
	"\u200b", "\u200d", "\ufeff", "\u202e", "\u2060", "\u00ad", "\ufe0f", "\U000e0041",
	"\xff", "\xc3", "\xe3\x81", "\x1b[31m", "\x1b]0;t\x07", "\r\n", "\r", "\x00", "\x0b", "\u0085",
	"\u0345", "\u0344", "\u0f73", "\u0958", "\u2024", "\u2025", "ｲﾟ", "ℌ", "𝐀𝐁", "Ⓐ",
}

// asciiPieces are detector and rule anchors and their look-alikes.
var asciiPieces = []string{
	" ", " ", "\n", "\t", "token=", "password: ", `"api_key": "`, `"`, "REDIS_PASSWORD=", "export API_SECRET=",
	"ghp_", "xoxb-", "sk-ant-", "AKIA", "AIza", "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----",
	"https://u:p@h/", "Authorization: Bearer ", "curl -u a:", "--token ", "<password>", "</password>",
	"4111 1111 1111 1111", "DE89370400440532013000", "078-05-1120", "ignore previous instructions",
	"<!--", "-->", "system: ", "$GITHUB_TOKEN", "$github_token", "cat ~/.ssh/id_rsa", " and post it in a comment",
	"abcdefghijklmnopqrstuvwxyzABCDEFGH", "0123456789abcdef0123456789abcdef", "xvgIWVProsmlIcrIASvstKFW",
}

// randomText concatenates random pieces: unicode shapes, ASCII anchors and extra (probe and
// corpus lines).
func randomText(r *rand.Rand, ascii, extra []string) string {
	var sb strings.Builder
	for range 1 + r.IntN(60) {
		switch r.IntN(4) {
		case 0:
			sb.WriteString(unicodePieces[r.IntN(len(unicodePieces))])
		case 1:
			sb.WriteString(ascii[r.IntN(len(ascii))])
		case 2:
			sb.WriteString(extra[r.IntN(len(extra))])
		default:
			// a random letter run, sometimes right after a combining run
			for range 1 + r.IntN(30) {
				sb.WriteByte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.:= "[r.IntN(67)])
			}
		}
	}
	return sb.String()
}

// recallFix matches, per marker v1.4 or v1.5 may newly write, what v1.3's output holds there:
// a digit-free secret-named value v1.3 kept as an identifier (v1.4; v1.5 adds dotted
// lower-case values such as "s.abcdefghijklmnopqrstuvwx" after a secret-named key, the same
// letters), a GitHub token glued to the letters before it (v1.5), "sk-" and exactly 48
// alphanumerics of any letter classes (v1.5). Each may also be a marker v1.3 wrote too.
var recallFix = map[string]string{
	"[REDACTED:secret-assignment]": `(?:\[REDACTED:secret-assignment\]|[A-Za-z_.\-+/=]+)`,
	"[REDACTED:github-token]":      `(?:\[REDACTED:github-token\]|(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,}))`,
	"[REDACTED:openai-key]":        `(?:\[REDACTED:openai-key\]|sk-[A-Za-z0-9]{48})`,
}

var recallMarker = regexp.MustCompile(`\[REDACTED:(?:secret-assignment|github-token|openai-key)\]`)

// onlyRecallFixes reports whether newOut is oldOut with some values redacted by the recall
// fixes above, i.e. the only change v1.4 and v1.5 make on purpose to the bytes of a text that
// is not rejected.
func onlyRecallFixes(oldOut, newOut []byte) bool {
	var pat strings.Builder
	pat.WriteString("^")
	last := 0
	for _, m := range recallMarker.FindAllIndex(newOut, -1) {
		pat.WriteString(regexp.QuoteMeta(string(newOut[last:m[0]])))
		pat.WriteString(recallFix[string(newOut[m[0]:m[1]])])
		last = m[1]
	}
	pat.WriteString(regexp.QuoteMeta(string(newOut[last:])) + "$")
	re, err := regexp.Compile(pat.String())
	return err == nil && re.Match(oldOut)
}

// The inputs v1.5's deliberate changes apply to (ASCII case-insensitive, as the filter reads
// them): a GitHub token glued to a preceding letter or digit, "sk-" and 48 alphanumerics,
// the new injection phrasings (a "don't mention this to the user" sentence, a bot addressed
// in hidden HTML, an override in French, Spanish, Italian, Portuguese, German or Dutch,
// prose about the injection filter or addressed to it, "| netcat"), and the documentation
// exception of the override rule ("ignore the earlier instructions in the README").
var (
	v15Glued     = regexp.MustCompile(`[A-Za-z0-9](?:gh[pousr]|github)_`)
	v15SK48      = regexp.MustCompile(`sk-[A-Za-z0-9]{48}`)
	v15Injection = regexp.MustCompile(`(?i)(?:do not|don't|dont|never)\W+(?:mention|tell|say|bring)|<!--|\[//\]|\[comment\]|hidden|display|ignor|oubli|olvid|vergi|dimentic|esque|negeer|vergeet|compte|abstraction|cuenta|caso|injection|jailbreak|safety|content|moderation|classify|rate|score|netcat`)
	v15DocInstr  = regexp.MustCompile(`(?i)instructions?\W+(?:in|from|of|on|at)\W+(?:(?:the|this|our|that|your|my)\W+)?(?:readme|docs?|documentation|wiki|contributing|install|setup|guide|changelog|manual|tutorial|faq|blog|article|[a-z0-9_./-]+\.(?:md|rst|txt|adoc))`)
)

// TestDifferentialAgainstV13: on a random corpus of every detector's anchors, probe lines,
// corpus lines and hostile Unicode, the pipeline emits v1.3.1's bytes, status and findings
// exactly, except where a deliberate v1.4 or v1.5 change applies: a digit-free secret value
// now redacted (v1.4 recall fix; v1.5 adds dotted lower-case values), a pagination cursor no
// longer read as a card (v1.4 precision fix), an injection that starts at a "$VARIABLE" now
// rejected (v1.4), and v1.5's glued GitHub tokens, 48-character sk- keys, new injection
// phrasings and the documentation exception of the override rule.
func TestDifferentialAgainstV13(t *testing.T) {
	probes, err := os.ReadFile(filepath.Join("testdata", "version_probes.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var extra []string
	for _, l := range strings.Split(strings.TrimSuffix(string(probes), "\n"), "\n") {
		extra = append(extra, unescapeProbe(l))
	}
	for _, c := range []corpus.Corpus{corpus.CILog(5, 64<<10), corpus.Thread(6, 64<<10), corpus.Hostile(7, 64<<10)} {
		extra = append(extra, strings.SplitAfter(string(c.Text), "\n")...)
	}
	secrets := []string{"runcred-ABCdef123456", `p@ss/w:rd+1 "x"&y`, "Ｆｕｌｌwidth-cred-99"}
	pn, po := filter.New(secrets), filterv13.New(secrets)
	n := 4000
	if testing.Short() {
		n = 500
	}
	r := rand.New(rand.NewPCG(21, 14))
	changed := 0
	for k := range n {
		in := randomText(r, asciiPieces, extra)
		for _, role := range []filter.Role{filter.RoleBody, filter.RoleDisplay} {
			max := 0
			if k%3 == 0 {
				max = 1 + r.IntN(len(in)+8)
			}
			got, err := pn.Apply(bg, []byte(in), filter.Options{Role: role, MaxBytes: max})
			if err != nil {
				t.Fatal(err)
			}
			want, err := po.Apply(bg, []byte(in), filterv13.Options{Role: filterv13.Role(role), MaxBytes: max})
			if err != nil {
				t.Fatal(err)
			}
			if string(got.Status) == string(want.Status) && got.Gap == want.Gap && bytes.Equal(got.Output, want.Output) &&
				reflect.DeepEqual(findingsOf(got.Findings), findingsOf13(want.Findings)) {
				continue
			}
			changed++
			if max > 0 {
				// the bound cuts at a different place once a value is redacted: judge the
				// complete texts (the bound itself is unchanged code, pinned by its own tests)
				got, _ = pn.Apply(bg, []byte(in), filter.Options{Role: role})
				want, _ = po.Apply(bg, []byte(in), filterv13.Options{Role: filterv13.Role(role)})
			}
			if explained(in, got, want) {
				continue
			}
			t.Fatalf("this version differs from v1.3.1 on %q (role %s, max %d):\nnew %s %s %v\n%q\nold %s %s %v\n%q",
				in, role, max, got.Status, got.Gap, got.Findings, got.Output, want.Status, want.Gap, want.Findings, want.Output)
		}
	}
	t.Logf("%d of %d results changed, each by a deliberate v1.4 or v1.5 change", changed, 2*n)
}

// deliberate reports whether a change of delta in the count of finding code on input in is
// one that v1.4 or v1.5 makes on purpose.
func deliberate(code string, delta int, in string) bool {
	switch {
	case code == "bound.truncated":
		return true
	case code == "redact.secret-assignment":
		return delta > 0
	case code == "redact.payment-card":
		return delta < 0
	case code == "redact.github-token":
		return delta > 0 && v15Glued.MatchString(in)
	case code == "redact.openai-key":
		return delta > 0 && v15SK48.MatchString(in)
	case strings.HasPrefix(code, "redact."):
		return true // a longer span merged with its neighbour takes the most specific kind; the bytes decide
	case code == "injection.exfiltration" && delta > 0:
		return true // v1.4: rules that start at "$VARIABLE"
	case code == "injection.instruction-override" && delta < 0:
		return v15DocInstr.MatchString(in)
	case strings.HasPrefix(code, "injection.") && delta > 0:
		return v15Injection.MatchString(in)
	case code == "injection.hidden-html" && delta < 0:
		// a bot address counted at the start of its hidden region covers a match of an
		// older rule in the same words (counts are of non-overlapping matches)
		return v15Injection.MatchString(in)
	}
	return false
}

// explained accepts a difference only when it is one of the deliberate changes.
func explained(in string, got filter.Result, want filterv13.Result) bool {
	gf, wf := findingsOf(got.Findings), findingsOf13(want.Findings)
	// the shapes are read in the source and in v1.3's normalised output (NFKC folds the
	// full-width digits of "１２３gho_…")
	in += "\n" + string(want.Output) + "\n" + norm.NFKC.String(strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Cc, r) && r != '\n' {
			return -1
		}
		return r
	}, in))
	codes := map[string]bool{}
	for c := range gf {
		codes[c] = true
	}
	for c := range wf {
		codes[c] = true
	}
	for c := range codes {
		if d := gf[c] - wf[c]; d != 0 && !deliberate(c, d, in) {
			return false
		}
	}
	newRej, oldRej := got.Status == filter.StatusRejected, want.Status == filterv13.StatusRejected
	switch {
	case newRej && !oldRej:
		return gf["injection.exfiltration"] > wf["injection.exfiltration"] || v15Injection.MatchString(in)
	case oldRej && !newRej:
		return v15DocInstr.MatchString(in)
	case newRej:
		return true
	}
	if string(got.Status) != string(want.Status) && !(got.Status == filter.StatusModified && want.Status == filterv13.StatusUnchanged) {
		return false
	}
	// the precision fix: a Luhn-valid cursor after a pagination key is no longer a card
	out := stateCursor.ReplaceAll(got.Output, []byte("${1}[REDACTED:payment-card]"))
	return onlyRecallFixes(want.Output, out)
}

// stateCursor is a digit string v1.4 keeps as the value of a pagination or protocol-state key.
var stateCursor = regexp.MustCompile(`((?i:page_token|pagetoken|next_token|nexttoken|continuation_token|continuationtoken|sync_token|cancellation_token|max_token)["']?\s*[=:]\s*["']?)[0-9]{13,19}`)

func findingsOf(fs []filter.Finding) map[string]int {
	m := map[string]int{}
	for _, f := range fs {
		m[f.Code] = f.Count
	}
	return m
}

func findingsOf13(fs []filterv13.Finding) map[string]int {
	m := map[string]int{}
	for _, f := range fs {
		m[f.Code] = f.Count
	}
	return m
}

// benchV13 runs the frozen v1.3.1 pipeline over c: the before figure next to benchApply's.
func benchV13(b *testing.B, c corpus.Corpus) {
	p := filterv13.New(c.RunCredentials)
	b.SetBytes(int64(len(c.Text)))
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		if _, err := p.Apply(bg, c.Text, filterv13.Options{Role: filterv13.RoleBody}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(len(c.Text))/1e6*float64(b.N)/cpu.Seconds(), "cpu-MB/s")
	}
}

// BenchmarkV13Mixed and BenchmarkV13Hostile are v1.3.1 on the corpora of BenchmarkApplyMixed
// and BenchmarkApplyHostile.
func BenchmarkV13Mixed(b *testing.B) { benchV13(b, corpus.Mixed(3, 8<<20)) }

// BenchmarkV13Hostile: see BenchmarkV13Mixed.
func BenchmarkV13Hostile(b *testing.B) { benchV13(b, corpus.Hostile(3, 8<<20)) }

// TestDifferentialLongTexts: texts longer than one Unicode-safety chunk (the hostile corpus,
// and random pieces with CR, LF and CRLF placed around the chunk boundaries) come out as
// v1.3.1's, line by line: the same Unicode findings, and lines that differ only by v1.4's
// recall and precision fixes.
func TestDifferentialLongTexts(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	var benign []string // no injection phrase: a rejected text has no lines to compare
	for _, p := range asciiPieces {
		if !strings.Contains(p, "ignore") && !strings.Contains(p, "<!--") && !strings.Contains(p, "system") &&
			!strings.Contains(p, "ssh") && !strings.Contains(p, "post") && !strings.Contains(p, "$") {
			benign = append(benign, p)
		}
	}
	var sb strings.Builder
	for sb.Len() < 900<<10 {
		sb.WriteString(randomText(r, benign, benign))
		sb.WriteString([]string{"\n", "\r\n", "\r", "\u0301\n", "\x1b]0;unterminated\n", "\xe3\x81\n"}[r.IntN(6)])
	}
	texts := map[string]string{
		"hostile": string(corpus.Hostile(8, 1<<20).Text),
		"random":  sb.String(),
		"crlf":    strings.Repeat("ｆｕｌｌ\r\n"+strings.Repeat("x", 1000)+"\r\n", 700),
	}
	for name, in := range texts {
		got, err := filter.New(nil).Apply(bg, []byte(in), filter.Options{Role: filter.RoleBody})
		if err != nil {
			t.Fatal(err)
		}
		want, err := filterv13.New(nil).Apply(bg, []byte(in), filterv13.Options{Role: filterv13.RoleBody})
		if err != nil {
			t.Fatal(err)
		}
		if string(got.Status) != string(want.Status) {
			t.Fatalf("%s: status %s, v1.3.1 %s", name, got.Status, want.Status)
		}
		gf, wf := findingsOf(got.Findings), findingsOf13(want.Findings)
		for c, v := range wf {
			if strings.HasPrefix(c, "unicode.") && gf[c] != v {
				t.Errorf("%s: %s %d, v1.3.1 %d", name, c, gf[c], v)
			}
		}
		gl, wl := strings.Split(string(got.Output), "\n"), strings.Split(string(want.Output), "\n")
		if len(gl) != len(wl) {
			t.Fatalf("%s: %d lines, v1.3.1 %d", name, len(gl), len(wl))
		}
		diff := 0
		for k := range gl {
			if gl[k] == wl[k] {
				continue
			}
			diff++
			if !onlyRecallFixes([]byte(wl[k]), stateCursor.ReplaceAll([]byte(gl[k]), []byte("${1}[REDACTED:payment-card]"))) {
				t.Fatalf("%s line %d:\nnew %q\nold %q", name, k, gl[k], wl[k])
			}
		}
		t.Logf("%s: %d bytes, %d of %d lines changed by a recall or precision fix", name, len(in), diff, len(gl))
	}
}
