// Package rework implements the rework input gate of docs/rework.md (the ordered
// initial review input gate): it validates the gitea-agent.rework-input/v1 target and the
// gitea-agent.rework-provider-contract/v1 provider contract before any credential or request,
// refuses an existing output, makes two authenticated GET-only captures of a Gitea/Forgejo pull
// request, its Source Issue and every review's inline comments, derives a timeline and a
// rework / no_op / blocked decision, and publishes an immutable
// gitea-agent.rework-input-gate/v1 receipt atomically and without clobbering.
//
// It issues no request itself: every read goes through the Forgejo adapter's strict reader and
// its typed services (internal/forge/forgejo, NewReadOnlyClient and NewReader).
//
// Choices the spec leaves open (marker formats, the provider-contract schema, the receipt's
// canonical bytes, reason names) are documented in docs/rework.md; the wire names there are
// the constants of this package.
package rework
