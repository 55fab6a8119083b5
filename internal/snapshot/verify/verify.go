// Package verify is the consumer-side check of an entity-context-snapshot v1 tree (docs/contracts.md,
// sections "Tree", "Record keys and record files", "Ordering and prompt assembly", "Canonical bytes" — manifest, root index
// retention, verification — "Lifecycle and access" and "Compatibility").
//
// Load reads a tree exactly once, without following any symlink, into memory, and checks it:
// the supported schema_version and filter_version, every JSON document against the embedded
// v1 schema bundle (internal/snapshot/schema) and its RFC 8785 bytes, the exact manifest path set,
// each file's size and SHA-256, media type and role by path, record keys, record paths and
// record header layout, order and view files, thread key sets, actor rows and array orders.
// It also checks the producer rules a tree shows by itself (producer.go): no Unicode floor
// rune in any body, log or display string, collection.json's byte and count bounds, one check
// head revision, gaps that account for rejected records and missing logs, consistent filter
// summaries, forge ID mappings in the child documents. Options.ProducerCheck makes this the
// conformance check of another producer's tree (any filter_version).
// Every violation is reported as a (path, rule) pair; a tree with no violation is returned as
// a *Snapshot holding exactly the verified bytes, so its consumers (staging from memory, the
// review evidence server) never re-read the file system and hand on only bytes that were
// checked.
//
// Check (and Dir) apply exactly the same rules and return the same Report in bounded memory:
// the record files and check logs are hashed and reduced to the facts the rules read of them
// as they are read, not held (see Check). Open is Check returning a Snapshot that reads those
// files again when asked for and hands them on only when they are still the verified bytes
// (see Open), so prompt rendering needs neither the whole tree in memory nor unverified bytes.
//
// With Options.IndexSHA256 (the digest retained by the assembler outside the tree) the on-disk
// index.json must match it before anything else is trusted; without it the tree is only
// self-consistent, which is what a standalone `forgectx verify DIR` can check.
//
// Violations carry paths, rule codes and fixed descriptions only, never file content.
package verify

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/snapshot/canon"
	"github.com/forgectx/forgectx/internal/snapshot/schema"
	"github.com/forgectx/forgectx/internal/snapshot/treefs"
)

// Rule codes of violations. They are stable identifiers (documented in docs/consumer.md).
const (
	RuleNotDirectory    = "not_directory"
	RuleSymlink         = "symlink"
	RuleHardLink        = "hard_link"
	RuleSpecialFile     = "special_file"
	RuleReplaced        = "replaced_while_reading"
	ruleUnreadable      = "unreadable"
	RuleFileTooLarge    = treefs.RuleFileTooLarge
	RuleTooManyFiles    = treefs.RuleTooManyFiles
	RuleIndexDigest     = "index_digest_mismatch"
	RuleIndexInvalid    = "index_invalid"
	RuleSchemaVersion   = "unsupported_schema_version"
	RuleFilterVersion   = "unsupported_filter_version"
	RuleSchemaInvalid   = "schema_invalid"
	RuleNotCanonical    = "not_canonical_json"
	RuleMissingFile     = "missing_file"
	RuleExtraFile       = "extra_file"
	RuleExtraDirectory  = "extra_directory"
	RuleRequiredFile    = "required_file"
	RuleDuplicatePath   = "duplicate_path"
	RuleBytes           = "bytes_mismatch"
	RuleSHA256          = "sha256_mismatch"
	RuleRole            = "role_mismatch"
	RuleMediaType       = "media_type_mismatch"
	RuleCollection      = "collection_profile_mismatch"
	RuleRecordKey       = "record_key_mismatch"
	RuleDuplicateRecord = "duplicate_record"
	RuleRecordPath      = "record_path_mismatch"
	RuleEntityRecord    = "entity_record"
	RuleOrphanFile      = "unreferenced_file"
	RuleRecordHeader    = "record_header"
	RuleTextEncoding    = "text_encoding"
	RuleOrderFormat     = "order_format"
	RuleOrderDangling   = "order_dangling"
	RuleOrderDuplicate  = "order_duplicate"
	RuleTimeline        = "timeline_view"
	RuleThreadOrder     = "thread_order"
	RuleReviewView      = "review_view"
	RuleUnresolvedView  = "unresolved_review_view"
	RuleThreadKeys      = "thread_keys"
	RuleRelations       = "relations"
	RuleActors          = "actors"
	RuleGaps            = "gaps"
	RuleArrayOrder      = "array_order"
	RuleCheckMetadata   = "check_metadata"
	RuleEntityMetadata  = "entity_metadata"
	RuleSourceSelection = "source_not_selected"
)

// supportedSchemaVersion is the only index.json schema_version this consumer accepts.
const supportedSchemaVersion = 1

// supportedFilterVersions are the filter_version values this consumer accepts: the versions
// this build's filter pipeline implements.
var supportedFilterVersions = []string{filter.Version}

// Default bounds: the tree bounds of internal/snapshot/treefs, the one definition the assembler also checks
// (a profile that could exceed them is rejected before fetching, an assembled tree beyond them
// aborts before it is written), so a tree the assembler writes is never refused for its size;
// low enough that a hostile tree cannot exhaust memory.
const (
	DefaultMaxFileBytes  = treefs.MaxFileBytes
	DefaultMaxIndexBytes = treefs.MaxIndexBytes
	DefaultMaxTotalBytes = treefs.MaxTotalBytes
	DefaultMaxFiles      = treefs.MaxFiles
)

// Options configure Load and Dir.
type Options struct {
	// IndexSHA256 is the retained lowercase hex SHA-256 of the assembled root index.json.
	// When set, the on-disk index must match it before any child is checked.
	IndexSHA256 string
	// Bounds; zero means the default. MaxFileBytes applies to every file but the root
	// index.json, which MaxIndexBytes bounds.
	MaxFileBytes  int64
	MaxIndexBytes int64
	MaxTotalBytes int64
	MaxFiles      int
	// Bundle validates the JSON documents; nil means the project's embedded v1 bundle.
	Bundle *schema.Bundle
	// ProducerCheck is the conformance check of a tree from any v1 producer (`forgectx verify
	// --producer-check`): every rule applies except that filter_version may be any non-empty
	// string, since another producer's filter has its own version. The Unicode floor and the
	// bounds are the same for every filter version; what a particular filter version strips
	// beyond the floor is not checked. A consumer (staging, prompt) never sets it: it must
	// refuse a filter version it does not implement.
	ProducerCheck bool
}

// positiveOr is a bound an Options field sets: the field when positive, else the default (the
// zero Options is the spec's bounds).
func positiveOr[T int | int64](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

func (o Options) maxFileBytes() int64 { return positiveOr(o.MaxFileBytes, DefaultMaxFileBytes) }

func (o Options) maxIndexBytes() int64 { return positiveOr(o.MaxIndexBytes, DefaultMaxIndexBytes) }

func (o Options) maxTotalBytes() int64 { return positiveOr(o.MaxTotalBytes, DefaultMaxTotalBytes) }

func (o Options) maxFiles() int { return positiveOr(o.MaxFiles, DefaultMaxFiles) }

// Violation is one broken rule: the tree-relative path ("." for the root) and a rule code.
// Detail is a fixed description of the rule with counts or digests at most — never content.
type Violation struct {
	Path   string `json:"path"`
	Rule   string `json:"rule"`
	Detail string `json:"detail,omitempty"`
}

// maxViolationText bounds a violation's path and detail. Both can carry tree-controlled text
// (on-disk file names, manifest paths, IDs and JSON member names of a document that failed
// its schema), so they are also escaped: see newViolation.
const maxViolationText = 512

// newViolation builds a violation whose path and detail are printable ASCII: text with any
// other byte (a newline that would forge another report line or an "ok" line, terminal
// escapes, invalid UTF-8, bidirectional controls) or a backslash is rendered Go-quoted with
// \x/\u escapes, and over-long text is cut with a marker.
func newViolation(p, rule, detail string) Violation {
	return Violation{Path: cleanText(p), Rule: rule, Detail: cleanText(detail)}
}

// NewViolation is a violation built as verification builds its own: path and detail escaped
// to printable ASCII and bounded. Staging's copy (stage.Seal) reports the entries it refuses
// with it.
func NewViolation(p, rule, detail string) Violation {
	return Violation{Path: cleanText(p), Rule: rule, Detail: cleanText(detail)}
}

func cleanText(s string) string {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '\\' {
			plain = false
			break
		}
	}
	if !plain {
		q := strconv.QuoteToASCII(s)
		s = q[1 : len(q)-1]
	}
	if len(s) > maxViolationText {
		s = s[:maxViolationText] + "...(truncated)"
	}
	return s
}

func (v Violation) String() string {
	if v.Detail == "" {
		return v.Path + ": " + v.Rule
	}
	return v.Path + ": " + v.Rule + ": " + v.Detail
}

// Report is the outcome of a verification: counts and digests only.
type Report struct {
	Violations []Violation `json:"violations"`
	// IndexSHA256 is the digest of the on-disk index.json that was read.
	IndexSHA256 string `json:"index_sha256,omitempty"`
	Files       int    `json:"files"` // regular files read, index.json included
	Bytes       int64  `json:"bytes"` // their total size
	Records     int    `json:"records"`
	Threads     int    `json:"threads"`
	Gaps        int    `json:"gaps"`
}

// OK reports whether the tree passed every rule.
func (r Report) OK() bool { return len(r.Violations) == 0 }

// Error is returned (wrapped) when a tree fails verification; it carries the report.
type Error struct{ Report Report }

func (e *Error) Error() string {
	if len(e.Report.Violations) == 0 {
		return "snapshot verification failed"
	}
	return fmt.Sprintf("snapshot verification failed: %d violation(s), first %s", len(e.Report.Violations), e.Report.Violations[0])
}

// Snapshot is a verified tree: the exact bytes that passed verification, all held in memory
// (Load), or the documents, order files and index held and every other file read again on
// demand and served only while it still has its verified size and SHA-256 (Open).
type Snapshot struct {
	// Index is the root index.json bytes and IndexSHA256 their digest. A snapshot from Open
	// does not hold the index (Index is nil): ReadFile("index.json") reads it again, checked
	// against IndexSHA256.
	Index       []byte
	IndexSHA256 string
	// Manifest is the decoded index.
	Manifest *Manifest
	files    map[string][]byte
	paths    []string
	sums     treefs.Sums // of files, computed by the digest check
	// dir, indexSize and unheld are set for a snapshot from Open: the tree it was verified
	// from, the size of its index.json, and the verified size of every other file whose bytes
	// are not held but read again from dir (ReadFile).
	dir       string
	indexSize int64
	unheld    map[string]int64
}

// Paths lists every file path of the tree except index.json, sorted.
func (s *Snapshot) Paths() []string { return append([]string(nil), s.paths...) }

// File returns the verified bytes of a path ("index.json" included), as ReadFile does: false
// when p is not a file of the tree or (a snapshot from Open) no longer holds the verified
// bytes. The slice must not be modified.
func (s *Snapshot) File(p string) ([]byte, bool) {
	b, err := s.ReadFile(p)
	return b, err == nil
}

// Dir verifies the tree at dir and returns the report. The error is non-nil only when the tree
// could not be examined at all (the root is missing or unreadable, or ctx ended); a tree that
// fails a rule returns a report with violations and a nil error.
//
// It is Check: the tree's bytes are not held.
func Dir(ctx context.Context, dir string, opts Options) (Report, error) {
	return Check(ctx, dir, opts)
}

// Load verifies the tree at dir and, when it passes, returns the verified bytes. Each file is
// read exactly once; the Snapshot holds those bytes. A failing tree returns a nil Snapshot, a
// report listing every violation and a nil error.
func Load(ctx context.Context, dir string, opts Options) (*Snapshot, Report, error) {
	return load(ctx, dir, opts, modeLoad)
}

// loadMode is what load keeps of a tree that passes.
type loadMode int

const (
	modeLoad  loadMode = iota // every file's bytes (Load)
	modeCheck                 // only the digests (Check, CheckSums): record files and logs summarized
	modeOpen                  // as modeCheck, plus the held documents and the manifest (Open)
)

// load is Load, Check (which returns a Snapshot of digests only) or Open.
func load(ctx context.Context, dir string, opts Options, mode loadMode) (*Snapshot, Report, error) {
	summarize := mode != modeLoad
	var rep Report
	if opts.IndexSHA256 != "" && !isHex64(opts.IndexSHA256) {
		return nil, rep, fmt.Errorf("verify: index-sha256 must be 64 lowercase hexadecimal digits")
	}
	bundle := opts.Bundle
	if bundle == nil {
		b, err := schema.Project()
		if err != nil {
			return nil, rep, fmt.Errorf("verify: schema bundle: %w", err)
		}
		bundle = b
	}
	if err := ctx.Err(); err != nil {
		return nil, rep, err
	}
	w, err := walkTreeMode(dir, opts, false, summarize)
	if err != nil {
		return nil, rep, fmt.Errorf("verify: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, rep, err
	}
	c := &checker{dirs: w.dirs, bundle: bundle, dir: dir, producerCheck: opts.ProducerCheck}
	if summarize {
		c.files, c.summ = map[string][]byte{}, make(map[string]fileData, len(w.read))
	} else {
		c.files = make(map[string][]byte, len(w.read))
	}
	for _, f := range w.read {
		if f.facts != nil {
			c.summ[f.path] = f.fileData
		} else {
			c.files[f.path] = f.data
		}
		rep.Files++
		rep.Bytes += f.size
	}
	w.read = nil
	for _, v := range w.viol {
		c.addViolation(v)
	}
	idx, haveIndex := c.files["index.json"]
	if haveIndex {
		rep.IndexSHA256 = canon.SHA256Hex(idx)
		delete(c.files, "index.json")
	}
	// Only Load keeps the index bytes (the largest document: 77 MB at 100k records). Check and
	// Open let them go once the manifest is decoded from them, so they are not held while the
	// rules run; Open reads index.json again, verified, when it is asked for.
	kept, indexSize := idx, int64(len(idx))
	if mode != modeLoad {
		kept = nil
	}
	switch {
	case !haveIndex:
		if !c.hasViolationAt("index.json") && !c.hasViolationAt(".") {
			c.add("index.json", RuleMissingFile, "the root index is missing")
		}
	case opts.IndexSHA256 != "" && rep.IndexSHA256 != opts.IndexSHA256:
		// The retained digest is the root of trust: a rewritten on-disk index is never used
		// to check anything else.
		c.add("index.json", RuleIndexDigest, fmt.Sprintf("on-disk index sha256 %s differs from the retained %s", rep.IndexSHA256, opts.IndexSHA256))
	default:
		c.check(idx)
	}
	rep.Violations = sortViolations(c.viol)
	if c.man != nil {
		rep.Records = len(c.man.Records)
		rep.Gaps = len(c.man.Gaps)
		rep.Threads = c.threads
	}
	if !rep.OK() {
		return nil, rep, nil
	}
	if mode == modeCheck {
		// Nothing of the files is held: only the digests, for CheckSums.
		return &Snapshot{IndexSHA256: rep.IndexSHA256, sums: c.sums}, rep, nil
	}
	snap := c.snapshot(kept, rep.IndexSHA256)
	if mode == modeOpen {
		snap.dir, snap.indexSize, snap.unheld = dir, indexSize, make(map[string]int64, len(c.summ))
		for _, f := range c.man.Files {
			if _, held := c.files[f.Path]; !held {
				snap.unheld[f.Path] = f.Bytes
			}
		}
	}
	return snap, rep, nil
}

// snapshot is the Snapshot of a tree that passed, holding the files c holds.
func (c *checker) snapshot(index []byte, indexSHA256 string) *Snapshot {
	// A tree that passed has exactly the manifest's paths, each with its digest.
	paths := make([]string, 0, len(c.sums))
	for p := range c.sums {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return &Snapshot{Index: index, IndexSHA256: indexSHA256, Manifest: c.man, files: c.files, paths: paths, sums: c.sums}
}

func sortViolations(v []Violation) []Violation {
	out := append([]Violation(nil), v...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Rule < out[j].Rule
	})
	// Drop exact duplicates (the same rule found twice for one path).
	dedup := out[:0]
	for i, v := range out {
		if i > 0 && v == out[i-1] {
			continue
		}
		dedup = append(dedup, v)
	}
	return dedup
}

func isHex64(s string) bool { return len(s) == 64 && canon.IsLowerHex(s) }

// roleForPath returns the manifest role a tree path must carry and whether the path is a v1
// path at all. Record files other than the entity body are "comment_record" or
// "review_record" depending on their manifest record; roleForPath returns "record" for them.
func roleForPath(p string) (string, bool) {
	switch p {
	case "collection.json":
		return "collection", true
	case "entity/metadata.json":
		return "entity_metadata", true
	case "views/timeline.order":
		return "timeline_view", true
	case "views/unresolved-review.order":
		return "unresolved_review_view", true
	case "relations/reviews.json":
		return "reviews", true
	case "history/agent-runs.json":
		return "agent_runs", true
	case "state/actors.json":
		return "actor_state", true
	case "state/threads.json":
		return "thread_state", true
	}
	switch {
	case strings.HasPrefix(p, "records/"+canon.EntityOrderKey+"-"):
		return "entity_record", true
	case strings.HasPrefix(p, "records/"):
		return "record", true
	case strings.HasPrefix(p, "threads/"):
		return "thread_order", true
	case strings.HasPrefix(p, "views/reviews/"):
		return "review_view", true
	case strings.HasPrefix(p, "checks/") && strings.HasSuffix(p, "/metadata.json"):
		return "check_metadata", true
	case strings.HasPrefix(p, "checks/") && strings.HasSuffix(p, "/log.txt"):
		return "check_log", true
	}
	return "", false
}

// mediaTypeForRole is the closed v1 media type of a manifest role.
func mediaTypeForRole(role string) string {
	switch role {
	case "collection", "entity_metadata", "reviews", "agent_runs", "check_metadata", "actor_state", "thread_state":
		return "application/json"
	case "entity_record", "comment_record", "review_record":
		return "text/markdown"
	case "thread_order", "timeline_view", "unresolved_review_view", "review_view", "check_log":
		return "text/plain"
	}
	return ""
}
