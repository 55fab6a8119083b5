package prescript

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/filter"
)

// FuzzParse: Parse never panics, every error is a *ProtocolError that names a rule and never
// quotes the input, and every accepted file re-serialises (Format) to a file that parses to the
// same File and therefore the same decision.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"", "skipped=true\n", "skipped=false\nreason=x\n", "# c\n\n k = v \n", "k==v=\n",
		"skipped true", "SKIPPED=true", "reason<<EOF\nx\nEOF\n", "k=a\rb", "skipped=", "skipped=\"true\"",
		"a-b_c=1\na-b_c=2\n", "reason=déjà\n", "k=\xff\xfe\n", "\x00=1", "k=v\r\n", "=\n", "k<<=\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		file, err := Parse(bytes.NewReader(in))
		if err != nil {
			var pe *ProtocolError
			if !errors.As(err, &pe) || pe.Rule == "" {
				t.Fatalf("error is not a ProtocolError naming a rule: %v", err)
			}
			if pe.Line < 0 || pe.Line > bytes.Count(in, []byte("\n"))+1 {
				t.Fatalf("line %d out of range", pe.Line)
			}
			if !strings.HasPrefix(err.Error(), EnvOutput) || !strings.Contains(err.Error(), string(pe.Rule)) {
				t.Fatalf("message %q does not name the rule", err)
			}
			return
		}
		out, err := file.Format()
		if err != nil {
			t.Fatalf("accepted file does not re-serialise: %v", err)
		}
		again, err := Parse(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("re-serialised file rejected: %v\n%q", err, out)
		}
		if !reflect.DeepEqual(file, again) || !reflect.DeepEqual(DecisionFrom(file), DecisionFrom(again)) {
			t.Fatalf("round trip changed the decision:\n%+v\n%+v", file, again)
		}
		for i := 1; i < len(file.Outputs); i++ {
			if file.Outputs[i-1].Key >= file.Outputs[i].Key {
				t.Fatalf("outputs not sorted and unique: %+v", file.Outputs)
			}
		}
	})
}

// FuzzCapture: the capture of untrusted script output never panics, agrees with sanitize on
// what a non-empty line is, stays within its window, and the text it yields after clean is
// one line of at most MaxTextBytes bytes, whatever the bytes and however they are split.
func FuzzCapture(f *testing.F) {
	for _, s := range []string{
		"::error::x\n", "##[error]y\r\n", "::error t=1::z", "a\x00\x1b\x7f\n\n \t\n", "é\xff\xc3", "\u00a0\u2028\n",
		strings.Repeat("w", 3000) + "\n::error::" + strings.Repeat("é", 900),
	} {
		f.Add([]byte(s), uint8(7))
	}
	f.Fuzz(func(t *testing.T, in []byte, split uint8) {
		c := newCapture(nil, nil)
		step := int(split)%64 + 1
		for i := 0; i < len(in); i += step {
			c.Write(in[i:min(i+step, len(in))])
		}
		c.close()
		if len(c.last) > c.limit || len(c.cur) != 0 {
			t.Fatalf("window exceeded: last %d cur %d", len(c.last), len(c.cur))
		}
		for _, line := range strings.Split(string(in), "\n") {
			if len(line) <= c.limit && hasText([]byte(line)) != (sanitize(line) != "") {
				t.Fatalf("hasText and sanitize disagree on %q", line)
			}
		}
		if last := c.lastNonEmpty(); last != "" && sanitize(last) == "" {
			t.Fatalf("kept an empty line as the last non-empty one: %q", last)
		}
		for _, a := range append([]string{c.lastNonEmpty()}, c.annotations...) {
			out, _ := clean(a, identity{})
			if len(out) > MaxTextBytes || hasControl(out) {
				t.Fatalf("clean(%q) = %q: not one capped line", a, out)
			}
		}
	})
}

type identity struct{}

func (identity) Redact(s string) (string, []filter.Finding) { return s, nil }
