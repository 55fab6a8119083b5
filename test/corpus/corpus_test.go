package corpus

import (
	"bytes"
	"strings"
	"testing"
)

// TestDeterministic: the same seed and size give the same bytes and secrets; another seed
// gives other bytes.
func TestDeterministic(t *testing.T) {
	for name, mk := range map[string]func(uint64, int) Corpus{"log": CILog, "thread": Thread} {
		a, b, c := mk(3, 64<<10), mk(3, 64<<10), mk(4, 64<<10)
		if !bytes.Equal(a.Text, b.Text) || len(a.Secrets) != len(b.Secrets) {
			t.Errorf("%s: not deterministic", name)
		}
		if bytes.Equal(a.Text, c.Text) {
			t.Errorf("%s: seed ignored", name)
		}
		if len(a.Text) < 64<<10 || len(a.Text) > 66<<10 {
			t.Errorf("%s: %d bytes for 64 KiB", name, len(a.Text))
		}
	}
}

// TestEveryFamilyPlantedVerbatim: a large enough corpus plants every family, each value
// appears verbatim in the text, and run credentials are reported for registration.
func TestEveryFamilyPlantedVerbatim(t *testing.T) {
	for name, c := range map[string]Corpus{"log": CILog(1, 256<<10), "thread": Thread(2, 256<<10)} {
		seen := map[string]bool{}
		for _, s := range c.Secrets {
			seen[s.Family] = true
			if !bytes.Contains(c.Text, []byte(s.Value)) {
				t.Errorf("%s: %s value not in text", name, s.Family)
			}
		}
		for _, f := range Families {
			if !seen[f] {
				t.Errorf("%s: family %s never planted", name, f)
			}
		}
		if len(c.RunCredentials) == 0 || len(c.RunCredentials) > 3 {
			t.Errorf("%s: %d run credentials", name, len(c.RunCredentials))
		}
	}
}

// TestShapes: CI logs carry ANSI colour codes and CR progress lines; threads carry template
// HTML comments and inline base64 images.
func TestShapes(t *testing.T) {
	log := string(CILog(1, 64<<10).Text)
	if !strings.Contains(log, "\x1b[36;1m") || !strings.Contains(log, "\r") || !strings.Contains(log, "##[group]") {
		t.Error("CI log lacks ANSI codes, CR progress or groups")
	}
	th := string(Thread(1, 64<<10).Text)
	if !strings.Contains(th, "<!-- ") || !strings.Contains(th, "data:image/png;base64,") {
		t.Error("thread lacks template comments or inline images")
	}
}
