package logging

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestNewAcceptsExactlyTheDocumentedLevels(t *testing.T) {
	for _, l := range []string{"trace", "debug", "info", "warn", "error", "disabled", "DEBUG", "Info"} {
		if _, err := New(&bytes.Buffer{}, formatJSON, l); err != nil {
			t.Errorf("level %q: %v", l, err)
		}
	}
	for _, l := range []string{"", "5", "-1", "panic", "fatal", "loud", "warning"} {
		_, err := New(&bytes.Buffer{}, formatJSON, l)
		if err == nil || !strings.HasPrefix(err.Error(), "--log-level: ") {
			t.Errorf("level %q: err %v, want a --log-level error", l, err)
		}
	}
	for _, f := range []string{"", "xml", "JSON "} {
		if _, err := New(&bytes.Buffer{}, f, "info"); err == nil || !strings.HasPrefix(err.Error(), "--log-format: ") {
			t.Errorf("format %q: err %v", f, err)
		}
	}
}

// --log-format json: every line is one JSON object with level, time and message; the level
// filters lower-priority events.
func TestJSONFormatWritesOneValidObjectPerLine(t *testing.T) {
	var b bytes.Buffer
	log, err := New(&b, formatJSON, "info")
	if err != nil {
		t.Fatal(err)
	}
	log.Debug().Msg("hidden")
	log.Info().Int("n", 1).Msg("shown \"quoted\"\nsecond line")
	log.Warn().Str("code", "x").Msg("warned")
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines (debug filtered), got %q", b.String())
	}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not JSON: %q: %v", l, err)
		}
		for _, k := range []string{"level", "time", "message"} {
			if _, ok := m[k]; !ok {
				t.Errorf("line %q lacks %q", l, k)
			}
		}
	}
}

func TestTextFormatIsOneLinePerEvent(t *testing.T) {
	var b bytes.Buffer
	log, err := New(&b, formatText, "debug")
	if err != nil {
		t.Fatal(err)
	}
	log.Debug().Int("n", 2).Msg("visible")
	if out := b.String(); strings.Count(out, "\n") != 1 || !strings.Contains(out, "DBG visible n=2") {
		t.Fatalf("text line %q", out)
	}
}
