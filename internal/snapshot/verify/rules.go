package verify

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/forgectx/forgectx/internal/snapshot/canon"
	"github.com/forgectx/forgectx/internal/snapshot/schema"
	"github.com/forgectx/forgectx/internal/snapshot/treefs"
)

// checker holds the files read from disk (index.json excluded) and accumulates violations.
type checker struct {
	files map[string][]byte
	// summ holds the summarized files (Check): digest, size and textFacts instead of bytes.
	summ map[string]fileData
	// dir is the tree's root, for the few summarized files read again (holdNeeded).
	dir    string
	dirs   map[string]bool
	bundle *schema.Bundle
	viol   []Violation
	// producerCheck accepts any filter_version (Options.ProducerCheck).
	producerCheck bool
	// shipped: the tree's filter_version is this build's, so what its Unicode safety step
	// strips beyond the floor must be absent too.
	shipped bool
	// coll is collection.json when it passed its schema: its bounds bind bodies and logs.
	coll *collectionDoc

	man     *Manifest
	threads int
	// byPath maps a manifest path to its entry.
	byPath map[string]*ManifestFile
	// sums holds the SHA-256 of every intact file — a manifest path whose bytes matched its
	// manifest size and digest (see intact) — for Snapshot.Sums.
	sums treefs.Sums
	// violAt holds the (cleaned) paths that already carry a violation: a set, so asking is
	// constant time however many violations a hostile tree produces.
	violAt map[string]bool
}

func (c *checker) add(p, rule, detail string) {
	c.addViolation(newViolation(p, rule, detail))
}

func (c *checker) addViolation(v Violation) {
	if c.violAt == nil {
		c.violAt = map[string]bool{}
	}
	c.viol = append(c.viol, v)
	c.violAt[v.Path] = true
}

// hasViolationAt compares p with the recorded (escaped) violation paths, as a scan of the
// violations would.
func (c *checker) hasViolationAt(p string) bool { return c.violAt[p] }

// intact reports whether the manifest path p had exactly its manifest size and digest: only
// intact files are parsed further, so a tampered file is reported once (as a digest mismatch)
// rather than as a cascade of content errors.
func (c *checker) intact(p string) bool {
	_, ok := c.sums[p]
	return ok
}

// singletons are the files every v1 tree contains.
var singletons = []string{
	"collection.json", "entity/metadata.json", "history/agent-runs.json", "relations/reviews.json",
	"state/actors.json", "state/threads.json", "views/timeline.order", "views/unresolved-review.order",
}

// schemaForRole maps a JSON role to its schema file.
var schemaForRole = map[string]string{
	"collection":      schema.Collection,
	"entity_metadata": schema.Entity,
	"reviews":         schema.Reviews,
	"agent_runs":      schema.AgentRuns,
	"check_metadata":  schema.Check,
	"actor_state":     schema.Actors,
	"thread_state":    schema.Threads,
}

func (c *checker) check(idx []byte) {
	probe, plain, ok := splitTop(idx)
	if !ok {
		c.add("index.json", RuleIndexInvalid, "not a JSON object")
		return
	}
	if string(probe["schema_version"]) != fmt.Sprint(supportedSchemaVersion) {
		c.add("index.json", RuleSchemaVersion, fmt.Sprintf("schema_version must be %d", supportedSchemaVersion))
		return
	}
	var fv string
	if err := json.Unmarshal(probe["filter_version"], &fv); err != nil || !c.producerCheck && !supportedFilter(fv) {
		// Naming the tree's version makes version skew (a tree from another forgectx build)
		// obvious; the value is escaped and bounded like every violation text.
		if len(fv) > 64 {
			fv = fv[:64] + "..."
		}
		c.add("index.json", RuleFilterVersion, fmt.Sprintf("filter_version %q is not supported; this build accepts %s", fv, strings.Join(supportedFilterVersions, ", ")))
		return
	}
	c.shipped = supportedFilter(fv)
	parts, split := splitIndex(probe)
	for _, v := range indexViolations(c.bundle, idx, parts, split) {
		c.addViolation(v)
	}
	// A plain split index is decoded from its parts on every core; anything else (a member
	// name outside the v1 set or repeated) whole, as json.Unmarshal defines it.
	var man *Manifest
	var err error
	if split && plain {
		man, err = decodeManifest(parts)
	} else {
		man = new(Manifest)
		err = json.Unmarshal(idx, man)
	}
	if err != nil {
		c.add("index.json", RuleIndexInvalid, "index.json does not decode as a v1 manifest")
		return
	}
	c.man = man
	// Display strings in the index (record author logins) are bound by the Unicode floor;
	// the canonical index holds every such rune as itself (see floorJSON).
	c.floorJSON("index.json", idx)
	c.manifestFiles()
	c.holdNeeded()
	c.collection()
	docs := c.documents()
	c.records()
	c.entityMetadata(docs)
	c.orders(docs)
	c.actors(docs)
	c.arrays(docs)
	c.gaps()
	c.sources(docs)
	c.producer(docs)
}

func supportedFilter(v string) bool {
	for _, s := range supportedFilterVersions {
		if v == s {
			return true
		}
	}
	return false
}

// manifestFiles checks the exact path set, each file's size and digest, and role and media
// type by path.
func (c *checker) manifestFiles() {
	n := len(c.man.Files)
	c.byPath, c.sums = make(map[string]*ManifestFile, n), make(treefs.Sums, n)
	for i := range c.man.Files {
		f := &c.man.Files[i]
		if i > 0 {
			prev := c.man.Files[i-1].Path
			if f.Path == prev {
				c.add("index.json", RuleDuplicatePath, "files[] lists "+f.Path+" twice")
				continue
			} else if f.Path < prev {
				c.add("index.json", RuleArrayOrder, "files[] must be sorted by path")
			}
		}
		c.byPath[f.Path] = f
		c.pathRole(f)
		c.fileBytes(f)
	}
	c.unlisted()
	for _, s := range singletons {
		if _, ok := c.byPath[s]; !ok {
			c.add(s, RuleRequiredFile, "every v1 tree lists this file")
		}
	}
}

// pathRole checks one manifest file's role against its path and its media type against its
// role.
func (c *checker) pathRole(f *ManifestFile) {
	role, known := roleForPath(f.Path)
	switch {
	case !known:
		c.add(f.Path, RuleRole, "path is not a v1 tree path")
	case role == "record":
		if f.Role != "comment_record" && f.Role != "review_record" {
			c.add(f.Path, RuleRole, "a record file's role must be comment_record or review_record")
		}
	case role != f.Role:
		c.add(f.Path, RuleRole, "role for this path must be "+role)
	}
	if want := mediaTypeForRole(f.Role); want != "" && f.MediaType != want {
		c.add(f.Path, RuleMediaType, "media_type for role "+f.Role+" must be "+want)
	}
}

// fileBytes checks that one manifest file is present with its size and SHA-256; an intact
// file's digest is recorded in c.sums.
func (c *checker) fileBytes(f *ManifestFile) {
	var size int64
	var sum [sha256.Size]byte
	if data, ok := c.files[f.Path]; ok {
		size, sum = int64(len(data)), sha256.Sum256(data)
	} else if s, ok := c.summ[f.Path]; ok {
		size, sum = s.size, s.sum
	} else {
		if !c.hasViolationAt(f.Path) {
			c.add(f.Path, RuleMissingFile, "listed in the manifest but not present")
		}
		return
	}
	good := true
	if size != f.Bytes {
		c.add(f.Path, RuleBytes, fmt.Sprintf("%d bytes on disk, manifest says %d", size, f.Bytes))
		good = false
	}
	var hexSum [2 * sha256.Size]byte
	hex.Encode(hexSum[:], sum[:])
	if string(hexSum[:]) != f.SHA256 {
		c.add(f.Path, RuleSHA256, fmt.Sprintf("sha256 %s, manifest says %s", hexSum[:], f.SHA256))
		good = false
	}
	if good {
		c.sums[f.Path] = sum
	}
}

// unlisted reports the files and directories on disk that no manifest path accounts for.
func (c *checker) unlisted() {
	paths := make([]string, 0, len(c.files)+len(c.summ))
	for p := range c.files {
		paths = append(paths, p)
	}
	for p := range c.summ {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if _, ok := c.byPath[p]; !ok {
			c.add(p, RuleExtraFile, "present but not listed in the manifest")
		}
	}
	// A directory is used when some manifest path lies below it: collect every ancestor of
	// every manifest path once (the tree depth is fixed, so this is linear in the files).
	used := make(map[string]bool, len(c.dirs))
	for p := range c.byPath {
		for d := path.Dir(p); d != "." && d != "/" && !used[d]; d = path.Dir(d) {
			used[d] = true
		}
	}
	dirs := make([]string, 0, len(c.dirs))
	for d := range c.dirs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		if !used[d] {
			c.add(d, RuleExtraDirectory, "directory holds no manifest file")
		}
	}
}

func (c *checker) collection() {
	f, ok := c.byPath["collection.json"]
	if !ok {
		return
	}
	if f.SHA256 != c.man.CollectionProfile {
		c.add("index.json", RuleCollection, "collection_profile must equal the SHA-256 of collection.json")
	}
}

// docs are the decoded singleton and check documents that passed their schema.
type docs struct {
	collection *collectionDoc
	entity     *entityDoc
	reviews    *reviewsDoc
	threads    *threadsDoc
	actors     *actorsDoc
	runs       *runsDoc
	checks     map[string]*checkDoc // by path
}

// documents validates every intact JSON document and decodes the ones the cross-document
// checks need.
func (c *checker) documents() *docs {
	d := &docs{checks: map[string]*checkDoc{}}
	// Schema and canonical-form checks are independent per document: run them on every core,
	// then report and decode in manifest order.
	var jobs []int
	for i, f := range c.man.Files {
		if _, isJSON := schemaForRole[f.Role]; isJSON && c.intact(f.Path) {
			jobs = append(jobs, i)
		}
	}
	found := make([][]Violation, len(jobs))
	forEach((len(jobs)+indexChunk-1)/indexChunk, func(ch int) {
		for j := ch * indexChunk; j < min((ch+1)*indexChunk, len(jobs)); j++ {
			f := &c.man.Files[jobs[j]]
			switch f.Role {
			case "reviews":
				found[j] = arrayDocViolations(c.bundle, f.Path, schema.Reviews, c.files[f.Path], "reviews", "threads")
			case "thread_state":
				found[j] = arrayDocViolations(c.bundle, f.Path, schema.Threads, c.files[f.Path], "threads")
			default:
				found[j] = jsonViolations(c.bundle, f.Path, schemaForRole[f.Role], c.files[f.Path])
			}
		}
	})
	for j, fi := range jobs {
		f := c.man.Files[fi]
		data := c.files[f.Path]
		c.floorJSON(f.Path, data)
		if len(found[j]) > 0 {
			for _, v := range found[j] {
				c.addViolation(v)
			}
			continue
		}
		var err error
		switch f.Role {
		case "collection":
			d.collection = new(collectionDoc)
			err = json.Unmarshal(data, d.collection)
		case "entity_metadata":
			d.entity = new(entityDoc)
			err = json.Unmarshal(data, d.entity)
		case "reviews":
			d.reviews = new(reviewsDoc)
			err = json.Unmarshal(data, d.reviews)
		case "thread_state":
			d.threads = new(threadsDoc)
			err = json.Unmarshal(data, d.threads)
		case "actor_state":
			d.actors = new(actorsDoc)
			err = json.Unmarshal(data, d.actors)
		case "agent_runs":
			d.runs = new(runsDoc)
			err = json.Unmarshal(data, d.runs)
		case "check_metadata":
			cd := new(checkDoc)
			err = json.Unmarshal(data, cd)
			d.checks[f.Path] = cd
		}
		if err != nil {
			c.add(f.Path, RuleSchemaInvalid, "document does not decode in its schema shape")
		}
	}
	c.coll = d.collection
	for _, f := range c.man.Files {
		if (f.Role == "check_log" || isOrderRole(f.Role)) && c.intact(f.Path) {
			t := c.textFactsAt(f.Path)
			c.textRules(f.Path, t, f.Role == "check_log")
			if f.Role == "check_log" {
				c.logRules(f.Path, t)
			}
		}
	}
	return d
}

// textRules: UTF-8, no byte-order mark, LF line endings; logs and bodies end in exactly one LF
// when non-empty.
func (c *checker) textRules(p string, t *textFacts, singleTrailingLF bool) {
	switch {
	case !t.valid:
		c.add(p, RuleTextEncoding, "text must be valid UTF-8")
	case t.bom:
		c.add(p, RuleTextEncoding, "text must not start with a byte-order mark")
	case t.cr:
		c.add(p, RuleTextEncoding, "text must use LF line endings")
	case singleTrailingLF && t.size > 0 && !t.endsOneLF(t.size):
		c.add(p, RuleTextEncoding, "non-empty text must end with exactly one LF")
	}
}

// records checks record keys, paths, roles, header layout and the entity record.
func (c *checker) records() {
	m := c.man
	seen := make(map[string]bool, len(m.Records))
	referenced := make(map[string]bool, len(m.Records))
	entities := 0
	for i, r := range m.Records {
		if seen[r.RecordKey] {
			c.add("index.json", RuleDuplicateRecord, "records[] lists record_key "+r.RecordKey+" twice")
		}
		seen[r.RecordKey] = true
		if i > 0 {
			p := m.Records[i-1]
			if r.CreatedAt < p.CreatedAt || r.CreatedAt == p.CreatedAt && r.RecordKey <= p.RecordKey {
				c.add("index.json", RuleArrayOrder, "records[] must be sorted by created_at then record_key")
			}
		}
		if want := canon.RecordKey(m.Source.Forge, m.Source.Host, m.Source.RepositoryID, r.Kind, r.ID); want != r.RecordKey {
			c.add("index.json", RuleRecordKey, fmt.Sprintf("record_key %s does not derive from its source, kind and id", r.RecordKey))
		}
		if r.Kind == "entity" {
			entities++
			if r.ID != m.Entity.ID {
				c.add("index.json", RuleEntityRecord, "the entity record's id must equal entity.id")
			}
			if r.ContentPath == "" {
				c.add("index.json", RuleEntityRecord, "the entity record must have a content_path")
			}
		}
		if r.ContentPath != "" {
			referenced[r.ContentPath] = true
			orderKey := canon.EntityOrderKey
			if r.Kind != "entity" {
				var err error
				if orderKey, err = canon.OrderKey(r.CreatedAt); err != nil {
					orderKey = "invalid"
				}
			}
			if want := "records/" + orderKey + "-" + r.RecordKey + ".md"; r.ContentPath != want {
				c.add(r.ContentPath, RuleRecordPath, "content_path must be records/<order-key>-<record-key>.md of its record")
			}
			c.recordFile(r)
		}
		if r.MetadataPath != "" {
			referenced[r.MetadataPath] = true
			if want := "checks/" + r.RecordKey + "/metadata.json"; r.MetadataPath != want {
				c.add(r.MetadataPath, RuleRecordPath, "metadata_path must be checks/<record-key>/metadata.json of its record")
			}
			c.fileRole(r.MetadataPath, "check_metadata")
		}
		if r.LogPath != "" {
			referenced[r.LogPath] = true
			if want := "checks/" + r.RecordKey + "/log.txt"; r.LogPath != want {
				c.add(r.LogPath, RuleRecordPath, "log_path must be checks/<record-key>/log.txt of its record")
			}
			c.fileRole(r.LogPath, "check_log")
		}
	}
	if entities != 1 {
		c.add("index.json", RuleEntityRecord, fmt.Sprintf("exactly one entity record is required, found %d", entities))
	}
	for _, f := range m.Files {
		switch f.Role {
		case "entity_record", "comment_record", "review_record", "check_metadata", "check_log":
			if !referenced[f.Path] {
				c.add(f.Path, RuleOrphanFile, "no manifest record references this file")
			}
		}
	}
}

// fileRole checks that a record's referenced path is a manifest file with the given role.
func (c *checker) fileRole(p, role string) {
	f, ok := c.byPath[p]
	if !ok {
		c.add(p, RuleMissingFile, "a manifest record references a path with no files[] entry")
		return
	}
	if f.Role != role {
		c.add(p, RuleRole, "role for this record's file must be "+role)
	}
}

var recordRole = map[string]string{"entity": "entity_record", "comment": "comment_record", "review": "review_record"}

// recordFile checks a record file's role and its exact header layout against the manifest
// record.
func (c *checker) recordFile(r ManifestRecord) {
	role, ok := recordRole[r.Kind]
	if !ok {
		c.add(r.ContentPath, RuleRole, "only entity, comment and review records have content files")
		return
	}
	c.fileRole(r.ContentPath, role)
	if !c.intact(r.ContentPath) {
		return
	}
	t := c.textFactsAt(r.ContentPath)
	c.textUnicode(r.ContentPath, t)
	if t.nLines == 5 && !t.partial && t.lines[4] == "" {
		// The body is what follows the header's blank line, however it is encoded.
		c.bodyBound(r.ContentPath, t.size-t.headLen)
	}
	if !t.valid || t.bom || t.cr {
		c.add(r.ContentPath, RuleTextEncoding, "records are UTF-8 with LF line endings and no byte-order mark")
		return
	}
	// The four header lines and the blank line, as strings.SplitN(string(b), "\n", 6) would
	// split them (textFactsOf), without copying the body into a string.
	if t.nLines < 5 {
		c.add(r.ContentPath, RuleRecordHeader, "four header lines and a blank line are required")
		return
	}
	parts := t.lines
	if parts[4] != "" {
		c.add(r.ContentPath, RuleRecordHeader, "four header lines and a blank line are required")
		return
	}
	fields := []struct {
		name     string
		want     *string
		nullable bool
	}{
		{"Fullsend-Record", &r.Kind, false},
		{"Source-ID", &r.ID, false},
		{"Author-ID", r.AuthorID, true},
		{"Created-At", &r.CreatedAt, false},
	}
	for i, f := range fields {
		raw, ok := strings.CutPrefix(parts[i], f.name+": ")
		if !ok {
			c.add(r.ContentPath, RuleRecordHeader, fmt.Sprintf("line %d must start with %q", i+1, f.name+": "))
			return
		}
		if raw == "null" {
			if !f.nullable || f.want != nil {
				c.add(r.ContentPath, RuleRecordHeader, f.name+" does not match the manifest record")
			}
			continue
		}
		var v string
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			c.add(r.ContentPath, RuleRecordHeader, f.name+" must be a JSON string or null")
			return
		}
		if canonical, err := canon.String(v); err != nil || canonical != raw {
			c.add(r.ContentPath, RuleRecordHeader, f.name+" must be a canonical (RFC 8785) JSON string")
		}
		if f.want == nil || *f.want != v {
			c.add(r.ContentPath, RuleRecordHeader, f.name+" does not match the manifest record")
		}
	}
	if body := t.size - t.headLen; body > 0 && !t.endsOneLF(body) {
		c.add(r.ContentPath, RuleTextEncoding, "a non-empty body must end with exactly one LF")
	}
}

func (c *checker) entityMetadata(d *docs) {
	if d.entity != nil {
		if d.entity.ID != c.man.Entity.ID || d.entity.Kind != c.man.Entity.Kind {
			c.add("entity/metadata.json", RuleEntityMetadata, "kind and id must equal index.json entity")
		}
		for _, r := range c.man.Records {
			// The entity-body record is the entity's first turn: same author and creation time.
			if r.Kind == "entity" && (r.CreatedAt != d.entity.CreatedAt || !sameRef(r.AuthorID, d.entity.AuthorID)) {
				c.add("entity/metadata.json", RuleEntityMetadata, "created_at and author_id must equal the entity record's")
			}
		}
		if !sort.StringsAreSorted(d.entity.Labels) {
			c.add("entity/metadata.json", RuleArrayOrder, "labels must be sorted by UTF-8 byte order")
		}
	}
	if d.collection != nil && d.collection.EntityKind != c.man.Entity.Kind {
		c.add("collection.json", RuleEntityMetadata, "entity_kind must equal index.json entity.kind")
	}
	// Records by metadata path (one pass), so each check document is compared with the
	// records naming it without scanning every record per check.
	byMeta := map[string][]int{}
	for i, r := range c.man.Records {
		if r.MetadataPath != "" && d.checks[r.MetadataPath] != nil {
			byMeta[r.MetadataPath] = append(byMeta[r.MetadataPath], i)
		}
	}
	for p, cd := range d.checks {
		for _, i := range byMeta[p] {
			if r := &c.man.Records[i]; cd.ID != r.ID || cd.CreatedAt != r.CreatedAt {
				c.add(p, RuleCheckMetadata, "id and created_at must equal the manifest record")
			}
		}
	}
}

func sameRef(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// parseOrder splits an order file into its lines, reporting format errors, dangling lines and
// duplicates. content maps every emitted content_path to its record.
func (c *checker) parseOrder(p string, content map[string]ManifestRecord) []string {
	b := c.files[p]
	if len(b) == 0 {
		return nil
	}
	if b[len(b)-1] != '\n' {
		c.add(p, RuleOrderFormat, "every line must be LF-terminated")
		return nil
	}
	lines := strings.Split(string(b[:len(b)-1]), "\n")
	seen := make(map[string]bool, len(lines))
	var out []string
	for i, l := range lines {
		if _, ok := content[l]; !ok {
			if l == "" || strings.ContainsAny(l, " \t") {
				c.add(p, RuleOrderFormat, fmt.Sprintf("line %d is not a record path", i+1))
			} else {
				c.add(p, RuleOrderDangling, fmt.Sprintf("line %d names no emitted record", i+1))
			}
			continue
		}
		if seen[l] {
			c.add(p, RuleOrderDuplicate, fmt.Sprintf("line %d repeats a record path", i+1))
			continue
		}
		seen[l] = true
		out = append(out, l)
	}
	return out
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// orders checks every order and view file against the manifest, the relations and the state.
// The checks run in a fixed sequence (timeline, thread keys, threads, reviews, review views,
// unresolved view), each a method of orderCheck over the same lookups.
func (c *checker) orders(d *docs) {
	o := &orderCheck{c: c, d: d, pathOf: make(map[string]string, len(c.man.Records)), kindOf: make(map[string]string, len(c.man.Records))}
	o.timeline()
	if d.reviews == nil || d.threads == nil {
		return
	}
	c.threads = len(d.reviews.Threads)
	o.threadKeys()
	o.threadRelations()
	// Views order threads by creation time, then thread key (spec "Ordering files and prompt
	// assembly"), which differs from the relationship array's (created_at, thread id) order
	// when two threads share a creation time.
	o.viewThreads = append([]threadRel(nil), d.reviews.Threads...)
	sort.SliceStable(o.viewThreads, func(i, j int) bool {
		if o.viewThreads[i].CreatedAt != o.viewThreads[j].CreatedAt {
			return o.viewThreads[i].CreatedAt < o.viewThreads[j].CreatedAt
		}
		return o.viewThreads[i].ThreadKey < o.viewThreads[j].ThreadKey
	})
	o.reviewViews(o.reviewRows())
	o.unresolvedView()
}

// orderCheck is the state the order and view checks share: record paths and kinds by record
// key, each intact order file's lines, the thread state rows by key, the threads in view order.
type orderCheck struct {
	c           *checker
	d           *docs
	pathOf      map[string]string // record key → content path (retained comment, review, entity)
	kindOf      map[string]string // record key → kind
	orderLines  map[string][]string
	state       map[string]threadState
	rel         map[string]bool // thread keys of relations/reviews.json
	viewThreads []threadRel
}

// timeline indexes the manifest records, parses every intact order file and checks the
// timeline view.
func (o *orderCheck) timeline() {
	c := o.c
	content := make(map[string]ManifestRecord, len(c.man.Records))
	var timeline []string
	for _, r := range c.man.Records {
		o.kindOf[r.RecordKey] = r.Kind
		if r.ContentPath != "" && recordRole[r.Kind] != "" {
			content[r.ContentPath] = r
			o.pathOf[r.RecordKey] = r.ContentPath
			timeline = append(timeline, r.ContentPath)
		}
	}
	sort.Strings(timeline)
	o.orderLines = map[string][]string{}
	for _, f := range c.man.Files {
		if isOrderRole(f.Role) && c.intact(f.Path) {
			o.orderLines[f.Path] = c.parseOrder(f.Path, content)
		}
	}
	if lines, ok := o.orderLines["views/timeline.order"]; ok && !equalLines(lines, timeline) {
		c.add("views/timeline.order", RuleTimeline, "must list the entity record and every retained comment and review record in chronological (filename) order")
	}
}

// threadKeys indexes the state rows by thread key (a key twice is a violation).
func (o *orderCheck) threadKeys() {
	o.state = map[string]threadState{}
	for _, t := range o.d.threads.Threads {
		if _, dup := o.state[t.ThreadKey]; dup {
			o.c.add("state/threads.json", RuleThreadKeys, "thread_key "+t.ThreadKey+" appears twice")
		}
		o.state[t.ThreadKey] = t
	}
}

// threadRelations checks each relationship thread (unique key derived from its id, a state
// row with the same id, its order file and members), then the rows and order files no
// relationship thread names. Relations and state list exactly the same unique keys.
func (o *orderCheck) threadRelations() {
	c := o.c
	o.rel = map[string]bool{}
	threadFiles := map[string]bool{}
	for _, t := range o.d.reviews.Threads {
		if o.rel[t.ThreadKey] {
			c.add("relations/reviews.json", RuleThreadKeys, "thread_key "+t.ThreadKey+" appears twice")
		}
		o.rel[t.ThreadKey] = true
		if want := canon.RecordKey(c.man.Source.Forge, c.man.Source.Host, c.man.Source.RepositoryID, canon.KindThread, t.ID); want != t.ThreadKey {
			c.add("relations/reviews.json", RuleRecordKey, "thread_key "+t.ThreadKey+" does not derive from its thread id")
		}
		st, ok := o.state[t.ThreadKey]
		if !ok {
			c.add("state/threads.json", RuleThreadKeys, "relations thread "+t.ThreadKey+" has no state row")
		} else if st.ID != t.ID {
			c.add("state/threads.json", RuleThreadKeys, "thread "+t.ThreadKey+" has a different id in relations and state")
		}
		want := "threads/" + t.ThreadKey + ".order"
		threadFiles[want] = true
		if t.OrderPath != want {
			c.add("relations/reviews.json", RuleThreadOrder, "order_path of thread "+t.ThreadKey+" must be "+want)
		}
		o.threadMembers(t, want)
	}
	for _, t := range o.d.threads.Threads {
		if !o.rel[t.ThreadKey] {
			c.add("state/threads.json", RuleThreadKeys, "state thread "+t.ThreadKey+" has no relations thread")
		}
	}
	for _, f := range c.man.Files {
		if f.Role == "thread_order" && !threadFiles[f.Path] {
			c.add(f.Path, RuleOrphanFile, "no relations thread names this order file")
		}
	}
}

// threadMembers checks one thread's records and reply edges and its order file (at want).
func (o *orderCheck) threadMembers(t threadRel, want string) {
	c := o.c
	var paths []string
	members := map[string]bool{}
	for _, k := range t.RecordKeys {
		members[k] = true
		p, ok := o.pathOf[k]
		if !ok || (o.kindOf[k] != "comment" && o.kindOf[k] != "review") {
			c.add("relations/reviews.json", RuleRelations, "thread "+t.ThreadKey+" lists record "+k+" with no emitted comment or review file")
			continue
		}
		paths = append(paths, p)
	}
	for _, rp := range t.Replies {
		if !members[rp.RecordKey] || !members[rp.ParentRecordKey] {
			c.add("relations/reviews.json", RuleRelations, "a reply edge of thread "+t.ThreadKey+" names a record outside the thread")
		}
	}
	if len(paths) == 0 {
		c.add("relations/reviews.json", RuleRelations, "thread "+t.ThreadKey+" has no retained record")
	}
	if lines, ok := o.orderLines[want]; ok {
		if !equalLines(lines, paths) {
			c.add(want, RuleThreadOrder, "must list the thread's record_keys in forge order")
		}
	} else if _, listed := c.byPath[want]; !listed {
		c.add(want, RuleThreadOrder, "the thread's order file is not in the manifest")
	}
}

// reviewRows checks that each relationship row names a review record whose key derives from
// its id, and returns the review record keys the rows name.
func (o *orderCheck) reviewRows() map[string]bool {
	c := o.c
	reviewed := map[string]bool{}
	for _, rv := range o.d.reviews.Reviews {
		reviewed[rv.RecordKey] = true
		if o.kindOf[rv.RecordKey] != "review" {
			c.add("relations/reviews.json", RuleRelations, "review "+rv.RecordKey+" is not a review record")
		}
		if want := canon.RecordKey(c.man.Source.Forge, c.man.Source.Host, c.man.Source.RepositoryID, canon.KindReview, rv.ID); want != rv.RecordKey {
			c.add("relations/reviews.json", RuleRecordKey, "review record_key "+rv.RecordKey+" does not derive from its review id")
		}
	}
	return reviewed
}

// reviewViews checks that each retained review has a relationship row and a view listing the
// review then the records of its threads, and that no view names another review.
func (o *orderCheck) reviewViews(reviewed map[string]bool) {
	c := o.c
	// Threads by review record key, in view order: each review view is built from its own
	// threads rather than by scanning every thread per review.
	threadsOf := map[string][]int{}
	for i, t := range o.viewThreads {
		if t.ReviewRecordKey != "" {
			threadsOf[t.ReviewRecordKey] = append(threadsOf[t.ReviewRecordKey], i)
		}
	}
	views := map[string]bool{}
	for _, r := range c.man.Records {
		if r.Kind != "review" || r.ContentPath == "" {
			continue
		}
		vp := "views/reviews/" + r.RecordKey + ".order"
		views[vp] = true
		if !reviewed[r.RecordKey] {
			c.add("relations/reviews.json", RuleRelations, "retained review "+r.RecordKey+" has no relationship row")
		}
		want := []string{r.ContentPath}
		seen := map[string]bool{r.ContentPath: true}
		for _, ti := range threadsOf[r.RecordKey] {
			want = o.appendThreadPaths(want, seen, o.viewThreads[ti])
		}
		if lines, ok := o.orderLines[vp]; ok {
			if !equalLines(lines, want) {
				c.add(vp, RuleReviewView, "must list the review then the records of its threads")
			}
		} else if _, listed := c.byPath[vp]; !listed {
			c.add(vp, RuleReviewView, "a retained review has no view file in the manifest")
		}
	}
	for _, f := range c.man.Files {
		if f.Role == "review_view" && !views[f.Path] {
			c.add(f.Path, RuleOrphanFile, "no retained review record has this view")
		}
	}
}

// appendThreadPaths appends the retained record paths of one thread, in forge order, that
// are not yet seen.
func (o *orderCheck) appendThreadPaths(out []string, seen map[string]bool, t threadRel) []string {
	for _, k := range t.RecordKeys {
		if p, ok := o.pathOf[k]; ok && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// unresolvedView: retained records of unresolved, non-outdated threads, thread by thread in
// view order (created_at, thread key), each thread in forge order, each path once.
func (o *orderCheck) unresolvedView() {
	var unresolved []string
	seen := map[string]bool{}
	for _, t := range o.viewThreads {
		st, ok := o.state[t.ThreadKey]
		if !ok || st.Resolved || st.Outdated {
			continue
		}
		unresolved = o.appendThreadPaths(unresolved, seen, t)
	}
	if lines, ok := o.orderLines["views/unresolved-review.order"]; ok && !equalLines(lines, unresolved) {
		o.c.add("views/unresolved-review.order", RuleUnresolvedView, "must list exactly the records of unresolved, non-outdated threads")
	}
}

// actors: every referenced actor ID appears exactly once, the array is sorted by ID, and no
// unreferenced row is present.
func (c *checker) actors(d *docs) {
	if d.actors == nil {
		return
	}
	refs := map[string]bool{}
	for _, r := range c.man.Records {
		if r.AuthorID != nil {
			refs[*r.AuthorID] = true
		}
	}
	if d.entity != nil && d.entity.AuthorID != nil {
		refs[*d.entity.AuthorID] = true
	}
	rawRef := func(raw json.RawMessage) {
		// A JSON null reference records that the forge did not expose the actor: it names no
		// actor row (json.Unmarshal of null into a string leaves "" and must not count).
		var s *string
		if len(raw) > 0 && json.Unmarshal(raw, &s) == nil && s != nil {
			refs[*s] = true
		}
	}
	if d.reviews != nil {
		for _, rv := range d.reviews.Reviews {
			rawRef(rv.DismissedByActorID)
		}
	}
	if d.threads != nil {
		for _, t := range d.threads.Threads {
			rawRef(t.ResolvedByActorID)
		}
	}
	rows := map[string]bool{}
	for i, a := range d.actors.Actors {
		if i > 0 && a.ID <= d.actors.Actors[i-1].ID {
			if a.ID == d.actors.Actors[i-1].ID {
				c.add("state/actors.json", RuleActors, "actor "+a.ID+" appears more than once")
			} else {
				c.add("state/actors.json", RuleActors, "actors must be sorted by id")
			}
		}
		rows[a.ID] = true
		if !refs[a.ID] {
			c.add("state/actors.json", RuleActors, "actor "+a.ID+" is not referenced by any record, review or thread")
		}
	}
	ids := make([]string, 0, len(refs))
	for id := range refs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if !rows[id] {
			c.add("state/actors.json", RuleActors, "referenced actor "+id+" has no row")
		}
	}
}

// arrays checks the remaining canonical array orders: gaps, findings, reviews, threads, runs.
func (c *checker) arrays(d *docs) {
	for i := 1; i < len(c.man.Gaps); i++ {
		a, b := c.man.Gaps[i-1], c.man.Gaps[i]
		if b.Scope < a.Scope || b.Scope == a.Scope && b.Code <= a.Code {
			c.add("index.json", RuleGaps, "gaps must be unique by (scope, code) and sorted by scope then code")
		}
	}
	c.findingOrders()
	if d.reviews != nil {
		c.relationOrders(d.reviews)
	}
	if d.threads != nil {
		th := d.threads.Threads
		for i := 1; i < len(th); i++ {
			if th[i].ThreadKey < th[i-1].ThreadKey {
				c.add("state/threads.json", RuleArrayOrder, "thread state must be sorted by thread_key")
			}
		}
	}
	if d.runs != nil {
		c.runOrders(d.runs.Runs)
	}
}

// findingOrders: every filter findings array of the index is unique and sorted by code.
func (c *checker) findingOrders() {
	findingsSorted := func(p string, fs []Finding) {
		for i := 1; i < len(fs); i++ {
			if fs[i].Code <= fs[i-1].Code {
				c.add(p, RuleArrayOrder, "filter findings must be unique and sorted by code")
				return
			}
		}
	}
	findingsSorted("index.json", c.man.Filter.Findings)
	for _, f := range c.man.Files {
		if f.Filter != nil {
			findingsSorted("index.json", f.Filter.Findings)
		}
	}
	for _, r := range c.man.Records {
		findingsSorted("index.json", r.Filter.Findings)
	}
}

// relationOrders: relations/reviews.json's reviews by (submitted_at, id), threads by
// (created_at, id).
func (c *checker) relationOrders(rel *reviewsDoc) {
	rv := rel.Reviews
	for i := 1; i < len(rv); i++ {
		if rv[i].SubmittedAt < rv[i-1].SubmittedAt || rv[i].SubmittedAt == rv[i-1].SubmittedAt && rv[i].ID <= rv[i-1].ID {
			c.add("relations/reviews.json", RuleArrayOrder, "reviews must be sorted by submitted_at then id")
		}
	}
	th := rel.Threads
	for i := 1; i < len(th); i++ {
		if th[i].CreatedAt < th[i-1].CreatedAt || th[i].CreatedAt == th[i-1].CreatedAt && th[i].ID <= th[i-1].ID {
			c.add("relations/reviews.json", RuleArrayOrder, "threads must be sorted by created_at then id")
		}
	}
}

// runOrders: runs by (completed_at, id), each run's result_record_keys sorted.
func (c *checker) runOrders(rs []runRow) {
	for i := range rs {
		if i > 0 && (rs[i].CompletedAt < rs[i-1].CompletedAt || rs[i].CompletedAt == rs[i-1].CompletedAt && rs[i].ID <= rs[i-1].ID) {
			c.add("history/agent-runs.json", RuleArrayOrder, "runs must be sorted by completed_at then id")
		}
		if !sort.StringsAreSorted(rs[i].ResultRecordKeys) {
			c.add("history/agent-runs.json", RuleArrayOrder, "result_record_keys must be sorted")
		}
	}
}

// partialGap lists the gap codes whose usability is partial; every other code is unusable
// (spec "Relationships, history, and collection profiles").
var partialGap = map[string]bool{"profile_bound": true, "history_unavailable": true}

// gaps checks each row's usability against its code (the schema says the same; this names
// the rule) and refuses an unusable entity-scope gap: such a gap aborts assembly, so a tree
// carrying one must never reach scripts or an agent.
func (c *checker) gaps() {
	for _, g := range c.man.Gaps {
		want := "unusable"
		if partialGap[g.Code] {
			want = "partial"
		}
		if g.Usability != want {
			c.add("index.json", RuleGaps, fmt.Sprintf("a %s gap must have usability %s", g.Code, want))
		}
		if g.Scope == "entity" && want == "unusable" {
			c.add("index.json", RuleGaps, "an unusable entity-scope gap ("+g.Code+") aborts assembly; such a tree must not be consumed")
		}
	}
}

var failedConclusion = map[string]bool{"failure": true, "timed_out": true, "action_required": true, "stale": true}

// sourceOfKind maps a manifest record kind to the collection source that selects it.
var sourceOfKind = map[string]string{"entity": "entity", "comment": "comments", "review": "reviews", "check": "checks"}

// sources checks the tree against collection.json's source selection: included_sources is
// sorted, every record kind, log and non-empty receipt history comes from a selected source,
// and every gap scope other than entity and actors is a selected source (an inapplicable or
// unselected source never creates a record, an empty scope or a gap).
func (c *checker) sources(d *docs) {
	if d.collection == nil {
		return
	}
	inc := map[string]bool{}
	for i, s := range d.collection.IncludedSources {
		inc[s] = true
		if i > 0 && s <= d.collection.IncludedSources[i-1] {
			c.add("collection.json", RuleArrayOrder, "included_sources must be unique and sorted by ASCII byte order")
		}
	}
	for _, r := range c.man.Records {
		if src := sourceOfKind[r.Kind]; src != "" && !inc[src] {
			c.add("index.json", RuleSourceSelection, "a "+r.Kind+" record but collection.json does not select "+src)
		}
		if r.LogPath != "" && (!inc["check_logs"] || d.collection.CheckLogSelection == "none") {
			c.add(r.LogPath, RuleSourceSelection, "a check log but collection.json selects no check logs")
		}
		// check_log_selection "failed" selects logs of failure, timed_out, action_required and
		// stale checks only; cancelled, skipped and neutral are not failed.
		if cd := d.checks[r.MetadataPath]; r.LogPath != "" && cd != nil && d.collection.CheckLogSelection == "failed" && !failedConclusion[cd.Conclusion] {
			c.add(r.LogPath, RuleSourceSelection, "a log of a check that is not failed but check_log_selection is failed")
		}
	}
	for _, g := range c.man.Gaps {
		if g.Scope != "entity" && g.Scope != "actors" && !inc[g.Scope] {
			c.add("index.json", RuleSourceSelection, "a "+g.Scope+" gap but collection.json does not select "+g.Scope)
		}
	}
	if d.runs != nil && len(d.runs.Runs) > 0 && !inc["agent_runs"] {
		c.add("history/agent-runs.json", RuleSourceSelection, "receipts but collection.json does not select agent_runs")
	}
}
