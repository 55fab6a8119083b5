package distill

import "strings"

// apiContainers names, per event, the payload key under which the webhook carries the object the
// REST API returns for it. The status event's fields sit at the payload root.
var apiContainers = map[string]string{
	"issue_comment":               "comment",
	"pull_request_review_comment": "comment",
	"pull_request_review":         "review",
	"issues":                      "issue",
	"pull_request":                "pull_request",
	"workflow_run":                "workflow_run",
	"check_run":                   "check_run",
	"check_suite":                 "check_suite",
	"status":                      "",
}

// Actions a poller synthesises for a newly seen object.
const (
	actionCreated   = "created"
	actionSubmitted = "submitted"
)

// fromAPIObject distils an object fetched from the GitHub or Forgejo REST API (for example
// GET /repos/{o}/{r}/issues/comments/{id}, .../pulls/comments/{id} or
// .../pulls/{n}/reviews/{id}) as the webhook event eventName with the given action would carry
// it, through the same rules as Excerpt: the excerpt has exactly the fields the webhook's would
// (Requirement 4). The object is placed in the event's container; nothing else of a webhook
// payload is invented. An event without a REST counterpart, or GitLab (whose REST notes carry no
// web URL), yields {} with warnNothingKnown.
func fromAPIObject(forge Forge, eventName, action string, object []byte, opts Options) ([]byte, Report) {
	opts = opts.withDefaults()
	rep := Report{Forge: forge}
	if forge != gitHub && forge != Forgejo {
		rep.Warning = warnUnknownForge
		return empty, rep
	}
	key, ok := apiContainers[strings.TrimSpace(eventName)]
	if !ok {
		rep.Warning = warnNothingKnown
		return empty, rep
	}
	obj, warn := decodeObject(object, opts.MaxPayloadBytes)
	if warn != "" {
		rep.Warning = warn
		return empty, rep
	}
	root := obj
	if key != "" {
		root = map[string]any{key: obj}
	}
	if action != "" {
		root["action"] = action
	} else {
		delete(root, "action")
	}
	return distil(forge, eventName, root, opts, rep)
}
