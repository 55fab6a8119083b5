// Package glcorpus makes deterministic GitLab API response bodies (discussions and pipeline
// jobs, in the shapes of GitLab's REST API) for the GitLab adapter's benchmarks. The same seed
// and size always produce the same bytes.
package glcorpus

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"
)

// HeadSHA is the revision every generated job reports.
const HeadSHA = "8e0b45049b6253b8984cde9241830d2851168142"

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func ts(i int) string {
	return epoch.Add(time.Duration(i) * time.Minute).Format("2006-01-02T15:04:05.000Z")
}

// Discussions returns a JSON array of n discussions: individual notes, system notes, and
// resolvable DiffNote threads of up to five notes with positions on either side.
func Discussions(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([]map[string]any, 0, n)
	noteID := 1000
	for d := 0; d < n; d++ {
		kind := r.IntN(4)
		notes := []map[string]any{}
		count := 1
		if kind >= 2 {
			count = 1 + r.IntN(5)
		}
		resolved := r.IntN(2) == 0
		for k := 0; k < count; k++ {
			noteID++
			user := 100 + r.IntN(20)
			note := map[string]any{
				"id": noteID, "type": nil, "body": fmt.Sprintf("Note %d: please look at line %d of the cache layer.", noteID, r.IntN(500)),
				"attachment": nil, "author": map[string]any{"id": user, "username": fmt.Sprintf("user%d", user), "name": "U", "state": "active"},
				"created_at": ts(noteID), "updated_at": ts(noteID), "system": kind == 1, "noteable_id": 9007, "noteable_type": "MergeRequest",
				"project_id": 42, "resolvable": kind == 3, "internal": false, "noteable_iid": 7,
			}
			if kind == 3 {
				note["type"] = "DiffNote"
				note["resolved"] = resolved
				if resolved {
					note["resolved_by"] = map[string]any{"id": 101, "username": "user101"}
				}
				pos := map[string]any{"base_sha": HeadSHA, "start_sha": HeadSHA, "head_sha": HeadSHA, "position_type": "text",
					"old_path": "src/a.go", "new_path": "src/a.go", "old_line": nil, "new_line": nil}
				if r.IntN(2) == 0 {
					pos["new_line"] = 1 + r.IntN(400)
				} else {
					pos["old_line"] = 1 + r.IntN(400)
				}
				note["position"] = pos
			}
			notes = append(notes, note)
		}
		out = append(out, map[string]any{"id": fmt.Sprintf("%040x", uint64(d)*2654435761+seed), "individual_note": kind < 2, "notes": notes})
	}
	b, err := json.Marshal(out)
	if err != nil {
		panic(err) // maps of basic values always marshal
	}
	return b
}

// Jobs returns a JSON array of n pipeline jobs cycling through every GitLab job status.
func Jobs(seed uint64, n int) []byte {
	statuses := []string{"created", "pending", "running", "success", "failed", "canceled", "skipped", "manual", "scheduled", "canceling"}
	r := rand.New(rand.NewPCG(seed, seed+1))
	out := make([]map[string]any, 0, n)
	for i := 0; i < n; i++ {
		st := statuses[r.IntN(len(statuses))]
		j := map[string]any{"id": 50000 + i, "name": fmt.Sprintf("job-%d", i), "stage": "test", "status": st, "created_at": ts(i),
			"started_at": nil, "finished_at": nil, "commit": map[string]any{"id": HeadSHA}, "pipeline": map[string]any{"id": 801, "sha": HeadSHA}}
		switch st {
		case "running", "canceling":
			j["started_at"] = ts(i + 1)
		case "success", "failed":
			j["started_at"], j["finished_at"] = ts(i+1), ts(i+2)
		case "canceled", "skipped":
			if r.IntN(2) == 0 {
				j["started_at"] = ts(i + 1)
			}
			j["finished_at"] = ts(i + 2)
		}
		out = append(out, j)
	}
	b, err := json.Marshal(out)
	if err != nil {
		panic(err)
	}
	return b
}
