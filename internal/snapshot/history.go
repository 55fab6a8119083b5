package snapshot

import (
	"sort"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/internal/snapshot/canon"
)

var runStatuses = map[string]bool{"success": true, "failure": true, "cancelled": true, "skipped": true, "timed_out": true}

// agentRuns stages forge-observable run receipts posted by registered bots.
func (a *asm) agentRuns() error {
	if !a.prof.Includes(acquisition.SourceAgentRuns) {
		return nil
	}
	const sc = acquisition.ScopeAgentRuns
	list := a.acq.AgentRuns
	s := a.src(acquisition.SourceAgentRuns)
	s.Acquired = len(list)
	dup := duplicateIDs(len(list), func(i int) string { return list[i].ID })
	var cands []candidate
	runs := map[int]runJSON{}
	for i := range list {
		r := &list[i]
		t, cts, ok := ts(r.CompletedAt)
		st, sok := optTS(r.StartedAt)
		valid := ok && sok && !dup[r.ID] && forgeRecordID(a.forge, r.ID) && a.boundOK(r.ID) && runStatuses[r.Status] &&
			a.hashOK(r.InputRevision) && (r.InputHeadSHA == "" || a.oidOK(r.InputHeadSHA)) &&
			(r.ResultingCommitSHA == "" || a.oidOK(r.ResultingCommitSHA)) && r.Agent != ""
		keys := append([]string{}, r.ResultRecordKeys...)
		for _, k := range keys {
			if !a.hashOK(k) {
				valid = false
			}
		}
		if !valid {
			a.gap(sc, acquisition.GapInvalidMetadata, 1)
			continue
		}
		// Receipts are admitted only when posted by a registered bot identity.
		if r.Author.ID == nil {
			a.gap(sc, acquisition.GapAuthorizationFailed, 1)
			continue
		}
		info, ok := a.actors[*r.Author.ID]
		if !ok || !a.botRegistered(*r.Author.ID, info) {
			a.gap(sc, acquisition.GapAuthorizationFailed, 1)
			continue
		}
		sort.Strings(keys)
		keys = uniqSorted(keys)
		runs[i] = runJSON{ID: r.ID, Status: r.Status, InputRevision: r.InputRevision, InputHeadSHA: r.InputHeadSHA,
			ResultRecordKeys: keys, ResultingCommitSHA: r.ResultingCommitSHA, StartedAt: st, CompletedAt: cts}
		cands = append(cands, candidate{idx: i, t: t, ts: cts, key: r.ID})
	}
	// Receipts sort by completion time, then ID.
	sortCandidates(cands)
	sel := a.selectBound(sc, cands)
	for _, cd := range sel {
		run := runs[cd.idx]
		name, r, ok, err := a.display(list[cd.idx].Agent)
		if err != nil {
			return err
		}
		a.runsFind.add(r.Findings)
		if !ok {
			code := acquisition.GapInvalidMetadata
			if r.Status == filter.StatusRejected {
				code = r.Gap
			}
			a.gap(sc, code, 1)
			a.runsStatus.add(filter.StatusRejected)
			continue
		}
		a.runsStatus.add(r.Status)
		run.Agent = name
		a.runs = append(a.runs, run)
		s.Records++
		s.WithContent++
	}
	s.Omitted = s.Acquired - s.Records
	return nil
}

func uniqSorted(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// actorState stages state/actors.json: every referenced actor exactly once, sorted by ID.
// A referenced actor the acquisition has no valid observation for is emitted fail-closed
// (human, role null, role_verified false) and counted as an actors invalid_metadata gap.
func (a *asm) actorState() error {
	ids := make([]string, 0, len(a.referenced))
	for id := range a.referenced {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	find := findings{}
	var status docStatus
	rows := make([]actorJSON, 0, len(ids))
	for _, id := range ids {
		info, ok := a.actors[id]
		if !ok {
			a.gap(acquisition.ScopeActors, acquisition.GapInvalidMetadata, 1)
			rows = append(rows, actorJSON{ID: id, Kind: acquisition.ActorHuman})
			continue
		}
		login, err := a.docLogin(id, &status, find)
		if err != nil {
			return err
		}
		row := actorJSON{ID: id, Kind: info.kind, Login: login}
		if info.kind == acquisition.ActorBot {
			bot := "bot"
			row.Role = &bot
		} else if info.verified {
			row.Role, row.RoleVerified = info.role, true
		}
		rows = append(rows, row)
	}
	doc, err := canon.JSON(actorsJSON{Actors: rows})
	if err != nil {
		return err
	}
	f := filterJSON{Status: status.get(), Findings: find.list()}
	a.addFile("state/actors.json", "actor_state", mediaJSON, doc, &f)
	return nil
}
