package distill

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// GitLab rules: the same requirements with GitLab's field names (iid, url, note, description,
// ref, build_*). The author is still a bare login string (user.username at the payload root).

// gitlabEvents maps X-Gitlab-Event header values and object_kind values to the object_kind whose
// rule applies. Looked up, never ranged over.
var gitlabEvents = map[string]string{
	"note hook":               "note",
	"confidential note hook":  "note",
	"note":                    "note",
	"merge request hook":      "merge_request",
	"merge_request":           "merge_request",
	"issue hook":              "issue",
	"confidential issue hook": "issue",
	"issue":                   "issue",
	"pipeline hook":           "pipeline",
	"pipeline":                "pipeline",
	"job hook":                "build",
	"build":                   "build",
	"job":                     "build",
}

var (
	glAuthor = field{out: "author", from: []path{rp("user", "username")}, kind: kindDisplay}

	// A note (comment on a merge request, issue, commit or snippet): the diff position (path and
	// line) before the body, then url and author — Requirement 1.1/1.3 in GitLab's names.
	glNoteFields = []field{
		{out: "noteable_type", from: []path{p("noteable_type")}, kind: kindDisplay},
		{out: "new_path", from: []path{p("position", "new_path")}, kind: kindPath},
		{out: "new_line", from: []path{p("position", "new_line")}, kind: kindInt},
		{out: "old_path", from: []path{p("position", "old_path")}, kind: kindPath},
		{out: "old_line", from: []path{p("position", "old_line")}, kind: kindInt},
		{out: "note", from: []path{p("note")}, kind: kindText},
		{out: "url", from: []path{p("url")}, kind: kindURL},
		glAuthor,
	}

	// Requirement 2.1/2.2: iid, title, state, url (+ draft for a merge request); the label
	// change is the event when the update carries one.
	glIssueFields = []field{
		{out: "iid", from: []path{p("iid")}, kind: kindInt},
		{out: "title", from: []path{p("title")}, kind: kindDisplay},
		{out: "state", from: []path{p("state")}, kind: kindEnum},
		{out: "url", from: []path{p("url")}, kind: kindURL},
		{out: "labels_added", kind: kindCustom, fn: labelDiff(true)},
		{out: "labels_removed", kind: kindCustom, fn: labelDiff(false)},
	}
	glMergeRequestFields = []field{
		glIssueFields[0], glIssueFields[1], glIssueFields[2], glIssueFields[3],
		{out: "draft", from: []path{p("draft"), p("work_in_progress")}, kind: kindBool},
		glIssueFields[4], glIssueFields[5],
	}
	// The merge request or issue a note or pipeline payload carries, for events without a rule.
	glRefFields = []field{
		{out: "iid", from: []path{p("iid")}, kind: kindInt},
		{out: "title", from: []path{p("title")}, kind: kindDisplay},
		{out: "state", from: []path{p("state")}, kind: kindEnum},
		{out: "url", from: []path{p("url")}, kind: kindURL},
	}

	// Requirement 2.3 for a pipeline: identity, status (GitLab's status is also the conclusion),
	// url, ref; and the failed jobs, which are what a session diagnoses.
	glPipelineFields = []field{
		{out: "id", from: []path{p("id")}, kind: kindInt},
		{out: "name", from: []path{p("name")}, kind: kindDisplay},
		{out: "status", from: []path{p("status")}, kind: kindEnum},
		{out: "url", kind: kindCustom, fn: pipelineURL},
		{out: "ref", from: []path{p("ref")}, kind: kindPath},
		{out: "failed_jobs", kind: kindCustom, fn: failedJobs},
	}

	// Requirement 2.3 for a job (object_kind "build"), fields at the payload root.
	glBuildFields = []field{
		{out: "build_id", from: []path{p("build_id")}, kind: kindInt},
		{out: "build_name", from: []path{p("build_name")}, kind: kindDisplay},
		{out: "build_stage", from: []path{p("build_stage")}, kind: kindDisplay},
		{out: "build_status", from: []path{p("build_status")}, kind: kindEnum},
		// GitLab fills build_failure_reason on successful jobs too; it means something only
		// when the job failed.
		{out: "build_failure_reason", from: []path{p("build_failure_reason")}, kind: kindEnum,
			when: func(c map[string]any) bool { s, _ := c["build_status"].(string); return s == "failed" }},
		{out: "url", kind: kindCustom, fn: jobURL},
		{out: "ref", from: []path{p("ref")}, kind: kindPath},
	}
)

var (
	glNote         = container{out: "note", src: []string{"object_attributes"}, fields: glNoteFields}
	glMergeRequest = container{out: "merge_request", src: []string{"object_attributes"}, fields: glMergeRequestFields}
	glIssue        = container{out: "issue", src: []string{"object_attributes"}, fields: glIssueFields}
	glPipeline     = container{out: "pipeline", src: []string{"object_attributes"}, fields: glPipelineFields}
	glBuild        = container{out: "job", fields: glBuildFields}

	glRules = map[string]rule{
		"note":          {containers: []container{glNote}},
		"merge_request": {containers: []container{glMergeRequest}},
		"issue":         {containers: []container{glIssue}},
		"pipeline":      {containers: []container{glPipeline}},
		"build":         {containers: []container{glBuild}},
	}

	// glGeneric is Requirement 2.6 for GitLab: the merge request or issue a payload of another
	// kind carries at its root.
	glGeneric = rule{name: "generic", containers: []container{
		{out: "merge_request", src: []string{"merge_request"}, fields: glRefFields},
		{out: "issue", src: []string{"issue"}, fields: glRefFields},
	}}
)

// gitlabRule picks the rule from the event name (X-Gitlab-Event or an object_kind), else from
// the payload's object_kind.
func gitlabRule(eventName string, root map[string]any) (string, rule) {
	name := strings.ToLower(strings.TrimSpace(eventName))
	if name == "" {
		kind, _ := root["object_kind"].(string)
		name = strings.ToLower(kind)
	}
	event := strings.ReplaceAll(name, " ", "_")
	r := glGeneric
	if kind, ok := gitlabEvents[name]; ok {
		r = glRules[kind]
		r.name, r.implied = kind, true
		event = kind
	}
	r.action = []path{rp("object_attributes", "action")}
	return event, r
}

// labelDiff computes the label titles added (or removed) by an update from changes.labels.
func labelDiff(added bool) func(st *state, c map[string]any, at string) (value, bool) {
	return func(st *state, _ map[string]any, at string) (value, bool) {
		ch, ok := lookup(st.root, []string{"changes", "labels"})
		if !ok {
			return nil, false
		}
		m, ok := ch.(map[string]any)
		if !ok {
			st.omit(at, omitWrongType)
			return nil, false
		}
		prev, cur := labelTitles(m["previous"]), labelTitles(m["current"])
		from, minus := cur, prev
		if !added {
			from, minus = prev, cur
		}
		var names []string
		for t := range from {
			if !minus[t] {
				names = append(names, t)
			}
		}
		sort.Strings(names)
		var out array
		for i, t := range names {
			if v, ok := st.text(kindDisplay, nil, t, at+"["+strconv.Itoa(i)+"]"); ok {
				out = append(out, v)
			}
		}
		return out, len(out) > 0
	}
}

func labelTitles(v any) map[string]bool {
	set := map[string]bool{}
	list, _ := v.([]any)
	for _, e := range list {
		if m, ok := e.(map[string]any); ok {
			if t, ok := m["title"].(string); ok && t != "" {
				set[t] = true
			}
		}
	}
	return set
}

// maxFailedJobs bounds failed_jobs; a pipeline with more failures lists the first ones by id.
const maxFailedJobs = 20

// failedJobs lists the pipeline's failed builds (id, name, stage, failure_reason) sorted by id.
func failedJobs(st *state, _ map[string]any, at string) (value, bool) {
	builds, ok := st.root["builds"].([]any)
	if !ok {
		return nil, false
	}
	type job struct {
		id int64
		m  map[string]any
	}
	var failed []job
	for _, b := range builds {
		m, ok := b.(map[string]any)
		if !ok {
			continue
		}
		if s, _ := m["status"].(string); s != "failed" {
			continue
		}
		n, _ := m["id"].(json.Number)
		id, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil {
			continue
		}
		failed = append(failed, job{id, m})
	}
	sort.Slice(failed, func(i, j int) bool { return failed[i].id < failed[j].id })
	var out array
	for i, j := range failed {
		if i == maxFailedJobs {
			break
		}
		o, ok := st.fields([]field{
			{out: "id", from: []path{p("id")}, kind: kindInt},
			{out: "name", from: []path{p("name")}, kind: kindDisplay},
			{out: "stage", from: []path{p("stage")}, kind: kindDisplay},
			{out: "failure_reason", from: []path{p("failure_reason")}, kind: kindEnum},
		}, j.m, at+"["+strconv.Itoa(i)+"]")
		if ok {
			out = append(out, o)
		}
	}
	return out, len(out) > 0
}

// pipelineURL is object_attributes.url, or the project's web URL plus /-/pipelines/<id> for
// payloads from GitLab versions that do not send it.
func pipelineURL(st *state, c map[string]any, at string) (value, bool) {
	if s, ok := c["url"].(string); ok && s != "" {
		return st.text(kindURL, nil, s, at)
	}
	return st.projectURL(c["id"], "/-/pipelines/", at, []string{"project", "web_url"})
}

// jobURL builds the job's web URL: the job hook carries none, but it carries the project's
// (repository.homepage, project.web_url) and the job id.
func jobURL(st *state, c map[string]any, at string) (value, bool) {
	return st.projectURL(c["build_id"], "/-/jobs/", at, []string{"repository", "homepage"}, []string{"project", "web_url"})
}

func (st *state) projectURL(id any, infix, at string, bases ...[]string) (value, bool) {
	n, ok := id.(json.Number)
	if !ok {
		return nil, false
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil || i < 0 {
		return nil, false
	}
	for _, b := range bases {
		if s, ok := lookup(st.root, b); ok {
			if base, ok := s.(string); ok && base != "" {
				return st.text(kindURL, nil, strings.TrimRight(base, "/")+infix+strconv.FormatInt(i, 10), at)
			}
		}
	}
	return nil, false
}
