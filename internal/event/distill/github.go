package distill

import (
	"strconv"
	"strings"
)

// GitHub and Forgejo rules. Forgejo (and Gitea) Actions deliver GitHub-shaped payloads under
// GitHub's event names; the differences handled here are its review object ({type, content}
// instead of {state, body, html_url, user}).

var (
	author = field{out: "author", from: []path{p("user", "login")}, kind: kindDisplay}

	// issueCommentFields is Requirement 1.1: body, html_url, author; nothing else of the comment.
	issueCommentFields = []field{
		{out: "body", from: []path{p("body")}, kind: kindText},
		{out: "html_url", from: []path{p("html_url")}, kind: kindURL},
		author,
	}

	// reviewCommentFields is Requirement 1.3: path and line (start_line first for a multi-line
	// comment; original_line when an outdated comment's line is null) before body, then html_url
	// and author.
	reviewCommentFields = []field{
		{out: "path", from: []path{p("path")}, kind: kindPath},
		{out: "start_line", from: []path{p("start_line")}, kind: kindInt},
		{out: "line", from: []path{p("line")}, kind: kindInt},
		{out: "original_line", from: []path{p("original_line")}, kind: kindInt, unless: "line"},
		{out: "body", from: []path{p("body")}, kind: kindText},
		{out: "html_url", from: []path{p("html_url")}, kind: kindURL},
		author,
	}

	// reviewFields is Requirement 1.4: state, body, html_url, author. The REST API spells the
	// state APPROVED where the webhook says approved; both become lower case (Requirement 4).
	reviewFields = []field{
		{out: "state", from: []path{p("state")}, kind: kindEnum},
		{out: "body", from: []path{p("body")}, kind: kindText},
		{out: "html_url", from: []path{p("html_url")}, kind: kindURL},
		author,
	}

	// forgejoReviewFields reads Forgejo's review {type, content}; the review has no URL or user
	// of its own, so the pull request's html_url and the sender's login stand in (as strings).
	forgejoReviewFields = []field{
		{out: "state", from: []path{p("state"), p("type")}, kind: kindEnum, conv: forgejoReviewState},
		{out: "body", from: []path{p("body"), p("content")}, kind: kindText},
		{out: "html_url", from: []path{p("html_url"), rp("pull_request", "html_url")}, kind: kindURL},
		{out: "author", from: []path{p("user", "login"), rp("sender", "login")}, kind: kindDisplay},
	}

	// issueFields and pullFields are Requirement 2.1.
	issueFields = []field{
		{out: "number", from: []path{p("number")}, kind: kindInt},
		{out: "title", from: []path{p("title")}, kind: kindDisplay},
		{out: "state", from: []path{p("state")}, kind: kindEnum},
		{out: "html_url", from: []path{p("html_url")}, kind: kindURL},
	}
	pullFields = append(append([]field{}, issueFields...),
		field{out: "merged", from: []path{p("merged")}, kind: kindBool},
		field{out: "draft", from: []path{p("draft")}, kind: kindBool},
	)

	// Requirement 2.3: identity (the name where the object has one, else the id; the id is
	// left out when the name is carried and the html_url ends in it), status, conclusion,
	// html_url where present, head_branch. A check run's branch lives on its check suite.
	workflowRunFields = []field{
		{out: "id", from: []path{p("id")}, kind: kindInt, inURL: true},
		{out: "name", from: []path{p("name")}, kind: kindDisplay},
		{out: "status", from: []path{p("status")}, kind: kindEnum},
		{out: "conclusion", from: []path{p("conclusion")}, kind: kindEnum},
		{out: "html_url", from: []path{p("html_url")}, kind: kindURL},
		{out: "head_branch", from: []path{p("head_branch")}, kind: kindPath},
	}
	checkRunFields = []field{
		{out: "id", from: []path{p("id")}, kind: kindInt, inURL: true},
		{out: "name", from: []path{p("name")}, kind: kindDisplay},
		{out: "status", from: []path{p("status")}, kind: kindEnum},
		{out: "conclusion", from: []path{p("conclusion")}, kind: kindEnum},
		{out: "html_url", from: []path{p("html_url")}, kind: kindURL},
		{out: "head_branch", from: []path{p("check_suite", "head_branch")}, kind: kindPath},
		// Requirement 2.4: the summary is the failure message; both are capped free text.
		{out: "output", kind: kindObject, sub: []field{
			{out: "title", from: []path{p("output", "title")}, kind: kindText},
			{out: "summary", from: []path{p("output", "summary")}, kind: kindText},
		}},
	}
	checkSuiteFields = []field{
		{out: "id", from: []path{p("id")}, kind: kindInt},
		{out: "status", from: []path{p("status")}, kind: kindEnum},
		{out: "conclusion", from: []path{p("conclusion")}, kind: kindEnum},
		{out: "head_branch", from: []path{p("head_branch")}, kind: kindPath},
	}

	// statusFields is Requirement 2.5, read from the payload root.
	statusFields = []field{
		{out: "state", from: []path{p("state")}, kind: kindEnum},
		{out: "context", from: []path{p("context")}, kind: kindDisplay},
		{out: "description", from: []path{p("description")}, kind: kindText},
		{out: "target_url", from: []path{p("target_url")}, kind: kindURL},
	}

	// labelName is Requirement 2.2: on labeled/unlabeled the label is the event.
	labelName = field{out: "label", from: []path{p("name")}, kind: kindDisplay}
)

var (
	cIssueComment  = container{out: "comment", src: []string{"comment"}, fields: issueCommentFields}
	cReviewComment = container{out: "comment", src: []string{"comment"}, fields: reviewCommentFields}
	cReview        = container{out: "review", src: []string{"review"}, fields: reviewFields}
	cForgejoReview = container{out: "review", src: []string{"review"}, fields: forgejoReviewFields}
	cIssue         = container{out: "issue", src: []string{"issue"}, fields: issueFields}
	cPull          = container{out: "pull_request", src: []string{"pull_request"}, fields: pullFields}
	cLabelAction   = container{out: "label", src: []string{"label"}, scalar: true, fields: []field{labelName},
		actions: []string{"labeled", "unlabeled"}}
	cLabel       = container{out: "label", src: []string{"label"}, scalar: true, fields: []field{labelName}}
	cWorkflowRun = container{out: "workflow_run", src: []string{"workflow_run"}, fields: workflowRunFields}
	cCheckRun    = container{out: "check_run", src: []string{"check_run"}, fields: checkRunFields}
	cCheckSuite  = container{out: "check_suite", src: []string{"check_suite"}, fields: checkSuiteFields}
	cStatus      = container{out: "status", fields: statusFields}
	// cStatusShape is the status container for events without a rule: only a root that looks
	// like a commit status (context and sha strings) is read as one.
	cStatusShape = container{out: "status", fields: statusFields, requires: []string{"context", "sha"}}
)

// genericComment is the comment container for an event without a rule: any comment kind, so
// path and line are carried when the comment has them.
var cGenericComment = container{out: "comment", src: []string{"comment"}, fields: reviewCommentFields}

// In the generic rule the issue and pull request are left out beside a comment or review: the
// comment's or review's html_url already names the item it lives on, and the item's title is a
// second injection surface (Requirement 1.2 and its rationale). An issue_comment payload
// rendered under an unknown or empty event name therefore distils as it does under its own.
var (
	genericBeside  = []string{"comment", "review"}
	cGenericIssue  = withUnlessCarried(cIssue, genericBeside)
	cGenericPull   = withUnlessCarried(cPull, genericBeside)
	cGenericLabel  = withUnlessCarried(cLabel, genericBeside)
	cGenericStatus = withUnlessCarried(cStatusShape, genericBeside)
)

func withUnlessCarried(c container, keys []string) container {
	c.unlessCarried = keys
	return c
}

var rootAction = []path{rp("action")}

// commentQuietActions are the comment events' actions left out of the excerpt (rule.quietActions).
var commentQuietActions = []string{"created", "edited"}

// githubRules maps GitHub event names to their rules. Looked up, never ranged over.
var githubRules = map[string]rule{
	"issue_comment":               {containers: []container{cIssueComment}},
	"pull_request_review_comment": {containers: []container{cReviewComment}},
	"pull_request_review":         {containers: []container{cReview}},
	"issues":                      {containers: []container{cIssue, cLabelAction}},
	"pull_request":                {containers: []container{cPull, cLabelAction}},
	"workflow_run":                {containers: []container{cWorkflowRun}},
	"check_run":                   {containers: []container{cCheckRun}},
	"check_suite":                 {containers: []container{cCheckSuite}},
	"status":                      {containers: []container{cStatus}},
}

// githubAliases are event names that carry another event's payload: pull_request_target is the
// pull_request payload run in the base repository's context; Forgejo/Gitea Actions name a comment
// on a pull request pull_request_comment and deliver the issue_comment payload.
var githubAliases = map[string]string{
	"pull_request_target":  "pull_request",
	"pull_request_comment": "issue_comment",
}

// genericGitHub is Requirement 2.6: an event with no rule of its own distils whichever known
// containers it carries, in this order, and never falls back to the raw payload.
var genericGitHub = rule{name: "generic", containers: []container{
	cGenericComment, cReview, cGenericIssue, cGenericPull, cGenericLabel, cWorkflowRun, cCheckSuite, cCheckRun, cGenericStatus,
}}

func githubRule(forge Forge, eventName string) (string, rule) {
	event := strings.TrimSpace(eventName)
	name := event
	if a, ok := githubAliases[name]; ok {
		name = a
	} else if a, ok := forgejoAliases[name]; ok && forge == Forgejo {
		name = a
	}
	r, ok := githubRules[name]
	if !ok {
		r = genericGitHub
		if forge == Forgejo {
			r = forgejoGeneric
		}
	} else {
		r.name, r.implied = name, true
		if name == "issue_comment" || name == "pull_request_review_comment" {
			r.quietActions = commentQuietActions
		}
		if forge == Forgejo {
			r = forgejoRule(name, r)
		}
	}
	r.action = rootAction
	return event, r
}

var forgejoGeneric = rule{name: "generic", containers: []container{
	cGenericComment, cForgejoReview, cGenericIssue, cGenericPull, cGenericLabel, withUnlessCarried(cItemLabels, genericBeside),
	cWorkflowRun, cCheckSuite, cCheckRun, cGenericStatus,
}}

// forgejoAliases are the other names Gitea and Forgejo give an event whose rule exists under
// its Actions name: the webhook headers X-Gitea-Event-Type (issue_label, pull_request_label,
// pull_request_review_approved, …) and X-Gitea-Event (pull_request_approved, …), which is what
// a webhook receiver reads. pull_request_comment is both the Actions name of a pull request's
// issue comment and the X-Gitea-Event of a comment-type review; its rule (forgejoRule) reads
// whichever the payload holds.
var forgejoAliases = map[string]string{
	"issue_label":                  "issues",
	"pull_request_label":           "pull_request",
	"pull_request_review_approved": "pull_request_review",
	"pull_request_review_rejected": "pull_request_review",
	"pull_request_approved":        "pull_request_review",
	"pull_request_rejected":        "pull_request_review",
}

// cItemLabels is Requirement 2.2 on Gitea and Forgejo: their label events (action
// label_updated, label_cleared) carry no label object, only the item's labels, so the excerpt
// carries the names of the labels the item now has ("labels":["bug"]). label_cleared means the
// item has none left: its excerpt carries [] (Gitea 1.25 and 1.27 send the labels as they were
// before the clearing in that payload, which are not the item's labels any more).
var cItemLabels = container{out: "labels", scalar: true, actions: []string{"label_updated", "label_cleared"},
	fields: []field{{out: "labels", kind: kindCustom, fn: currentLabels}}}

// currentLabels lists the names of the pull request's (else the issue's) labels, in the
// payload's order ([] after label_cleared). A missing item yields nothing, a wrong-typed list
// is left out (omitWrongType), and a label without a name is skipped.
func currentLabels(st *state, _ map[string]any, at string) (value, bool) {
	if a, _ := st.root["action"].(string); a == "label_cleared" {
		return array{}, true
	}
	var list any
	found := false
	for _, k := range []string{"pull_request", "issue"} {
		if item, ok := st.root[k].(map[string]any); ok {
			list, found = item["labels"], true
			break
		}
	}
	if !found {
		return nil, false
	}
	if list == nil {
		return array{}, true // Gitea sends null for an item without labels
	}
	ls, ok := list.([]any)
	if !ok {
		st.omit(at, omitWrongType)
		return nil, false
	}
	out := array{}
	for i, l := range ls {
		m, _ := l.(map[string]any)
		name, _ := m["name"].(string)
		if v, ok := st.text(kindDisplay, nil, name, at+"["+strconv.Itoa(i)+"]"); ok {
			out = append(out, v)
		}
	}
	return out, true
}

// forgejoRule adapts a named rule to Gitea's and Forgejo's payloads.
func forgejoRule(name string, r rule) rule {
	switch name {
	case "pull_request_review":
		// The review hooks carry review {type, content}.
		r.containers = []container{cForgejoReview}
	case "pull_request_review_comment":
		// The review-comment hook may carry only that review object instead of a comment.
		r.containers = []container{cReviewComment, cForgejoReview}
	case "issue_comment":
		// Under pull_request_comment a webhook receiver gets a comment-type review's
		// pull request payload: the review, when there is no comment.
		r.containers = []container{cIssueComment, withUnlessCarried(cForgejoReview, []string{"comment"})}
	case "issues", "pull_request":
		r.containers = append(append([]container{}, r.containers...), cItemLabels)
	}
	return r
}

// forgejoReviewState maps Forgejo's review hook types to GitHub's review states.
func forgejoReviewState(s string) string {
	switch s {
	case "pull_request_review_approved":
		return "approved"
	case "pull_request_review_rejected":
		return "changes_requested"
	case "pull_request_review_comment":
		return "commented"
	}
	return s
}
