package github

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"

	gh "github.com/google/go-github/v66/github"
)

// maxListedComment bounds one comment of a comment listing as it arrives on the wire. GitHub
// refuses a comment body over 65,536 characters; at the worst JSON escaping (6 bytes a
// character) plus the author, reactions and app objects that is under 400 KiB, so 1 MiB is
// never reached by a real comment. It is what keeps `status reconcile` and the status comment
// lookup at a few MiB on any answer: a page is decoded one comment at a time, never whole
// (a whole 64 MiB page, decoded by go-github into structs, held about 340 MiB).
const maxListedComment = 1 << 20

// errCommentTooLarge is a listed comment past maxListedComment.
var errCommentTooLarge = fmt.Errorf("a comment of the answer is over the %d-byte bound (reading stopped there)", maxListedComment)

// errNotAList is a comment listing answer that is not a JSON array.
var errNotAList = errors.New("the answer is not a JSON array")

// errTooManyComments is a page holding more comments than were asked for (GitHub serves at
// most per_page, itself at most 100): a server that streams small comments without end must
// not grow memory either.
var errTooManyComments = errors.New("the answer holds more comments than the page size asked for")

// listCommentsStreamed reads one page of an issue's comment listing like go-github's
// Issues.ListComments (same request: page and per_page), but decodes the answer as it
// streams, one comment at a time under maxListedComment, and keeps only what keep says of
// each comment (keep may return a slimmer copy; every comment still yields one item, so row
// counts and pagination are unchanged).
func (c *Client) listCommentsStreamed(ctx context.Context, owner, name string, number int, opt gh.ListOptions, keep func(*gh.IssueComment) *gh.IssueComment) ([]*gh.IssueComment, *gh.Response, error) {
	q := url.Values{}
	if opt.Page != 0 {
		q.Set("page", strconv.Itoa(opt.Page))
	}
	if opt.PerPage != 0 {
		q.Set("per_page", strconv.Itoa(opt.PerPage))
	}
	u := fmt.Sprintf("repos/%v/%v/issues/%d/comments", owner, name, number)
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := c.rest.NewRequest("GET", u, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", "application/vnd.github.squirrel-girl-preview") // as go-github asks
	pr, pw := io.Pipe()
	type result struct {
		items []*gh.IssueComment
		err   error
	}
	done := make(chan result, 1)
	go func() {
		items, err := decodeComments(pr, max(opt.PerPage, PerPage), keep)
		if err == nil {
			// Trailing bytes after the array are ignored, as go-github's decoder does; reading
			// them lets the copy finish (the transport's body bound still applies).
			_, err = io.Copy(io.Discard, pr)
		}
		pr.CloseWithError(err)
		done <- result{items, err}
	}()
	resp, err := c.rest.Do(ctx, req, pw)
	pw.CloseWithError(err)
	res := <-done
	if err != nil {
		return nil, resp, err
	}
	if res.err != nil {
		return nil, resp, res.err
	}
	return res.items, resp, nil
}

// decodeComments decodes a JSON array of comments from r one element at a time, refusing an
// element longer than maxListedComment while it is read, and more than most elements. An empty
// answer or null is no comments (as go-github treats them).
func decodeComments(r io.Reader, most int, keep func(*gh.IssueComment) *gh.IssueComment) ([]*gh.IssueComment, error) {
	lim := &elementLimit{r: r}
	dec := json.NewDecoder(lim)
	lim.stop = maxListedComment
	tok, err := dec.Token()
	switch {
	case errors.Is(err, io.EOF):
		return nil, nil
	case err != nil:
		return nil, err
	case tok == nil:
		return nil, nil
	case tok != json.Delim('['):
		return nil, errNotAList
	}
	var items []*gh.IssueComment
	for dec.More() {
		if len(items) == most {
			return nil, errTooManyComments
		}
		lim.stop = dec.InputOffset() + maxListedComment
		var ic gh.IssueComment
		if err := dec.Decode(&ic); err != nil {
			return nil, err
		}
		items = append(items, keep(&ic))
	}
	lim.stop = dec.InputOffset() + maxListedComment
	if _, err := dec.Token(); err != nil { // the closing ']'
		return nil, err
	}
	return items, nil
}

// elementLimit lets a JSON decoder read at most up to offset stop of the stream: the decoder
// only asks for more when the value it decodes is not complete in what it holds, so a value
// that does not fit before stop fails the read with errCommentTooLarge.
type elementLimit struct {
	r       io.Reader
	n, stop int64
}

func (l *elementLimit) Read(p []byte) (int, error) {
	if l.n >= l.stop {
		return 0, errCommentTooLarge
	}
	if left := l.stop - l.n; int64(len(p)) > left {
		p = p[:left]
	}
	k, err := l.r.Read(p)
	l.n += int64(k)
	return k, err
}
