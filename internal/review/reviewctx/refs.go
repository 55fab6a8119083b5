package reviewctx

import (
	"errors"
	"net/url"
	"regexp"
	"sort"
	"strings"
)

// Recognizer types (toolkit-authored; no configurable regular expressions).
const (
	recognizerIssueKey = "issue_key"
	recognizerHTTPSURL = "https_url"
	recognizerExplicit = "explicit"
)

// Resource classes of context records.
const (
	ResourceIssue       = "issue"
	resourceDocument    = "document"
	ResourceRemediation = "remediation_thread"
	resourceCIOutcome   = "ci_outcome"
	// resourceDiscussion and resourceMetadata are the forge-owned classes of generic
	// discussions and the merge-request metadata projection.
	resourceDiscussion = "discussion"
	resourceMetadata   = "merge_request_metadata"
)

// checkOrigin accepts exactly https://host[:port] in lowercase, with no path, query,
// fragment or credentials.
func checkOrigin(o string) error {
	u, err := url.Parse(o)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" || strings.HasSuffix(o, "?") || strings.HasSuffix(o, "#") {
		return errors.New("must be exactly https://host[:port] (no credentials, path, query or fragment)")
	}
	if strings.ToLower(u.Host) != u.Host || o != "https://"+u.Host {
		return errors.New("must be a lowercase origin written exactly as https://host[:port]")
	}
	return nil
}

// checkURLPathPrefix accepts an absolute, normalized URL path prefix ending in "/".
func checkURLPathPrefix(p string) error {
	if !strings.HasPrefix(p, "/") || !strings.HasSuffix(p, "/") || len(p) > 256 {
		return errors.New("must start and end with / (at most 256 bytes)")
	}
	for _, seg := range strings.Split(strings.Trim(p, "/"), "/") {
		if p == "/" {
			break
		}
		if seg == "" || seg == "." || seg == ".." {
			return errors.New("must not contain an empty, . or .. segment")
		}
	}
	if strings.ContainsAny(p, "?#%\\ \t\r\n") {
		return errors.New("must not contain ?, #, %, backslash or whitespace")
	}
	return nil
}

// Candidate is one recognized reference. Recognition grants nothing: a candidate still has
// to be authorized and resolved by its adapter.
type Candidate struct {
	Reference int    // index into Policy.References
	Value     string // the recognized key, URL or explicit name
}

var (
	issueKeyRE = regexp.MustCompile(`\b([A-Z][A-Z0-9]{0,15})-([1-9][0-9]{0,9})\b`)
	httpsURLRE = regexp.MustCompile(`https://[A-Za-z0-9.\-:]+/[A-Za-z0-9._~/\-]*`)
	explicitRE = regexp.MustCompile(`\[\[context:(issue|document):([a-z0-9][a-z0-9._-]{0,127})\]\]`)
)

// recognize extracts candidates for every reference from texts, which must be admitted
// merge-request metadata and admitted discussion bodies only (the caller's duty; remediation
// replies are never passed). Output is deduplicated and sorted by reference then value, and
// at most MaxRecords per reference.
func recognize(refs []Reference, texts []string) []Candidate {
	var out []Candidate
	for i, r := range refs {
		seen := map[string]bool{}
		for _, t := range texts {
			for _, v := range recognizeOne(r, t) {
				seen[v] = true
			}
		}
		vals := make([]string, 0, len(seen))
		for v := range seen {
			vals = append(vals, v)
		}
		sort.Strings(vals)
		if len(vals) > r.MaxRecords {
			vals = vals[:r.MaxRecords]
		}
		for _, v := range vals {
			out = append(out, Candidate{Reference: i, Value: v})
		}
	}
	return out
}

func recognizeOne(r Reference, t string) []string {
	var out []string
	switch r.Recognizer.Type {
	case recognizerIssueKey:
		for _, m := range issueKeyRE.FindAllStringSubmatch(t, -1) {
			if m[1] == r.Recognizer.Prefix {
				out = append(out, m[0])
			}
		}
	case recognizerHTTPSURL:
		want := r.Recognizer.Origin + r.Recognizer.PathPrefix
		for _, m := range httpsURLRE.FindAllString(t, -1) {
			m = strings.TrimRight(m, ".")
			if !strings.HasPrefix(m, want) || len(m) == len(want) {
				continue
			}
			u, err := url.Parse(m)
			if err != nil || "https://"+u.Host != r.Recognizer.Origin || strings.Contains(u.Path, "/../") || strings.Contains(u.Path, "/./") || strings.Contains(u.Path, "//") {
				continue
			}
			out = append(out, m)
		}
	case recognizerExplicit:
		for _, m := range explicitRE.FindAllStringSubmatch(t, -1) {
			if m[1] == r.ResourceClass {
				out = append(out, m[2])
			}
		}
	}
	return out
}
