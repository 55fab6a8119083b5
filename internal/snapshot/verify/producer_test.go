package verify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/forgectx/forgectx/internal/snapshot/verify"
	"github.com/forgectx/forgectx/test/verifytest"
)

// More paths of the stored demo tree the producer-rule cases use.
const (
	lintCheck   = "checks/378a1fcb8708f20cf83dd4eac6abcad3789203b668dec28fbbd3ff8621c2fdaf" // skipped, no log
	failedLog   = failedCheck + "/log.txt"
	redactedRec = 6 // records[6]: a comment whose filter is modified with a redaction finding
)

// insertBody returns a record file with s inserted at the start of its body (after the
// header's blank line).
func insertBody(t *testing.T, b []byte, s string) []byte {
	t.Helper()
	i := bytes.Index(b, []byte("\n\n"))
	if i < 0 {
		t.Fatal("record without a blank line")
	}
	return append(append(append([]byte{}, b[:i+2]...), s...), b[i+2:]...)
}

// setRecordFilter sets the filter summary of records[i] and of its file's files[] entry (both
// summarize the same bytes: filter_summary_mismatch otherwise).
func setRecordFilter(m map[string]any, i int, f map[string]any) {
	r := indexRecords(m)[i].(map[string]any)
	r["filter"] = f
	for _, e := range m["files"].([]any) {
		if e := e.(map[string]any); e["path"] == r["content_path"] && e["filter"] != nil {
			e["filter"] = f
		}
	}
}

// indexRecords returns the decoded index's records array (fixManifest's mutate argument).
func indexRecords(m map[string]any) []any { return m["records"].([]any) }

// dropFileEntry removes path p from the decoded index's files[].
func dropFileEntry(m map[string]any, p string) {
	var keep []any
	for _, f := range m["files"].([]any) {
		if f.(map[string]any)["path"] != p {
			keep = append(keep, f)
		}
	}
	m["files"] = keep
}

// recordWith returns the decoded index record whose member k has value v.
func recordWith(t *testing.T, m map[string]any, k, v string) map[string]any {
	t.Helper()
	for _, r := range indexRecords(m) {
		if r := r.(map[string]any); r[k] == v {
			return r
		}
	}
	t.Fatalf("no record with %s %s", k, v)
	return nil
}

// TestProducerRulesTamperedTrees is the producer conformance table: for every producer rule
// checkable from the tree alone (docs/consumer.md, "Producer rules"), the demo tree edited to
// break only that rule — every digest, the collection profile and canonical JSON forms kept
// consistent, so nothing but the rule can catch it — is rejected with exactly that rule's
// code, without the retained index digest (a third-party producer's tree has none), by Load,
// Check and Open alike (LoadChecked), in the default and the producer-check mode.
func TestProducerRulesTamperedTrees(t *testing.T) {
	cases := []struct {
		name   string
		tamper func(t *testing.T, dir string)
		path   string
		rule   string
	}{
		{"zero-width space in a comment body", func(t *testing.T, dir string) {
			write(t, dir, commentPath, insertBody(t, read(t, dir, commentPath), "\u200b"))
		}, commentPath, verify.RuleUnicodeFloor},
		{"byte-order mark inside a review body", func(t *testing.T, dir string) {
			write(t, dir, reviewPath, insertBody(t, read(t, dir, reviewPath), "a\ufeffb "))
		}, reviewPath, verify.RuleUnicodeFloor},
		{"bidirectional override in a check log", func(t *testing.T, dir string) {
			write(t, dir, failedLog, append([]byte("\u202e"), read(t, dir, failedLog)...))
		}, failedLog, verify.RuleUnicodeFloor},
		{"tag character in the entity title", func(t *testing.T, dir string) {
			editJSON(t, dir, "entity/metadata.json", func(v map[string]any) { v["title"] = v["title"].(string) + "\U000E0041" })
		}, "entity/metadata.json", verify.RuleUnicodeFloor},
		{"variation selector in an entity label", func(t *testing.T, dir string) {
			editJSON(t, dir, "entity/metadata.json", func(v map[string]any) {
				l := v["labels"].([]any)
				l[len(l)-1] = l[len(l)-1].(string) + "\ufe0f" // stays last in byte order
			})
		}, "entity/metadata.json", verify.RuleUnicodeFloor},
		{"isolate control in an actor login", func(t *testing.T, dir string) {
			editJSON(t, dir, "state/actors.json", func(v map[string]any) {
				a := v["actors"].([]any)[0].(map[string]any)
				a["login"] = a["login"].(string) + "\u2066"
			})
		}, "state/actors.json", verify.RuleUnicodeFloor},
		{"interlinear annotation in a record author login", func(t *testing.T, dir string) {
			fixManifest(t, dir, func(m map[string]any) {
				r := indexRecords(m)[1].(map[string]any)
				r["author"] = r["author"].(string) + "\ufff9"
			})
		}, "index.json", verify.RuleUnicodeFloor},
		{"zero-width joiner in a check name", func(t *testing.T, dir string) {
			editJSON(t, dir, lintCheck+"/metadata.json", func(v map[string]any) { v["name"] = "li\u200dnt" })
		}, lintCheck + "/metadata.json", verify.RuleUnicodeFloor},
		{"zero-width non-joiner in an agent name", func(t *testing.T, dir string) {
			editJSON(t, dir, "history/agent-runs.json", func(v map[string]any) {
				v["runs"].([]any)[0].(map[string]any)["agent"] = "review\u200cassistant"
			})
		}, "history/agent-runs.json", verify.RuleUnicodeFloor},
		{"NUL in a comment body (this build's filter strips it)", func(t *testing.T, dir string) {
			write(t, dir, commentPath, insertBody(t, read(t, dir, commentPath), "a\x00b "))
		}, commentPath, verify.RuleUnicodeStripped},
		{"terminal escape in a check log", func(t *testing.T, dir string) {
			write(t, dir, failedLog, append([]byte("\x1b[31mred\x1b[0m "), read(t, dir, failedLog)...))
		}, failedLog, verify.RuleUnicodeStripped},
		{"left-to-right mark in the entity title", func(t *testing.T, dir string) {
			editJSON(t, dir, "entity/metadata.json", func(v map[string]any) { v["title"] = "\u200e" + v["title"].(string) })
		}, "entity/metadata.json", verify.RuleUnicodeStripped},
		{"control character in an actor login (a JSON escape)", func(t *testing.T, dir string) {
			editJSON(t, dir, "state/actors.json", func(v map[string]any) {
				a := v["actors"].([]any)[0].(map[string]any)
				a["login"] = a["login"].(string) + "\x01"
			})
		}, "state/actors.json", verify.RuleUnicodeStripped},
		{"record body over max_record_bytes", func(t *testing.T, dir string) {
			write(t, dir, commentPath, insertBody(t, read(t, dir, commentPath), strings.Repeat("long line of text\n", 4000)))
		}, commentPath, verify.RuleRecordBytes},
		{"check log over max_log_bytes", func(t *testing.T, dir string) {
			write(t, dir, failedLog, append([]byte(strings.Repeat("step output\n", 1500)), read(t, dir, failedLog)...))
		}, failedLog, verify.RuleLogBytes},
		{"entity title over max_metadata_string_bytes", func(t *testing.T, dir string) {
			editJSON(t, dir, "entity/metadata.json", func(v map[string]any) { v["title"] = strings.Repeat("retry ", 50) })
		}, "entity/metadata.json", verify.RuleStringBytes},
		{"actor login over max_metadata_string_bytes", func(t *testing.T, dir string) {
			editJSON(t, dir, "state/actors.json", func(v map[string]any) {
				v["actors"].([]any)[0].(map[string]any)["login"] = strings.Repeat("a", 257)
			})
		}, "state/actors.json", verify.RuleStringBytes},
		{"check name over max_metadata_string_bytes", func(t *testing.T, dir string) {
			editJSON(t, dir, lintCheck+"/metadata.json", func(v map[string]any) { v["name"] = strings.Repeat("lint-", 52) })
		}, lintCheck + "/metadata.json", verify.RuleStringBytes},
		{"more labels than max_labels", func(t *testing.T, dir string) {
			editJSON(t, dir, "entity/metadata.json", func(v map[string]any) {
				var l []string
				for i := 0; i < 11; i++ {
					l = append(l, "label-"+string(rune('a'+i)))
				}
				sort.Strings(l)
				var a []any
				for _, s := range l {
					a = append(a, s)
				}
				v["labels"] = a
			})
		}, "entity/metadata.json", verify.RuleLabels},
		{"an empty label", func(t *testing.T, dir string) {
			editJSON(t, dir, "entity/metadata.json", func(v map[string]any) { v["labels"] = append([]any{""}, v["labels"].([]any)...) })
		}, "entity/metadata.json", verify.RuleEmptyLabel},
		{"more records of a source than max_records_per_source", func(t *testing.T, dir string) {
			editJSON(t, dir, "collection.json", func(v map[string]any) {
				v["bounds"].(map[string]any)["max_records_per_source"] = 8 // the demo retains 9 comments
			})
		}, "index.json", verify.RuleRecordCount},
		{"two head revisions across checks", func(t *testing.T, dir string) {
			editJSON(t, dir, lintCheck+"/metadata.json", func(v map[string]any) { v["head_sha"] = strings.Repeat("0a", 20) })
		}, lintCheck + "/metadata.json", verify.RuleHeadSHA},
		{"review submitted_at other than its record's created_at", func(t *testing.T, dir string) {
			editJSON(t, dir, "relations/reviews.json", func(v map[string]any) {
				rv := v["reviews"].([]any)
				rv[len(rv)-1].(map[string]any)["submitted_at"] = "2026-09-03T16:10:00.000000001Z" // stays last
			})
		}, "relations/reviews.json", verify.RuleReviewTime},
		{"rejected check without a gap", func(t *testing.T, dir string) {
			if err := os.RemoveAll(filepath.Join(dir, lintCheck)); err != nil {
				t.Fatal(err)
			}
			fixManifest(t, dir, func(m map[string]any) {
				dropFileEntry(m, lintCheck+"/metadata.json")
				r := recordWith(t, m, "metadata_path", lintCheck+"/metadata.json")
				delete(r, "metadata_path")
				r["filter"] = map[string]any{"status": "rejected", "findings": []any{}}
			})
		}, "index.json", verify.RuleRejectedGap},
		{"selected log of a failed check missing without a gap", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, failedLog)); err != nil {
				t.Fatal(err)
			}
			fixManifest(t, dir, func(m map[string]any) {
				dropFileEntry(m, failedLog)
				delete(recordWith(t, m, "log_path", failedLog), "log_path")
			})
		}, "index.json", verify.RuleLogGap},
		{"modified filter summary without findings", func(t *testing.T, dir string) {
			fixManifest(t, dir, func(m map[string]any) {
				setRecordFilter(m, 1, map[string]any{"status": "modified", "findings": []any{}})
			})
		}, "index.json", verify.RuleFilterStatus},
		{"unchanged filter summary with findings", func(t *testing.T, dir string) {
			fixManifest(t, dir, func(m map[string]any) {
				f := indexRecords(m)[redactedRec].(map[string]any)["filter"].(map[string]any)
				setRecordFilter(m, redactedRec, map[string]any{"status": "unchanged", "findings": f["findings"]})
			})
		}, "index.json", verify.RuleFilterStatus},
		{"run id outside the GitHub node ID mapping", func(t *testing.T, dir string) {
			editJSON(t, dir, "history/agent-runs.json", func(v map[string]any) {
				v["runs"].([]any)[0].(map[string]any)["id"] = "IC_kwDOLxDemo01c0099.2" // a structural_id, not a node ID
			})
		}, "history/agent-runs.json", verify.RuleForgeID},
		{"thread review_record_key not derived from its review_id", func(t *testing.T, dir string) {
			editJSON(t, dir, "relations/reviews.json", func(v map[string]any) {
				for _, th := range v["threads"].([]any) {
					if th := th.(map[string]any); th["review_id"] != nil {
						th["review_id"] = "PRR_kwDOLxDemo01v0009"
						return
					}
				}
				t.Fatal("no thread with a review_id")
			})
		}, "relations/reviews.json", verify.RuleRecordKey},
		{"profile_bound gap of a source the bound did not cut", func(t *testing.T, dir string) {
			fixManifest(t, dir, func(m map[string]any) {
				m["gaps"] = append(m["gaps"].([]any), map[string]any{"scope": "reviews", "code": "profile_bound", "usability": "partial", "count": 1})
			})
		}, "index.json", verify.RuleProfileBound},
		{"entity profile_bound gap with fewer labels than max_labels", func(t *testing.T, dir string) {
			fixManifest(t, dir, func(m map[string]any) {
				m["gaps"] = append(m["gaps"].([]any), map[string]any{"scope": "entity", "code": "profile_bound", "usability": "partial", "count": 1}) // after "comments"
				for _, f := range m["files"].([]any) {
					if f := f.(map[string]any); f["path"] == "entity/metadata.json" {
						f["filter"].(map[string]any)["status"] = "truncated"
					}
				}
			})
		}, "index.json", verify.RuleProfileBound},
		{"thread review_record_key naming no review record", func(t *testing.T, dir string) {
			editJSON(t, dir, "relations/reviews.json", func(v map[string]any) {
				for _, th := range v["threads"].([]any) {
					if th := th.(map[string]any); th["id"] == "PRRT_kwDOLxDemo01t0002" {
						delete(th, "review_id") // only the key is left, naming nothing
						th["review_record_key"] = strings.Repeat("ab", 32)
						return
					}
				}
				t.Fatal("no thread PRRT_kwDOLxDemo01t0002")
			})
			// The dismissed review it belonged to now has no thread: its view is the review alone.
			const view = "views/reviews/b91570fdb584e19ebd765f43ee44337a8146f0f6417b3ea5a718a54eac15572c.order"
			b := read(t, dir, view)
			write(t, dir, view, b[:bytes.IndexByte(b, '\n')+1])
		}, "relations/reviews.json", verify.RuleRelations},
		{"record filter and file filter disagree", func(t *testing.T, dir string) {
			fixManifest(t, dir, func(m map[string]any) {
				for _, f := range m["files"].([]any) {
					if f := f.(map[string]any); f["path"] == commentPath {
						f["filter"] = map[string]any{"status": "modified", "findings": []any{map[string]any{"code": "redact.github-token", "count": 1}}}
					}
				}
			})
		}, commentPath, verify.RuleFilterSummary},
		{"generated collection.json with invented findings", func(t *testing.T, dir string) {
			fixManifest(t, dir, func(m map[string]any) {
				for _, f := range m["files"].([]any) {
					if f := f.(map[string]any); f["path"] == "collection.json" {
						f["filter"] = map[string]any{"status": "modified", "findings": []any{map[string]any{"code": "unicode.zero-width", "count": 1}}}
					}
				}
			})
		}, "collection.json", verify.RuleGeneratedFilter},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := verifytest.Write(t, verifytest.Demo)
			tc.tamper(t, dir)
			fixManifest(t, dir, nil)
			for _, producer := range []bool{false, true} {
				snap, rep, err := verify.LoadChecked(t, context.Background(), dir, verify.Options{ProducerCheck: producer})
				if err != nil {
					t.Fatal(err)
				}
				if rep.OK() || snap != nil {
					t.Fatalf("producer-check=%v: tampered tree verified", producer)
				}
				if !hasViolation(rep, tc.path, tc.rule) {
					t.Errorf("producer-check=%v: want %s: %s, got %v", producer, tc.path, tc.rule, rep.Violations)
				}
				for _, v := range rep.Violations {
					if v.Rule != tc.rule {
						t.Errorf("producer-check=%v: the tree breaks another rule too: %v", producer, v)
					}
					if !strings.Contains(v.Detail, "max_") && v.Rule != verify.RuleUnicodeFloor && v.Detail == "" {
						t.Errorf("violation without a description: %v", v)
					}
				}
			}
		})
	}
}

// The untampered stored trees pass every producer rule in both modes (no false positive on
// the assembler's own output; TestAssembledTreesVerify covers every fixture scenario).
func TestProducerRulesAcceptTheAssemblersTrees(t *testing.T) {
	for _, name := range []string{verifytest.Demo, verifytest.DemoReply} {
		dir := verifytest.Write(t, name)
		_, rep, err := verify.LoadChecked(t, context.Background(), dir, verify.Options{ProducerCheck: true})
		if err != nil || !rep.OK() {
			t.Fatalf("%s: %v %v", name, err, rep.Violations)
		}
	}
}

// A third-party producer has its own filter_version: the default (consumer) mode refuses it
// and stops, the producer-check mode accepts any non-empty version and still applies every
// other rule.
func TestProducerCheckAcceptsAnyFilterVersion(t *testing.T) {
	dir := verifytest.Write(t, verifytest.Demo)
	fixManifest(t, dir, func(m map[string]any) { m["filter_version"] = "acme-filter-2.0" })
	_, rep, err := verify.LoadChecked(t, context.Background(), dir, verify.Options{})
	if err != nil || len(rep.Violations) != 1 || rep.Violations[0].Rule != verify.RuleFilterVersion {
		t.Fatalf("default mode: want exactly unsupported_filter_version, got %v %v", err, rep.Violations)
	}
	_, rep, err = verify.LoadChecked(t, context.Background(), dir, verify.Options{ProducerCheck: true})
	if err != nil || !rep.OK() {
		t.Fatalf("producer-check: %v %v", err, rep.Violations)
	}
	write(t, dir, commentPath, insertBody(t, read(t, dir, commentPath), "\u2069"))
	fixManifest(t, dir, nil)
	_, rep, err = verify.LoadChecked(t, context.Background(), dir, verify.Options{ProducerCheck: true})
	if err != nil || len(rep.Violations) != 1 || !hasViolation(rep, commentPath, verify.RuleUnicodeFloor) {
		t.Fatalf("producer-check with a floor rune: want exactly unicode_floor, got %v %v", err, rep.Violations)
	}
	// What this build's filter strips beyond the floor is not judged under another filter
	// version: a NUL passes, the floor rune above still does not.
	write(t, dir, reviewPath, insertBody(t, read(t, dir, reviewPath), "\x00"))
	fixManifest(t, dir, nil)
	_, rep, err = verify.LoadChecked(t, context.Background(), dir, verify.Options{ProducerCheck: true})
	if err != nil || len(rep.Violations) != 1 || !hasViolation(rep, commentPath, verify.RuleUnicodeFloor) {
		t.Fatalf("producer-check, foreign version, NUL and a floor rune: want exactly unicode_floor, got %v %v", err, rep.Violations)
	}
	fixManifest(t, dir, func(m map[string]any) { m["filter_version"] = "" })
	_, rep, _ = verify.LoadChecked(t, context.Background(), dir, verify.Options{ProducerCheck: true})
	if !hasViolation(rep, "index.json", verify.RuleSchemaInvalid) {
		t.Fatalf("producer-check with an empty filter_version: %v", rep.Violations)
	}
}

// floorRune is the spec's portable Unicode floor ("Canonical bytes"), written out here
// independently of internal/filter so the fuzz targets below have their own oracle.
func floorRune(r rune) bool {
	return r >= 0xE0000 && r <= 0xE007F || r >= 0x200B && r <= 0x200D || r == 0xFEFF ||
		r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 ||
		r >= 0xFE00 && r <= 0xFE0F || r >= 0xE0100 && r <= 0xE01EF || r >= 0xFFF9 && r <= 0xFFFB
}

func hasFloorRune(b []byte) bool {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if n > 1 && floorRune(r) {
			return true
		}
		i += n
	}
	return false
}

// FuzzRecordBodyProducerRules puts arbitrary bytes in the body of a demo comment (digests
// fixed, a max_record_bytes of 64 so the bound is reachable): verification never fails to
// run, reports unicode_floor exactly when the bytes hold a floor rune and record_bytes_bound
// exactly when the body is longer than 64 bytes.
func FuzzRecordBodyProducerRules(f *testing.F) {
	f.Add([]byte("plain text\n"))
	f.Add([]byte("a\u200bb\n"))
	f.Add([]byte(strings.Repeat("x", 70) + "\n"))
	f.Add([]byte("\xf3\xa0\x80\x81\xe2\x80\n"))
	f.Add([]byte{})
	base := verifytest.Files(f, verifytest.Demo)
	head := base[commentPath][:bytes.Index(base[commentPath], []byte("\n\n"))+2]
	f.Fuzz(func(t *testing.T, body []byte) {
		dir := filepath.Join(t.TempDir(), "ctx")
		verifytest.WriteFiles(t, dir, base)
		editJSON(t, dir, "collection.json", func(v map[string]any) { v["bounds"].(map[string]any)["max_record_bytes"] = 64 })
		write(t, dir, commentPath, append(append([]byte{}, head...), body...))
		fixManifest(t, dir, nil)
		_, rep, err := verify.LoadChecked(t, context.Background(), dir, verify.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := hasViolation(rep, commentPath, verify.RuleUnicodeFloor), hasFloorRune(body); got != want {
			t.Fatalf("unicode_floor reported %v, body holds a floor rune %v: %v", got, want, rep.Violations)
		}
		// Other demo records are longer than 64 bytes too; this one is judged on its own.
		if got, want := hasViolation(rep, commentPath, verify.RuleRecordBytes), len(body) > 64; got != want {
			t.Fatalf("record_bytes_bound reported %v for a %d-byte body: %v", got, len(body), rep.Violations)
		}
	})
}

// FuzzDisplayStringProducerRules puts an arbitrary string in the entity title: verification
// reports unicode_floor on entity/metadata.json exactly when the title holds a floor rune and
// metadata_string_bound exactly when it is longer than the demo's 256-byte bound.
func FuzzDisplayStringProducerRules(f *testing.F) {
	f.Add("a title")
	f.Add("a\u2067title")
	f.Add(strings.Repeat("ü", 129))
	f.Add("\U000E007F")
	base := verifytest.Files(f, verifytest.Demo)
	f.Fuzz(func(t *testing.T, title string) {
		if title == "" || !utf8.ValidString(title) {
			t.Skip("the schema requires a non-empty title; JSON holds valid UTF-8 only")
		}
		dir := filepath.Join(t.TempDir(), "ctx")
		verifytest.WriteFiles(t, dir, base)
		editJSON(t, dir, "entity/metadata.json", func(v map[string]any) { v["title"] = title })
		fixManifest(t, dir, nil)
		_, rep, err := verify.LoadChecked(t, context.Background(), dir, verify.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := hasViolation(rep, "entity/metadata.json", verify.RuleUnicodeFloor), hasFloorRune([]byte(title)); got != want {
			t.Fatalf("unicode_floor reported %v, title holds a floor rune %v: %v", got, want, rep.Violations)
		}
		if got, want := hasViolation(rep, "entity/metadata.json", verify.RuleStringBytes), len(title) > 256; got != want {
			t.Fatalf("metadata_string_bound reported %v for a %d-byte title: %v", got, len(title), rep.Violations)
		}
	})
}

// GitLab has no formal v1 review records: a GitLab change proposal whose tree carries one is
// rejected with gitlab_review (and nothing else). No producer of ours writes that tree (the
// assembler drops a GitLab acquisition's reviews as invalid metadata), so the tree is the
// stored verifytest.GitLabReview, written by an earlier assembler that staged them.
func TestGitLabTreeWithAReviewIsRejected(t *testing.T) {
	dir := verifytest.Write(t, verifytest.GitLabReview)
	_, rep, err := verify.LoadChecked(t, context.Background(), dir, verify.Options{ProducerCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	if !hasViolation(rep, "index.json", verify.RuleGitLabReview) || !hasViolation(rep, "relations/reviews.json", verify.RuleGitLabReview) {
		t.Fatalf("want gitlab_review on index.json and relations/reviews.json, got %v", rep.Violations)
	}
	for _, v := range rep.Violations {
		if v.Rule != verify.RuleGitLabReview {
			t.Errorf("the tree breaks another rule too: %v", v)
		}
	}
}

// swapLines swaps lines i and j (0-based) of an LF-terminated order file.
func swapLines(t *testing.T, dir, p string, i, j int) {
	t.Helper()
	lines := strings.SplitAfter(string(read(t, dir, p)), "\n")
	lines[i], lines[j] = lines[j], lines[i]
	write(t, dir, p, []byte(strings.Join(lines, "")))
}

// replaceEverywhere replaces old by new in index.json and every order and view file.
func replaceEverywhere(t *testing.T, dir, old, new string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() || !(strings.HasSuffix(p, ".order") || filepath.Base(p) == "index.json") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(p, bytes.ReplaceAll(b, []byte(old), []byte(new)), 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestLayoutRulesTamperedTrees completes the conformance table for the byte and layout rules
// that had no tampered tree of their own: each tree breaks only that rule (besides the
// co-violations a rule implies, listed in also), without the retained digest. fix: rewrite
// the manifest digests after the tamper (false when the tamper is the manifest's own bytes).
func TestLayoutRulesTamperedTrees(t *testing.T) {
	const (
		timeline   = "views/timeline.order"
		reviewView = "views/reviews/747c6a20e927dabb3cd048dc7b6b4085738246ea08aa632102025aaf1cabf9ea.order"
		entityPath = "records/00000000T000000000000000Z-35dc9e19e157e6e6d3f01cabd6e35b0f4fee7870a8325bd04efa02c5c98e7b8c.md"
	)
	stray := "checks/" + strings.Repeat("f", 64) + "/metadata.json"
	cases := []struct {
		name   string
		tamper func(t *testing.T, dir string)
		fix    bool
		path   string
		rule   string
		also   []string
	}{
		{"index.json is not an object", func(t *testing.T, dir string) {
			write(t, dir, "index.json", []byte("[]"))
		}, false, "index.json", verify.RuleIndexInvalid, nil},
		{"files[] size wrong, digest right", func(t *testing.T, dir string) {
			editJSON(t, dir, "index.json", func(m map[string]any) {
				for _, f := range m["files"].([]any) {
					if f := f.(map[string]any); f["path"] == commentPath {
						f["bytes"] = json.Number("1")
					}
				}
			})
		}, false, commentPath, verify.RuleBytes, nil},
		{"collection_profile is not the digest of collection.json", func(t *testing.T, dir string) {
			editJSON(t, dir, "index.json", func(m map[string]any) { m["collection_profile"] = strings.Repeat("0", 64) })
		}, false, "index.json", verify.RuleCollection, nil},
		{"a comment record file with the review role", func(t *testing.T, dir string) {
			fixManifest(t, dir, func(m map[string]any) {
				for _, f := range m["files"].([]any) {
					if f := f.(map[string]any); f["path"] == commentPath {
						f["role"] = "review_record"
					}
				}
			})
		}, true, commentPath, verify.RuleRole, nil},
		{"files[] lists a path twice", func(t *testing.T, dir string) {
			fixManifest(t, dir, func(m map[string]any) {
				files := m["files"].([]any)
				var out []any
				for _, f := range files {
					out = append(out, f)
					if f.(map[string]any)["path"] == commentPath {
						out = append(out, f)
					}
				}
				m["files"] = out
			})
		}, true, "index.json", verify.RuleDuplicatePath, nil},
		{"a singleton view is not listed", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "views/unresolved-review.order")); err != nil {
				t.Fatal(err)
			}
			fixManifest(t, dir, func(m map[string]any) { dropFileEntry(m, "views/unresolved-review.order") })
		}, true, "views/unresolved-review.order", verify.RuleRequiredFile, nil},
		{"a record key twice", func(t *testing.T, dir string) {
			fixManifest(t, dir, func(m map[string]any) {
				r := recordWith(t, m, "metadata_path", lintCheck+"/metadata.json")
				var out []any
				for _, x := range indexRecords(m) {
					out = append(out, x)
					if x.(map[string]any)["record_key"] == r["record_key"] {
						out = append(out, x)
					}
				}
				m["records"] = out
			})
		}, true, "index.json", verify.RuleDuplicateRecord, []string{verify.RuleArrayOrder}}, // an equal neighbour breaks the strict order too
		{"the entity record has no content file", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, entityPath)); err != nil {
				t.Fatal(err)
			}
			b := read(t, dir, timeline)
			write(t, dir, timeline, b[bytes.IndexByte(b, '\n')+1:])
			fixManifest(t, dir, func(m map[string]any) {
				dropFileEntry(m, entityPath)
				r := recordWith(t, m, "content_path", entityPath)
				delete(r, "content_path")
				r["filter"] = map[string]any{"status": "rejected", "findings": []any{}}
			})
		}, true, "index.json", verify.RuleEntityRecord, nil},
		{"a content path with another order key", func(t *testing.T, dir string) {
			moved := strings.Replace(commentPath, "000000000Z", "000000001Z", 1)
			write(t, dir, moved, read(t, dir, commentPath))
			if err := os.Remove(filepath.Join(dir, commentPath)); err != nil {
				t.Fatal(err)
			}
			replaceEverywhere(t, dir, commentPath, moved)
		}, true, strings.Replace(commentPath, "000000000Z", "000000001Z", 1), verify.RuleRecordPath, nil},
		{"a check metadata file no record references", func(t *testing.T, dir string) {
			if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(stray)), 0o700); err != nil {
				t.Fatal(err)
			}
			write(t, dir, stray, read(t, dir, lintCheck+"/metadata.json"))
			fixManifest(t, dir, func(m map[string]any) {
				var lint map[string]any
				for _, f := range m["files"].([]any) {
					if f := f.(map[string]any); f["path"] == lintCheck+"/metadata.json" {
						lint = f
					}
				}
				c := map[string]any{}
				for k, v := range lint {
					c[k] = v
				}
				c["path"] = stray
				m["files"] = append(m["files"].([]any), c) // files[] stays sorted by path: sorted below
				files := m["files"].([]any)
				sort.Slice(files, func(i, j int) bool {
					return files[i].(map[string]any)["path"].(string) < files[j].(map[string]any)["path"].(string)
				})
			})
		}, true, stray, verify.RuleOrphanFile, nil},
		{"timeline out of chronological order", func(t *testing.T, dir string) {
			swapLines(t, dir, timeline, 1, 2)
		}, true, timeline, verify.RuleTimeline, nil},
		{"review view out of its threads' order", func(t *testing.T, dir string) {
			swapLines(t, dir, reviewView, 1, 2)
		}, true, reviewView, verify.RuleReviewView, nil},
		{"check metadata created_at differs from its record", func(t *testing.T, dir string) {
			editJSON(t, dir, lintCheck+"/metadata.json", func(v map[string]any) { v["created_at"] = "2026-09-03T14:00:00.000000000Z" })
		}, true, lintCheck + "/metadata.json", verify.RuleCheckMetadata, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := verifytest.Write(t, verifytest.Demo)
			tc.tamper(t, dir)
			if tc.fix {
				fixManifest(t, dir, nil)
			}
			_, rep, err := verify.LoadChecked(t, context.Background(), dir, verify.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !hasViolation(rep, tc.path, tc.rule) {
				t.Fatalf("want %s: %s, got %v", tc.path, tc.rule, rep.Violations)
			}
			for _, v := range rep.Violations {
				if v.Rule != tc.rule && !slices.Contains(tc.also, v.Rule) {
					t.Errorf("the tree breaks another rule too: %v", v)
				}
			}
		})
	}
}
