package filter

import (
	"sort"
	"strings"
)

// MinSecretEnvBytes is the shortest literal the filter registers, from SecretEnvValues or
// given to New directly: shorter values ("1", "true", "main") would redact ordinary words
// everywhere and reveal themselves by where the markers land.
const MinSecretEnvBytes = 8

// secretEnvNames are secret whatever their suffix.
var secretEnvNames = map[string]bool{
	"GITHUB_TOKEN": true, "GH_TOKEN": true, "GITEA_TOKEN": true, "FORGEJO_TOKEN": true,
	"CI_JOB_TOKEN": true, "CI_JOB_JWT": true, "CI_JOB_JWT_V2": true, "CI_REGISTRY_PASSWORD": true,
	"CI_DEPLOY_PASSWORD": true, "ACTIONS_RUNTIME_TOKEN": true, "ACTIONS_ID_TOKEN_REQUEST_TOKEN": true,
	"NPM_TOKEN": true, "NODE_AUTH_TOKEN": true, "OPENAI_API_KEY": true, "ANTHROPIC_API_KEY": true,
}

// secretEnvSuffixes make a name secret when the upper-cased name ends with one of them.
var secretEnvSuffixes = []string{"_TOKEN", "_SECRET", "_PASSWORD", "_PASSWD", "_PASSPHRASE",
	"_KEY", "_PAT", "_CREDENTIALS", "_AUTH", "_JWT"}

// notSecretEnvSuffixes override the suffix rule for names that are public by convention.
var notSecretEnvSuffixes = []string{"_PUBLIC_KEY", "CACHE_KEY", "_SORT_KEY", "_PARTITION_KEY"}

// secretEnvName reports whether an environment variable name looks secret by the documented
// rule: one of a fixed list of CI credential names, or an upper-cased name ending in _TOKEN,
// _SECRET, _PASSWORD, _PASSWD, _PASSPHRASE, _KEY, _PAT, _CREDENTIALS, _AUTH or _JWT, except
// names ending in _PUBLIC_KEY, CACHE_KEY, _SORT_KEY or _PARTITION_KEY.
func secretEnvName(name string) bool {
	n := strings.ToUpper(name)
	if secretEnvNames[n] {
		return true
	}
	return !hasAnySuffix(n, notSecretEnvSuffixes) && hasAnySuffix(n, secretEnvSuffixes)
}

// SecretEnvValues returns the literal values of the variables in environ ("NAME=value") that
// are named in names or whose name secretEnvName accepts. Values shorter than
// MinSecretEnvBytes are ignored; a multi-line value also contributes each of its lines that is
// long enough (a log may print it line by line). The result is deduplicated and ordered
// longest first (then bytewise), so overlapping literals redact whole.
func SecretEnvValues(environ []string, names []string) []string {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	seen := map[string]bool{}
	var out []string
	add := func(v string) {
		if len(v) >= MinSecretEnvBytes && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || !(want[k] || secretEnvName(k)) {
			continue
		}
		add(v)
		if strings.ContainsAny(v, "\r\n") {
			for _, line := range strings.FieldsFunc(v, func(r rune) bool { return r == '\n' || r == '\r' }) {
				add(strings.TrimSpace(line))
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i]) != len(out[j]) {
			return len(out[i]) > len(out[j])
		}
		return out[i] < out[j]
	})
	return out
}
