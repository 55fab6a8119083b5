package forgejo

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"code.gitea.io/sdk/gitea"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/forge/retry"
)

// FindComments implements forge.Commenter: it returns, across every page of the issue
// comments API, the comments whose FIRST line is exactly marker (docs/receipts.md: a marker
// counts only there, so a quoted marker is never matched) and whose author is the token's own
// identity (Options.SelfID, else GET /user), in forge order. Comments by anyone else are ignored even when they
// carry the marker, so nobody can plant a status comment forgectx would then update.
func (c *Client) FindComments(ctx context.Context, ref forge.Ref, marker string) ([]forge.Comment, error) {
	owner, name, err := c.checkRef(ref)
	if err != nil {
		return nil, err
	}
	if marker == "" {
		return nil, errors.New("forgejo: find comments: marker: required (an empty marker matches every comment)")
	}
	self := c.selfID
	if self == 0 {
		me, err := c.reader.Me(ctx)
		if err != nil {
			return nil, fmt.Errorf("forgejo: find comments: token identity: %w", err)
		}
		if me.ID == 0 {
			return nil, errors.New("forgejo: find comments: token identity: GET /user returned no id")
		}
		self = me.ID
	}
	var out []forge.Comment
	err = c.reader.Repo(owner, name).Issues.eachComment(ctx, int64(ref.Number), func(cs []*gitea.Comment) error {
		for _, cm := range cs {
			if cm == nil || cm.Poster == nil || cm.Poster.ID != self || firstLine(cm.Body) != marker {
				continue
			}
			out = append(out, forge.Comment{
				ID:       strconv.FormatInt(cm.ID, 10),
				AuthorID: strconv.FormatInt(cm.Poster.ID, 10),
				Body:     cm.Body,
			})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("forgejo: find comments: %w", err)
	}
	c.log.Debug().Int("found", len(out)).Msg("forgejo marker comments")
	return out, nil
}

// CreateComment implements forge.Commenter (POST /repos/{owner}/{repo}/issues/{n}/comments;
// pull requests share the issue comments API). It is retried only after a rate-limit refusal
// (retry.Once), so a lost answer cannot produce a duplicate comment.
func (c *Client) CreateComment(ctx context.Context, ref forge.Ref, body string) (forge.Comment, error) {
	owner, name, err := c.checkRef(ref)
	if err != nil {
		return forge.Comment{}, err
	}
	sdk, err := c.sdk(retry.Once(ctx))
	if err != nil {
		return forge.Comment{}, fmt.Errorf("forgejo: client: %w", err)
	}
	cm, resp, err := sdk.CreateIssueComment(owner, name, int64(ref.Number), gitea.CreateIssueCommentOption{Body: body})
	if err != nil {
		return forge.Comment{}, fmt.Errorf("forgejo: create comment: %w", apiErr("POST /repos/{owner}/{repo}/issues/{n}/comments", resp, err))
	}
	if cm.ID <= 0 {
		return forge.Comment{}, fmt.Errorf("forgejo: create comment: response id %d: must be a positive integer", cm.ID)
	}
	out := forge.Comment{ID: strconv.FormatInt(cm.ID, 10), Body: cm.Body}
	if cm.Poster != nil {
		out.AuthorID = strconv.FormatInt(cm.Poster.ID, 10)
	}
	c.log.Info().Str("comment_id", out.ID).Msg("forgejo comment created")
	return out, nil
}

// UpdateComment implements forge.Commenter (PATCH /repos/{owner}/{repo}/issues/comments/{id}).
func (c *Client) UpdateComment(ctx context.Context, ref forge.Ref, id string, body string) error {
	owner, name, err := c.checkRef(ref)
	if err != nil {
		return err
	}
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n <= 0 || strconv.FormatInt(n, 10) != id {
		return fmt.Errorf("forgejo: update comment: id %q: must be a positive base-10 integer", id)
	}
	sdk, err := c.sdk(ctx)
	if err != nil {
		return fmt.Errorf("forgejo: client: %w", err)
	}
	if _, resp, err := sdk.EditIssueComment(owner, name, n, gitea.EditIssueCommentOption{Body: body}); err != nil {
		return fmt.Errorf("forgejo: update comment: %w", apiErr("PATCH /repos/{owner}/{repo}/issues/comments/{id}", resp, err))
	}
	c.log.Info().Str("comment_id", id).Msg("forgejo comment updated")
	return nil
}

// firstLine is the first line of body without a trailing CR.
func firstLine(body string) string {
	first, _, _ := strings.Cut(body, "\n")
	return strings.TrimSuffix(first, "\r")
}
