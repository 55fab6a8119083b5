package verify_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/snapshot/verify"
	"github.com/forgectx/forgectx/test/verifytest"
)

const entityPath = "records/00000000T000000000000000Z-35dc9e19e157e6e6d3f01cabd6e35b0f4fee7870a8325bd04efa02c5c98e7b8c.md"

// checkSame runs Load and Check (verify.LoadChecked fails the test unless their reports are
// identical) with and without the retained digest and returns Load's report without it.
func checkSame(t *testing.T, dir string) verify.Report {
	t.Helper()
	for _, digest := range []string{verifytest.IndexSHA256[verifytest.Demo], ""} {
		_, rep, err := verify.LoadChecked(t, context.Background(), dir, verify.Options{IndexSHA256: digest})
		if err != nil {
			t.Fatal(err)
		}
		if digest == "" {
			return rep
		}
	}
	panic("unreachable")
}

// The summarized files (records and logs) under every text and header rule, each as a bare
// tamper (a digest mismatch) and as a consistent forgery (the manifest fixed, so the text and
// header rules themselves decide): Check reports exactly what Load reports.
func TestCheckEqualsLoadOnRecordAndLogMutations(t *testing.T) {
	header := "Fullsend-Record: \"comment\"\nSource-ID: \"x\"\nAuthor-ID: null\nCreated-At: \"2026-09-01T10:12:00.000000000Z\"\n\n"
	muts := map[string]func(b []byte) []byte{
		"invalid utf-8": func(b []byte) []byte { return append(bytes.TrimSuffix(b, []byte("\n")), 0xff, '\n') },
		"bom":           func(b []byte) []byte { return append([]byte("\xef\xbb\xbf"), b...) },
		"cr":            func(b []byte) []byte { return bytes.Replace(b, []byte("\n"), []byte("\r\n"), 1) },
		"cr at end":     func(b []byte) []byte { return append(bytes.TrimSuffix(b, []byte("\n")), '\r', '\n') },
		"header key":    func(b []byte) []byte { return bytes.Replace(b, []byte("Source-ID: "), []byte("Source-Id: "), 1) },
		"header value": func(b []byte) []byte {
			return bytes.Replace(b, []byte("Created-At: \"2026"), []byte("Created-At: \"2027"), 1)
		},
		"header not json": func(b []byte) []byte { return bytes.Replace(b, []byte("Source-ID: \""), []byte("Source-ID: '"), 1) },
		"header null": func(b []byte) []byte {
			return bytes.Replace(b, []byte("Source-ID: "), []byte("Source-ID: null\nX: "), 1)
		},
		"no blank line":    func(b []byte) []byte { return bytes.Replace(b, []byte("\n\n"), []byte("\nx\n"), 1) },
		"few lines":        func([]byte) []byte { return []byte("a\nb\nc\n") },
		"five empty lines": func([]byte) []byte { return []byte("\n\n\n\n\n") },
		"six lines":        func([]byte) []byte { return []byte("\n\n\n\n\n\n") },
		"empty":            func([]byte) []byte { return nil },
		"one byte":         func([]byte) []byte { return []byte("\n") },
		"no trailing lf":   func(b []byte) []byte { return bytes.TrimSuffix(b, []byte("\n")) },
		"two trailing lf":  func(b []byte) []byte { return append(b, '\n') },
		"header only":      func([]byte) []byte { return []byte(header) },
		"body one lf":      func([]byte) []byte { return []byte(header + "\n") },
		"body two lf":      func([]byte) []byte { return []byte(header + "\n\n") },
		"body x":           func([]byte) []byte { return []byte(header + "x") },
		"body x lf":        func([]byte) []byte { return []byte(header + "x\n") },
		"long header (read again)": func(b []byte) []byte {
			return bytes.Replace(b, []byte("Source-ID: "), []byte("Source-ID: "+strings.Repeat(" ", 20000)), 1)
		},
	}
	for _, p := range []string{entityPath, commentPath, reviewPath, failedCheck + "/log.txt"} {
		for name, mut := range muts {
			for _, fix := range []bool{false, true} {
				t.Run(filepath.Base(filepath.Dir(p))+"/"+name+map[bool]string{true: "/forged"}[fix], func(t *testing.T) {
					dir := verifytest.Write(t, verifytest.Demo)
					write(t, dir, p, mut(read(t, dir, p)))
					if fix {
						fixManifest(t, dir, nil)
					}
					checkSame(t, dir)
				})
			}
		}
	}
}

// The path set and the manifest: missing, extra, resized and re-roled summarized files.
func TestCheckEqualsLoadOnPathAndRoleMutations(t *testing.T) {
	setRole := func(p, role string) func(m map[string]any) {
		return func(m map[string]any) {
			for _, f := range m["files"].([]any) {
				if e := f.(map[string]any); e["path"] == p {
					e["role"] = role
				}
			}
		}
	}
	cases := map[string]func(t *testing.T, dir string){
		"missing record": func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, commentPath)) },
		"missing log":    func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, failedCheck, "log.txt")) },
		"extra record":   func(t *testing.T, dir string) { write(t, dir, "records/extra.md", []byte("x\n")) },
		"extra log": func(t *testing.T, dir string) {
			os.Mkdir(filepath.Join(dir, "checks", strings.Repeat("a", 64)), 0o700)
			write(t, dir, "checks/"+strings.Repeat("a", 64)+"/log.txt", []byte("x\n"))
		},
		"resized record": func(t *testing.T, dir string) {
			write(t, dir, commentPath, append(read(t, dir, commentPath), "more\n"...))
		},
		"same size": func(t *testing.T, dir string) {
			b := read(t, dir, commentPath)
			b[len(b)-2] ^= 1
			write(t, dir, commentPath, b)
		},
		"record as json": func(t *testing.T, dir string) { fixManifest(t, dir, setRole(commentPath, "collection")) },
		"record as thread order": func(t *testing.T, dir string) {
			fixManifest(t, dir, setRole(commentPath, "thread_order"))
		},
		"log as timeline": func(t *testing.T, dir string) {
			fixManifest(t, dir, setRole(failedCheck+"/log.txt", "timeline_view"))
		},
		"log as record": func(t *testing.T, dir string) {
			fixManifest(t, dir, setRole(failedCheck+"/log.txt", "comment_record"))
		},
		"record as log": func(t *testing.T, dir string) { fixManifest(t, dir, setRole(commentPath, "check_log")) },
		"content path to a json file": func(t *testing.T, dir string) {
			fixManifest(t, dir, func(m map[string]any) {
				for _, r := range m["records"].([]any) {
					if e := r.(map[string]any); e["content_path"] == commentPath {
						e["content_path"] = "collection.json"
					}
				}
			})
		},
		"json at a record path": func(t *testing.T, dir string) {
			write(t, dir, commentPath, read(t, dir, "collection.json"))
			fixManifest(t, dir, setRole(commentPath, "collection"))
		},
	}
	for name, tamper := range cases {
		t.Run(name, func(t *testing.T) {
			dir := verifytest.Write(t, verifytest.Demo)
			tamper(t, dir)
			if rep := checkSame(t, dir); rep.OK() {
				t.Fatal("tampered tree verified")
			}
		})
	}
	for _, name := range []string{verifytest.Demo, verifytest.DemoReply} {
		dir := verifytest.Write(t, name)
		rep, err := verify.Check(context.Background(), dir, verify.Options{IndexSHA256: verifytest.IndexSHA256[name]})
		if err != nil || !rep.OK() || rep.IndexSHA256 != verifytest.IndexSHA256[name] {
			t.Fatalf("%s: Check: %v %v", name, err, rep.Violations)
		}
	}
}

// CheckSums returns, for a tree that passes, exactly the digests Load's Snapshot.Sums gives
// (every file but index.json), and none for a tree that fails.
func TestCheckSumsAreLoadsSums(t *testing.T) {
	dir := verifytest.Write(t, verifytest.Demo)
	opts := verify.Options{IndexSHA256: verifytest.IndexSHA256[verifytest.Demo]}
	snap, _, err := verify.Load(context.Background(), dir, opts)
	if err != nil || snap == nil {
		t.Fatal(err)
	}
	rep, sums, err := verify.CheckSums(context.Background(), dir, opts)
	want := snap.Sums()
	if err != nil || !rep.OK() || len(sums) != len(want) || len(want) < 5 {
		t.Fatalf("%v %v: %d sums, want %d", err, rep.Violations, len(sums), len(want))
	}
	for p, s := range want {
		if sums[p] != s {
			t.Fatalf("%s: digest differs from Load's", p)
		}
	}
	if _, ok := sums["index.json"]; ok {
		t.Fatal("the root index is among the sums")
	}
	if err := os.WriteFile(filepath.Join(dir, entityPath), []byte("changed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if rep, sums, err := verify.CheckSums(context.Background(), dir, opts); err != nil || rep.OK() || sums != nil {
		t.Fatalf("a failing tree: ok=%v, %d sums, %v", rep.OK(), len(sums), err)
	}
}
