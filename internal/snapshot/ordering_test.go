package snapshot_test

import (
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/internal/snapshot/canon"
)

// threadKey is the thread key of a demo (github.com, R_kgDOLxDemo01) thread ID.
func threadKey(id string) string {
	return canon.RecordKey("github", "github.com", "R_kgDOLxDemo01", "thread", id)
}

// tiedThreadIDs returns two thread IDs whose ID byte order and thread-key order disagree, so a
// test can tell "created_at, then thread ID" from "created_at, then thread key".
func tiedThreadIDs(t *testing.T) (lowID, highID string) {
	t.Helper()
	for i := 0; i < 100; i++ {
		a, b := "PRRT_tieA"+string(rune('a'+i%26))+strings.Repeat("x", i/26), "PRRT_tieB"
		if threadKey(a) > threadKey(b) {
			return a, b
		}
	}
	t.Fatal("no ID pair with disagreeing key order")
	return "", ""
}

// Ordering and determinism: formal review arrays sort by submitted_at then review ID;
// relationship threads by created_at then thread ID; thread state by thread key; the
// unresolved-review view by thread creation time and key, then forge thread order; a review
// view lists the review, then its threads' retained records.
func TestReviewAndThreadArrayOrders(t *testing.T) {
	acq, cfg := demo(t)
	a := clone(t, acq)
	// Two reviews submitted at the same instant (different offsets): ID order decides; the
	// IDs are chosen so record-key order would disagree with ID order for one of the pairs.
	same := "2026-09-02T12:00:00Z"
	a.Reviews = append(a.Reviews,
		acquisition.Review{ID: "PRR_tieB", Author: acquisition.ActorRef{ID: sp("U_kgDOBob00002")}, State: "commented", SubmittedAt: same, Body: "b"},
		acquisition.Review{ID: "PRR_tieA", Author: acquisition.ActorRef{ID: sp("U_kgDOBob00002")}, State: "commented", SubmittedAt: "2026-09-02T14:00:00+02:00", Body: "a"},
	)
	low, high := tiedThreadIDs(t)
	mk := func(id, comment string) acquisition.Thread {
		return acquisition.Thread{ID: id, CreatedAt: "2026-09-01T23:00:00Z", CommentIDs: []string{comment}, ReviewID: "PRR_tieA"}
	}
	// Forge delivers high first; both unresolved and current.
	a.Threads = append(a.Threads, mk(high, "IC_kwDOLxDemo01c0001"), mk(low, "IC_kwDOLxDemo01c0003"))
	tree := assemble(t, a, cfg)

	var rel struct {
		Reviews []struct {
			ID          string `json:"id"`
			SubmittedAt string `json:"submitted_at"`
		} `json:"reviews"`
		Threads []struct {
			ID        string `json:"id"`
			CreatedAt string `json:"created_at"`
			ThreadKey string `json:"thread_key"`
			OrderPath string `json:"order_path"`
		} `json:"threads"`
	}
	fileJSON(t, tree, "relations/reviews.json", &rel)
	for i := 1; i < len(rel.Reviews); i++ {
		p, r := rel.Reviews[i-1], rel.Reviews[i]
		if p.SubmittedAt > r.SubmittedAt || p.SubmittedAt == r.SubmittedAt && p.ID >= r.ID {
			t.Errorf("reviews not sorted by submitted_at then ID at %s", r.ID)
		}
	}
	var ids []string
	for _, r := range rel.Reviews {
		ids = append(ids, r.ID)
	}
	if got := strings.Join(ids, ","); !strings.Contains(got, "PRR_tieA,PRR_tieB") {
		t.Errorf("tied reviews in %s, want PRR_tieA before PRR_tieB", got)
	}
	ids = nil
	for i, th := range rel.Threads {
		ids = append(ids, th.ID)
		if i > 0 {
			p := rel.Threads[i-1]
			if p.CreatedAt > th.CreatedAt || p.CreatedAt == th.CreatedAt && p.ID >= th.ID {
				t.Errorf("threads not sorted by created_at then thread ID at %s", th.ID)
			}
		}
	}
	if got := strings.Join(ids, ","); !strings.Contains(got, low+","+high) {
		t.Errorf("tied threads in %s, want %s before %s (thread ID order, not key order)", got, low, high)
	}
	var state struct {
		Threads []struct {
			ThreadKey string `json:"thread_key"`
		} `json:"threads"`
	}
	fileJSON(t, tree, "state/threads.json", &state)
	var keys []string
	for _, th := range state.Threads {
		keys = append(keys, th.ThreadKey)
	}
	if !sort.StringsAreSorted(keys) || len(keys) != len(rel.Threads) {
		t.Errorf("thread state %v not sorted by thread key", keys)
	}

	// Unresolved view: thread creation time, then thread KEY (high's key sorts first), then
	// forge order inside the thread.
	d := index(t, tree)
	path := map[string]string{}
	for _, r := range d.Records {
		path[r.ID] = r.ContentPath
	}
	u, _ := tree.File("views/unresolved-review.order")
	wantU := strings.Join([]string{
		path["PRRC_kwDOLxDemo01r0004"], path["PRRC_kwDOLxDemo01r0005"], // thread 3, 2026-09-01T10:22:30Z
		path["IC_kwDOLxDemo01c0001"], path["IC_kwDOLxDemo01c0003"], // high then low: key order
	}, "\n") + "\n"
	if string(u) != wantU {
		t.Errorf("unresolved view\n got %q\nwant %q", u, wantU)
	}
	// Review view: the review record, then records of its threads in thread order.
	rk := canon.RecordKey("github", "github.com", "R_kgDOLxDemo01", "review", "PRR_tieA")
	v, ok := tree.File("views/reviews/" + rk + ".order")
	wantV := path["PRR_tieA"] + "\n" + path["IC_kwDOLxDemo01c0001"] + "\n" + path["IC_kwDOLxDemo01c0003"] + "\n"
	if !ok || string(v) != wantV {
		t.Errorf("review view\n got %q\nwant %q", v, wantV)
	}
	if _, ok := tree.File("views/reviews/" + canon.RecordKey("github", "github.com", "R_kgDOLxDemo01", "review", "PRR_tieB") + ".order"); !ok {
		t.Error("a retained review without threads still has its review view")
	}
}

// Ordering and determinism: agent receipts sort by completion time, then ID; each receipt's
// result_record_keys sort by ASCII byte order (and are unique).
func TestAgentReceiptOrder(t *testing.T) {
	acq, cfg := demo(t)
	a := clone(t, acq)
	base := a.AgentRuns[0]
	k1, k2, k3 := strings.Repeat("f", 64), strings.Repeat("0", 64), strings.Repeat("7", 64)
	r2, r3 := base, base
	r2.ID, r2.CompletedAt = "IC_kwDOLxDemo01c0090", "2026-09-01T12:04:31Z" // same instant as base, lower ID
	r2.ResultRecordKeys = []string{k1, k2, k3, k2}
	r3.ID, r3.CompletedAt = "IC_kwDOLxDemo01c0001x", "2026-09-01T11:00:00Z" // earlier
	a.AgentRuns = append(a.AgentRuns, r2, r3)
	tree := assemble(t, a, cfg)
	var runs struct {
		Runs []struct {
			ID   string   `json:"id"`
			Keys []string `json:"result_record_keys"`
		} `json:"runs"`
	}
	fileJSON(t, tree, "history/agent-runs.json", &runs)
	var ids []string
	for _, r := range runs.Runs {
		ids = append(ids, r.ID)
		if r.ID == r2.ID && strings.Join(r.Keys, ",") != strings.Join([]string{k2, k3, k1}, ",") {
			t.Errorf("result_record_keys %v, want sorted and unique", r.Keys)
		}
	}
	if got, want := strings.Join(ids, ","), "IC_kwDOLxDemo01c0001x,IC_kwDOLxDemo01c0090,IC_kwDOLxDemo01c0099"; got != want {
		t.Errorf("receipts %s, want %s", got, want)
	}
}

// Ordering and determinism: manifest records[] sort by each record's REAL created_at, then
// record key — the entity's reserved order key does not move it; record filenames (and so the
// timeline) still put the entity body first.
func TestEntityRecordSortsByRealCreatedAtInManifest(t *testing.T) {
	acq, cfg := demo(t)
	a := clone(t, acq)
	a.Entity.CreatedAt = "2026-09-02T08:30:00Z" // after some comments (a hostile or migrated entity)
	tree := assemble(t, a, cfg)
	d := index(t, tree)
	pos := -1
	for i, r := range d.Records {
		if r.Kind == "entity" {
			pos = i
		}
		if i > 0 {
			p := d.Records[i-1]
			if p.CreatedAt > r.CreatedAt || p.CreatedAt == r.CreatedAt && p.RecordKey >= r.RecordKey {
				t.Errorf("records not sorted by created_at then key at %s", r.ID)
			}
		}
	}
	if pos <= 0 || d.Records[pos].CreatedAt != "2026-09-02T08:30:00.000000000Z" {
		t.Fatalf("entity record at position %d; want after the earlier comments, by its real created_at", pos)
	}
	tl, _ := tree.File("views/timeline.order")
	if !strings.HasPrefix(string(tl), d.Records[pos].ContentPath+"\n") ||
		!strings.Contains(d.Records[pos].ContentPath, "/"+canon.EntityOrderKey+"-") {
		t.Errorf("timeline does not start with the reserved-key entity record")
	}
	// Equal created_at: record key decides, whatever the kind.
	a = clone(t, acq)
	a.Comments[0].CreatedAt = a.Entity.CreatedAt
	d = index(t, assemble(t, a, cfg))
	if d.Records[0].CreatedAt != d.Records[1].CreatedAt || d.Records[0].RecordKey >= d.Records[1].RecordKey {
		t.Errorf("records with equal created_at not ordered by record key")
	}
}

var anyTimestamp = regexp.MustCompile(`[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.+\-A-Za-z]*`)
var canonicalTimestamp = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{9}Z$`)

// Canonical bytes: every timestamp the tree carries — JSON values and record headers alike —
// is UTC with exactly nine fractional digits, whatever offset or precision the forge used.
func TestEveryTimestampHasNineDigitsInUTC(t *testing.T) {
	for _, name := range scenarios {
		sc := loadScenario(t, name)
		tree := assemble(t, sc.acq, sc.cfg)
		for p, b := range treeMap(tree) {
			if strings.HasSuffix(p, "/log.txt") {
				continue // log bytes are forge content, not timestamps of the snapshot
			}
			text := string(b)
			if strings.HasPrefix(p, "records/") {
				text = text[:strings.Index(text, "\n\n")] // the header only; bodies are content
			}
			for _, m := range anyTimestamp.FindAllString(text, -1) {
				if !canonicalTimestamp.MatchString(m) {
					t.Errorf("%s/%s: timestamp %q is not the nine-digit UTC form", name, p, m)
				}
			}
		}
	}
}

// index.json filter summarises the filtering of the source-derived values in the index (the
// record author logins): unchanged when nothing changed, modified with findings otherwise;
// a login that is unsafe or empty becomes null.
func TestIndexTopLevelFilterSummarisesIndexDisplayValues(t *testing.T) {
	acq, cfg := demo(t)
	if d := index(t, assemble(t, acq, cfg)); d.Filter.Status != "unchanged" || len(d.Filter.Findings) != 0 {
		t.Fatalf("clean logins: index filter %+v, want unchanged", d.Filter)
	}
	a := clone(t, acq)
	a.Actors[1].Login = sp("b\u200bob") // bob authors several records
	a.Actors[2].Login = sp("\u200b")    // carol: empty after filtering → null
	tree := assemble(t, a, cfg)
	d := index(t, tree)
	if d.Filter.Status != "modified" || len(d.Filter.Findings) == 0 {
		t.Fatalf("index filter %+v, want modified with findings", d.Filter)
	}
	for _, r := range d.Records {
		if r.AuthorID == nil {
			continue
		}
		switch *r.AuthorID {
		case "U_kgDOBob00002":
			if r.Author == nil || *r.Author != "bob" {
				t.Errorf("bob's login %v, want the filtered bob", r.Author)
			}
		case "U_kgDOCarol003":
			if r.Author != nil {
				t.Errorf("carol's emptied login %q, want null", *r.Author)
			}
		}
	}
	for _, f := range d.Files {
		if f.Path == "state/actors.json" && (f.Filter == nil || f.Filter.Status != "modified") {
			t.Errorf("actor state filter %+v, want modified", f.Filter)
		}
	}
}

// Relationships: the index never lists a rejected record with a file, and snapshot.Usability
// fixes usability by code alone.
func TestUsabilityIsFixedByCode(t *testing.T) {
	for code, want := range map[string]string{
		"profile_bound": "partial", "history_unavailable": "partial", "unsupported": "unusable",
		"authorization_failed": "unusable", "fetch_failed": "unusable", "source_too_large": "unusable",
		"invalid_metadata": "unusable", "unsafe_content": "unusable",
	} {
		if got := snapshot.Usability(code); got != want {
			t.Errorf("%s: %s, want %s", code, got, want)
		}
	}
}

// Collection profiles and the bot registry mean exactly one thing: a duplicated or case-variant
// member name (which encoding/json would silently resolve) is a configuration error.
func TestProfileAndBotsRejectDuplicatedMemberNames(t *testing.T) {
	prof := `{"entity_kind":"work_item","included_sources":["entity"],"record_selection":"oldest","check_log_selection":"none",` +
		`"bounds":{"max_records_per_source":1,"max_source_bytes":1,"max_record_bytes":1,"max_log_bytes":1,"max_metadata_string_bytes":1,"max_labels":0}`
	if _, err := snapshot.ReadProfile(strings.NewReader(prof + `}`)); err != nil {
		t.Fatalf("valid profile: %v", err)
	}
	for _, doc := range []string{prof + `,"entity_kind":"change_proposal"}`, prof + `,"Entity_Kind":"change_proposal"}`} {
		if _, err := snapshot.ReadProfile(strings.NewReader(doc)); !snapshot.IsConfigError(err) {
			t.Errorf("profile %s: %v, want a ConfigError", doc[len(doc)-40:], err)
		}
	}
	if _, err := snapshot.ReadBots(strings.NewReader(`{"bots":[{"id":"B1","bot_role":"r","bot_role":""}]}`)); !snapshot.IsConfigError(err) {
		t.Errorf("bots with a duplicated bot_role: %v, want a ConfigError", err)
	}
}
