package prescript

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestParseGrammar(t *testing.T) {
	for _, c := range []struct {
		name string
		in   string
		want File
	}{
		{"empty file means proceed", "", File{Outputs: []KV{}}},
		{"one assignment per line", "skipped=true\nreason=an open PR already addresses this issue\nmyagent_existing_pr=123\n",
			File{SkippedSet: true, Skipped: true, ReasonSet: true, Reason: "an open PR already addresses this issue", Outputs: []KV{{"myagent_existing_pr", "123"}}}},
		{"whitespace surrounding key and value is insignificant", " \tskipped \t= \ttrue\t \n", File{SkippedSet: true, Skipped: true, Outputs: []KV{}}},
		{"comments are lines whose first non-whitespace character is #", "#skipped=true\n \t# skipped=true\n", File{Outputs: []KV{}}},
		{"a value may contain #", "reason=# not a comment\nk=a#b", File{ReasonSet: true, Reason: "# not a comment", Outputs: []KV{{"k", "a#b"}}}},
		{"= in values is preserved", "k==a=b=\n", File{Outputs: []KV{{"k", "=a=b="}}}},
		{"repeated keys: the last assignment wins", "skipped=true\nskipped=false\nb=1\na=2\nb=3\n", File{SkippedSet: true, Outputs: []KV{{"a", "2"}, {"b", "3"}}}},
		{"reason present but empty is kept as set", "reason=\n", File{ReasonSet: true, Outputs: []KV{}}},
		{"empty non-reserved value", "k=\n", File{Outputs: []KV{{"k", ""}}}},
		{"non-ASCII values are allowed", "reason=déjà vu ✓\n", File{ReasonSet: true, Reason: "déjà vu ✓", Outputs: []KV{}}},
		{"<< after = is part of the value", "k=a<<b\n", File{Outputs: []KV{{"k", "a<<b"}}}},
		{"blank lines of whitespace are ignored", "\n \n\t\n", File{Outputs: []KV{}}},
		{"a comment may hold a CR or any byte", "# c\r\n#\x00\n", File{Outputs: []KV{}}},
		{"a # right after = starts the value", "k=#v\n", File{Outputs: []KV{{"k", "#v"}}}},
		{"a key may contain hyphens and digits after the first character", "a-1_b-=v", File{Outputs: []KV{{"a-1_b-", "v"}}}},
		{"a hyphenated key differing from a reserved one is an output", "skipped-x=1", File{Outputs: []KV{{"skipped-x", "1"}}}},
		{"= with blanks around: the value keeps inner blanks", "reason =  a = b  ", File{ReasonSet: true, Reason: "a = b", Outputs: []KV{}}},
		{"invalid UTF-8 in a value is kept as bytes", "k=\xff\xfe\n", File{Outputs: []KV{{"k", "\xff\xfe"}}}},
		{"the last assignment wins also for reason set empty", "reason=a\nreason=\n", File{ReasonSet: true, Outputs: []KV{}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestParseErrorSemantics(t *testing.T) {
	for _, c := range []struct {
		name string
		in   string
		line int
		rule Rule
	}{
		{"a line that is not key=value", "skipped true", 1, RuleNotKeyValue},
		{"a key that fails the key pattern", "a=1\n\nk.x=1", 3, RuleKeyPattern},
		{"a key with a leading hyphen", "-k=1", 1, RuleKeyPattern},
		{"a key with a space inside", "my key=1", 1, RuleKeyPattern},
		{"a key with a non-ASCII letter", "clé=1", 1, RuleKeyPattern},
		{"a key differing from skipped only by case", "Skipped=true", 1, RuleReservedCase},
		{"a key differing from reason only by case", "REASON=x", 1, RuleReservedCase},
		{"a value containing NUL", "k=a\x00b", 1, RuleControlChar},
		{"a value containing a bare CR", "reason=x\rskipped=false", 1, RuleControlChar},
		{"a value containing ESC", "k=\x1b[31m", 1, RuleControlChar},
		{"a value containing DEL", "k=\x7f", 1, RuleControlChar},
		{"a CRLF line ending", "k=v\r\n", 1, RuleControlChar},
		{"skipped set to anything but true/false", "skipped=1", 1, RuleSkippedValue},
		{"skipped with quotes", "skipped='true'", 1, RuleSkippedQuoted},
		{"skipped present but empty", "skipped=", 1, RuleSkippedEmpty},
		{"skipped present but blank", "skipped = \t", 1, RuleSkippedEmpty},
		{"heredoc line", "reason<<EOF\nx\nEOF", 1, RuleHeredoc},
		{"heredoc line with = later", "k<<EOF=x", 1, RuleHeredoc},
		{"the first error wins", "ok=1\nbad\nSKIPPED=true", 2, RuleNotKeyValue},
		{"a UTF-8 byte order mark at file start", "\ufeffskipped=true\n", 1, RuleBOM},
		{"a byte order mark before a comment", "\ufeff# c\n", 1, RuleBOM},
		{"a byte order mark from a second writer", "skipped=true\n\ufeffreason=x\n", 2, RuleBOM},
		{"a heredoc with blanks around <<", "reason << EOF\nx\nEOF", 1, RuleHeredoc},
		{"a heredoc with a hyphenated key", "my-key<<EOF", 1, RuleHeredoc},
		{"skipped with a trailing comment is not true", "skipped=true # yes", 1, RuleSkippedValue},
		{"a bare key without =", "skipped", 1, RuleNotKeyValue},
		{"a lone CR line (CRLF blank line)", "skipped=true\n\r\n", 2, RuleNotKeyValue},
		{"a vertical tab is not whitespace", "\vskipped=true", 1, RuleKeyPattern},
		{"a non-breaking space is not whitespace", "skipped=\u00a0true", 1, RuleSkippedValue},
		{"a mis-cased reserved key with blanks", "  Skipped = true", 1, RuleReservedCase},
		{"skipped with a leading capital value", "skipped=True", 1, RuleSkippedValue},
		{"an empty skipped after a valid one still fails", "skipped=true\nskipped=", 2, RuleSkippedEmpty},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(c.in))
			var pe *ProtocolError
			if !errors.As(err, &pe) || pe.Line != c.line || pe.Rule != c.rule {
				t.Fatalf("err = %v, want line %d rule %q", err, c.line, c.rule)
			}
		})
	}
}

// "Maximum file size is 1 MiB": exactly 1 MiB parses, one byte more is an error, and Parse
// never reads more than MaxFileSize+1 bytes from an endless reader.
func TestParseBoundedRead(t *testing.T) {
	exact := strings.Repeat("#", MaxFileSize-1) + "\n"
	if _, err := Parse(strings.NewReader(exact)); err != nil {
		t.Fatalf("1 MiB: %v", err)
	}
	var pe *ProtocolError
	if _, err := Parse(strings.NewReader(exact + "#")); !errors.As(err, &pe) || pe.Rule != RuleFileTooLarge {
		t.Fatalf("1 MiB + 1: %v", err)
	}
	r := &countingReader{}
	if _, err := Parse(r); !errors.As(err, &pe) || pe.Rule != RuleFileTooLarge {
		t.Fatalf("endless: %v", err)
	}
	if r.n > MaxFileSize+1 {
		t.Fatalf("read %d bytes, bound is %d", r.n, MaxFileSize+1)
	}
}

type countingReader struct{ n int }

func (c *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '#'
	}
	c.n += len(p)
	return len(p), nil
}

func TestParseReadErrorIsAProtocolError(t *testing.T) {
	_, err := Parse(io.MultiReader(strings.NewReader("k=v\n"), errReader{}))
	var pe *ProtocolError
	if !errors.As(err, &pe) || pe.Rule != RuleFileUnread || !errors.Is(err, errBoom) {
		t.Fatalf("err = %v", err)
	}
}

var errBoom = errors.New("boom")

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errBoom }

func TestFormatRoundTrip(t *testing.T) {
	in := "  # c\nz=1\nskipped = true\nreason= why =not \na-b=x=y\n"
	f, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	b, err := f.Format()
	if err != nil {
		t.Fatal(err)
	}
	if want := "skipped=true\nreason=why =not\na-b=x=y\nz=1\n"; string(b) != want {
		t.Fatalf("Format = %q, want %q", b, want)
	}
	g, err := Parse(bytes.NewReader(b))
	if err != nil || !reflect.DeepEqual(f, g) {
		t.Fatalf("round trip: %+v vs %+v (%v)", f, g, err)
	}
}

func TestFormatRefusesWhatTheGrammarCannotExpress(t *testing.T) {
	for _, f := range []File{
		{ReasonSet: true, Reason: "a\nskipped=true"},
		{ReasonSet: true, Reason: " padded"},
		{Outputs: []KV{{"SKIPPED", "true"}}},
		{Outputs: []KV{{"bad key", "v"}}},
		{Outputs: []KV{{"k", "\r"}}},
	} {
		if _, err := f.Format(); err == nil {
			t.Errorf("Format(%+v) succeeded", f)
		}
	}
}

func TestDecisionFrom(t *testing.T) {
	d := DecisionFrom(File{SkippedSet: true, Skipped: true, ReasonSet: true, Reason: "r", Outputs: []KV{{"k", "v"}}})
	if !d.Skipped || d.Reason != "r" || d.Basis != BasisFile || len(d.Outputs) != 1 {
		t.Fatalf("%+v", d)
	}
	if d := DecisionFrom(File{ReasonSet: true, Reason: "r"}); d.Skipped {
		t.Fatalf("absent skipped must proceed: %+v", d)
	}
}
