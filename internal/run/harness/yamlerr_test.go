package harness

import (
	"strings"
	"testing"
)

// Regression: a YAML syntax error said only "must be one YAML mapping with only the
// documented keys: line 1". Each YAML error now gives the line, the column where the document
// parses far enough to locate the node, and yaml.v3's cause — never the offending value.
func TestYAMLErrorsGiveLineColumnAndCause(t *testing.T) {
	const secretish = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	for _, c := range []struct{ name, doc, want string }{
		{"tab indentation", "version: 1\nagent:\n\tname: a\n", "line 3: syntax error: found character that cannot start any token (a tab in indentation?)"},
		{"nested mapping on one line", "version: 1\nagent: name: " + secretish + "\n", "line 2: syntax error: mapping values are not allowed in this context"},
		{"unclosed flow sequence", "version: 1\nsecrets: [A, B\n", "syntax error: did not find expected ',' or ']'"},
		{"wrong type", "version: \"" + secretish + "\"\n", "line 1, column 10: wrong type: a str where an integer is expected"},
		{"unknown key", "version: 1\n  \nagentz: {}\n", "line 3, column 1: unknown key agentz (not a documented harness key)"},
		{"duplicate key", "version: 1\nversion: 1\n", "line 2, column 1: duplicate key version (first defined at line 1)"},
		{"list for a mapping", "version: 1\nagent: [" + secretish + "]\n", "line 2, column 8: wrong type: a seq where a mapping is expected"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(c.doc))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q\nlacks   %q", err, c.want)
			}
			if strings.Contains(err.Error(), secretish) {
				t.Errorf("error echoes a value: %q", err)
			}
		})
	}
}
