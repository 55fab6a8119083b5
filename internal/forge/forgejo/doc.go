// Package forgejo is the Forgejo (and Gitea) forge adapter: it reads an issue or pull request
// and its selected sources into the neutral acquisition model (entity-context-snapshot v1:
// "Stable records and mutable state" for Forgejo numeric IDs and lowercase full_name; the
// Forgejo rows of the entity-state, review-state, review-timestamp and Actions status tables;
// "Relationships, history, and collection profiles" for actors and threads), and it is the
// forge.Commenter for status comments (issue comments API). docs/forgejo.md is the user
// documentation.
//
// # Client
//
// The snapshot (Acquire) reads only through the typed services of the Reader (services.go,
// lenient.go), built over one http.Client that stacks retries (hashicorp/go-retryablehttp:
// transport errors, 429, 5xx; POST is never retried), request statistics and an innermost
// transport (a cassette recorder or replayer in record/replay runs), with the
// "Authorization: token" header. Its lenient methods decode into the wire shapes of
// code.gitea.io/sdk/gitea (Forgejo's /api/v1 is Gitea-compatible) except reviews (nativeReview:
// the SDK's PullReview has no created_at, the spec's review-timestamp fallback, and cannot tell
// an absent submitted_at from a zero one) and Actions tasks (task: the SDK's time.Time fields
// cannot tell an absent run_started_at from a real one; Forgejo encodes "never started" as the
// Unix epoch). The status commenter's own-comment search and the reconciler's run lookup read
// through the Reader too; the SDK client itself, its /version probe disabled, remains only for
// the commenter's writes (the Reader sends GET alone).
//
// Every list is read completely: `page`/`limit` (limit 50, Forgejo's default
// MAX_RESPONSE_ITEMS), stopping when X-Total-Count items were read, on an empty page, or, with
// no X-Total-Count, when there is no Link rel="next".
//
// # Strict reader
//
// NewReadOnlyClient and NewReader are the strict way in for a caller that decides on a whole
// collection and archives the provider's bytes (the rework gate): typed services per API area
// (Reader.Repo's Pulls, Issues, Reviews and ReviewComments) hand back every object and list row
// as sent, with a typed view and each answer's provenance, and page by the same
// forge.TotalCountRules with stricter completeness checks (reader.go; docs/forgejo.md,
// "Strict reader"). The same services' lenient methods are the snapshot's (lenient.go; "Lenient
// walk"): a failed page skipped and counted as lost, a drift re-read, the pages counted.
//
// # Mappings and decisions
//
//   - IDs: numeric repository, issue, pull request, comment, review, task and user ids in
//     base 10. A pull request's entity id is the pull request's own id (not its issue's).
//     Forgejo's pseudo-users (Ghost -1, the Actions user -2) have no account id: their
//     references are null.
//   - Reviews: APPROVED, REQUEST_CHANGES, COMMENT, DISMISSED map to approved,
//     changes_requested, commented, dismissed; PENDING and REQUEST_REVIEW rows are omitted.
//     A submitted row with dismissed: true is dismissed (Forgejo keeps the old state string on a
//     dismissed review). Forgejo does not expose who dismissed a review or when, so dismissed_by
//     is a null reference and dismissed_at is absent.
//   - Threads: see the rule on threadKey (Forgejo's own conversations: path + side + line
//     across reviews; first comment's id; created_at then id; resolver of the first comment);
//     outdated is always false.
//   - Checks: Actions tasks whose head_sha equals the pull request head captured at the start,
//     through the spec's Forgejo status table. completed_at is the task's updated_at (the
//     endpoint has no stopped time). Forgejo's API offers no log download for a task, so every
//     selected log is reported with outcome unsupported (the check_logs scope). The head's
//     commit statuses are read beside a complete tasks list; each one no head task accounts
//     for (external CI, a job waiting for a runner or blocked on needs:) is a checks
//     unsupported gap (unaccounted), so no job vanishes and no head looks check-free.
//   - Actors: GET /repos/{owner}/{repo}/collaborators/{user}/permission, accepted only when
//     the answer's user id equals the actor's id; owner and admin map to admin, write to
//     write, read to read, none to none. A 404 leaves the role null and unverified (no gap);
//     401/403 add authorization_failed and other failures fetch_failed to the actors scope.
//   - Bots: Forgejo has no positive bot flag (no user `type`), so the adapter reports every
//     actor as kind human. It never guesses from a login or a "[bot]" suffix. Bot identity is
//     the operator's decision: only identities in the operator's bot registry (numeric Forgejo
//     user id on this host) may be treated as bots, which the assembler has to apply for
//     Forgejo itself (docs/forgejo.md, "Bots: a trust decision").
//   - agent_runs: receipt comments (docs/receipts.md, internal/status) among the issue comments;
//     the run ID is the comment's numeric id and its author the run's author. The assembler
//     admits only receipts by a registered bot, and on Forgejo no actor is kind bot (above).
package forgejo
