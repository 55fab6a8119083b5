package github

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// The GraphQL documents this adapter sends. Each is validated against GitHub's published
// schema (test/fixtures/github/schema.graphql) in graphql_test.go. GraphQL is used only where
// REST lacks the data (review threads with resolution, outdated state and thread IDs; the
// review-dismissal timeline filtered by type) or where one query replaces several REST calls
// (entity + repository node ID + kind detection + labels + list sizes for completeness checks).

// actorFields selects what an actor reference needs: its node ID, login and concrete type
// (__typename "Bot" is the positive bot signal).
const actorFields = `__typename login ... on Node { id }`

// entityQuery reads the repository node ID and the issue or pull request (auto-detected by
// issueOrPullRequest) with its labels (the two state fields have different enum types, so
// GraphQL requires aliases) and the totalCounts the list readers check against.
const entityQuery = `query Entity($owner: String!, $name: String!, $number: Int!, $labelsAfter: String) {
  repository(owner: $owner, name: $name) {
    id
    nameWithOwner
    issueOrPullRequest(number: $number) {
      __typename
      ... on Issue {
        id number title body issueState: state createdAt updatedAt
        author { ` + actorFields + ` }
        comments { totalCount }
        labels(first: 100, after: $labelsAfter) { totalCount pageInfo { hasNextPage endCursor } nodes { name } }
      }
      ... on PullRequest {
        id number title body pullRequestState: state merged createdAt updatedAt headRefOid
        author { ` + actorFields + ` }
        comments { totalCount }
        reviews { totalCount }
        reviewThreads { totalCount }
        labels(first: 100, after: $labelsAfter) { totalCount pageInfo { hasNextPage endCursor } nodes { name } }
      }
    }
  }
}`

// reviewCommentFields is one review-thread comment.
const reviewCommentFields = `fragment ReviewComment on PullRequestReviewComment {
  id body createdAt updatedAt isMinimized
  author { ` + actorFields + ` }
  replyTo { id }
  pullRequestReview { id }
  commit { oid }
  originalCommit { oid }
}`

// threadFields is one review thread with its first 100 comments.
const threadFields = `id isResolved isOutdated path line startLine originalLine originalStartLine diffSide startDiffSide
          resolvedBy { login id }
          comments(first: 100) {
            totalCount
            pageInfo { hasNextPage endCursor }
            nodes { ...ReviewComment }
          }`

// threadsQuery pages through a pull request's review threads in forge order, each with its
// first 100 comments (threadCommentsQuery reads the rest of a longer thread).
const threadsQuery = `query Threads($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 100, after: $after) {
        totalCount
        pageInfo { hasNextPage endCursor }
        nodes {
          ` + threadFields + `
        }
      }
    }
  }
}
` + reviewCommentFields

// threadsFromEndQuery pages backwards from the last review thread: after a forward page
// failed for good, the threads after it are recovered from the other end (each page is the
// 100 threads before the cursor, in forge order).
const threadsFromEndQuery = `query ThreadsFromEnd($owner: String!, $name: String!, $number: Int!, $before: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(last: 100, before: $before) {
        totalCount
        pageInfo { hasPreviousPage startCursor }
        nodes {
          ` + threadFields + `
        }
      }
    }
  }
}
` + reviewCommentFields

// threadCommentsQuery continues one thread's comments after the first page.
const threadCommentsQuery = `query ThreadComments($id: ID!, $after: String) {
  node(id: $id) {
    ... on PullRequestReviewThread {
      comments(first: 100, after: $after) {
        totalCount
        pageInfo { hasNextPage endCursor }
        nodes { ...ReviewComment }
      }
    }
  }
}
` + reviewCommentFields

// dismissalEventFields is one review-dismissed timeline event.
const dismissalEventFields = `__typename
          ... on ReviewDismissedEvent {
            id createdAt
            actor { ` + actorFields + ` }
            review { id }
          }`

// dismissalsQuery reads only the review-dismissed timeline events (actor and time of each
// dismissal), filtered server-side so it costs one page in practice.
const dismissalsQuery = `query Dismissals($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      timelineItems(first: 100, after: $after, itemTypes: [REVIEW_DISMISSED_EVENT]) {
        pageInfo { hasNextPage endCursor }
        nodes {
          ` + dismissalEventFields + `
        }
      }
    }
  }
}`

// dismissalsFromEndQuery pages the same events backwards from the last one, after a forward
// page failed for good.
const dismissalsFromEndQuery = `query DismissalsFromEnd($owner: String!, $name: String!, $number: Int!, $before: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      timelineItems(last: 100, before: $before, itemTypes: [REVIEW_DISMISSED_EVENT]) {
        pageInfo { hasPreviousPage startCursor }
        nodes {
          ` + dismissalEventFields + `
        }
      }
    }
  }
}`

// threadCommentsFromEndQuery pages one thread's comments backwards from its last comment,
// after a forward page failed for good.
const threadCommentsFromEndQuery = `query ThreadCommentsFromEnd($id: ID!, $before: String) {
  node(id: $id) {
    ... on PullRequestReviewThread {
      comments(last: 100, before: $before) {
        totalCount
        pageInfo { hasPreviousPage startCursor }
        nodes { ...ReviewComment }
      }
    }
  }
}
` + reviewCommentFields

// existsAliases × 100 node IDs are checked by one Exists request (nodes takes at most 100).
const existsAliases = 10

// existsQuery asks which of up to 1,000 node IDs still exist (a deleted one is null): the
// drift check of the REST comment pages (sources.go).
var existsQuery = func() string {
	var vars, sel strings.Builder
	for i := range existsAliases {
		if i > 0 {
			vars.WriteString(", ")
		}
		fmt.Fprintf(&vars, "$ids%d: [ID!]!", i)
		fmt.Fprintf(&sel, "  n%d: nodes(ids: $ids%d) { id }\n", i, i)
	}
	return "query Exists(" + vars.String() + ") {\n" + sel.String() + "}"
}()

// ExistsVars are the variables of the Exists request checking ids (at most 1,000): ids split
// into the query's aliases, 100 each, the rest empty.
func ExistsVars(ids []string) map[string]any {
	vars := map[string]any{}
	for i := range existsAliases {
		lo, hi := min(i*100, len(ids)), min((i+1)*100, len(ids))
		vars[fmt.Sprintf("ids%d", i)] = append([]string{}, ids[lo:hi]...)
	}
	return vars
}

// Documents lists every GraphQL document the adapter sends, by operation name (the schema
// test validates each).
var Documents = map[string]string{
	"Entity":         entityQuery,
	"Threads":        threadsQuery,
	"ThreadsFromEnd": threadsFromEndQuery,
	"ThreadComments": threadCommentsQuery,
	"Dismissals":     dismissalsQuery,
	// Read only after a forward page failed for good: the same rows from the other end.
	"ThreadCommentsFromEnd": threadCommentsFromEndQuery,
	"DismissalsFromEnd":     dismissalsFromEndQuery,
	"Exists":                existsQuery,
}

// GraphQLError is a GraphQL response that carried errors (or no data).
type GraphQLError struct {
	Operation string
	Messages  []string
	Types     []string
}

func (e *GraphQLError) Error() string {
	return fmt.Sprintf("graphql %s: %s", e.Operation, strings.Join(e.Messages, "; "))
}

// NotFound reports whether GitHub said the object does not exist.
func (e *GraphQLError) NotFound() bool {
	for _, t := range e.Types {
		if t == "NOT_FOUND" {
			return true
		}
	}
	return false
}

// httpError is a non-2xx GraphQL HTTP response.
type httpError struct {
	Operation string
	Status    int
}

func (e *httpError) Error() string {
	return fmt.Sprintf("graphql %s: HTTP %d", e.Operation, e.Status)
}

type gqlPageInfo struct {
	HasNextPage bool    `json:"hasNextPage"`
	EndCursor   *string `json:"endCursor"`
	// Backward pages (ThreadsFromEnd) answer these instead.
	HasPreviousPage bool    `json:"hasPreviousPage"`
	StartCursor     *string `json:"startCursor"`
}

// gqlActor is an Actor reference (nil when GitHub withholds it or the account was deleted).
type gqlActor struct {
	Typename string `json:"__typename"`
	Login    string `json:"login"`
	ID       string `json:"id"`
}

// graphql posts one operation and decodes its data into out. Variables are encoded with
// sorted keys (encoding/json sorts maps), so identical requests have identical bodies and
// replay matches them.
func (c *Client) graphql(ctx context.Context, op string, vars map[string]any, out any) error {
	return c.graphqlPost(ctx, op, vars, out, false)
}

// graphqlPost is graphql; with missingOK an answer whose only errors are NOT_FOUND and that
// carries data is decoded (nodes(ids:) answers a deleted ID with null and such an error).
func (c *Client) graphqlPost(ctx context.Context, op string, vars map[string]any, out any, missingOK bool) error {
	body, err := GraphQLRequestBody(op, vars)
	if err != nil {
		return fmt.Errorf("graphql %s: %w", op, err)
	}
	ctx = withEndpoint(ctx, "POST /graphql "+op)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.gqlURL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("graphql %s: %w", op, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.rest.UserAgent)
	if c.token != "" {
		req.Header.Set("Authorization", "bearer "+c.token)
	}
	resp, err := c.gql.Do(req)
	if err != nil {
		return fmt.Errorf("graphql %s: %w", op, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAPIBody+1))
	if err != nil {
		return fmt.Errorf("graphql %s: read: %w", op, err)
	}
	if len(raw) > maxAPIBody {
		return fmt.Errorf("graphql %s: response larger than %d bytes", op, maxAPIBody)
	}
	if resp.StatusCode/100 != 2 {
		return &httpError{Operation: op, Status: resp.StatusCode}
	}
	var env struct {
		Data   json.RawMessage `json:"data"`
		Errors []struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return fmt.Errorf("graphql %s: decode: %w", op, err)
	}
	onlyMissing := missingOK && len(env.Errors) > 0
	for _, e := range env.Errors {
		onlyMissing = onlyMissing && e.Type == "NOT_FOUND"
	}
	if (len(env.Errors) > 0 && !onlyMissing) || len(env.Data) == 0 || string(env.Data) == "null" {
		ge := &GraphQLError{Operation: op}
		for _, e := range env.Errors {
			ge.Messages = append(ge.Messages, e.Message)
			ge.Types = append(ge.Types, e.Type)
		}
		if len(ge.Messages) == 0 {
			ge.Messages = []string{"no data"}
		}
		return ge
	}
	if err := json.Unmarshal(env.Data, out); err != nil {
		return fmt.Errorf("graphql %s: decode data: %w", op, err)
	}
	return nil
}

// maxAPIBody bounds one API response body (not logs, which have their own bound).
const maxAPIBody = 64 << 20

// retryablePageError reports whether a page read failed in a way a fresh read can fix: a
// truncated or malformed body. HTTP-level failures were already retried by the transport.
func retryablePageError(err error) bool {
	var se *json.SyntaxError
	var ue *json.UnmarshalTypeError
	return errors.As(err, &se) || errors.As(err, &ue) || errors.Is(err, io.ErrUnexpectedEOF) ||
		strings.Contains(err.Error(), "unexpected EOF") || strings.Contains(err.Error(), "unexpected end of JSON")
}

// GraphQLRequestBody is the exact body the adapter posts for operation op with vars (fixture
// makers use it so recorded-shape cassettes match the adapter's requests byte for byte).
func GraphQLRequestBody(op string, vars map[string]any) ([]byte, error) {
	doc, ok := Documents[op]
	if !ok {
		return nil, fmt.Errorf("graphql: unknown operation %q", op)
	}
	return json.Marshal(map[string]any{"query": doc, "variables": vars, "operationName": op})
}
