package forge_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// The dependency map: an incomplete listing shortens its own scopes and, transitively, those
// of every listing read for its rows; Shortfall gaps the selected ones by the rows lost.
func TestListingsShortfall(t *testing.T) {
	m := forge.NewListings(
		forge.Listing{Name: "pipelines", Paged: true, Scopes: []string{"checks"}, Feeds: []string{"jobs"}},
		forge.Listing{Name: "jobs", Paged: true, Scopes: []string{"checks"}, Feeds: []string{"logs"}},
		forge.Listing{Name: "logs", Scopes: []string{"check_logs"}},
		forge.Listing{Name: "comments", Paged: true, Scopes: []string{"comments"}, Feeds: []string{"receipts"}},
		forge.Listing{Name: "receipts", Scopes: []string{"agent_runs"}},
	)
	if got := m.Shortens("pipelines"); !reflect.DeepEqual(got, []string{"check_logs", "checks"}) {
		t.Errorf("pipelines shortens %v", got)
	}
	if got := m.Shortens("logs"); !reflect.DeepEqual(got, []string{"check_logs"}) {
		t.Errorf("logs shortens %v", got)
	}
	var names []string
	for _, l := range m.Paged() {
		names = append(names, l.Name)
	}
	if !reflect.DeepEqual(names, []string{"comments", "jobs", "pipelines"}) {
		t.Errorf("paged %v", names)
	}
	p := acquisition.Profile{EntityKind: acquisition.KindChangeProposal, IncludedSources: []string{"checks", "comments", "entity"}}
	var o acquisition.Outcomes
	m.Shortfall(&o, "pipelines", acquisition.GapFetchFailed, 3, forge.Selected(p))
	m.Shortfall(&o, "comments", acquisition.GapAuthorizationFailed, 0, forge.Selected(p))
	if !reflect.DeepEqual(o.Checks, []acquisition.Gap{{Code: "fetch_failed", Count: 3}}) || len(o.CheckLogs) != 0 {
		t.Errorf("checks %v, check_logs %v (check_logs is not selected)", o.Checks, o.CheckLogs)
	}
	if !reflect.DeepEqual(o.Comments, []acquisition.Gap{{Code: "authorization_failed", Count: 1}}) || len(o.AgentRuns) != 0 {
		t.Errorf("comments %v (an unknown loss counts 1), agent_runs %v", o.Comments, o.AgentRuns)
	}
	if !forge.Selected(p)(acquisition.ScopeActors) {
		t.Error("actors always apply")
	}
}

// A bad table is a programming error: NewListings panics naming the rule.
func TestNewListingsRejectsBadTables(t *testing.T) {
	for _, tc := range []struct {
		name string
		ls   []forge.Listing
		want string
	}{
		{"duplicate", []forge.Listing{{Name: "a"}, {Name: "a"}}, "unique"},
		{"unknown feed", []forge.Listing{{Name: "a", Feeds: []string{"b"}}}, "not a listing"},
		{"cycle", []forge.Listing{{Name: "a", Feeds: []string{"b"}}, {Name: "b", Feeds: []string{"a"}}}, "feeds itself"},
		{"scope", []forge.Listing{{Name: "a", Scopes: []string{"threads"}}}, "not a spec scope"},
	} {
		func() {
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.Contains(s, tc.want) {
					t.Errorf("%s: panic %v, want %q", tc.name, r, tc.want)
				}
			}()
			forge.NewListings(tc.ls...)
		}()
	}
}
