package snapshot

import (
	"strings"

	"github.com/forgectx/forgectx/internal/snapshot/canon"
)

// Structural value rules (spec "Canonical bytes", structural strings). They are hand-written
// byte loops equivalent to the schema patterns, so that 100k IDs cost no regexp machinery;
// schema validation still re-checks every emitted value with the bundle's RE2 patterns.

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// structuralID: ^[A-Za-z0-9][A-Za-z0-9._:=-]*$ (common.schema.json structural_id).
func structuralID(s string) bool {
	return idPattern(s, "._:=-")
}

// githubNodeID: ^[A-Za-z0-9][A-Za-z0-9_=-]*$.
func githubNodeID(s string) bool { return idPattern(s, "_=-") }

// gitlabDiscussionID: ^[A-Za-z0-9][A-Za-z0-9._:-]*$.
func gitlabDiscussionID(s string) bool { return idPattern(s, "._:-") }

// numericID: ^[1-9][0-9]*$ (GitLab and Forgejo global IDs, base 10, no leading zeroes).
func numericID(s string) bool {
	if s == "" || s[0] < '1' || s[0] > '9' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func idPattern(s, extra string) bool {
	if s == "" || !isAlnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isAlnum(s[i]) && strings.IndexByte(extra, s[i]) < 0 {
			return false
		}
	}
	return true
}

// forgeRecordID applies the forge's ID mapping to an entity, record, actor, check or
// agent-run ID: GitHub node IDs, GitLab/Forgejo base-10 numeric IDs.
func forgeRecordID(forge, id string) bool {
	if forge == "github" {
		return githubNodeID(id)
	}
	return numericID(id)
}

// forgeThreadID applies the forge's thread ID mapping: GitHub node IDs, GitLab opaque
// discussion IDs, Forgejo numeric IDs.
func forgeThreadID(forge, id string) bool {
	switch forge {
	case "github":
		return githubNodeID(id)
	case "gitlab":
		return gitlabDiscussionID(id)
	}
	return numericID(id)
}

// gitOID: ^[0-9a-f]{40}([0-9a-f]{24})?$ (lowercase SHA-1 or SHA-256 object IDs).
func gitOID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	return canon.IsLowerHex(s)
}

// recordKey: ^[0-9a-f]{64}$.
func recordKeyOK(s string) bool { return len(s) == 64 && canon.IsLowerHex(s) }

// repositoryPath applies common.schema.json repository_path and the producer-side rules: the
// printable-ASCII allow-list, no leading or trailing slash, no empty, "." or ".." segment, no
// percent sign (so no percent-encoded dot, slash or backslash), no backslash or control
// character (outside the allow-list).
func repositoryPath(s string) bool {
	if s == "" || s[0] == '/' || s[len(s)-1] == '/' || strings.Contains(s, "//") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isAlnum(c) || strings.IndexByte("._/~!$&()+,;=:@#[]{} -", c) >= 0 {
			continue
		}
		return false
	}
	for _, seg := range strings.Split(s, "/") {
		if seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// sourceRepository applies the index source.repository rules: a repository path with at least
// two segments; GitHub and Forgejo additionally use lowercase owner/name of [a-z0-9_.-].
func sourceRepository(forge, s string) bool {
	if !repositoryPath(s) || !strings.Contains(s, "/") {
		return false
	}
	if forge == "github" || forge == "forgejo" {
		owner, name, ok := strings.Cut(s, "/")
		if !ok || strings.Contains(name, "/") {
			return false
		}
		for _, part := range []string{owner, name} {
			if part == "" {
				return false
			}
			for i := 0; i < len(part); i++ {
				c := part[i]
				if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
					return false
				}
			}
		}
	}
	return true
}

// jsonSafeASCII reports whether s can be written as a JSON string by quoting alone under
// RFC 8785 (printable ASCII without '"' or '\').
func jsonSafeASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
