package forgejo

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// ActionsDefaults are the values `forgectx run --forge forgejo` takes from a Forgejo Actions
// job environment when no flag overrides them.
type ActionsDefaults struct {
	Ref        forge.Ref
	EntityKind string // work_item or change_proposal (from the event payload)
	ServerURL  string // the instance's web URL
	JobURL     string // the workflow run's web page (Forgejo exposes no job index to the job)
	TokenEnv   string // name of the variable holding the job token (never its value)
	HeadSHA    string // the event's head revision, when the payload names one
}

// lookup prefers the native FORGEJO_<name> variable and falls back to the GITHUB_<name>
// compatibility variable every Forgejo runner also sets.
func lookup(getenv func(string) string, name string) string {
	if v := getenv("FORGEJO_" + name); v != "" {
		return v
	}
	return getenv("GITHUB_" + name)
}

// ActionsEnvironmentDefaults derives the Ref and job URL from a Forgejo Actions environment.
// It is pure: getenv supplies the variables and event is the content of the file named by
// FORGEJO_EVENT_PATH / GITHUB_EVENT_PATH (nil when unreadable). The API URL is
// FORGEJO_API_URL / GITHUB_API_URL when set, else the server URL plus /api/v1; the entity number comes from the event payload (pull_request.number, else
// issue.number) or, failing that, from a refs/pull/<n>/… ref. Every missing or malformed
// value is an error naming the variable.
func ActionsEnvironmentDefaults(getenv func(string) string, event []byte) (ActionsDefaults, error) {
	var d ActionsDefaults
	server := strings.TrimRight(lookup(getenv, "SERVER_URL"), "/")
	if server == "" {
		return d, errors.New("forgejo actions: FORGEJO_SERVER_URL / GITHUB_SERVER_URL: required")
	}
	if !strings.HasPrefix(server, "https://") && !strings.HasPrefix(server, "http://") {
		return d, fmt.Errorf("forgejo actions: server URL %q: must be an http(s) URL", server)
	}
	repo := lookup(getenv, "REPOSITORY")
	if _, _, err := splitRepo(repo); err != nil {
		return d, fmt.Errorf("forgejo actions: FORGEJO_REPOSITORY / GITHUB_REPOSITORY: %w", err)
	}
	d.ServerURL = server
	api := server + "/api/v1"
	// The runner states the API URL itself (GITHUB_API_URL, the server URL + /api/v1 on every
	// Forgejo runner); it wins because it is the address the instance gave the job, and it
	// must be a URL New accepts.
	if v := strings.TrimRight(lookup(getenv, "API_URL"), "/"); v != "" {
		if _, err := New(Options{APIURL: v}); err != nil {
			return d, fmt.Errorf("forgejo actions: FORGEJO_API_URL / GITHUB_API_URL %q: must be an http(s) URL ending in /api/v1", v)
		}
		api = v
	}
	d.Ref = forge.Ref{Forge: Forge, APIURL: api, Repo: repo}

	number, kind, head, err := eventEntity(event)
	if err != nil {
		return d, fmt.Errorf("forgejo actions: event payload: %w", err)
	}
	if number == 0 {
		number = pullFromRef(lookup(getenv, "REF"))
		if number > 0 {
			kind = acquisition.KindChangeProposal
		}
	}
	if number <= 0 {
		return d, errors.New("forgejo actions: no issue or pull request number in the event payload or in FORGEJO_REF / GITHUB_REF")
	}
	d.Ref.Number, d.EntityKind, d.HeadSHA = number, kind, head

	if run := lookup(getenv, "RUN_NUMBER"); run != "" {
		n, err := strconv.Atoi(run)
		if err != nil || n <= 0 {
			return d, fmt.Errorf("forgejo actions: FORGEJO_RUN_NUMBER / GITHUB_RUN_NUMBER %q: must be a positive integer", run)
		}
		// Forgejo addresses a run's page by its per-repository index (the run number).
		d.JobURL = fmt.Sprintf("%s/%s/actions/runs/%d", server, repo, n)
	}
	switch {
	case getenv("FORGEJO_TOKEN") != "":
		d.TokenEnv = "FORGEJO_TOKEN"
	case getenv("GITHUB_TOKEN") != "":
		d.TokenEnv = "GITHUB_TOKEN"
	}
	return d, nil
}

// eventEntity reads the entity from an Actions event payload (untrusted JSON).
func eventEntity(event []byte) (int, string, string, error) {
	if len(event) == 0 {
		return 0, "", "", nil
	}
	var ev struct {
		PullRequest *struct {
			Number int `json:"number"`
			Head   *struct {
				SHA string `json:"sha"`
			} `json:"head"`
		} `json:"pull_request"`
		Issue *struct {
			Number      int             `json:"number"`
			PullRequest json.RawMessage `json:"pull_request"`
		} `json:"issue"`
	}
	if err := json.Unmarshal(event, &ev); err != nil {
		return 0, "", "", fmt.Errorf("not a JSON object: %w", err)
	}
	switch {
	case ev.PullRequest != nil && ev.PullRequest.Number > 0:
		head := ""
		if ev.PullRequest.Head != nil {
			if sha, ok := normOID(ev.PullRequest.Head.SHA); ok {
				head = sha
			}
		}
		return ev.PullRequest.Number, acquisition.KindChangeProposal, head, nil
	case ev.Issue != nil && ev.Issue.Number > 0:
		kind := acquisition.KindWorkItem
		if len(ev.Issue.PullRequest) > 0 && string(ev.Issue.PullRequest) != "null" {
			kind = acquisition.KindChangeProposal // a comment on a pull request
		}
		return ev.Issue.Number, kind, "", nil
	}
	return 0, "", "", nil
}

// pullFromRef returns n for refs/pull/<n>/head or refs/pull/<n>/merge, else 0.
func pullFromRef(ref string) int {
	rest, ok := strings.CutPrefix(ref, "refs/pull/")
	if !ok {
		return 0
	}
	num, _, _ := strings.Cut(rest, "/")
	n, err := strconv.Atoi(num)
	if err != nil || n <= 0 || strconv.Itoa(n) != num {
		return 0
	}
	return n
}
