package filter_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/test/corpus"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestVersionPinsEmittedBytes: "changing emitted bytes for the same input requires a new
// filter version." The digest of the pipeline's output over a fixed corpus is recorded with
// the version; a behaviour change that keeps the version fails here (bump filter.Version, then
// run with -update).
func TestVersionPinsEmittedBytes(t *testing.T) {
	h := sha256.New()
	log, thread := corpus.CILog(11, 128<<10), corpus.Thread(12, 128<<10)
	// the corpus's run credentials plus one with special characters, whose encoded forms the
	// probes carry
	p := filter.New(append(append(log.RunCredentials, thread.RunCredentials...), `p@ss/w:rd+1 "x"&y`))
	for _, in := range [][]byte{log.Text, thread.Text} {
		for _, o := range []filter.Options{{Role: filter.RoleLog}, {Role: filter.RoleBody, MaxBytes: 50000}, {Role: filter.RoleDisplay, MaxBytes: 300}} {
			r := apply(t, p, string(in), o)
			fmt.Fprintf(h, "%s %s %v %d\n", r.Status, r.Gap, r.Findings, len(r.Output))
			h.Write(r.Output)
		}
	}
	// and every line of testdata/version_probes.txt: one real-world shape per detector and
	// rule, positive and negative, so a change to any pattern moves the digest even when the
	// corpus never exercises it
	probes, err := os.ReadFile(filepath.Join("testdata", "version_probes.txt"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(probes), "\n"), "\n")
	if len(lines) < 300 {
		t.Fatalf("only %d probe lines", len(lines))
	}
	for _, line := range lines {
		in := unescapeProbe(line)
		for _, o := range []filter.Options{{Role: filter.RoleBody}, {Role: filter.RoleDisplay, MaxBytes: 40}} {
			r := apply(t, p, in, o)
			fmt.Fprintf(h, "%s %s %v %d\n", r.Status, r.Gap, r.Findings, len(r.Output))
			h.Write(r.Output)
		}
	}
	got := map[string]string{"filter_version": filter.Version, "sha256": hex.EncodeToString(h.Sum(nil))}
	path := filepath.Join("testdata", "version_golden.json")
	if *update {
		b, _ := json.MarshalIndent(got, "", "  ")
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]string
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if got["sha256"] != want["sha256"] && got["filter_version"] == want["filter_version"] {
		t.Errorf("emitted bytes changed but filter.Version is still %s: bump it, then run go test -run TestVersionPinsEmittedBytes -update", filter.Version)
	}
	if got["filter_version"] != want["filter_version"] {
		t.Errorf("filter.Version %s has no golden digest yet: run with -update", filter.Version)
	}
}

// unescapeProbe turns the escapes a probe line uses into bytes: \n, \r, \t, \uXXXX and
// \UXXXXXXXX; any other backslash stays as it is (probes quote JSON with "\/" and "\"").
func unescapeProbe(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch c := s[i+1]; {
		case c == 'n':
			b.WriteByte('\n')
			i++
		case c == 'r':
			b.WriteByte('\r')
			i++
		case c == 't':
			b.WriteByte('\t')
			i++
		case (c == 'u' && i+6 <= len(s)) || (c == 'U' && i+10 <= len(s)):
			n := 4
			if c == 'U' {
				n = 8
			}
			v, err := strconv.ParseUint(s[i+2:i+2+n], 16, 32)
			if err != nil {
				b.WriteByte('\\')
				continue
			}
			b.WriteRune(rune(v))
			i += 1 + n
		default:
			b.WriteByte('\\')
		}
	}
	return b.String()
}
