package gitlab

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/forgectx/forgectx/internal/platform/inputfile"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// CIEnv is what a GitLab CI job tells forgectx about where it runs (predefined CI/CD
// variables). Kind is empty when the pipeline is not a merge-request pipeline: GitLab has no
// predefined variable for an issue, so the caller must name the entity.
type CIEnv struct {
	Ref       forge.Ref
	Kind      string // change_proposal, or "" when no merge request is in scope
	ServerURL string // CI_SERVER_URL
	JobURL    string // CI_JOB_URL
	// CommitSHA is the revision the job checked out (CI_COMMIT_SHA; in a merged-results
	// pipeline that is the merge commit GitLab built, which is what the job ran on).
	CommitSHA string
	// MergeRequestHeadSHA is the merge request's source-branch head in merged-results and
	// merge-train pipelines (CI_MERGE_REQUEST_SOURCE_BRANCH_SHA); empty otherwise.
	MergeRequestHeadSHA string
	// Trigger is the webhook event kind (issue, merge_request, note) when the entity came from
	// a webhook-triggered pipeline's TRIGGER_PAYLOAD; empty otherwise.
	Trigger string
	// TriggerError says why a present TRIGGER_PAYLOAD named no entity (unreadable, not a
	// webhook payload, an entity without a valid iid or project). It does not fail CIDefaults:
	// the other defaults stand and no entity is guessed.
	TriggerError error
	// TokenEnv names the variable to read the token from: GITLAB_TOKEN when it is set (an
	// access token the user configured), else CI_JOB_TOKEN when present; never the value.
	TokenEnv string
}

// CIDefaults derives the defaults from GitLab CI variables. getenv is its input, plus the
// file TRIGGER_PAYLOAD names in a webhook-triggered pipeline (read bounded, see
// ciDefaultsWith). Rules:
//   - API URL: CI_API_V4_URL, else CI_SERVER_URL + "/api/v4" (a sub-path install keeps its
//     path: https://example.com/gitlab/api/v4);
//   - project: in a merge-request pipeline CI_MERGE_REQUEST_PROJECT_ID (the MR's target
//     project, which differs from CI_PROJECT_ID for fork pipelines), else CI_PROJECT_ID, else
//     CI_PROJECT_PATH; numeric ids are preferred because they survive renames;
//   - number: CI_MERGE_REQUEST_IID (kind change_proposal); without it, a pipeline triggered by
//     a webhook (TRIGGER_PAYLOAD) names the entity of an issue, merge request or note event
//     and its project (the webhook's project may differ from the pipeline's); a payload that
//     cannot be used names no entity and is reported in TriggerError, not as a failure;
//   - commit: CI_COMMIT_SHA, the revision the job checked out; MergeRequestHeadSHA carries
//     CI_MERGE_REQUEST_SOURCE_BRANCH_SHA.
//
// It fails when GITLAB_CI is not "true" or when a present value is malformed, naming the
// variable.
func CIDefaults(getenv func(string) string) (CIEnv, error) {
	return ciDefaultsWith(getenv, readTriggerPayload)
}

// maxTriggerPayload bounds the webhook payload read from TRIGGER_PAYLOAD.
const maxTriggerPayload = 4 << 20

// readTriggerPayload reads the TRIGGER_PAYLOAD file: a regular file, at most
// maxTriggerPayload bytes.
func readTriggerPayload(path string) ([]byte, error) {
	return inputfile.ReadAll(path, nil, maxTriggerPayload)
}

// ciDefaultsWith is CIDefaults with the TRIGGER_PAYLOAD file reader supplied (tests pass the
// payload bytes). GitLab defines TRIGGER_PAYLOAD as a file variable, so its value is a path;
// a value starting with "{" is taken as the JSON itself.
func ciDefaultsWith(getenv func(string) string, readFile func(string) ([]byte, error)) (CIEnv, error) {
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	if get("GITLAB_CI") != "true" {
		return CIEnv{}, errors.New("gitlab ci: GITLAB_CI is not \"true\": not running in a GitLab CI job")
	}
	var e CIEnv
	e.Ref.Forge = "gitlab"
	e.ServerURL = get("CI_SERVER_URL")
	var err error
	if e.Ref.APIURL, err = ciAPIURL(get, e.ServerURL); err != nil {
		return CIEnv{}, err
	}
	iid := get("CI_MERGE_REQUEST_IID")
	if iid != "" {
		n, err := strconv.Atoi(iid)
		if err != nil || n < 1 || !numericID.MatchString(iid) {
			return CIEnv{}, fmt.Errorf("gitlab ci: CI_MERGE_REQUEST_IID %q: must be a positive integer", iid)
		}
		e.Ref.Number = n
		e.Kind = acquisition.KindChangeProposal
	}
	if e.Ref.Repo, err = ciProject(get, iid != ""); err != nil {
		return CIEnv{}, err
	}
	if e.Ref.Repo == "" {
		return CIEnv{}, errors.New("gitlab ci: CI_PROJECT_ID and CI_PROJECT_PATH: both unset")
	}
	if iid == "" {
		e.fromTrigger(getenv("TRIGGER_PAYLOAD"), readFile)
	}
	e.JobURL = get("CI_JOB_URL")
	e.CommitSHA = get("CI_COMMIT_SHA")
	if e.CommitSHA != "" && !validSHA(e.CommitSHA) {
		return CIEnv{}, fmt.Errorf("gitlab ci: CI_COMMIT_SHA %q: must be a lowercase Git object id", e.CommitSHA)
	}
	if iid != "" {
		e.MergeRequestHeadSHA = get("CI_MERGE_REQUEST_SOURCE_BRANCH_SHA")
		if e.MergeRequestHeadSHA != "" && !validSHA(e.MergeRequestHeadSHA) {
			return CIEnv{}, fmt.Errorf("gitlab ci: CI_MERGE_REQUEST_SOURCE_BRANCH_SHA %q: must be a lowercase Git object id", e.MergeRequestHeadSHA)
		}
	}
	switch {
	case getenv("GITLAB_TOKEN") != "":
		e.TokenEnv = "GITLAB_TOKEN"
	case getenv("CI_JOB_TOKEN") != "":
		e.TokenEnv = "CI_JOB_TOKEN"
	}
	return e, nil
}

// ciAPIURL is CI_API_V4_URL, else CI_SERVER_URL + "/api/v4", checked.
func ciAPIURL(get func(string) string, serverURL string) (string, error) {
	api := get("CI_API_V4_URL")
	switch {
	case api != "":
	case serverURL != "":
		api = strings.TrimSuffix(serverURL, "/") + "/api/v4"
	default:
		return "", errors.New("gitlab ci: CI_API_V4_URL and CI_SERVER_URL: both unset")
	}
	if _, err := parseAPIURL(api); err != nil {
		return "", fmt.Errorf("gitlab ci: api url: %w", err)
	}
	return api, nil
}

// ciProject is the first set project variable of projectVars(mr), checked ("" when none).
func ciProject(get func(string) string, mr bool) (string, error) {
	for _, k := range projectVars(mr) {
		v := get(k)
		if v == "" {
			continue
		}
		if k != "CI_PROJECT_PATH" && !numericID.MatchString(v) {
			return "", fmt.Errorf("gitlab ci: %s %q: must be a positive integer", k, v)
		}
		if k == "CI_PROJECT_PATH" {
			if err := validProjectPath(v); err != nil {
				return "", fmt.Errorf("gitlab ci: CI_PROJECT_PATH: %w", err)
			}
		}
		return v, nil
	}
	return "", nil
}

// fromTrigger takes the entity from a webhook-triggered pipeline's TRIGGER_PAYLOAD (inline
// JSON or a file path). No entity is guessed from a payload that cannot be read: the caller
// needs an explicit --number (and fails for lack of one), and can report why (TriggerError).
func (e *CIEnv) fromTrigger(tp string, readFile func(string) ([]byte, error)) {
	if strings.TrimSpace(tp) == "" {
		return
	}
	raw := []byte(tp)
	var err error
	if !strings.HasPrefix(strings.TrimSpace(tp), "{") {
		if raw, err = readFile(tp); err != nil {
			e.TriggerError = fmt.Errorf("gitlab ci: TRIGGER_PAYLOAD: unreadable: %w", err)
			return
		}
	}
	ev, err := triggerEntity(raw)
	switch {
	case err != nil:
		e.TriggerError = fmt.Errorf("gitlab ci: TRIGGER_PAYLOAD: %w", err)
	case ev.kind != "":
		e.Ref.Number, e.Kind, e.Trigger = ev.iid, ev.kind, ev.event
		e.Ref.Repo = strconv.FormatInt(ev.project, 10)
	}
}

func projectVars(mr bool) []string {
	if mr {
		return []string{"CI_MERGE_REQUEST_PROJECT_ID", "CI_PROJECT_ID", "CI_PROJECT_PATH"}
	}
	return []string{"CI_PROJECT_ID", "CI_PROJECT_PATH"}
}

// triggered is the entity a webhook payload names.
type triggered struct {
	event   string // issue, merge_request or note
	kind    string // work_item, change_proposal, or "" when the event names no entity
	iid     int
	project int64
}

// triggerEntity reads the entity of a GitLab webhook payload (untrusted JSON): an issue or
// work item event (object_attributes.iid in object_attributes.project_id), a merge request
// event (object_attributes.iid in object_attributes.target_project_id), or a note event on an
// issue or merge request (issue.iid / merge_request.iid in its project). Other events (push,
// pipeline, …) name no entity and give a zero result. A named entity with a missing or
// non-positive iid or project id is an error naming the field.
func triggerEntity(raw []byte) (triggered, error) {
	var p triggerPayload
	if err := json.Unmarshal(raw, &p); err != nil {
		return triggered{}, fmt.Errorf("not a GitLab webhook payload: %w", err)
	}
	project := p.ProjectID
	if p.Project != nil && p.Project.ID > 0 {
		project = p.Project.ID
	}
	var (
		t   triggered
		err error
	)
	switch p.ObjectKind {
	case "issue", "work_item":
		if p.Attrs == nil {
			return t, fmt.Errorf("%s event: object_attributes: missing", p.ObjectKind)
		}
		t, err = namedEntity(p.ObjectKind, acquisition.KindWorkItem, "object_attributes.iid", p.Attrs.IID, p.Attrs.ProjectID, project)
	case "merge_request":
		if p.Attrs == nil {
			return t, errors.New("merge_request event: object_attributes: missing")
		}
		t, err = namedEntity("merge_request", acquisition.KindChangeProposal, "object_attributes.iid", p.Attrs.IID, p.Attrs.TargetProjectID, project)
	case "note":
		t, err = p.noteEntity(project)
	default:
		return triggered{}, nil
	}
	if err != nil || t.event == "" {
		return triggered{}, err
	}
	if t.project < 1 {
		return triggered{}, fmt.Errorf("%s event: project id: missing or not a positive integer", t.event)
	}
	return t, nil
}

// triggerPayload is the part of a GitLab webhook payload that names the entity.
type triggerPayload struct {
	ObjectKind string `json:"object_kind"`
	ProjectID  int64  `json:"project_id"`
	Project    *struct {
		ID int64 `json:"id"`
	} `json:"project"`
	Attrs *struct {
		IID             int64  `json:"iid"`
		ProjectID       int64  `json:"project_id"`
		TargetProjectID int64  `json:"target_project_id"`
		NoteableType    string `json:"noteable_type"`
	} `json:"object_attributes"`
	Issue *struct {
		IID       int64 `json:"iid"`
		ProjectID int64 `json:"project_id"`
	} `json:"issue"`
	MergeRequest *struct {
		IID             int64 `json:"iid"`
		TargetProjectID int64 `json:"target_project_id"`
	} `json:"merge_request"`
}

// noteEntity is the entity a note event is on: an issue or a merge request (its own project
// id wins over the payload's); a note on a commit or snippet names none (a zero result).
func (p *triggerPayload) noteEntity(project int64) (triggered, error) {
	switch {
	case p.Attrs != nil && p.Attrs.NoteableType == "Issue" && p.Issue != nil:
		return namedEntity("note", acquisition.KindWorkItem, "issue.iid", p.Issue.IID, p.Issue.ProjectID, project)
	case p.Attrs != nil && p.Attrs.NoteableType == "MergeRequest" && p.MergeRequest != nil:
		return namedEntity("note", acquisition.KindChangeProposal, "merge_request.iid", p.MergeRequest.IID, p.MergeRequest.TargetProjectID, project)
	}
	return triggered{}, nil
}

// namedEntity is the trigger of an event that names an entity: the iid (read from field, which
// the error names) must fit a positive int32, and the entity's own project id, when given,
// wins over the payload's project.
func namedEntity(event, kind, field string, iid, own, project int64) (triggered, error) {
	if own > 0 {
		project = own
	}
	if iid < 1 || iid > math.MaxInt32 {
		return triggered{}, fmt.Errorf("%s event: %s %d: must be a positive integer", event, field, iid)
	}
	return triggered{event: event, kind: kind, iid: int(iid), project: project}, nil
}
