package gitlab

import (
	"context"
	"net/http"
	"sort"
	"strconv"
	"sync"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// referencedActors lists every actor id the acquisition references (entity author, comment
// authors, thread resolvers, receipt authors, whose bot identity the assembler checks), unique, in numeric order, with the last login seen for it.
func referencedActors(a *acquisition.Acquisition) ([]string, map[string]*string) {
	logins := map[string]*string{}
	add := func(r acquisition.ActorRef) {
		if r.ID == nil {
			return
		}
		if _, seen := logins[*r.ID]; !seen || r.Login != nil {
			logins[*r.ID] = r.Login
		}
	}
	add(a.Entity.Author)
	for _, cm := range a.Comments {
		add(cm.Author)
	}
	for _, r := range a.AgentRuns {
		add(r.Author)
	}
	for _, t := range a.Threads {
		if t.ResolvedBy != nil {
			add(*t.ResolvedBy)
		}
	}
	ids := make([]string, 0, len(logins))
	for id := range logins {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, logins
}

// actorOutcome is one actor lookup's result and the gap it contributes.
type actorOutcome struct {
	actor acquisition.Actor
	gap   string
}

// glRun is one acquisition's fan-out: the Fanout bounding its goroutines and the lookups
// (actors by id, job traces by job id) started as soon as a record names them, each made once.
type glRun struct {
	c       *Client
	pid     any
	fan     *forge.Fanout
	lookups *forge.Batch

	mu     sync.Mutex
	actors map[string]*forge.Future[actorOutcome]
	traces map[int64]*forge.Future[acquisition.Log]
}

func (c *Client) newRun(pid any) *glRun {
	fan := forge.NewFanout(c.opts.Concurrency)
	return &glRun{c: c, pid: pid, fan: fan, lookups: fan.Batch(),
		actors: map[string]*forge.Future[actorOutcome]{}, traces: map[int64]*forge.Future[acquisition.Log]{}}
}

// actor returns id's lookup, created (not started) on first use. The lookup runs without a
// login: the login every reference agrees on is filled in by actors, so an early lookup and
// a late one answer the same.
func (rn *glRun) actor(ctx context.Context, id string) *forge.Future[actorOutcome] {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	f, ok := rn.actors[id]
	if !ok {
		f = forge.NewFuture(func() actorOutcome { return rn.c.actor(ctx, rn.pid, id, nil) })
		rn.actors[id] = f
	}
	return f
}

// trace returns job id's trace lookup, created (not started) on first use.
func (rn *glRun) trace(ctx context.Context, id int64, maxBytes int) *forge.Future[acquisition.Log] {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	f, ok := rn.traces[id]
	if !ok {
		f = forge.NewFuture(func() acquisition.Log { return rn.c.Trace(ctx, rn.pid, id, maxBytes) })
		rn.traces[id] = f
	}
	return f
}

// lookAhead starts ref's actor lookup now, unless the run is sequential (its lookups are then
// made after every source, in id order, as they always were).
func (rn *glRun) lookAhead(ctx context.Context, ref acquisition.ActorRef) {
	if rn.fan.Sequential() || ref.ID == nil {
		return
	}
	rn.actor(ctx, *ref.ID).Start(rn.lookups)
}

// lookAheadAll starts the lookups of every actor a part's records reference.
func (rn *glRun) lookAheadAll(ctx context.Context, a *acquisition.Acquisition) {
	if rn.fan.Sequential() {
		return
	}
	ids, _ := referencedActors(a)
	fs := make([]*forge.Future[actorOutcome], len(ids))
	for i, id := range ids {
		fs[i] = rn.actor(ctx, id)
	}
	forge.StartAll(rn.lookups, fs)
}

// traceAhead starts the traces of a pipeline's jobs whose logs the profile selects, as soon
// as the pipeline's jobs are read (not in a sequential run).
func (rn *glRun) traceAhead(ctx context.Context, profile acquisition.Profile, jobs []*gl.Job, sha, head string) {
	if rn.fan.Sequential() {
		return
	}
	var fs []*forge.Future[acquisition.Log]
	for _, j := range jobs {
		if j == nil {
			continue
		}
		if ck, err := mapJob(j, sha, head); err == nil && profile.LogSelected(ck.Conclusion) {
			fs = append(fs, rn.trace(ctx, j.ID, profile.Bounds.MaxSourceBytes))
		}
	}
	forge.StartAll(rn.lookups, fs)
}

// actors resolves every referenced actor: the users API decides the kind (bot only on a
// positive `bot: true`), and members/all/:user_id (inherited and shared membership included)
// gives a human's effective access level. Lookups not started yet start now; the answers
// are taken in id order.
func (c *Client) actors(ctx context.Context, pid any, a *acquisition.Acquisition, rn *glRun) {
	ids, logins := referencedActors(a)
	lookups := make([]*forge.Future[actorOutcome], len(ids))
	for i, id := range ids {
		lookups[i] = rn.actor(ctx, id)
	}
	forge.StartAll(rn.lookups, lookups)
	for i, f := range lookups {
		r := forge.Await(rn.fan, f)
		if r.actor.Login == nil {
			r.actor.Login = logins[ids[i]]
		}
		a.Actors = append(a.Actors, r.actor)
		if r.gap != "" {
			a.Outcomes.Add(acquisition.ScopeActors, r.gap, 1)
		}
	}
}

// actor resolves one actor. Outcomes (spec, state/actors.json):
//   - users API bot: true → kind bot, no role (the assembler writes role: bot), no
//     membership lookup;
//   - membership found with a mapped access level → verified role;
//   - membership 404 (not a member, directly or inherited) → role null, unverified, no gap;
//   - a member whose state is not active (blocked, awaiting) → role null, unverified;
//   - an unmapped access level → role null, unverified, actors invalid_metadata;
//   - any other lookup failure → role null, unverified, actors fetch_failed.
func (c *Client) actor(ctx context.Context, pid any, id string, login *string) actorOutcome {
	out := actorOutcome{actor: acquisition.Actor{ID: id, Login: login, Kind: acquisition.ActorHuman}}
	uid, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		out.gap = acquisition.GapInvalidMetadata
		return out
	}
	u, _, err := c.Services().Users.Get(ctx, uid)
	switch {
	case err != nil && statusOf(err) == http.StatusNotFound:
		// A deleted or hidden user: no bot evidence and no membership to verify.
		return out
	case err != nil:
		c.opts.Log.Warn().Str("actor_id", id).Int("status", statusOf(err)).Msg("user lookup failed")
		out.gap = acquisition.GapFetchFailed
		return out
	}
	if u.ID != uid {
		// The users API answered about another account: no kind or role is known for this one.
		out.gap = acquisition.GapInvalidMetadata
		return out
	}
	if u.Username != "" {
		name := u.Username
		out.actor.Login = &name
	}
	if u.Bot {
		out.actor.Kind = acquisition.ActorBot
		return out
	}
	m, err := c.Services().Members.Inherited(ctx, pid, uid)
	switch {
	case err != nil && statusOf(err) == http.StatusNotFound:
		return out
	case err != nil:
		c.opts.Log.Warn().Str("actor_id", id).Int("status", statusOf(err)).Msg("membership lookup failed")
		out.gap = acquisition.GapFetchFailed
		return out
	}
	if m.ID != uid {
		// The answer is about another account: nothing about this actor was verified.
		out.gap = acquisition.GapInvalidMetadata
		return out
	}
	// `state` is the user's account state (active, blocked, deactivated …) and
	// `membership_state` the membership's (active, or awaiting a seat/invitation approval):
	// only an active user with an active membership holds the access level it reports.
	if (m.State != "" && m.State != "active") || (m.MembershipState != "" && m.MembershipState != "active") {
		return out
	}
	if m.AccessLevel == nil {
		// A membership without an access level says nothing: not "No access" (0).
		out.gap = acquisition.GapInvalidMetadata
		return out
	}
	role, ok := Role(*m.AccessLevel)
	if !ok {
		out.gap = acquisition.GapInvalidMetadata
		return out
	}
	out.actor.Role = &role
	out.actor.RoleVerified = true
	return out
}
