package github

import (
	"context"
	"sort"

	gh "github.com/google/go-github/v66/github"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// ghostLogin is GitHub's placeholder for a deleted account. Its node ID is shared by every
// deleted author, so it is not the deleted actor's immutable ID: references to it are null.
const ghostLogin = "ghost"

// actorSeen is one referenced actor as the sources reported it.
type actorSeen struct {
	id    string
	login string
	bot   bool
	order int // first-reference order, for deterministic lookups
}

// note registers a referenced actor; a positive bot signal from any source wins.
func (r *run) note(id, login string, bot bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.actors[id]
	if !ok {
		s = &actorSeen{id: id, login: login, order: len(r.actors)}
		r.actors[id] = s
	}
	if s.login == "" {
		s.login = login
	}
	s.bot = s.bot || bot
}

// lookAhead starts the permission lookups of the humans refs name as soon as a source's
// records are final, while other sources are still being read. Not at concurrency 1: there
// the lookups follow every source, in acquisition order, as they always did. Only records the
// acquisition keeps are passed, so an early lookup is one resolveActors would make anyway
// (unless another source later reports the actor as a bot).
func (r *run) lookAhead(refs ...*acquisition.ActorRef) {
	if r.fan.Sequential() {
		return
	}
	var fs []*forge.Future[permission]
	for _, ref := range refs {
		if ref == nil || ref.ID == nil || ref.Login == nil || *ref.Login == "" {
			continue
		}
		r.mu.Lock()
		s, ok := r.actors[*ref.ID]
		bot := ok && s.bot
		r.mu.Unlock()
		if ok && !bot {
			fs = append(fs, r.c.permissionLookup(r.ctx, r.owner, r.name, *ref.Login))
		}
	}
	forge.StartAll(r.lookups, fs)
}

// refGQL maps a GraphQL Actor to a reference. ok is false when GitHub returned an ID outside
// the github_node_id mapping (the referencing record is invalid_metadata).
func (r *run) refGQL(a *gqlActor) (acquisition.ActorRef, bool) {
	if a == nil || a.Login == ghostLogin {
		return acquisition.ActorRef{}, true
	}
	return r.ref(a.ID, a.Login, a.Typename == "Bot")
}

// refREST maps a REST user object to a reference (type "Bot" is the positive bot signal).
func (r *run) refREST(u *gh.User) (acquisition.ActorRef, bool) {
	if u == nil || u.GetLogin() == ghostLogin {
		return acquisition.ActorRef{}, true
	}
	return r.ref(u.GetNodeID(), u.GetLogin(), u.GetType() == "Bot")
}

func (r *run) ref(id, login string, bot bool) (acquisition.ActorRef, bool) {
	var out acquisition.ActorRef
	if login != "" {
		l := login
		out.Login = &l
	}
	if id == "" {
		return out, true
	}
	if !validNodeID(id) {
		return out, false
	}
	i := id
	out.ID = &i
	r.note(id, login, bot)
	return out, true
}

// permission is one cached collaborator-permission result.
type permission struct {
	role string
	ok   bool
}

// resolveActors turns every referenced actor into an acquisition.Actor: bots (positively
// reported) are kind bot with no permission lookup (role bot is the assembler's decision);
// humans get their effective repository role from the collaborator permission endpoint,
// looked up once per run and concurrently. A 404 or any failure leaves role null and
// unverified, as the spec requires; consumers fail closed.
func (r *run) resolveActors(ctx context.Context) {
	// Only actors referenced by what the acquisition holds get a row: a record omitted as
	// invalid_metadata (or a thread whose read failed) must not leave an unreferenced actor.
	// The walk order is the acquisition's, so lookups and rows are deterministic.
	var seen []*actorSeen
	picked := map[string]bool{}
	pick := func(ref *acquisition.ActorRef) {
		if ref == nil || ref.ID == nil || picked[*ref.ID] {
			return
		}
		picked[*ref.ID] = true
		r.mu.Lock()
		known, ok := r.actors[*ref.ID]
		r.mu.Unlock()
		// The login is the one of the first reference in acquisition order, not of the first
		// reader to finish: REST and GraphQL spell a bot's login differently (renovate[bot],
		// renovate), and the readers run concurrently.
		s := &actorSeen{id: *ref.ID}
		if ok {
			s.bot = known.bot
		}
		if ref.Login != nil {
			s.login = *ref.Login
		} else if ok {
			s.login = known.login
		}
		seen = append(seen, s)
	}
	r.acq.EachActorRef(pick)
	results := make([]permission, len(seen))
	lookups := make([]*forge.Future[permission], len(seen))
	for i, s := range seen {
		if s.bot || s.login == "" {
			continue
		}
		r.needRequests("permissions", 1)
		lookups[i] = r.c.permissionLookup(ctx, r.owner, r.name, s.login)
	}
	forge.StartAll(r.lookups, lookups)
	for i, f := range lookups {
		if f != nil {
			results[i] = forge.Await(r.fan, f)
		}
	}
	actors := make([]acquisition.Actor, 0, len(seen))
	for i, s := range seen {
		a := acquisition.Actor{ID: s.id, Kind: acquisition.ActorHuman}
		if s.login != "" {
			l := s.login
			a.Login = &l
		}
		if s.bot {
			a.Kind = acquisition.ActorBot
		} else if results[i].ok {
			role := results[i].role
			a.Role, a.RoleVerified = &role, true
		}
		actors = append(actors, a)
	}
	sort.Slice(actors, func(i, j int) bool { return actors[i].ID < actors[j].ID })
	r.acq.Actors = actors
}

// permissionLookup is login's role lookup, cached for the client's lifetime (one run): made
// once however many references start or wait for it.
func (c *Client) permissionLookup(ctx context.Context, owner, repo, login string) *forge.Future[permission] {
	c.permMu.Lock()
	defer c.permMu.Unlock()
	if c.perms == nil {
		c.perms = map[string]*forge.Future[permission]{}
	}
	f, ok := c.perms[login]
	if !ok {
		f = forge.NewFuture(func() permission { return c.lookupPermission(ctx, owner, repo, login) })
		c.perms[login] = f
	}
	return f
}

// lookupPermission asks GitHub for login's effective role.
func (c *Client) lookupPermission(ctx context.Context, owner, repo, login string) permission {
	ctx = withEndpoint(ctx, "GET /repos/{owner}/{repo}/collaborators/{username}/permission")
	var lvl *gh.RepositoryPermissionLevel
	err := readPage(ctx, func() error {
		var err error
		lvl, _, err = c.rest.Repositories.GetPermissionLevel(ctx, owner, repo, login)
		return err
	})
	if err != nil {
		if !isNotFound(err) {
			c.log.Warn().Str("endpoint", "collaborator_permission").Msg("github: permission lookup failed; role left unverified")
		}
		return permission{}
	}
	var p permission
	p.role, p.ok = mapRole(lvl.GetRoleName(), lvl.GetPermission())
	return p
}
