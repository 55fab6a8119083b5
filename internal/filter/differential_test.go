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

// recallFix matches what v1.4 may replace in v1.3's output: a digit-free secret-named value
// (letters, '_', '.', '-', '+', '/', '=') v1.3 kept as an identifier.
const recallFix = `(?:\[REDACTED:secret-assignment\]|[A-Za-z_.\-+/=]+)`

// onlyRecallFixes reports whether newOut is oldOut with some digit-free values redacted, i.e.
// the only change v1.4 makes on purpose to the bytes of a text that is not rejected.
func onlyRecallFixes(oldOut, newOut []byte) bool {
	parts := strings.Split(string(newOut), "[REDACTED:secret-assignment]")
	for k := range parts {
		parts[k] = regexp.QuoteMeta(parts[k])
	}
	re, err := regexp.Compile(`^` + strings.Join(parts, recallFix) + `$`)
	return err == nil && re.Match(oldOut)
}

// TestDifferentialAgainstV13: on a random corpus of every detector's anchors, probe lines,
// corpus lines and hostile Unicode, the v1.4 pipeline emits v1.3.1's bytes, status and findings
// exactly, except where a deliberate v1.4 change applies: a digit-free secret value now
// redacted (recall fix), a pagination cursor no longer read as a card (precision fix), or an
// injection that starts at a "$VARIABLE" now rejected.
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
			if explained(got, want) {
				continue
			}
			t.Fatalf("v1.4 differs from v1.3.1 on %q (role %s, max %d):\nnew %s %s %v\n%q\nold %s %s %v\n%q",
				in, role, max, got.Status, got.Gap, got.Findings, got.Output, want.Status, want.Gap, want.Findings, want.Output)
		}
	}
	t.Logf("%d of %d results changed, each by a deliberate v1.4 change", changed, 2*n)
}

// explained accepts a difference only when it is one of v1.4's deliberate changes.
func explained(got filter.Result, want filterv13.Result) bool {
	gf, wf := findingsOf(got.Findings), findingsOf13(want.Findings)
	if got.Status == filter.StatusRejected && want.Status != filterv13.StatusRejected {
		// a new rejection: only the exfiltration rules that start at "$github_token"
		return gf["injection.exfiltration"] > 0
	}
	if string(got.Status) != string(want.Status) && !(got.Status == filter.StatusModified && want.Status == filterv13.StatusUnchanged) {
		return false
	}
	if gf["redact.secret-assignment"] <= wf["redact.secret-assignment"] && gf["redact.payment-card"] >= wf["redact.payment-card"] {
		return false
	}
	for c, v := range gf {
		if c != "redact.secret-assignment" && c != "bound.truncated" && !strings.HasPrefix(c, "redact.") && wf[c] != v {
			return false
		}
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
