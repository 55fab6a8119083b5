// Package stats holds what the forge adapters' `forgectx snapshot --stats` documents share
// (run telemetry, never part of an entity-context-snapshot v1 tree; architecture map,
// "Packages"): the per-source record counts, the request ratio and the JSON encoding. Each
// adapter keeps its own Stats type, because what it can count (pages, retries, lower-bound
// parts) differs by forge and the field set of each forge's document is already fixed.
//
// Maps encode with sorted keys and nothing here reads a clock, so a replay's statistics are
// byte-identical run to run.
package stats

import (
	"encoding/json"
	"io"

	"github.com/forgectx/forgectx/pkg/acquisition"
)

// Records counts what an acquisition holds per source, under the keys every adapter's
// "records" member uses: comments, reviews, threads, checks, agent_runs and actors. Check
// logs are left to the caller: adapters differ in which logs they count and under which key.
func Records(a *acquisition.Acquisition) map[string]int {
	return map[string]int{
		"comments":   len(a.Comments),
		"reviews":    len(a.Reviews),
		"threads":    len(a.Threads),
		"checks":     len(a.Checks),
		"agent_runs": len(a.AgentRuns),
		"actors":     len(a.Actors),
	}
}

// FetchedLogs counts the checks whose log was fetched (the "check_logs" record count of the
// adapters that download logs).
func FetchedLogs(a *acquisition.Acquisition) int {
	n := 0
	for _, ck := range a.Checks {
		if ck.Log != nil && ck.Log.Outcome == acquisition.LogFetched {
			n++
		}
	}
	return n
}

// Ratio is requests / lowerBound, the "request_ratio" member; 0 when there is no lower bound
// (nothing was acquired), so the document never holds NaN or Inf, which JSON cannot encode.
func Ratio(requests, lowerBound int) float64 {
	if lowerBound > 0 {
		return float64(requests) / float64(lowerBound)
	}
	return 0
}

// Copy returns a new map with m's entries, so a Stats value handed out does not alias the
// counters a client keeps updating.
func Copy(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// WriteJSON writes v as two-space indented JSON followed by a newline: the byte layout of
// every adapter's --stats file.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
