package forge

import (
	"fmt"
	"sort"

	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// Listing is one list an adapter reads, as data: the endpoint it is read from, the gap scopes
// its rows are records of, and the listings read once per row (a review's comments, a
// pipeline's jobs). Completeness accounting is built on it (spec, gaps: missing data from a
// selected source is a gap, never a silently shorter history): when a listing ends
// incomplete, every scope it shortens — its own and, transitively, those of the listings
// that would have been read for its unread rows — gets a gap.
type Listing struct {
	// Name identifies the listing ("reviews", "review_comments"); it keys the map.
	Name string
	// Endpoint is the request path template below the API base, {name} segments standing
	// for one path segment each (what a fault-injection test targets).
	Endpoint string
	// Paged says the endpoint is read page by page (a fault on page N applies); an
	// unpaged endpoint answers in one response.
	Paged bool
	// Scopes are the gap scopes the listing's own rows feed (a review's comments are
	// comments records and form the reviews scope's threads).
	Scopes []string
	// Feeds names the listings read for each of its rows.
	Feeds []string
}

// Listings is an adapter's dependency map: every listing it reads, by name.
type Listings map[string]Listing

// NewListings builds the map from ls and checks it: unique names, every Feeds entry a
// listing of the map, no cycle, every scope a spec scope. A bad table is a programming
// error, so it panics with the rule broken.
func NewListings(ls ...Listing) Listings {
	m := Listings{}
	for _, l := range ls {
		if _, dup := m[l.Name]; dup || l.Name == "" {
			panic(fmt.Sprintf("forge: listing %q: names must be unique and non-empty", l.Name))
		}
		for _, s := range l.Scopes {
			if !specScope(s) {
				panic(fmt.Sprintf("forge: listing %q: scope %q is not a spec scope", l.Name, s))
			}
		}
		m[l.Name] = l
	}
	for _, l := range ls {
		for _, f := range l.Feeds {
			if _, ok := m[f]; !ok {
				panic(fmt.Sprintf("forge: listing %q: feeds %q, which is not a listing", l.Name, f))
			}
		}
		if m.reaches(l.Name, l.Name, map[string]bool{}) {
			panic(fmt.Sprintf("forge: listing %q: feeds itself", l.Name))
		}
	}
	return m
}

func specScope(s string) bool {
	switch s {
	case acquisition.ScopeComments, acquisition.ScopeReviews, acquisition.ScopeChecks,
		acquisition.ScopeCheckLogs, acquisition.ScopeAgentRuns, acquisition.ScopeActors:
		return true
	}
	return false
}

func (m Listings) reaches(from, to string, seen map[string]bool) bool {
	for _, f := range m[from].Feeds {
		if f == to {
			return true
		}
		if !seen[f] {
			seen[f] = true
			if m.reaches(f, to, seen) {
				return true
			}
		}
	}
	return false
}

// Shortens is every scope an incomplete read of listing name leaves short: its own scopes
// and those of every listing it feeds, transitively, sorted. An unknown name panics (a
// programming error: the adapter read a listing its table does not declare).
func (m Listings) Shortens(name string) []string {
	if _, ok := m[name]; !ok {
		panic(fmt.Sprintf("forge: listing %q: not in the dependency map", name))
	}
	set := map[string]bool{}
	var walk func(string)
	walk = func(n string) {
		for _, s := range m[n].Scopes {
			set[s] = true
		}
		for _, f := range m[n].Feeds {
			walk(f)
		}
	}
	walk(name)
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// Shortfall records that listing name ended incomplete with gap code: every scope it
// shortens for which selected reports true gets the gap, counted lost (the rows known to be
// missing: a declared total minus the rows read; at least 1 when unknown). A scope fed
// through a child listing is counted by the same number: one unread parent row is one
// child history missing.
func (m Listings) Shortfall(o *acquisition.Outcomes, name, code string, lost int, selected func(scope string) bool) {
	for _, s := range m.Shortens(name) {
		if selected == nil || selected(s) {
			o.Add(s, code, max(lost, 1))
		}
	}
}

// Selected reports which gap scopes profile p selects: actors always apply, check_logs is the
// check_logs source, and every other scope is named as its source. It is the selected
// argument of Shortfall.
func Selected(p acquisition.Profile) func(scope string) bool {
	return func(scope string) bool {
		switch scope {
		case acquisition.ScopeActors:
			return true
		case acquisition.ScopeCheckLogs:
			return p.Includes(acquisition.SourceCheckLogs)
		}
		return p.Includes(scope)
	}
}

// Paged is the paged listings, sorted by name (the fault matrix iterates them).
func (m Listings) Paged() []Listing {
	var out []Listing
	for _, l := range m {
		if l.Paged {
			out = append(out, l)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
