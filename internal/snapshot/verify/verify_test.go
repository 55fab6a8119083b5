package verify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/forgectx/forgectx/internal/snapshot/canon"
	"github.com/forgectx/forgectx/internal/snapshot/demo"
	"github.com/forgectx/forgectx/internal/snapshot/treefs"
	"github.com/forgectx/forgectx/internal/snapshot/verify"
	"github.com/forgectx/forgectx/test/verifytest"
)

// Paths in the stored demo tree the tamper cases use.
const (
	commentPath = "records/20260901T101200000000000Z-a91e751b2dfb1023c38cfa127324fca5a42377ffee15c3db69f68545949f6b74.md"
	reviewPath  = "records/20260901T102300000000000Z-747c6a20e927dabb3cd048dc7b6b4085738246ea08aa632102025aaf1cabf9ea.md"
	threadOrder = "threads/5996be20e92cc4dbd1a09679fe4c2a1514cb251c13eb28f22a761937f80c5645.order"
	failedCheck = "checks/e88bc57aee8f3438666d78157652bc8b16e99431c355c6c206170e14ff401cfb"
)

func TestStoredTreesVerify(t *testing.T) {
	for _, name := range []string{verifytest.Demo, verifytest.DemoReply} {
		t.Run(name, func(t *testing.T) {
			dir := verifytest.Write(t, name)
			for _, digest := range []string{"", verifytest.IndexSHA256[name]} {
				snap, rep, err := verify.LoadChecked(t, context.Background(), dir, verify.Options{IndexSHA256: digest})
				if err != nil {
					t.Fatal(err)
				}
				if !rep.OK() || snap == nil {
					t.Fatalf("stored %s tree rejected: %v", name, rep.Violations)
				}
				if rep.IndexSHA256 != verifytest.IndexSHA256[name] {
					t.Errorf("index digest %s, want %s", rep.IndexSHA256, verifytest.IndexSHA256[name])
				}
				files := verifytest.Files(t, name)
				if rep.Files != len(files) || len(snap.Paths()) != len(files)-1 {
					t.Errorf("counted %d files (%d paths), tree has %d", rep.Files, len(snap.Paths()), len(files))
				}
				for p, want := range files {
					if got, ok := snap.File(p); !ok || !bytes.Equal(got, want) {
						t.Errorf("snapshot bytes of %s differ from the tree", p)
					}
				}
				if rep.Threads != 3 || rep.Gaps != 1 || rep.Records < 17 {
					t.Errorf("counts records=%d threads=%d gaps=%d", rep.Records, rep.Threads, rep.Gaps)
				}
			}
		})
	}
}

// fixManifest recomputes bytes and sha256 of every files[] entry from disk (after mutate has
// edited the decoded index) and writes canonical index bytes: a consistent forgery that only
// the deeper rules, or the retained digest, can catch.
func fixManifest(t *testing.T, dir string, mutate func(m map[string]any)) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	if mutate != nil {
		mutate(m)
	}
	for _, f := range m["files"].([]any) {
		e := f.(map[string]any)
		b, err := os.ReadFile(filepath.Join(dir, e["path"].(string)))
		if err != nil {
			continue // a removed file keeps its stale entry
		}
		e["bytes"] = len(b)
		e["sha256"] = canon.SHA256Hex(b)
		if e["path"] == "collection.json" {
			m["collection_profile"] = canon.SHA256Hex(b)
		}
	}
	out, err := canon.JSON(m)
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "index.json", out)
}

func write(t *testing.T, dir, p string, b []byte) {
	t.Helper()
	full := filepath.Join(dir, p)
	_ = os.Remove(full)
	if err := os.WriteFile(full, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, dir, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, p))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// editJSON rewrites a JSON document canonically after mutate.
func editJSON(t *testing.T, dir, p string, mutate func(v map[string]any)) {
	t.Helper()
	var v map[string]any
	dec := json.NewDecoder(bytes.NewReader(read(t, dir, p)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	mutate(v)
	out, err := canon.JSON(v)
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, p, out)
}

func TestTamperIsCaught(t *testing.T) {
	demoDigest := verifytest.IndexSHA256[verifytest.Demo]
	cases := []struct {
		name     string
		tamper   func(t *testing.T, dir string)
		retained bool // verify with the retained index digest
		path     string
		rule     string
	}{
		{"flip a byte", func(t *testing.T, dir string) {
			b := read(t, dir, commentPath)
			b[len(b)-3] ^= 0x20
			write(t, dir, commentPath, b)
		}, true, commentPath, verify.RuleSHA256},
		{"add a file", func(t *testing.T, dir string) {
			write(t, dir, "records/20300101T000000000000000Z-"+strings.Repeat("ab", 32)+".md", []byte("x\n"))
		}, true, "records/20300101T000000000000000Z-" + strings.Repeat("ab", 32) + ".md", verify.RuleExtraFile},
		{"add a file at the root", func(t *testing.T, dir string) {
			write(t, dir, "NOTES.txt", []byte("x\n"))
		}, true, "NOTES.txt", verify.RuleExtraFile},
		{"add a directory", func(t *testing.T, dir string) {
			if err := os.Mkdir(filepath.Join(dir, "scratch"), 0o700); err != nil {
				t.Fatal(err)
			}
		}, true, "scratch", verify.RuleExtraDirectory},
		{"remove a file", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, commentPath)); err != nil {
				t.Fatal(err)
			}
		}, true, commentPath, verify.RuleMissingFile},
		{"remove the root index", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "index.json")); err != nil {
				t.Fatal(err)
			}
		}, false, "index.json", verify.RuleMissingFile},
		{"replace a file by a symlink", func(t *testing.T, dir string) {
			outside := filepath.Join(t.TempDir(), "copy.md")
			if err := os.WriteFile(outside, read(t, dir, commentPath), 0o600); err != nil {
				t.Fatal(err)
			}
			os.Remove(filepath.Join(dir, commentPath))
			if err := os.Symlink(outside, filepath.Join(dir, commentPath)); err != nil {
				t.Fatal(err)
			}
		}, true, commentPath, verify.RuleSymlink},
		{"replace the root index by a symlink", func(t *testing.T, dir string) {
			outside := filepath.Join(t.TempDir(), "index.json")
			if err := os.WriteFile(outside, read(t, dir, "index.json"), 0o600); err != nil {
				t.Fatal(err)
			}
			os.Remove(filepath.Join(dir, "index.json"))
			if err := os.Symlink(outside, filepath.Join(dir, "index.json")); err != nil {
				t.Fatal(err)
			}
		}, true, "index.json", verify.RuleSymlink},
		{"replace a file by a hard link", func(t *testing.T, dir string) {
			outside := filepath.Join(t.TempDir(), "copy.md")
			if err := os.WriteFile(outside, read(t, dir, commentPath), 0o600); err != nil {
				t.Fatal(err)
			}
			os.Remove(filepath.Join(dir, commentPath))
			if err := os.Link(outside, filepath.Join(dir, commentPath)); err != nil {
				t.Fatal(err)
			}
		}, true, commentPath, verify.RuleHardLink},
		{"replace a file by a FIFO", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, commentPath))
			if err := syscall.Mkfifo(filepath.Join(dir, commentPath), 0o600); err != nil {
				t.Fatal(err)
			}
		}, true, commentPath, verify.RuleSpecialFile},
		{"replace a file by a socket", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, threadOrder))
			fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer syscall.Close(fd)
			if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: filepath.Join(dir, threadOrder)}); err != nil {
				t.Skipf("cannot bind a unix socket here: %v", err)
			}
		}, true, threadOrder, verify.RuleSpecialFile},
		{"a symlinked directory component", func(t *testing.T, dir string) {
			real := filepath.Join(t.TempDir(), "records")
			if err := os.Rename(filepath.Join(dir, "records"), real); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(real, filepath.Join(dir, "records")); err != nil {
				t.Fatal(err)
			}
		}, true, "records", verify.RuleSymlink},
		{"rewrite index.json against the retained digest", func(t *testing.T, dir string) {
			fixManifest(t, dir, func(m map[string]any) { m["gaps"] = []any{} })
		}, true, "index.json", verify.RuleIndexDigest},
		{"swap two records' contents", func(t *testing.T, dir string) {
			a, b := read(t, dir, commentPath), read(t, dir, reviewPath)
			write(t, dir, commentPath, b)
			write(t, dir, reviewPath, a)
		}, true, commentPath, verify.RuleSHA256},
		{"swap two records' contents and forge the manifest", func(t *testing.T, dir string) {
			a, b := read(t, dir, commentPath), read(t, dir, reviewPath)
			write(t, dir, commentPath, b)
			write(t, dir, reviewPath, a)
			fixManifest(t, dir, nil)
		}, false, commentPath, verify.RuleRecordHeader},
		{"dangling order line", func(t *testing.T, dir string) {
			b := read(t, dir, "views/timeline.order")
			b = append(b, []byte("records/20300101T000000000000000Z-"+strings.Repeat("cd", 32)+".md\n")...)
			write(t, dir, "views/timeline.order", b)
			fixManifest(t, dir, nil)
		}, false, "views/timeline.order", verify.RuleOrderDangling},
		{"duplicate order line", func(t *testing.T, dir string) {
			b := read(t, dir, threadOrder)
			first := b[:bytes.IndexByte(b, '\n')+1]
			write(t, dir, threadOrder, append(b, first...))
			fixManifest(t, dir, nil)
		}, false, threadOrder, verify.RuleOrderDuplicate},
		{"thread order out of forge order", func(t *testing.T, dir string) {
			lines := strings.SplitAfter(string(read(t, dir, threadOrder)), "\n")
			write(t, dir, threadOrder, []byte(lines[1]+lines[0]))
			fixManifest(t, dir, nil)
		}, false, threadOrder, verify.RuleThreadOrder},
		{"unsupported schema_version", func(t *testing.T, dir string) {
			fixManifest(t, dir, func(m map[string]any) { m["schema_version"] = 2 })
		}, false, "index.json", verify.RuleSchemaVersion},
		{"unsupported filter_version", func(t *testing.T, dir string) {
			fixManifest(t, dir, func(m map[string]any) { m["filter_version"] = "other-filter-v9" })
		}, false, "index.json", verify.RuleFilterVersion},
		{"schema-invalid document", func(t *testing.T, dir string) {
			editJSON(t, dir, "entity/metadata.json", func(v map[string]any) { v["url"] = "https://example.invalid/" })
			fixManifest(t, dir, nil)
		}, false, "entity/metadata.json", verify.RuleSchemaInvalid},
		{"schema-invalid index", func(t *testing.T, dir string) {
			fixManifest(t, dir, func(m map[string]any) { m["generated_at"] = "2026-01-01T00:00:00.000000000Z" })
		}, false, "index.json", verify.RuleSchemaInvalid},
		{"non-canonical JSON bytes", func(t *testing.T, dir string) {
			var v any
			json.Unmarshal(read(t, dir, "state/threads.json"), &v)
			b, _ := json.MarshalIndent(v, "", "  ")
			write(t, dir, "state/threads.json", b)
			fixManifest(t, dir, nil)
		}, false, "state/threads.json", verify.RuleNotCanonical},
		{"media type by role", func(t *testing.T, dir string) {
			fixManifest(t, dir, func(m map[string]any) {
				for _, f := range m["files"].([]any) {
					if e := f.(map[string]any); e["path"] == commentPath {
						e["media_type"] = "text/plain"
					}
				}
			})
		}, false, commentPath, verify.RuleMediaType},
		{"record header does not match the manifest", func(t *testing.T, dir string) {
			b := bytes.Replace(read(t, dir, commentPath), []byte(`Author-ID: "U_kgDOBob00002"`), []byte(`Author-ID: "U_kgDOCarol003"`), 1)
			write(t, dir, commentPath, b)
			fixManifest(t, dir, nil)
		}, false, commentPath, verify.RuleRecordHeader},
		{"record key does not derive from the record id", func(t *testing.T, dir string) {
			fixManifest(t, dir, func(m map[string]any) {
				for _, r := range m["records"].([]any) {
					if e := r.(map[string]any); e["content_path"] == commentPath {
						e["id"] = "IC_kwDOLxDemo01c0777"
					}
				}
			})
		}, false, "index.json", verify.RuleRecordKey},
		{"thread key sets differ between relations and state", func(t *testing.T, dir string) {
			editJSON(t, dir, "state/threads.json", func(v map[string]any) { v["threads"] = v["threads"].([]any)[1:] })
			fixManifest(t, dir, nil)
		}, false, "state/threads.json", verify.RuleThreadKeys},
		{"referenced actor missing", func(t *testing.T, dir string) {
			editJSON(t, dir, "state/actors.json", func(v map[string]any) { v["actors"] = v["actors"].([]any)[1:] })
			fixManifest(t, dir, nil)
		}, false, "state/actors.json", verify.RuleActors},
		{"actors not sorted", func(t *testing.T, dir string) {
			editJSON(t, dir, "state/actors.json", func(v map[string]any) {
				a := v["actors"].([]any)
				a[1], a[2] = a[2], a[1]
			})
			fixManifest(t, dir, nil)
		}, false, "state/actors.json", verify.RuleActors},
		{"duplicate gap row", func(t *testing.T, dir string) {
			fixManifest(t, dir, func(m map[string]any) {
				g := m["gaps"].([]any)
				m["gaps"] = append(g, g[0])
			})
		}, false, "index.json", verify.RuleGaps},
		{"gap usability does not match its code", func(t *testing.T, dir string) {
			fixManifest(t, dir, func(m map[string]any) {
				m["gaps"].([]any)[0].(map[string]any)["usability"] = "partial"
			})
		}, false, "index.json", verify.RuleGaps},
		{"unusable entity-scope gap", func(t *testing.T, dir string) {
			fixManifest(t, dir, func(m map[string]any) {
				m["gaps"] = append(m["gaps"].([]any), map[string]any{"scope": "entity", "code": "fetch_failed", "usability": "unusable", "count": 1})
			})
		}, false, "index.json", verify.RuleGaps},
		{"records and gaps of an unselected source", func(t *testing.T, dir string) {
			editJSON(t, dir, "collection.json", func(v map[string]any) {
				v["included_sources"] = []any{"agent_runs", "check_logs", "checks", "entity", "reviews"}
			})
			fixManifest(t, dir, nil)
		}, false, "index.json", verify.RuleSourceSelection},
		{"included_sources not sorted", func(t *testing.T, dir string) {
			editJSON(t, dir, "collection.json", func(v map[string]any) {
				v["included_sources"] = []any{"entity", "agent_runs", "check_logs", "checks", "comments", "reviews"}
			})
			fixManifest(t, dir, nil)
		}, false, "collection.json", verify.RuleArrayOrder},
		{"review row's record key does not derive from its id", func(t *testing.T, dir string) {
			editJSON(t, dir, "relations/reviews.json", func(v map[string]any) {
				v["reviews"].([]any)[0].(map[string]any)["id"] = "PRR_kwDOLxDemo01v0777"
			})
			fixManifest(t, dir, nil)
		}, false, "relations/reviews.json", verify.RuleRecordKey},
		{"duplicate key in a JSON document", func(t *testing.T, dir string) {
			b := read(t, dir, "state/threads.json")
			write(t, dir, "state/threads.json", append([]byte(`{"threads":[],`), b[1:]...))
			fixManifest(t, dir, nil)
		}, false, "state/threads.json", verify.RuleNotCanonical},
		{"duplicate key in index.json", func(t *testing.T, dir string) {
			fixManifest(t, dir, nil)
			b := read(t, dir, "index.json")
			write(t, dir, "index.json", append([]byte(`{"collection_profile":"`+strings.Repeat("0", 64)+`",`), b[1:]...))
		}, false, "index.json", verify.RuleNotCanonical},
		{"CRLF order file", func(t *testing.T, dir string) {
			write(t, dir, threadOrder, bytes.ReplaceAll(read(t, dir, threadOrder), []byte("\n"), []byte("\r\n")))
			fixManifest(t, dir, nil)
		}, false, threadOrder, verify.RuleTextEncoding},
		{"order file with trailing garbage", func(t *testing.T, dir string) {
			write(t, dir, threadOrder, append(read(t, dir, threadOrder), "records/x"...))
			fixManifest(t, dir, nil)
		}, false, threadOrder, verify.RuleOrderFormat},
		{"empty view that is not zero bytes", func(t *testing.T, dir string) {
			write(t, dir, "views/unresolved-review.order", []byte("\n"))
			fixManifest(t, dir, nil)
		}, false, "views/unresolved-review.order", verify.RuleOrderFormat},
		{"view missing a record", func(t *testing.T, dir string) {
			b := read(t, dir, "views/unresolved-review.order")
			write(t, dir, "views/unresolved-review.order", b[:bytes.IndexByte(b, '\n')+1])
			fixManifest(t, dir, nil)
		}, false, "views/unresolved-review.order", verify.RuleUnresolvedView},
		{"two tree files hard-linked to each other", func(t *testing.T, dir string) {
			if err := os.Link(filepath.Join(dir, commentPath), filepath.Join(dir, "records", "twin.md")); err != nil {
				t.Fatal(err)
			}
		}, true, commentPath, verify.RuleHardLink},
		{"a symlinked nested directory", func(t *testing.T, dir string) {
			real := filepath.Join(t.TempDir(), "reviews")
			if err := os.Rename(filepath.Join(dir, "views", "reviews"), real); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(real, filepath.Join(dir, "views", "reviews")); err != nil {
				t.Fatal(err)
			}
		}, true, "views/reviews", verify.RuleSymlink},
		{"record header with trailing whitespace", func(t *testing.T, dir string) {
			write(t, dir, commentPath, bytes.Replace(read(t, dir, commentPath), []byte("\"comment\"\n"), []byte("\"comment\" \n"), 1))
			fixManifest(t, dir, nil)
		}, false, commentPath, verify.RuleRecordHeader},
		{"record header null author for an attributed record", func(t *testing.T, dir string) {
			write(t, dir, commentPath, bytes.Replace(read(t, dir, commentPath), []byte(`Author-ID: "U_kgDOBob00002"`), []byte(`Author-ID: null`), 1))
			fixManifest(t, dir, nil)
		}, false, commentPath, verify.RuleRecordHeader},
		{"record header lines reordered", func(t *testing.T, dir string) {
			b := read(t, dir, commentPath)
			lines := bytes.SplitN(b, []byte("\n"), 3)
			write(t, dir, commentPath, bytes.Join([][]byte{lines[1], lines[0], lines[2]}, []byte("\n")))
			fixManifest(t, dir, nil)
		}, false, commentPath, verify.RuleRecordHeader},
		{"record body with two trailing LFs", func(t *testing.T, dir string) {
			write(t, dir, commentPath, append(read(t, dir, commentPath), '\n'))
			fixManifest(t, dir, nil)
		}, false, commentPath, verify.RuleTextEncoding},
		{"unreferenced actor row", func(t *testing.T, dir string) {
			editJSON(t, dir, "state/actors.json", func(v map[string]any) {
				v["actors"] = append(v["actors"].([]any), map[string]any{"id": "U_kgDOZed99999", "kind": "human", "login": "zed", "role": nil, "role_verified": false})
			})
			fixManifest(t, dir, nil)
		}, false, "state/actors.json", verify.RuleActors},
		{"entity metadata disagrees with the entity record", func(t *testing.T, dir string) {
			editJSON(t, dir, "entity/metadata.json", func(v map[string]any) { v["created_at"] = "2026-09-01T08:00:00.000000000Z" })
			fixManifest(t, dir, nil)
		}, false, "entity/metadata.json", verify.RuleEntityMetadata},
		{"log of a check that did not fail under check_log_selection failed", func(t *testing.T, dir string) {
			editJSON(t, dir, failedCheck+"/metadata.json", func(v map[string]any) { v["conclusion"] = "neutral" })
			fixManifest(t, dir, nil)
		}, false, failedCheck + "/log.txt", verify.RuleSourceSelection},
		{"check log although check_logs is not selected", func(t *testing.T, dir string) {
			editJSON(t, dir, "collection.json", func(v map[string]any) {
				v["check_log_selection"] = "none"
				v["included_sources"] = []any{"agent_runs", "checks", "comments", "entity", "reviews"}
			})
			fixManifest(t, dir, nil)
		}, false, failedCheck + "/log.txt", verify.RuleSourceSelection},
		{"oversized file", func(t *testing.T, dir string) {
			write(t, dir, "relations/reviews.json", bytes.Repeat([]byte(" "), 70000))
		}, true, "relations/reviews.json", verify.RuleFileTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := verifytest.Write(t, verifytest.Demo)
			tc.tamper(t, dir)
			opts := verify.Options{MaxFileBytes: 64 << 10}
			if tc.retained {
				opts.IndexSHA256 = demoDigest
			}
			snap, rep, err := verify.LoadChecked(t, context.Background(), dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK() || snap != nil {
				t.Fatal("tampered tree verified")
			}
			for _, v := range rep.Violations {
				if v.Path == tc.path && v.Rule == tc.rule {
					return
				}
			}
			t.Errorf("want %s: %s, got %v", tc.path, tc.rule, rep.Violations)
		})
	}
}

// Without the retained digest a consistent rewrite of a body and the manifest is
// indistinguishable from an assembled tree; the retained digest is what catches it.
func TestRetainedDigestIsTheRootOfTrust(t *testing.T) {
	dir := verifytest.Write(t, verifytest.Demo)
	b := bytes.Replace(read(t, dir, commentPath), []byte("Thanks"), []byte("Thx"), 1)
	write(t, dir, commentPath, b)
	fixManifest(t, dir, nil)
	rep, err := verify.Dir(context.Background(), dir, verify.Options{})
	if err != nil || !rep.OK() {
		t.Fatalf("self-consistent rewrite: %v %v", err, rep.Violations)
	}
	rep, err = verify.Dir(context.Background(), dir, verify.Options{IndexSHA256: verifytest.IndexSHA256[verifytest.Demo]})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Violations) != 1 || rep.Violations[0].Rule != verify.RuleIndexDigest {
		t.Fatalf("want exactly the index digest violation, got %v", rep.Violations)
	}
}

func TestRootMustBeARealDirectory(t *testing.T) {
	dir := verifytest.Write(t, verifytest.Demo)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	rep, err := verify.Dir(context.Background(), link, verify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Violations) != 1 || rep.Violations[0].Path != "." || rep.Violations[0].Rule != verify.RuleSymlink {
		t.Fatalf("got %v", rep.Violations)
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{file, fifo} {
		rep, err := verify.Dir(context.Background(), p, verify.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Violations) != 1 || rep.Violations[0].Path != "." || rep.Violations[0].Rule != verify.RuleNotDirectory {
			t.Fatalf("%s: got %v", filepath.Base(p), rep.Violations)
		}
	}
	if _, err := verify.Dir(context.Background(), filepath.Join(t.TempDir(), "missing"), verify.Options{}); err == nil {
		t.Fatal("missing root: want an error")
	}
	if _, err := verify.Dir(context.Background(), dir, verify.Options{IndexSHA256: "ABC"}); err == nil {
		t.Fatal("malformed digest option: want an error")
	}
}

// Violations name paths, rules and digests; they never carry record text.
func TestViolationsCarryNoContent(t *testing.T) {
	dir := verifytest.Write(t, verifytest.Demo)
	b := bytes.Replace(read(t, dir, commentPath), []byte("Thanks"), []byte("SECRET-BODY-TEXT"), 1)
	write(t, dir, commentPath, b)
	editJSON(t, dir, "entity/metadata.json", func(v map[string]any) { v["title"] = 7 })
	fixManifest(t, dir, nil)
	rep, _ := verify.Dir(context.Background(), dir, verify.Options{})
	if rep.OK() {
		t.Fatal("tampered tree verified")
	}
	for _, v := range rep.Violations {
		if strings.Contains(v.String(), "SECRET") || strings.Contains(v.String(), "backoff") {
			t.Errorf("violation leaks content: %s", v)
		}
	}
}

// The tree the assembler produces today (`forgectx demo`) verifies, with its retained digest.
func TestLiveDemoTreeVerifies(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	res, err := demo.Run(context.Background(), demo.Options{Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := verify.Dir(context.Background(), dir, verify.Options{IndexSHA256: res.Tree.IndexSHA256})
	if err != nil || !rep.OK() {
		t.Fatalf("live demo tree: %v %v", err, rep.Violations)
	}
	if rep.Files != len(res.Tree.Files)+1 {
		t.Errorf("verified %d files, the tree has %d", rep.Files, len(res.Tree.Files)+1)
	}
}

func BenchmarkLoadDemo(b *testing.B) {
	dir := verifytest.Write(b, verifytest.Demo)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, rep, err := verify.Load(context.Background(), dir, verify.Options{}); err != nil || !rep.OK() {
			b.Fatal(err, rep.Violations)
		}
	}
}

// File names and document keys are tree-controlled: a name with a newline must not forge a
// report line (an "ok" line above all), and terminal escapes must not reach the terminal.
func TestViolationTextIsEscaped(t *testing.T) {
	dir := verifytest.Write(t, verifytest.Demo)
	write(t, dir, "x\nok files=1 bytes=1 records=1 threads=0 gaps=0 index_sha256=0", []byte("x"))
	write(t, dir, "\x1b[2Jbidi\u202e.txt", []byte("x"))
	editJSON(t, dir, "entity/metadata.json", func(v map[string]any) { v["\x1b]0;pwned\x07"+strings.Repeat("k", 2000)] = 1 })
	fixManifest(t, dir, nil)
	rep, err := verify.Dir(context.Background(), dir, verify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := rep.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != len(rep.Violations) || len(lines) < 3 {
		t.Fatalf("%d lines for %d violations:\n%s", len(lines), len(rep.Violations), out.String())
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "ok") {
			t.Errorf("a file name forged an ok line: %q", l)
		}
		for _, r := range l {
			if r < 0x20 || r > 0x7e {
				t.Errorf("non-printable %U in report line %q", r, l)
				break
			}
		}
		if len(l) > 1200 {
			t.Errorf("report line of %d bytes", len(l))
		}
	}
	if !strings.Contains(out.String(), `x\nok files=1`) || !strings.Contains(out.String(), `\x1b[2Jbidi\u202e.txt`) {
		t.Errorf("escaped names are not recognisable:\n%s", out.String())
	}
}

// FuzzTreeFile replaces one file of the demo tree with arbitrary bytes and rewrites the
// manifest digests to match, so the schema and every cross-document rule (relations, state,
// actors, views, headers) run on hostile content. Verification must never panic and never
// return an error for a readable tree; a passing tree must hold exactly the bytes on disk.
func FuzzTreeFile(f *testing.F) {
	files := verifytest.Files(f, verifytest.Demo)
	var paths []string
	for p := range files {
		if p != "index.json" {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for i, p := range paths {
		f.Add(uint8(i), files[p])
	}
	f.Add(uint8(0), []byte(`{"reviews":[],"threads":[{"thread_key":"x"}]}`))
	f.Add(uint8(0), []byte("Fullsend-Record: null\n"))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		p := paths[int(which)%len(paths)]
		dir := filepath.Join(t.TempDir(), "ctx")
		tree := map[string][]byte{}
		for k, v := range files {
			tree[k] = v
		}
		tree[p] = data
		verifytest.WriteFiles(t, dir, tree)
		fixManifest(t, dir, nil)
		snap, rep, err := verify.LoadChecked(t, context.Background(), dir, verify.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if rep.OK() {
			if got, _ := snap.File(p); !bytes.Equal(got, data) {
				t.Fatal("a passing snapshot does not hold the bytes on disk")
			}
		}
	})
}

// index.json has its own bound (it grows with the tree: every file and record is listed), the
// same one the assembler checks before writing (internal/snapshot/treefs); every other file keeps the
// per-file bound.
func TestIndexHasItsOwnBound(t *testing.T) {
	dir := verifytest.Write(t, verifytest.Demo)
	idx := read(t, dir, "index.json")
	small := int64(len(idx) - 1)
	_, rep, err := verify.LoadChecked(t, context.Background(), dir, verify.Options{MaxIndexBytes: small})
	if err != nil {
		t.Fatal(err)
	}
	if !hasViolation(rep, "index.json", verify.RuleFileTooLarge) {
		t.Fatalf("index.json one byte over its bound: %v", rep.Violations)
	}
	// A per-file bound below the index's size does not apply to the index.
	_, rep, err = verify.LoadChecked(t, context.Background(), dir, verify.Options{MaxFileBytes: small, MaxIndexBytes: int64(len(idx))})
	if err != nil {
		t.Fatal(err)
	}
	if hasViolation(rep, "index.json", verify.RuleFileTooLarge) {
		t.Fatalf("index.json judged by the per-file bound: %v", rep.Violations)
	}
	if verify.DefaultMaxFiles != treefs.MaxFiles || verify.DefaultMaxIndexBytes != treefs.MaxIndexBytes ||
		verify.DefaultMaxFileBytes != treefs.MaxFileBytes || verify.DefaultMaxTotalBytes != treefs.MaxTotalBytes {
		t.Fatal("verify's default bounds are not the tree bounds the assembler checks")
	}
}

func hasViolation(rep verify.Report, p, rule string) bool {
	for _, v := range rep.Violations {
		if v.Path == p && v.Rule == rule {
			return true
		}
	}
	return false
}
