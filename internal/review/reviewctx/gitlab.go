package reviewctx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	gl "gitlab.com/gitlab-org/api/client-go"

	glforge "github.com/forgectx/forgectx/internal/forge/gitlab"
	"github.com/forgectx/forgectx/internal/snapshot/canon"
)

// Bounds of the GitLab edge that the policy does not set.
const (
	maxDiscussionPages = 5  // 500 threads at 100 per page
	maxPolicyTreePages = 3  // entries of .opencodereview/
	maxPipelines       = 20 // pipelines by SHA (one page)
	maxJobPages        = 3  // jobs per pipeline, retried included
	maxTitleBytes      = 1024
	maxDescBytes       = 16384
	maxLabels          = 32
	maxLabelBytes      = 128
	maxBranchBytes     = 255
)

// GitLab is the GitLab edge for one exact project and merge request.
type GitLab struct {
	svc     *glforge.Services // the forge layer's GitLab services: every read goes through them
	project string            // numeric ID or full path, as validated by NewGitLab
	iid     int64
	perPage int64
	now     func() time.Time
	mr      *gl.MergeRequest // the first read
	bot     *gl.User         // the live bot: the token's own user
	// seen are the display identities read so far (Identities).
	seen      map[string]bool
	seenNames map[string]bool
}

// see records one account's display identity for the context DLP.
func (g *GitLab) see(username, name string) {
	if g.seen == nil {
		g.seen, g.seenNames = map[string]bool{}, map[string]bool{}
	}
	if username != "" {
		g.seen[username] = true
	}
	if name != "" {
		g.seenNames[name] = true
	}
}

// Identities returns the display identities read so far, sorted.
func (g *GitLab) Identities() Identities {
	var ids Identities
	for u := range g.seen {
		ids.Usernames = append(ids.Usernames, u)
	}
	for n := range g.seenNames {
		ids.Names = append(ids.Names, n)
	}
	sort.Strings(ids.Usernames)
	sort.Strings(ids.Names)
	return ids
}

var projectPathRE = regexp.MustCompile(`^[A-Za-z0-9_.][A-Za-z0-9_.\-]*(/[A-Za-z0-9_.][A-Za-z0-9_.\-]*)+$`)

// NewGitLab validates project (a numeric ID or a namespace/project path) and iid and builds
// the edge.
func NewGitLab(o GitLabOptions, project string, iid int64, now func() time.Time) (*GitLab, error) {
	if n, err := strconv.ParseInt(project, 10, 64); err == nil {
		if n <= 0 || strconv.FormatInt(n, 10) != project {
			return nil, fmt.Errorf("reviewctx: project: %q is not a positive canonical project ID", project)
		}
	} else if !projectPathRE.MatchString(project) || strings.Contains(project, "..") {
		return nil, fmt.Errorf("reviewctx: project: %q is neither a project ID nor a namespace/project path", project)
	}
	if iid <= 0 {
		return nil, fmt.Errorf("reviewctx: merge request: IID %d must be positive", iid)
	}
	_, svc, err := ConnectGitLab(o, "")
	if err != nil {
		return nil, err
	}
	pp := o.PerPage
	if pp <= 0 || pp > 100 {
		pp = 100
	}
	if now == nil {
		now = time.Now
	}
	return &GitLab{svc: svc, project: project, iid: iid, perPage: pp, now: now}, nil
}

var shaRE = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

func (g *GitLab) readMR(ctx context.Context) (*gl.MergeRequest, error) {
	mr, _, err := g.svc.MergeRequests.Get(ctx, g.project, g.iid)
	if err != nil {
		return nil, fmt.Errorf("reviewctx: gitlab: merge request: %w", err)
	}
	if mr.IID != g.iid {
		return nil, fmt.Errorf("reviewctx: gitlab: merge request: answered IID %d, asked %d", mr.IID, g.iid)
	}
	if id, err := strconv.ParseInt(g.project, 10, 64); err == nil && mr.ProjectID != id {
		return nil, fmt.Errorf("reviewctx: gitlab: merge request: belongs to project %d, asked %d", mr.ProjectID, id)
	}
	if !shaRE.MatchString(mr.SHA) || mr.TargetBranch == "" {
		return nil, errors.New("reviewctx: gitlab: merge request: head sha or target branch malformed")
	}
	return mr, nil
}

// Target reads the merge request, then the target branch as GitLab reports it (protected
// flag and commit), capturing the protected-target SHA before anything else is read.
func (g *GitLab) Target(ctx context.Context) (Target, error) {
	mr, err := g.readMR(ctx)
	if err != nil {
		return Target{}, err
	}
	g.mr = mr
	if mr.Author != nil {
		g.see(mr.Author.Username, mr.Author.Name)
	}
	br, _, err := g.svc.Repository.Branch(ctx, g.project, mr.TargetBranch)
	if err != nil {
		return Target{}, fmt.Errorf("reviewctx: gitlab: target branch: %w", err)
	}
	if br.Name != mr.TargetBranch || br.Commit == nil || !shaRE.MatchString(br.Commit.ID) {
		return Target{}, errors.New("reviewctx: gitlab: target branch: name or commit malformed")
	}
	return Target{Protected: br.Protected, TargetBranch: br.Name, TargetSHA: br.Commit.ID, ReviewedHead: mr.SHA, ProjectID: mr.ProjectID, IID: mr.IID}, nil
}

// PolicyBlob lists .opencodereview at sha to learn the entry's type and mode, then reads the
// blob by its ID within maxPolicyBytes. Only a regular blob (100644 or 100755) is a policy.
func (g *GitLab) PolicyBlob(ctx context.Context, sha string) ([]byte, error) {
	if !shaRE.MatchString(sha) {
		return nil, policyErr(errors.New("target sha malformed"))
	}
	dir, name := ".opencodereview", "review-context-policy.json"
	tree, err := g.tree(ctx, dir, sha)
	if err != nil {
		var er *gl.ErrorResponse
		if errors.Is(err, gl.ErrNotFound) || (errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == 404) {
			return nil, policyErr(fmt.Errorf("%s: missing at the protected target SHA", policyPath))
		}
		return nil, fmt.Errorf("reviewctx: gitlab: policy tree: %w", err)
	}
	if tree.NextDeclared {
		return nil, policyErr(fmt.Errorf("%s: .opencodereview has more entries than the listing bound", policyPath))
	}
	var entry *gl.TreeNode
	for _, n := range tree.Rows {
		if n != nil && n.Name == name && n.Path == policyPath {
			if entry != nil {
				return nil, policyErr(fmt.Errorf("%s: listed twice", policyPath))
			}
			entry = n
		}
	}
	switch {
	case entry == nil:
		return nil, policyErr(fmt.Errorf("%s: missing at the protected target SHA", policyPath))
	case entry.Type == "commit" || entry.Mode == "160000":
		return nil, policyErr(fmt.Errorf("%s: is a submodule, not a regular blob", policyPath))
	case entry.Mode == "120000":
		return nil, policyErr(fmt.Errorf("%s: is a symlink, not a regular blob", policyPath))
	case entry.Type != "blob" || (entry.Mode != "100644" && entry.Mode != "100755"):
		return nil, policyErr(fmt.Errorf("%s: is not a regular blob (type %q mode %q)", policyPath, entry.Type, entry.Mode))
	case !shaRE.MatchString(entry.ID):
		return nil, policyErr(fmt.Errorf("%s: blob id malformed", policyPath))
	}
	b, err := g.svc.Repository.Blob(ctx, g.project, entry.ID, maxPolicyBytes)
	if errors.Is(err, glforge.ErrOverBound) {
		return nil, policyErr(fmt.Errorf("%s: over the %d-byte (64 KiB) bound", policyPath, maxPolicyBytes))
	}
	if err != nil {
		return nil, fmt.Errorf("reviewctx: gitlab: policy blob: %w", err)
	}
	return b, nil
}

// tree lists dir at sha within maxPolicyTreePages pages (a next page beyond them is
// NextDeclared: more entries than the bound).
func (g *GitLab) tree(ctx context.Context, dir, sha string) (glforge.List[*gl.TreeNode], error) {
	return g.svc.Repository.Tree(ctx, g.project, &gl.ListTreeOptions{ListOptions: gl.ListOptions{Page: 1, PerPage: g.perPage}, Path: &dir, Ref: &sha},
		glforge.ListOptions[*gl.TreeNode]{MaxPages: maxPolicyTreePages})
}

func mrMetadata(mr *gl.MergeRequest) Metadata {
	return Metadata{Title: mr.Title, Description: mr.Description, Labels: append([]string{}, mr.Labels...), SourceBranch: mr.SourceBranch}
}

// Metadata returns the first read's metadata projection.
func (g *GitLab) Metadata(context.Context) (Metadata, error) {
	if g.mr == nil {
		return Metadata{}, errors.New("reviewctx: gitlab: Metadata before Target")
	}
	return mrMetadata(g.mr), nil
}

// BotUsername returns the live bot's username (GET /user, read once per acquisition).
func (g *GitLab) BotUsername(ctx context.Context) (string, error) {
	u, err := g.liveBot(ctx)
	if err != nil {
		return "", err
	}
	return u.Username, nil
}

// Recheck re-reads the merge request for the twice-read rule.
func (g *GitLab) Recheck(ctx context.Context, t Target, m Metadata) (bool, bool, error) {
	mr, err := g.readMR(ctx)
	if err != nil {
		return false, false, err
	}
	a, _ := canon.JSON(m)
	b, _ := canon.JSON(mrMetadata(mr))
	return mr.SHA == t.ReviewedHead && mr.TargetBranch == t.TargetBranch, string(a) == string(b), nil
}

func (g *GitLab) liveBot(ctx context.Context) (*gl.User, error) {
	if g.bot != nil {
		return g.bot, nil
	}
	u, _, err := g.svc.Users.Current(ctx)
	if err != nil {
		return nil, fmt.Errorf("reviewctx: gitlab: live bot: %w", err)
	}
	if u.ID <= 0 || u.Username == "" {
		return nil, errors.New("reviewctx: gitlab: live bot identity malformed")
	}
	g.bot = u
	g.see(u.Username, u.Name)
	return u, nil
}

// automationRE matches GitLab's project and group access-token bot users and the
// instance's own bots; anything else with a valid identity is a user.
// mentionRE matches a GitLab @username mention (not an e-mail address: no word character
// before the @).
var mentionRE = regexp.MustCompile(`@([A-Za-z0-9_](?:[A-Za-z0-9_.\-]*[A-Za-z0-9_])?)`)

// replaceMentions rewrites every @username mention (an @ not preceded by a word character,
// dot or hyphen, so e-mail addresses are left to DLP) through f.
func replaceMentions(s string, f func(username string) string) string {
	var b strings.Builder
	last := 0
	for _, m := range mentionRE.FindAllStringSubmatchIndex(s, -1) {
		if m[0] > 0 {
			c := s[m[0]-1]
			if c == '.' || c == '-' || c == '_' || (c >= '0' && c <= '9') || (c|0x20 >= 'a' && c|0x20 <= 'z') {
				continue
			}
		}
		b.WriteString(s[last:m[0]])
		b.WriteString(f(s[m[2]:m[3]]))
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

var automationRE = regexp.MustCompile(`^((project|group)_[0-9]+_bot(_[0-9a-f]{32})?|alert-bot|support-bot|gitlab-bot|ghost)$`)

// classify returns the account class of a note, or "" for an invalid identity.
func classify(n *gl.Note, bot *gl.User) string {
	if n.Author.ID <= 0 || n.Author.Username == "" || n.CreatedAt == nil {
		return ""
	}
	switch {
	case n.System:
		return classSystem
	case n.Author.ID == bot.ID:
		return classToolkitBot
	case automationRE.MatchString(n.Author.Username):
		return classAutomation
	}
	return classUser
}

func supportedNote(n *gl.Note) bool {
	switch n.Type {
	case "", gl.DiscussionNote, gl.DiffNote:
	default:
		return false
	}
	return n.Attachment == "" && !n.Internal && (n.NoteableType == "" || n.NoteableType == "MergeRequest")
}

// snapshotDigest is the identity of the ordered discussion snapshot: every field the
// selection or the record text depends on.
func snapshotDigest(ds []*gl.Discussion, nextDeclared bool) string {
	type note struct {
		ID, Author                   int64
		Username, Type, Body         string
		System, Resolvable, Resolved bool
		Internal                     bool
		Created, Updated             string
		Head                         string
	}
	type disc struct {
		ID    string
		Notes []note
	}
	out := struct {
		D    []disc
		Next bool
	}{Next: nextDeclared}
	for _, d := range ds {
		if d == nil {
			out.D = append(out.D, disc{})
			continue
		}
		x := disc{ID: d.ID}
		for _, n := range d.Notes {
			if n == nil {
				x.Notes = append(x.Notes, note{})
				continue
			}
			y := note{ID: n.ID, Author: n.Author.ID, Username: n.Author.Username, Type: string(n.Type), Body: n.Body, System: n.System, Resolvable: n.Resolvable, Resolved: n.Resolved, Internal: n.Internal}
			if n.CreatedAt != nil {
				y.Created = n.CreatedAt.UTC().Format(time.RFC3339Nano)
			}
			if n.UpdatedAt != nil {
				y.Updated = n.UpdatedAt.UTC().Format(time.RFC3339Nano)
			}
			if n.Position != nil {
				y.Head = n.Position.HeadSHA
			}
			x.Notes = append(x.Notes, y)
		}
		out.D = append(out.D, x)
	}
	b, _ := json.Marshal(out)
	return canon.SHA256Hex(b)
}

// selection is the outcome of applying both selectors to one snapshot.
type selection struct {
	generic, remediation []selectedThread
	gState, rState       SourceState
}

type selectedThread struct {
	d           *gl.Discussion
	root        *gl.Note
	replies     []*gl.Note
	classes     []string // per note in notes order (root first)
	fingerprint string   // remediation only
	rootText    string   // remediation root without marker
	resolved    bool
	outdated    bool
	omitted     int    // replies omitted by a bound
	head        string // the reviewed head (a diff note anchored elsewhere is outdated)
}

func (g *GitLab) selectThreads(ds []*gl.Discussion, generic, remediation *Discussions, head string, bot *gl.User) selection {
	var s selection
	if generic != nil {
		s.gState = newState(SourceDiscussions, generic.Required)
	}
	if remediation != nil {
		s.rState = newState(SourceRemediation, remediation.Required)
	}
	now := g.now()
	var items [2]int // admitted items: generic, remediation
	for _, d := range ds {
		classes, reason := noteClasses(d, bot)
		if reason != "" {
			degradeBoth(&s, generic, remediation, reason)
			continue
		}
		admitThread(&s, d, classes, generic, remediation, head, now, &items)
	}
	return s
}

// noteClasses classifies every note of d (root first); reason is the degradation when the
// discussion has no identity, an unclassifiable note or an unsupported note.
func noteClasses(d *gl.Discussion, bot *gl.User) ([]string, string) {
	if d == nil || len(d.Notes) == 0 || d.ID == "" {
		return nil, "invalid_identity"
	}
	valid, supported := true, true
	classes := make([]string, len(d.Notes))
	for i, n := range d.Notes {
		if n == nil {
			valid = false
			break
		}
		classes[i] = classify(n, bot)
		if classes[i] == "" {
			valid = false
		}
		if !supportedNote(n) {
			supported = false
		}
	}
	switch {
	case !valid:
		return nil, "invalid_identity"
	case !supported:
		return nil, "unsupported_note"
	}
	return classes, ""
}

// admitThread applies the matching selector (remediation for a verified bot root when that
// selector is on, else generic) and its thread, item and reply bounds to one discussion.
func admitThread(s *selection, d *gl.Discussion, classes []string, generic, remediation *Discussions, head string, now time.Time, items *[2]int) {
	root := d.Notes[0]
	resolved := false
	for _, n := range d.Notes {
		if n.Resolvable && n.Resolved {
			resolved = true
		}
	}
	outdated := root.Type == gl.DiffNote && root.Position != nil && root.Position.HeadSHA != head
	fp, rest, marked := ParseMarker(root.Body)
	// A verified root is remediation whenever that selector is on; only without it can
	// the bot's own note be a generic (toolkit_bot) discussion.
	isRemediation := marked && classes[0] == classToolkitBot && remediation != nil
	sel, st, n, list := generic, &s.gState, &items[0], &s.generic
	if isRemediation {
		sel, st, n, list = remediation, &s.rState, &items[1], &s.remediation
	}
	if sel == nil || !threadWanted(sel, isRemediation, classes[0], resolved, outdated, root, now) {
		return
	}
	if len(*list) >= sel.MaxThreads {
		degrade(st, Partial, "thread_bound")
		st.Omitted++
		return
	}
	if *n+1 > sel.MaxItems {
		degrade(st, Partial, "item_bound")
		st.Omitted++
		return
	}
	*n++
	t := selectedThread{d: d, root: root, fingerprint: fp, rootText: rest, resolved: resolved, outdated: outdated, classes: []string{classes[0]}, head: head}
	allowed := classSet(sel.AccountClasses)
	for i, note := range d.Notes[1:] {
		c := classes[i+1]
		if !allowed[c] || (isRemediation && c == classToolkitBot) {
			continue
		}
		reason := ""
		switch {
		case len(t.replies) >= sel.MaxRepliesPerThread:
			reason = "reply_bound"
		case *n+1 > sel.MaxItems:
			reason = "item_bound"
		}
		if reason != "" {
			t.omitted++
			degrade(st, Partial, reason)
			continue
		}
		*n++
		t.replies = append(t.replies, note)
		t.classes = append(t.classes, c)
	}
	*list = append(*list, t)
}

// threadWanted applies a selector's account-class, resolved, outdated and age filters to a
// thread's root.
func threadWanted(sel *Discussions, isRemediation bool, rootClass string, resolved, outdated bool, root *gl.Note, now time.Time) bool {
	if !isRemediation && !classSet(sel.AccountClasses)[rootClass] {
		return false
	}
	if (resolved && !sel.IncludeResolved) || (outdated && !sel.IncludeOutdated) {
		return false
	}
	return !(sel.MaxAgeSeconds > 0 && root.CreatedAt.Before(now.Add(-time.Duration(sel.MaxAgeSeconds)*time.Second)))
}

func degradeBoth(s *selection, generic, remediation *Discussions, reason string) {
	if generic != nil {
		degrade(&s.gState, Partial, reason)
		s.gState.Omitted++
	}
	if remediation != nil {
		degrade(&s.rState, Partial, reason)
	}
}

// Discussions reads the ordered discussion snapshot twice with the same bounded pagination
// (stopping once both thread bounds are filled) and admits it only when both reads have the
// same identity and digest.
func (g *GitLab) Discussions(ctx context.Context, generic, remediation *Discussions, head string) (SourceResult, SourceResult) {
	var gr, rr SourceResult
	if generic != nil {
		gr.State = newState(SourceDiscussions, generic.Required)
	}
	if remediation != nil {
		rr.State = newState(SourceRemediation, remediation.Required)
	}
	fail := func(c Completeness, reason string) (SourceResult, SourceResult) {
		if generic != nil {
			degrade(&gr.State, c, reason)
		}
		if remediation != nil {
			degrade(&rr.State, c, reason)
		}
		return gr, rr
	}
	bot, err := g.liveBot(ctx)
	if err != nil {
		return fail(Unavailable, "live_bot_unavailable")
	}
	first, c, reason := g.readDiscussionsTwice(ctx, generic, remediation, head, bot)
	if reason != "" {
		return fail(c, reason)
	}
	for _, d := range first.Rows {
		for _, n := range d.Notes {
			if n != nil {
				g.see(n.Author.Username, n.Author.Name)
			}
		}
	}
	s := g.selectThreads(first.Rows, generic, remediation, head, bot)
	if generic != nil {
		gr.State = s.gState
		if first.NextDeclared {
			degrade(&gr.State, Partial, "page_omitted")
		}
	}
	if remediation != nil {
		rr.State = s.rState
		if first.NextDeclared {
			degrade(&rr.State, Partial, "page_omitted")
		}
	}
	names := newPseudonyms(s)
	for i, t := range s.generic {
		gr.Drafts = append(gr.Drafts, g.genericDraft(i, t, generic, bot, names))
	}
	for _, t := range s.remediation {
		rr.Drafts = append(rr.Drafts, g.remediationDraft(t, bot, names))
	}
	return gr, rr
}

// readDiscussionsTwice reads the discussion snapshot twice; a failed read is unavailable and
// two reads that differ are mutated (reason names which).
func (g *GitLab) readDiscussionsTwice(ctx context.Context, generic, remediation *Discussions, head string, bot *gl.User) (glforge.List[*gl.Discussion], Completeness, string) {
	filled := func(ds []*gl.Discussion) bool {
		s := g.selectThreads(ds, generic, remediation, head, bot)
		return (generic == nil || len(s.generic) >= generic.MaxThreads) && (remediation == nil || len(s.remediation) >= remediation.MaxThreads)
	}
	read := func() (glforge.List[*gl.Discussion], error) {
		return g.svc.Discussions.ListMergeRequest(ctx, g.project, g.iid,
			&gl.ListMergeRequestDiscussionsOptions{ListOptions: gl.ListOptions{Page: 1, PerPage: g.perPage}},
			glforge.ListOptions[*gl.Discussion]{MaxPages: maxDiscussionPages, Enough: filled})
	}
	first, err := read()
	if err != nil {
		return first, Unavailable, "read_failed"
	}
	second, err := read()
	if err != nil {
		return first, Unavailable, "read_failed"
	}
	if first.Pages != second.Pages || snapshotDigest(first.Rows, first.NextDeclared) != snapshotDigest(second.Rows, second.NextDeclared) {
		return first, Mutated, "snapshot_changed"
	}
	return first, Complete, ""
}

// pseudonyms are run-local display names, assigned in snapshot order over the admitted notes.
type pseudonyms struct {
	byID       map[int64]string
	byUsername map[string]string
}

// newPseudonyms assigns pseudonyms over the whole admitted snapshot first, so that a mention
// of a participant who speaks later maps to the same pseudonym.
func newPseudonyms(s selection) *pseudonyms {
	p := &pseudonyms{byID: map[int64]string{}, byUsername: map[string]string{}}
	all := append(append([]selectedThread{}, s.generic...), s.remediation...)
	for _, t := range all {
		for j, n := range append([]*gl.Note{t.root}, t.replies...) {
			p.name(n, t.classes[j])
		}
	}
	for _, t := range all {
		for j, n := range append([]*gl.Note{t.root}, t.replies...) {
			p.byUsername[strings.ToLower(n.Author.Username)] = p.name(n, t.classes[j])
		}
	}
	return p
}

func (p *pseudonyms) name(n *gl.Note, class string) string {
	switch class {
	case classSystem:
		return "system"
	case classToolkitBot:
		return "toolkit"
	}
	if name, ok := p.byID[n.Author.ID]; ok {
		return name
	}
	name := "participant-" + strconv.Itoa(len(p.byID)+1)
	p.byID[n.Author.ID] = name
	return name
}

// unmention treats mentions as display identity too: a known participant becomes its
// pseudonym, anyone else "@someone". The live bot's own mentions were removed with the
// commands.
func (p *pseudonyms) unmention(s string) string {
	return replaceMentions(s, func(u string) string {
		if name, ok := p.byUsername[strings.ToLower(u)]; ok {
			return "@" + name
		}
		return "@someone"
	})
}

func (g *GitLab) genericDraft(i int, t selectedThread, generic *Discussions, bot *gl.User, names *pseudonyms) Draft {
	var parts []string
	notes := append([]*gl.Note{t.root}, t.replies...)
	for j, n := range notes {
		body, _ := stripCommands(n.Body, bot.Username)
		parts = append(parts, "["+names.name(n, t.classes[j])+" "+t.classes[j]+"] "+names.unmention(body))
	}
	state := "open"
	if t.resolved {
		state = "resolved"
	}
	if t.outdated {
		state += ",outdated"
	}
	return Draft{
		Source: SourceDiscussions, ResourceClass: resourceDiscussion, Mutable: true, Discoverable: true,
		CanonicalObject: g.object("discussions/" + t.d.ID),
		Version:         threadVersion(t),
		Projections:     *generic.Projections,
		Content: Content{
			Descriptor: fmt.Sprintf("merge request discussion %d", i+1),
			State:      state,
			Text:       strings.Join(parts, "\n\n"),
			Count:      len(notes),
		},
	}
}

func (g *GitLab) remediationDraft(t selectedThread, bot *gl.User, names *pseudonyms) Draft {
	anchor := "none"
	if t.root.Type == gl.DiffNote {
		anchor = "current"
		if t.outdated {
			anchor = "outdated"
		}
	}
	th := &Thread{Fingerprint: t.fingerprint, AnchorState: anchor, Resolved: t.resolved, Replies: []Reply{}, Completeness: Complete, OmittedReplies: t.omitted}
	th.Root, _ = stripCommands(t.rootText, bot.Username)
	th.Root = names.unmention(th.Root)
	for j, n := range t.replies {
		body, cmds := stripCommands(n.Body, bot.Username)
		if cmds > 0 && body == "" {
			th.OmittedReplies++
			continue
		}
		th.Replies = append(th.Replies, Reply{Author: names.name(n, t.classes[j+1]), Class: t.classes[j+1], Text: names.unmention(body)})
	}
	th.ReplyCount = len(th.Replies)
	th.ResolvedCount, th.OutdatedCount = noteCounts(t.root, t.head)
	for _, n := range t.replies {
		r, o := noteCounts(n, t.head)
		th.ResolvedCount += r
		th.OutdatedCount += o
	}
	if t.omitted > 0 {
		th.Completeness = Partial
	}
	return Draft{
		Source: SourceRemediation, ResourceClass: ResourceRemediation, Mutable: true,
		CanonicalObject: g.object("discussions/" + t.d.ID),
		Version:         threadVersion(t),
		Projections:     Projections{Retrieve: []string{"descriptor", "state", "text"}, Model: []string{"descriptor", "state", "text"}, Publish: []string{}, Retain: []string{"state"}},
		Content:         Content{Thread: th},
	}
}

// noteCounts is 1/0 for a resolved note and 1/0 for a diff note anchored to another head.
func noteCounts(n *gl.Note, head string) (resolved, outdated int) {
	if n.Resolvable && n.Resolved {
		resolved = 1
	}
	if n.Type == gl.DiffNote && n.Position != nil && n.Position.HeadSHA != head {
		outdated = 1
	}
	return resolved, outdated
}

func (g *GitLab) object(suffix string) string {
	return "gitlab/projects/" + url.PathEscape(g.project) + "/merge_requests/" + strconv.FormatInt(g.iid, 10) + "/" + suffix
}

func threadVersion(t selectedThread) string {
	return "sha256:" + snapshotDigest([]*gl.Discussion{t.d}, false)
}

// CI job status mapping onto the closed set.
func ciStatus(s string) (string, bool) {
	switch s {
	case "success":
		return "passed", true
	case "failed":
		return "failed", true
	case "skipped", "manual":
		return "skipped", true
	case "canceled", "canceling":
		return "canceled", true
	case "created", "pending", "running", "waiting_for_resource", "preparing", "scheduled", "waiting_for_callback":
		return "unknown", true
	}
	return "", false
}

type ciJob struct {
	Pipeline, ID int64
	Name, Status string
	AllowFailure bool
	Finished     string
}

// readCI reads pipelines by the exact SHA and every pipeline's jobs (retried included),
// bounded, into a normalized snapshot. It returns reasons for partial reads.
func (g *GitLab) readCI(ctx context.Context, head string) ([]ciJob, []string, error) {
	var reasons []string
	sha, orderBy, sortDir := head, "id", "desc"
	pipes, err := g.svc.Pipelines.ListProject(ctx, g.project, &gl.ListProjectPipelinesOptions{ListOptions: gl.ListOptions{PerPage: maxPipelines}, SHA: &sha, OrderBy: &orderBy, Sort: &sortDir},
		glforge.ListOptions[*gl.PipelineInfo]{MaxPages: 1})
	if err != nil {
		return nil, nil, err
	}
	if pipes.NextDeclared {
		reasons = append(reasons, "pipeline_page_omitted")
	}
	var jobs []ciJob
	for _, p := range pipes.Rows {
		if p == nil || p.ID <= 0 {
			reasons = append(reasons, "malformed")
			continue
		}
		if p.SHA != head {
			return nil, nil, errDifferentRevision
		}
		pid := p.ID
		includeRetried := true
		r, err := g.svc.Pipelines.ListJobs(ctx, g.project, pid, &gl.ListJobsOptions{ListOptions: gl.ListOptions{Page: 1, PerPage: g.perPage}, IncludeRetried: &includeRetried},
			glforge.ListOptions[*gl.Job]{MaxPages: maxJobPages})
		if err != nil {
			return nil, nil, err
		}
		if r.NextDeclared {
			reasons = append(reasons, "job_page_omitted")
		}
		for _, j := range r.Rows {
			if j == nil || j.ID <= 0 || j.Name == "" {
				reasons = append(reasons, "malformed")
				continue
			}
			if j.Pipeline.ID != pid || (j.Pipeline.Sha != "" && j.Pipeline.Sha != head) || (j.Commit != nil && j.Commit.ID != "" && j.Commit.ID != head) {
				return nil, nil, errDifferentRevision
			}
			st, ok := ciStatus(j.Status)
			if !ok {
				reasons = append(reasons, "malformed")
				continue
			}
			cj := ciJob{Pipeline: pid, ID: j.ID, Name: j.Name, Status: st, AllowFailure: j.AllowFailure}
			if j.FinishedAt != nil {
				cj.Finished = j.FinishedAt.UTC().Format(time.RFC3339)
			} else if st != "unknown" && st != "skipped" {
				reasons = append(reasons, "malformed")
				continue
			}
			jobs = append(jobs, cj)
		}
	}
	return jobs, reasons, nil
}

var errDifferentRevision = errors.New("different revision")

// readCITwice reads the exact-head CI snapshot twice. It returns the first read, its partial
// reasons and its canonical bytes (the records' version), or the completeness and reason
// that make the source unavailable or mutated.
func (g *GitLab) readCITwice(ctx context.Context, head string) ([]ciJob, []string, []byte, Completeness, string) {
	var reads [2][]byte
	var first []ciJob
	var firstReasons []string
	for i := range reads {
		jobs, reasons, err := g.readCI(ctx, head)
		if errors.Is(err, errDifferentRevision) {
			return nil, nil, nil, Unavailable, "different_revision"
		}
		if err != nil {
			return nil, nil, nil, Unavailable, "read_failed"
		}
		reads[i], _ = json.Marshal(struct {
			J []ciJob
			R []string
		}{jobs, reasons})
		if i == 0 {
			first, firstReasons = jobs, reasons
		}
	}
	if string(reads[0]) != string(reads[1]) {
		return nil, nil, nil, Mutated, "snapshot_changed"
	}
	return first, firstReasons, reads[0], Complete, ""
}

// CIOutcomes reads the exact-head CI snapshot twice and derives one record per selected
// check that has a result.
func (g *GitLab) CIOutcomes(ctx context.Context, sel *CIOutcomes, head string) SourceResult {
	res := SourceResult{State: newState(SourceCI, sel.Required)}
	first, reasons, a, c, reason := g.readCITwice(ctx, head)
	if reason != "" {
		degrade(&res.State, c, reason)
		return res
	}
	for _, r := range reasons {
		degrade(&res.State, Partial, r)
	}
	var current int64
	if g.mr != nil && g.mr.HeadPipeline != nil && g.mr.HeadPipeline.SHA == head {
		current = g.mr.HeadPipeline.ID
	}
	now := g.now()
	for _, check := range sel.Checks {
		var matches []ciJob
		for _, j := range first {
			if j.Name == check.Name {
				matches = append(matches, j)
			}
		}
		if len(matches) == 0 {
			degrade(&res.State, Partial, "missing_check")
			res.State.Omitted++
			continue
		}
		best, status := pickJob(matches, current, &res.State)
		if best.Status == "unknown" {
			// the chosen job has not finished (a tie of finished jobs is only ambiguous)
			degrade(&res.State, Partial, "incomplete")
		}
		if best.Finished != "" {
			if ft, err := time.Parse(time.RFC3339, best.Finished); err == nil && ft.Before(now.Add(-time.Duration(sel.MaxAgeSeconds)*time.Second)) {
				degrade(&res.State, Partial, "stale")
				status = "unknown"
			}
		}
		prov := "same_revision_pipeline"
		if best.Pipeline == current && current != 0 {
			prov = "current_pipeline"
		}
		class := "required"
		if best.AllowFailure {
			class = "advisory"
		}
		c := &CIRecord{Check: check.Name, PathPrefixes: append([]string{}, check.PathPrefixes...), ReviewedHead: head, Status: status, Classification: class, Provenance: prov, CompletedAt: best.Finished}
		res.Drafts = append(res.Drafts, Draft{
			Source: SourceCI, ResourceClass: resourceCIOutcome, CanonicalObject: g.object("ci/" + url.PathEscape(check.Name)),
			Version:     "sha256:" + canon.SHA256Hex(a),
			Projections: Projections{Retrieve: []string{"descriptor", "state"}, Model: []string{"descriptor", "state"}, Publish: []string{}, Retain: []string{"state"}},
			Content:     Content{CI: c},
		})
	}
	return res
}

// pickJob prefers the current pipeline, then the most recent completion, then the highest
// job ID; retries degrade the source, and an unbreakable tie makes the status unknown.
func pickJob(matches []ciJob, current int64, st *SourceState) (ciJob, string) {
	sort.SliceStable(matches, func(i, k int) bool {
		ci, ck := matches[i].Pipeline == current, matches[k].Pipeline == current
		if ci != ck {
			return ci
		}
		if matches[i].Finished != matches[k].Finished {
			return matches[i].Finished > matches[k].Finished
		}
		return matches[i].ID > matches[k].ID
	})
	best := matches[0]
	status := best.Status
	if len(matches) > 1 {
		degrade(st, Partial, "duplicate_retries")
		second := matches[1]
		if (second.Pipeline == current) == (best.Pipeline == current) && second.Finished == best.Finished {
			degrade(st, Partial, "ambiguous")
			status = "unknown"
		}
	}
	return best, status
}
