package snapshot

import (
	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/internal/snapshot/canon"
)

var conclusions = map[string]bool{"success": true, "failure": true, "neutral": true, "cancelled": true, "skipped": true, "timed_out": true, "action_required": true, "stale": true}

// checkMeta maps an acquisition check to its metadata document, applying the status-specific
// timestamp rules; ok is false when the forge data cannot satisfy them (invalid_metadata).
func checkMeta(c *acquisition.Check, createdTS, head string) (checkJSON, bool) {
	m := checkJSON{ID: c.ID, Status: c.Status, CreatedAt: createdTS, HeadSHA: head}
	switch c.Status {
	case "queued":
		// Native fields forbidden for the mapped status are omitted, not copied.
		for _, s := range []string{c.StartedAt, c.CompletedAt} {
			if _, ok := optTS(s); !ok {
				return m, false
			}
		}
	case "in_progress":
		st, ok := optTS(c.StartedAt)
		if !ok || st == "" {
			return m, false
		}
		if _, ok := optTS(c.CompletedAt); !ok {
			return m, false
		}
		m.StartedAt = st
	case "completed":
		if !conclusions[c.Conclusion] || c.NeverStarted == nil {
			return m, false
		}
		st, ok1 := optTS(c.StartedAt)
		ct, ok2 := optTS(c.CompletedAt)
		if !ok1 || !ok2 {
			return m, false
		}
		m.Conclusion = c.Conclusion
		ns := *c.NeverStarted
		m.NeverStarted = &ns
		if ns {
			switch c.Conclusion {
			case "failure", "skipped", "cancelled":
			default:
				return m, false
			}
			if ct == "" {
				ct = createdTS // the canonical fallback: the immutable source created_at
			}
			m.CompletedAt = ct
		} else {
			if st == "" || ct == "" {
				return m, false
			}
			m.StartedAt, m.CompletedAt = st, ct
		}
	default:
		return m, false
	}
	return m, true
}

// checks stages check metadata and selected logs (change proposals only).
func (a *asm) checks() error {
	if !a.prof.Includes(acquisition.SourceChecks) {
		return nil
	}
	const sc = acquisition.ScopeChecks
	list := a.acq.Checks
	s := a.src(acquisition.SourceChecks)
	s.Acquired = len(list)
	head := a.acq.Entity.HeadSHA
	headOK := a.oidOK(head)
	dup := duplicateIDs(len(list), func(i int) string { return list[i].ID })
	var cands []candidate
	metas := map[int]checkJSON{}
	for i := range list {
		c := &list[i]
		t, cts, ok := ts(c.CreatedAt)
		if !ok || dup[c.ID] || !forgeRecordID(a.forge, c.ID) || !a.boundOK(c.ID) || !headOK || c.HeadSHA != head || c.Name == "" {
			a.gap(sc, acquisition.GapInvalidMetadata, 1)
			continue
		}
		m, ok := checkMeta(c, cts, head)
		if !ok {
			a.gap(sc, acquisition.GapInvalidMetadata, 1)
			continue
		}
		metas[i] = m
		cands = append(cands, candidate{idx: i, t: t, ts: cts, key: a.key(canon.KindCheck, c.ID)})
	}
	sortCandidates(cands)
	sel := a.selectBound(sc, cands)
	logs := a.src(acquisition.SourceCheckLogs)
	for _, cd := range sel {
		c := &list[cd.idx]
		m := metas[cd.idx]
		rec := checkRecordJSON{Kind: canon.KindCheck, ID: c.ID, RecordKey: cd.key, CreatedAt: cd.ts}
		name, r, ok, err := a.display(c.Name)
		if err != nil {
			return err
		}
		rec.Filter = filterOf(r)
		s.Records++
		if !ok {
			// An unsafe or empty check name rejects only this record.
			rec.Filter.Status = filter.StatusRejected
			code := acquisition.GapInvalidMetadata
			if r.Status == filter.StatusRejected {
				code = r.Gap
			}
			a.gap(sc, code, 1)
			s.Rejected++
			a.records = append(a.records, record{created: cd.t, key: cd.key, entry: rec})
			continue
		}
		m.Name = name
		doc, err := canon.JSON(m)
		if err != nil {
			return err
		}
		rec.MetadataPath = "checks/" + cd.key + "/metadata.json"
		mf := rec.Filter
		a.addFile(rec.MetadataPath, "check_metadata", mediaJSON, doc, &mf)
		s.WithContent++
		if a.prof.LogSelected(m.Conclusion) {
			logs.Acquired++
			p, err := a.checkLog(c, cd.key)
			if err != nil {
				return err
			}
			if p != "" {
				rec.LogPath = p
				logs.Records++
				logs.WithContent++
			} else {
				logs.Omitted++
			}
		}
		a.records = append(a.records, record{created: cd.t, key: cd.key, entry: rec})
	}
	s.Omitted = s.Acquired - s.Records
	return nil
}

// checkLog stages the log of a retained check whose log the profile selects; it returns the
// log path, or "" with a check_logs gap when no log file can be produced.
func (a *asm) checkLog(c *acquisition.Check, key string) (string, error) {
	const sc = acquisition.ScopeCheckLogs
	if c.Log == nil {
		// The adapter did not deliver a selected log: never an empty history.
		a.gap(sc, acquisition.GapFetchFailed, 1)
		return "", nil
	}
	switch c.Log.Outcome {
	case acquisition.LogFetched:
	case acquisition.LogSourceTooLarge:
		a.gap(sc, acquisition.GapSourceTooLarge, 1)
		return "", nil
	case acquisition.LogFetchFailed:
		a.gap(sc, acquisition.GapFetchFailed, 1)
		return "", nil
	case acquisition.LogUnsupported:
		a.gap(sc, acquisition.GapUnsupported, 1)
		return "", nil
	default:
		a.gap(sc, acquisition.GapInvalidMetadata, 1)
		return "", nil
	}
	r, err := a.apply(c.Log.Content, filter.RoleLog, a.prof.Bounds.MaxLogBytes)
	if err != nil {
		return "", err
	}
	if a.cfg.ReleaseBodies {
		c.Log.Content = nil
	}
	if r.Status == filter.StatusRejected {
		a.gap(sc, r.Gap, 1)
		return "", nil
	}
	p := "checks/" + key + "/log.txt"
	f := filterOf(r)
	a.addFile(p, "check_log", mediaText, r.Output, &f)
	return p, nil
}
