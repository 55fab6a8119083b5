package reviewrun

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/forgectx/forgectx/internal/forge"
	glforge "github.com/forgectx/forgectx/internal/forge/gitlab"
	"github.com/forgectx/forgectx/internal/review/reviewctx"
	"github.com/forgectx/forgectx/internal/review/reviewpub"
	"github.com/forgectx/forgectx/internal/review/reviewresult"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// SummaryMarker identifies the sticky summary note (found by marker and the token's own
// author, then updated in place, like the status comment).
const SummaryMarker = "<!-- ocr.review-summary/v1 -->"

// maxDiscussionPages bounds the read of existing discussions (fingerprints already posted).
const maxDiscussionPages = 20

// Fingerprint is a finding's stable identity across runs: path, severity and message (not the
// line, which moves with unrelated edits), hashed so the marker carries no text.
func Fingerprint(f reviewresult.Finding) string {
	h := sha256.Sum256([]byte("ocr.finding/v1\x00" + f.Path + "\x00" + string(f.Severity) + "\x00" + f.Message))
	return hex.EncodeToString(h[:])
}

// poster writes the summary note, the finding discussions and the approval on GitLab.
type poster struct {
	svc  *glforge.Services
	cm   forge.Commenter
	ref  forge.Ref
	pid  any
	iid  int64
	self int64
	// diff is the reviewed revision's diff refs; findings are anchored on it when complete.
	diff gl.MergeRequestDiffRefs
}

func (r *runner) newPoster() (*poster, error) {
	conn, svc, err := reviewctx.ConnectGitLab(reviewctx.GitLabOptions{APIURL: r.o.APIURL, Token: r.token, TokenEnv: r.o.TokenEnv, HTTPClient: r.o.HTTPClient, Concurrency: r.o.Concurrency}, acquisition.KindChangeProposal)
	if err != nil {
		return nil, err
	}
	var pid any = r.o.Project
	if n, err := strconv.ParseInt(r.o.Project, 10, 64); err == nil {
		pid = n
	}
	return &poster{svc: svc, cm: conn.Commenter, pid: pid, iid: r.o.MR,
		ref: forge.Ref{Forge: "gitlab", APIURL: r.o.APIURL, Repo: r.o.Project, Number: int(r.o.MR)}}, nil
}

// post is the posting boundary: it renders only the read-back projection, decides approval
// and writes to the merge request.
func (r *runner) post(ctx context.Context, p *Projection) error {
	ps, err := r.newPoster()
	if err != nil {
		return err
	}
	// The commenter's own identity, which it caches: the summary note's lookup (sticky,
	// FindComments) then asks the forge for the current user no second time.
	me, ok := ps.cm.(interface {
		Self(context.Context) (int64, error)
	})
	if !ok {
		return fmt.Errorf("reviewrun: posting: current user unavailable")
	}
	if ps.self, err = me.Self(ctx); err != nil || ps.self <= 0 {
		return fmt.Errorf("reviewrun: posting: current user unavailable")
	}
	mr, _, err := ps.svc.MergeRequests.Get(ctx, ps.pid, ps.iid)
	if err != nil {
		return fmt.Errorf("reviewrun: posting: merge request unavailable")
	}
	res := p.Result
	in := EligibilityInput{
		AutoApprove: r.getenv(EnvAutoApprove), Receipt: p.Receipt,
		ResultComplete: res.Status == reviewresult.StatusCompleted && res.Coverage.Kind == reviewresult.CoverageComplete && res.ManifestFailure == nil,
		Findings:       len(res.Findings), Warnings: len(res.Warnings),
		HeadUnchanged: mr.SHA == p.Receipt.SourceSHA, SelfAuthored: mr.Author != nil && mr.Author.ID == ps.self,
		PublicationValid: validRendering(p) == nil,
	}
	r.res.Decision = Eligible(in)
	ps.diff = mr.DiffRefs
	if ps.diff.HeadSha != p.Receipt.SourceSHA {
		ps.diff = gl.MergeRequestDiffRefs{} // no anchor on another revision
	}
	posted, err := ps.discussions(ctx, res.Findings)
	r.res.Discussions = posted
	if err != nil {
		return err
	}
	body, err := renderSummary(p, r.res.Decision)
	if err != nil {
		return err
	}
	if err := ps.sticky(ctx, body); err != nil {
		return err
	}
	if r.res.Decision.Approve {
		if _, err := ps.svc.MergeRequests.Approve(ctx, ps.pid, ps.iid, p.Receipt.SourceSHA); err != nil {
			return fmt.Errorf("reviewrun: approval failed")
		}
		r.res.Approved = true
	}
	r.o.Log.Info().Bool("approved", r.res.Approved).Strs("ineligible", r.res.Decision.Reasons).Int("discussions", posted).Msg("review-context run: posted")
	return nil
}

// postWithheld posts only the summary note of a run whose result publication is blocked (a
// failed cleanup or publication validation; why is a fixed phrase): a fixed outcome line, the
// DLP signal and the receipt; no finding, no approval.
func (r *runner) postWithheld(ctx context.Context, p *Projection, why string, publicationValid bool) error {
	ps, err := r.newPoster()
	if err != nil {
		return err
	}
	r.res.Decision = Eligible(EligibilityInput{AutoApprove: r.getenv(EnvAutoApprove), Receipt: p.Receipt, PublicationValid: publicationValid})
	blk, err := ReceiptBlock(p.Receipt)
	if err != nil {
		return err
	}
	body := SummaryMarker + "\n## Open Code Review\n\n**Outcome:** not published — " + why + ", so its result is withheld and this review cannot approve.\n\n" +
		"**Approval:** not approved (" + strings.Join(r.res.Decision.Reasons, ", ") + ").\n\n" + p.Signal.Marker() + "\n" + blk + "\n"
	return ps.sticky(ctx, body)
}

// validRendering checks what the poster is about to render from the projection: every
// finding discussion carries exactly one remediation marker that parses back to its
// fingerprint, the receipt block parses back to the same receipt, and the DLP signal marker
// parses back. A failure makes the run ineligible (publication_validation_failed).
func validRendering(p *Projection) error {
	for _, f := range p.Result.Findings {
		fp := Fingerprint(f)
		body := renderFinding(f, fp)
		got, _, ok := reviewctx.ParseMarker(body)
		if !ok || got != fp || strings.Count(body, "<!-- ocr.remediation-marker/") != 1 {
			return fmt.Errorf("reviewrun: a finding discussion does not carry exactly its marker")
		}
	}
	blk, err := ReceiptBlock(p.Receipt)
	if err != nil {
		return err
	}
	back, err := ReceiptFromBody(blk)
	if err != nil {
		return err
	}
	a, _ := back.Marshal()
	b, _ := p.Receipt.Marshal()
	if !bytes.Equal(a, b) {
		return fmt.Errorf("reviewrun: the receipt block does not read back")
	}
	if _, ok := reviewpub.ParseMarker(p.Signal.Marker()); !ok {
		return fmt.Errorf("reviewrun: the DLP signal marker does not read back")
	}
	return nil
}

// sticky updates the summary note this identity already owns, else creates it.
func (ps *poster) sticky(ctx context.Context, body string) error {
	found, err := ps.cm.FindComments(ctx, ps.ref, SummaryMarker)
	if err != nil {
		return fmt.Errorf("reviewrun: summary note lookup: %w", err)
	}
	if len(found) > 0 {
		return ps.cm.UpdateComment(ctx, ps.ref, found[0].ID, body)
	}
	_, err = ps.cm.CreateComment(ctx, ps.ref, body)
	return err
}

// discussions opens one discussion per finding whose fingerprint this identity has not posted
// yet (a verified remediation root of part 1: own author, one valid marker).
func (ps *poster) discussions(ctx context.Context, findings []reviewresult.Finding) (int, error) {
	seen := map[string]bool{}
	ds, err := ps.svc.Discussions.ListMergeRequest(ctx, ps.pid, ps.iid,
		&gl.ListMergeRequestDiscussionsOptions{ListOptions: gl.ListOptions{Page: 1, PerPage: glforge.PerPage}},
		glforge.ListOptions[*gl.Discussion]{MaxPages: maxDiscussionPages})
	if err != nil {
		return 0, fmt.Errorf("reviewrun: discussions lookup failed")
	}
	for _, d := range ds.Rows {
		if len(d.Notes) == 0 || d.Notes[0].Author.ID != ps.self {
			continue
		}
		if fp, _, ok := reviewctx.ParseMarker(d.Notes[0].Body); ok {
			seen[fp] = true
		}
	}
	n := 0
	for _, f := range findings {
		fp := Fingerprint(f)
		if seen[fp] {
			continue
		}
		seen[fp] = true
		if err := ps.createDiscussion(ctx, f, renderFinding(f, fp)); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// createDiscussion opens one finding discussion, anchored on the finding's new line of the
// reviewed diff when the diff refs are known. GitLab refuses a position outside the diff with
// 400; the finding is then opened as a general discussion. A create is never retried after a
// server error (it may exist already): only after a rate limit.
func (ps *poster) createDiscussion(ctx context.Context, f reviewresult.Finding, body string) error {
	if d := ps.diff; d.BaseSha != "" && d.HeadSha != "" && d.StartSha != "" {
		pos := &gl.PositionOptions{BaseSHA: gl.Ptr(d.BaseSha), HeadSHA: gl.Ptr(d.HeadSha), StartSHA: gl.Ptr(d.StartSha),
			PositionType: gl.Ptr("text"), NewPath: gl.Ptr(f.Path), NewLine: gl.Ptr(int64(f.Line))}
		_, resp, err := ps.svc.Discussions.CreateMergeRequest(ctx, ps.pid, ps.iid, &gl.CreateMergeRequestDiscussionOptions{Body: gl.Ptr(body), Position: pos})
		if err == nil {
			return nil
		}
		if resp == nil || resp.StatusCode != http.StatusBadRequest {
			return fmt.Errorf("reviewrun: finding discussion not created")
		}
	}
	if _, _, err := ps.svc.Discussions.CreateMergeRequest(ctx, ps.pid, ps.iid, &gl.CreateMergeRequestDiscussionOptions{Body: gl.Ptr(body)}); err != nil {
		return fmt.Errorf("reviewrun: finding discussion not created")
	}
	return nil
}

func inlineCode(s string) string {
	f := strings.Repeat("`", 1)
	if strings.Contains(s, "`") {
		f = "``"
	}
	return f + " " + s + " " + f
}

// renderFinding is one finding discussion: severity and location, the message, the optional
// code blocks, and the remediation marker on its own line, exactly once.
func renderFinding(f reviewresult.Finding, fp string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s** %s line %d\n\n%s\n", f.Severity, inlineCode(f.Path), f.Line, f.Message)
	for _, c := range []struct{ label, code string }{{"Existing code", f.ExistingCode}, {"Suggestion", f.SuggestionCode}} {
		if c.code != "" {
			fc := reviewpub.Fence(c.code)
			fmt.Fprintf(&b, "\n%s:\n\n%s\n%s\n%s\n", c.label, fc, c.code, fc)
		}
	}
	b.WriteString("\n" + reviewctx.FormatMarker(fp) + "\n")
	return b.String()
}

// renderSummary is the sticky summary: outcome, coverage, counts, warnings, approval state,
// the DLP signal marker, the static unprotected limitation line when it applies, and the
// receipt block.
func renderSummary(p *Projection, d Decision) (string, error) {
	res := p.Result
	var b strings.Builder
	b.WriteString(SummaryMarker + "\n## Open Code Review\n\n")
	c := res.Coverage
	fmt.Fprintf(&b, "**Outcome:** %s — %d findings, %d warnings. Coverage %s: %d of %d files reviewed, %d failed.\n\n",
		res.Status, len(res.Findings), len(res.Warnings), c.Kind, c.FilesReviewed, c.FilesTotal, c.FilesFailed)
	if res.OutcomeMessage != "" {
		b.WriteString(res.OutcomeMessage + "\n\n")
	}
	if mf := res.ManifestFailure; mf != nil {
		fmt.Fprintf(&b, "**Manifest failure:** %s — %s\n\n", inlineCode(mf.Path), mf.Reason)
	}
	for _, w := range res.Warnings {
		b.WriteString("- ⚠️ " + w + "\n")
	}
	if len(res.ToolNames) > 0 {
		b.WriteString("\nTools: " + strings.Join(res.ToolNames, ", ") + "\n")
	}
	if p.Signal.Result != reviewpub.DecisionClean {
		d := p.Signal.Details()
		fmt.Fprintf(&b, "\n<details><summary>Private sanitization</summary>\n\n%s\n</details>\n", d[0])
		fmt.Fprintf(&b, "\n<details><summary>Publication filtering</summary>\n\n%s\n</details>\n", d[1])
	}
	if d.Approve {
		b.WriteString("\n**Approval:** approved.\n")
	} else {
		b.WriteString("\n**Approval:** not approved (" + strings.Join(d.Reasons, ", ") + ").\n")
	}
	if p.Receipt.TargetState == TargetUnprotected {
		b.WriteString("\n" + UnprotectedLimitation + "\n")
	}
	blk, err := ReceiptBlock(p.Receipt)
	if err != nil {
		return "", err
	}
	b.WriteString("\n" + p.Signal.Marker() + "\n" + blk + "\n")
	return b.String(), nil
}
