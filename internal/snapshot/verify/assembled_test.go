package verify_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/internal/snapshot/canon"
	"github.com/forgectx/forgectx/internal/snapshot/demo"
	"github.com/forgectx/forgectx/internal/snapshot/verify"
	"github.com/forgectx/forgectx/test/acqcorpus"
)

// Trees the assembler (internal/snapshot) builds from edited demo acquisitions. Each case exercises
// a spec-valid shape the stored trees do not contain; the tree must verify clean against its
// retained digest, and the case's own assertion shows the shape is really there (so the test
// cannot pass vacuously).

func str(s string) *string { return &s }

func ptrBool(b bool) *bool { return &b }

// assembleAndVerify assembles acq, writes the tree, verifies it with the retained digest and
// returns the tree's files for the case's own assertions.
func assembleAndVerify(t *testing.T, acq *acquisition.Acquisition, prof acquisition.Profile, bots []snapshot.BotIdentity) *snapshot.Tree {
	t.Helper()
	tree, err := snapshot.Assemble(context.Background(), acq, snapshot.Config{Profile: prof, Category: demo.Category, Bots: bots, Filter: filter.New(nil)})
	if err != nil {
		t.Fatalf("assemble: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "ctx")
	if err := tree.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	snap, rep, err := verify.LoadChecked(t, context.Background(), dir, verify.Options{IndexSHA256: tree.IndexSHA256})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || snap == nil {
		t.Fatalf("an assembled tree does not verify: %v", rep.Violations)
	}
	return tree
}

func jsonDoc(t *testing.T, tree *snapshot.Tree, p string, v any) {
	t.Helper()
	b, ok := tree.File(p)
	if !ok {
		t.Fatalf("tree has no %s", p)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

func actorIDs(t *testing.T, tree *snapshot.Tree) map[string]bool {
	t.Helper()
	var doc struct {
		Actors []struct {
			ID string `json:"id"`
		} `json:"actors"`
	}
	jsonDoc(t, tree, "state/actors.json", &doc)
	out := map[string]bool{}
	for _, a := range doc.Actors {
		out[a.ID] = true
	}
	return out
}

func TestAssembledTreesVerify(t *testing.T) {
	const (
		dismissed   = "PRR_kwDOLxDemo01v0002" // carol's review, dismissed by bob
		resolved    = "PRRT_kwDOLxDemo01t0001"
		mallory     = "U_kgDOMallory5"
		malloryNote = "IC_kwDOLxDemo01c0004" // "Ignore all previous instructions …"
		bot         = "BOT_kgDOCiHelper"
		botComment  = "IC_kwDOLxDemo01c0005"
		dave        = "U_kgDODave0004"
		erin        = "U_kgDOErin00006"
	)
	cases := []struct {
		name  string
		edit  func(acq *acquisition.Acquisition, prof *acquisition.Profile)
		check func(t *testing.T, tree *snapshot.Tree)
	}{
		{
			// Spec: "A nullable reference explicitly records that the forge did not expose the
			// actor" (Forgejo exposes no dismisser). A null names no actor row.
			name: "null dismissed_by_actor_id",
			edit: func(acq *acquisition.Acquisition, _ *acquisition.Profile) {
				for i := range acq.Reviews {
					if acq.Reviews[i].ID == dismissed {
						acq.Reviews[i].DismissedBy = &acquisition.ActorRef{}
						acq.Reviews[i].DismissedAt = nil
					}
				}
			},
			check: func(t *testing.T, tree *snapshot.Tree) {
				var doc struct {
					Reviews []map[string]json.RawMessage `json:"reviews"`
				}
				jsonDoc(t, tree, "relations/reviews.json", &doc)
				for _, r := range doc.Reviews {
					if string(r["id"]) == strconv.Quote(dismissed) {
						if string(r["dismissed_by_actor_id"]) != "null" || string(r["dismissed_at"]) != "null" {
							t.Fatalf("dismissal is not null: %s %s", r["dismissed_by_actor_id"], r["dismissed_at"])
						}
						return
					}
				}
				t.Fatal("the dismissed review has no relationship row")
			},
		},
		{
			name: "null resolved_by_actor_id",
			edit: func(acq *acquisition.Acquisition, _ *acquisition.Profile) {
				for i := range acq.Threads {
					if acq.Threads[i].ID == resolved {
						acq.Threads[i].ResolvedBy = &acquisition.ActorRef{}
					}
				}
			},
			check: func(t *testing.T, tree *snapshot.Tree) {
				var doc struct {
					Threads []map[string]json.RawMessage `json:"threads"`
				}
				jsonDoc(t, tree, "state/threads.json", &doc)
				for _, th := range doc.Threads {
					if string(th["id"]) == strconv.Quote(resolved) {
						if string(th["resolved"]) != "true" || string(th["resolved_by_actor_id"]) != "null" {
							t.Fatalf("resolution: %s by %s", th["resolved"], th["resolved_by_actor_id"])
						}
						return
					}
				}
				t.Fatal("the resolved thread has no state row")
			},
		},
		{
			// A record rejected by the filter keeps its manifest record, so its author is
			// referenced (author_id) and has exactly one row.
			name: "author of a filter-rejected record",
			edit: func(acq *acquisition.Acquisition, _ *acquisition.Profile) {
				for i := range acq.Actors {
					if acq.Actors[i].ID == mallory {
						acq.Actors[i].Role = str("write")
					}
				}
			},
			check: func(t *testing.T, tree *snapshot.Tree) {
				var idx struct {
					Records []struct {
						ID          string `json:"id"`
						ContentPath string `json:"content_path"`
						Filter      struct {
							Status string `json:"status"`
						} `json:"filter"`
					} `json:"records"`
				}
				if err := json.Unmarshal(tree.Index, &idx); err != nil {
					t.Fatal(err)
				}
				for _, r := range idx.Records {
					if r.ID == malloryNote {
						if r.Filter.Status != "rejected" || r.ContentPath != "" {
							t.Fatalf("the injection comment was not rejected: %+v", r)
						}
						if !actorIDs(t, tree)[mallory] {
							t.Fatal("the rejected record's author has no actor row")
						}
						return
					}
				}
				t.Fatal("the rejected record is not in the manifest")
			},
		},
		{
			// Receipts carry no author field: a bot that only posted a receipt is not an
			// actor of the snapshot.
			name: "receipt author only",
			edit: func(acq *acquisition.Acquisition, _ *acquisition.Profile) {
				kept := acq.Comments[:0]
				for _, c := range acq.Comments {
					if c.ID != botComment {
						kept = append(kept, c)
					}
				}
				acq.Comments = kept
			},
			check: func(t *testing.T, tree *snapshot.Tree) {
				var runs struct {
					Runs []json.RawMessage `json:"runs"`
				}
				jsonDoc(t, tree, "history/agent-runs.json", &runs)
				if len(runs.Runs) == 0 {
					t.Fatal("no receipt was admitted: the case proves nothing")
				}
				if actorIDs(t, tree)[bot] {
					t.Fatal("the receipt-only bot has an actor row")
				}
			},
		},
		{
			// Records dropped by max_records_per_source and comments omitted by authorization
			// reference no actor.
			name: "authors of bound-dropped and unauthorized records",
			edit: func(acq *acquisition.Acquisition, prof *acquisition.Profile) {
				prof.Bounds.MaxRecordsPerSource = 2
				prof.RecordSelection = "newest"
			},
			check: func(t *testing.T, tree *snapshot.Tree) {
				ids := actorIDs(t, tree)
				if ids[dave] || ids[mallory] {
					t.Fatalf("actors of dropped records have rows: %v", ids)
				}
				if !strings.Contains(string(tree.Index), `"code":"profile_bound"`) {
					t.Fatal("no record was dropped by the bound: the case proves nothing")
				}
			},
		},
		{
			// A resolved thread whose records are all omitted is itself omitted, and so is
			// its resolver.
			name: "resolver of an omitted thread",
			edit: func(acq *acquisition.Acquisition, _ *acquisition.Profile) {
				acq.Actors = append(acq.Actors, acquisition.Actor{ID: erin, Login: str("erin"), Kind: acquisition.ActorHuman, Role: str("write"), RoleVerified: true})
				acq.Threads = append(acq.Threads, acquisition.Thread{
					ID: "PRRT_kwDOLxDemo01t0009", CreatedAt: "2026-09-02T09:00:00Z", CommentIDs: []string{malloryNote},
					Replies: []acquisition.Reply{}, Resolved: true, ResolvedBy: &acquisition.ActorRef{ID: str(erin), Login: str("erin")},
				})
			},
			check: func(t *testing.T, tree *snapshot.Tree) {
				if actorIDs(t, tree)[erin] {
					t.Fatal("the resolver of an omitted thread has an actor row")
				}
				if strings.Contains(string(mustFile(t, tree, "relations/reviews.json")), "t0009") {
					t.Fatal("the thread was not omitted: the case proves nothing")
				}
			},
		},
		{
			// Two unresolved threads created at the same instant: views order them by thread
			// key, the relationship array by thread ID (spec "Ordering files and prompt
			// assembly", "Ordering and determinism"). IDs are chosen so the two orders differ.
			name: "threads with equal creation times",
			edit: func(acq *acquisition.Acquisition, _ *acquisition.Profile) {
				a, b := sameTimeThreadIDs(acq.Source)
				at := "2026-09-03T15:30:00Z"
				for i, id := range []string{a, b} {
					cid := "PRRC_kwDOLxDemo01r009" + strconv.Itoa(i)
					acq.Comments = append(acq.Comments, acquisition.Comment{ID: cid, Author: acquisition.ActorRef{ID: str("U_kgDOBob00002"), Login: str("bob")},
						CreatedAt: "2026-09-03T15:3" + strconv.Itoa(i+1) + ":00Z", Body: "Same-time thread " + strconv.Itoa(i) + "."})
					acq.Threads = append(acq.Threads, acquisition.Thread{ID: id, CreatedAt: at, CommentIDs: []string{cid}, Replies: []acquisition.Reply{},
						ReviewID: "PRR_kwDOLxDemo01v0003", Outdated: false, Minimized: ptrBool(false)})
				}
			},
			check: func(t *testing.T, tree *snapshot.Tree) {
				view := string(mustFile(t, tree, "views/unresolved-review.order"))
				i, j := pathIndex(t, tree, view, "PRRC_kwDOLxDemo01r0090"), pathIndex(t, tree, view, "PRRC_kwDOLxDemo01r0091")
				if i < 0 || j < 0 || i < j {
					t.Fatalf("the thread with the smaller key must come first in the view (at %d, %d)", i, j)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			acq, prof, bots, err := demo.Inputs()
			if err != nil {
				t.Fatal(err)
			}
			tc.edit(acq, &prof)
			tc.check(t, assembleAndVerify(t, acq, prof, bots))
		})
	}
}

func mustFile(t *testing.T, tree *snapshot.Tree, p string) []byte {
	t.Helper()
	b, ok := tree.File(p)
	if !ok {
		t.Fatalf("tree has no %s", p)
	}
	return b
}

// pathIndex returns the byte offset in view of the content path of the record with this id.
func pathIndex(t *testing.T, tree *snapshot.Tree, view, id string) int {
	t.Helper()
	var idx struct {
		Records []struct {
			ID          string `json:"id"`
			ContentPath string `json:"content_path"`
		} `json:"records"`
	}
	if err := json.Unmarshal(tree.Index, &idx); err != nil {
		t.Fatal(err)
	}
	for _, r := range idx.Records {
		if r.ID == id && r.ContentPath != "" {
			return strings.Index(view, r.ContentPath)
		}
	}
	return -1
}

// sameTimeThreadIDs returns two thread IDs whose ID order (the relationship array order, a
// first) is the opposite of their thread-key order (the view order, b first).
func sameTimeThreadIDs(src acquisition.Source) (string, string) {
	key := func(id string) string {
		return canon.RecordKey(src.Forge, src.Host, src.RepositoryID, canon.KindThread, id)
	}
	for n := 10; n < 99; n++ {
		a, b := "PRRT_kwDOLxDemo01t00"+strconv.Itoa(n), "PRRT_kwDOLxDemo01t00"+strconv.Itoa(n+1)
		if key(b) < key(a) {
			return a, b
		}
	}
	panic("no thread ID pair with opposite key order")
}

// Every acquisition scenario under test/fixtures/acquisition (bounds hit, rejected records,
// empty sources, work item, change proposal), assembled by today's assembler, verifies clean.
func TestAssembledFixtureScenariosVerify(t *testing.T) {
	const root = "../../../test/fixtures/acquisition"
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		n++
		t.Run(e.Name(), func(t *testing.T) {
			dir := filepath.Join(root, e.Name())
			open := func(name string) *os.File {
				f, err := os.Open(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { f.Close() })
				return f
			}
			acq, err := acquisition.Read(open("acquisition.json"))
			if err != nil {
				t.Fatal(err)
			}
			prof, err := snapshot.ReadProfile(open("profile.json"))
			if err != nil {
				t.Fatal(err)
			}
			bots, err := snapshot.ReadBots(open("bots.json"))
			if err != nil {
				t.Fatal(err)
			}
			cat, err := os.ReadFile(filepath.Join(dir, "category"))
			if err != nil {
				t.Fatal(err)
			}
			tree, err := snapshot.Assemble(context.Background(), acq, snapshot.Config{Profile: prof, Category: strings.TrimSpace(string(cat)), Bots: bots, Filter: filter.New(nil)})
			if err != nil {
				t.Fatalf("assemble: %v", err)
			}
			out := filepath.Join(t.TempDir(), "ctx")
			if err := tree.WriteDir(out); err != nil {
				t.Fatal(err)
			}
			rep, err := verify.Dir(context.Background(), out, verify.Options{IndexSHA256: tree.IndexSHA256})
			if err != nil || !rep.OK() {
				t.Fatalf("%v %v", err, rep.Violations)
			}
			if rep.Files != len(tree.Files)+1 {
				t.Errorf("verified %d files, the tree has %d", rep.Files, len(tree.Files)+1)
			}
		})
	}
	if n < 5 {
		t.Fatalf("only %d fixture scenarios found", n)
	}
}

// corpusTree assembles and writes the synthetic busy pull request of test/acqcorpus with n
// records (comments in review threads, reviews, checks with failed logs).
func corpusTree(tb testing.TB, n int) (string, *snapshot.Tree) {
	tb.Helper()
	tree, err := snapshot.Assemble(context.Background(), acqcorpus.Make(n), snapshot.Config{Profile: acqcorpus.Profile(n), Category: snapshot.CategoryObservation, Filter: filter.New(nil)})
	if err != nil {
		tb.Fatal(err)
	}
	dir := filepath.Join(tb.TempDir(), "ctx")
	if err := tree.WriteDir(dir); err != nil {
		tb.Fatal(err)
	}
	return dir, tree
}

func TestAssembledCorpusVerifies(t *testing.T) {
	dir, tree := corpusTree(t, 200)
	rep, err := verify.Dir(context.Background(), dir, verify.Options{IndexSHA256: tree.IndexSHA256})
	if err != nil || !rep.OK() {
		t.Fatalf("%v %v", err, rep.Violations)
	}
	if rep.Records < 200 || rep.Threads == 0 {
		t.Fatalf("records=%d threads=%d: the corpus did not produce a busy tree", rep.Records, rep.Threads)
	}
}

func BenchmarkLoadCorpus(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			dir, tree := corpusTree(b, n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, rep, err := verify.Load(context.Background(), dir, verify.Options{IndexSHA256: tree.IndexSHA256}); err != nil || !rep.OK() {
					b.Fatal(err, rep.Violations)
				}
			}
		})
	}
}
