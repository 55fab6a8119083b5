// Package gitlab is the GitLab forge adapter: it reads one issue or merge request, its
// discussions, the CI jobs of the captured head revision and the referenced actors' effective
// roles into the provider-neutral acquisition model (entity-context-snapshot v1, "Stable
// records and mutable state" GitLab mappings, the GitLab job status table, the GitLab review
// and entity state mappings), and it owns the GitLab notes used for status comments.
//
// Mapping decisions that the spec leaves to the adapter are documented in docs/gitlab.md; the
// ones that matter most:
//
//   - IDs are the global numeric ids (project, issue/MR, note, job, user) in base 10; the
//     iid is the display number only. Discussion threads use the opaque discussion id.
//   - System notes ("added 1 commit", "changed the description") are excluded: GitLab writes
//     their text, not the actor they are attributed to, so admitting them would attribute
//     forge-generated text to a human as a command source. They are events, not comments,
//     exactly like GitHub timeline events.
//   - GitLab has no formal review records: when the profile selects reviews the reviews scope
//     gets the partial history_unavailable gap and no review records.
//   - Checks are the jobs (retried ones included) of every pipeline whose sha equals the head
//     sha captured from the merge request at collection start.
//   - Roles come from members/all/:user_id (inherited membership included); bot identity comes
//     only from the users API's positive bot flag.
//
// Everything is fetched through gitlab.com/gitlab-org/api/client-go with retries that honour
// Retry-After and RateLimit-Reset, full pagination (keyset when the server offers a next link)
// and bounded concurrency; job logs are read through a separate bounded reader so that no more
// than max_source_bytes+1 bytes are ever read from the trace endpoint.
package gitlab
