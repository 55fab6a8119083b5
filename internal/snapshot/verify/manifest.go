package verify

import "encoding/json"

// The decoded documents of a tree, as far as the consumer checks need them. Decoding happens
// only after schema validation, so every field here has its schema-checked shape.

// Manifest is the decoded root index.json.
type Manifest struct {
	SchemaVersion     int              `json:"schema_version"`
	FilterVersion     string           `json:"filter_version"`
	CollectionProfile string           `json:"collection_profile"`
	Filter            Filter           `json:"filter"`
	Source            Source           `json:"source"`
	Entity            ManifestEntity   `json:"entity"`
	Files             []ManifestFile   `json:"files"`
	Records           []ManifestRecord `json:"records"`
	Gaps              []Gap            `json:"gaps"`
}

// Filter is a filter summary.
type Filter struct {
	Status   string    `json:"status"`
	Findings []Finding `json:"findings"`
}

// Finding is one filter finding (code and count).
type Finding struct {
	Code  string `json:"code"`
	Count int    `json:"count"`
}

// Source is index.json source.
type Source struct {
	Forge        string `json:"forge"`
	Host         string `json:"host"`
	RepositoryID string `json:"repository_id"`
	Repository   string `json:"repository"`
}

// ManifestEntity is index.json entity.
type ManifestEntity struct {
	Kind      string `json:"kind"`
	ID        string `json:"id"`
	UpdatedAt string `json:"updated_at,omitempty"`
}

// ManifestFile is one files[] entry.
type ManifestFile struct {
	Path      string  `json:"path"`
	Role      string  `json:"role"`
	MediaType string  `json:"media_type"`
	Bytes     int64   `json:"bytes"`
	SHA256    string  `json:"sha256"`
	Filter    *Filter `json:"filter,omitempty"`
}

// ManifestRecord is one records[] entry.
type ManifestRecord struct {
	Kind         string  `json:"kind"`
	ID           string  `json:"id"`
	RecordKey    string  `json:"record_key"`
	ContentPath  string  `json:"content_path,omitempty"`
	MetadataPath string  `json:"metadata_path,omitempty"`
	LogPath      string  `json:"log_path,omitempty"`
	AuthorID     *string `json:"author_id"`
	// Author is the record author's filtered login, a display string (null when unsafe or
	// withheld; absent on check records).
	Author    *string `json:"author"`
	CreatedAt string  `json:"created_at"`
	Filter    Filter  `json:"filter"`
}

// Gap is one gaps[] row.
type Gap struct {
	Scope     string `json:"scope"`
	Code      string `json:"code"`
	Usability string `json:"usability"`
	Count     int    `json:"count"`
}

type collectionDoc struct {
	EntityKind        string   `json:"entity_kind"`
	IncludedSources   []string `json:"included_sources"`
	CheckLogSelection string   `json:"check_log_selection"`
	Bounds            bounds   `json:"bounds"`
}

// bounds are collection.json's bounds; the schema requires every member.
type bounds struct {
	MaxRecordsPerSource    int64 `json:"max_records_per_source"`
	MaxSourceBytes         int64 `json:"max_source_bytes"`
	MaxRecordBytes         int64 `json:"max_record_bytes"`
	MaxLogBytes            int64 `json:"max_log_bytes"`
	MaxMetadataStringBytes int64 `json:"max_metadata_string_bytes"`
	MaxLabels              int64 `json:"max_labels"`
}

type entityDoc struct {
	Kind      string   `json:"kind"`
	ID        string   `json:"id"`
	AuthorID  *string  `json:"author_id"`
	Author    *string  `json:"author"`
	Title     string   `json:"title"`
	CreatedAt string   `json:"created_at"`
	Labels    []string `json:"labels"`
}

type reviewRel struct {
	ID                 string          `json:"id"`
	RecordKey          string          `json:"record_key"`
	SubmittedAt        string          `json:"submitted_at"`
	DismissedByActorID json.RawMessage `json:"dismissed_by_actor_id"`
}

type replyRel struct {
	RecordKey       string `json:"record_key"`
	ParentRecordKey string `json:"parent_record_key"`
}

type threadRel struct {
	ID              string     `json:"id"`
	ThreadKey       string     `json:"thread_key"`
	CreatedAt       string     `json:"created_at"`
	OrderPath       string     `json:"order_path"`
	RecordKeys      []string   `json:"record_keys"`
	Replies         []replyRel `json:"replies"`
	ReviewRecordKey string     `json:"review_record_key"`
	ReviewID        string     `json:"review_id"`
	Path            string     `json:"path"`
}

type reviewsDoc struct {
	Reviews []reviewRel `json:"reviews"`
	Threads []threadRel `json:"threads"`
}

type threadState struct {
	ID                string          `json:"id"`
	ThreadKey         string          `json:"thread_key"`
	Resolved          bool            `json:"resolved"`
	ResolvedByActorID json.RawMessage `json:"resolved_by_actor_id"`
	Outdated          bool            `json:"outdated"`
}

type threadsDoc struct {
	Threads []threadState `json:"threads"`
}

type actorsDoc struct {
	Actors []struct {
		ID    string  `json:"id"`
		Login *string `json:"login"`
	} `json:"actors"`
}

type runsDoc struct {
	Runs []runRow `json:"runs"`
}

// runRow is what the array-order check reads of one history/agent-runs.json run.
type runRow struct {
	ID               string   `json:"id"`
	Agent            string   `json:"agent"`
	CompletedAt      string   `json:"completed_at"`
	ResultRecordKeys []string `json:"result_record_keys"`
}

type checkDoc struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	HeadSHA    string `json:"head_sha"`
	CreatedAt  string `json:"created_at"`
	Conclusion string `json:"conclusion"`
}
