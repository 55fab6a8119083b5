package prescript

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
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
