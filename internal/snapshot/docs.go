package snapshot

import (
	"encoding/json"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// The JSON documents of the tree, field for field as their v1 schemas define them. Optional
// properties use omitempty; required nullable properties are pointers or json.RawMessage
// ("null" when the source value is unavailable), so a value is never synthesised.

type filterJSON struct {
	Status   filter.Status    `json:"status"`
	Findings []filter.Finding `json:"findings"`
}

type sourceJSON struct {
	Forge        string `json:"forge"`
	Host         string `json:"host"`
	RepositoryID string `json:"repository_id"`
	Repository   string `json:"repository"`
}

type indexEntityJSON struct {
	Kind      string `json:"kind"`
	ID        string `json:"id"`
	UpdatedAt string `json:"updated_at,omitempty"`
}

type fileJSON struct {
	Path      string      `json:"path"`
	Role      string      `json:"role"`
	MediaType string      `json:"media_type"`
	Bytes     int         `json:"bytes"`
	SHA256    string      `json:"sha256"`
	Filter    *filterJSON `json:"filter,omitempty"`
}

// recordJSON is an entity, comment or review manifest record (author fields required).
type recordJSON struct {
	Kind        string     `json:"kind"`
	ID          string     `json:"id"`
	RecordKey   string     `json:"record_key"`
	ContentPath string     `json:"content_path,omitempty"`
	AuthorID    *string    `json:"author_id"`
	Author      *string    `json:"author"`
	CreatedAt   string     `json:"created_at"`
	UpdatedAt   string     `json:"updated_at,omitempty"`
	Filter      filterJSON `json:"filter"`
}

// checkRecordJSON is a check manifest record (no author fields).
type checkRecordJSON struct {
	Kind         string     `json:"kind"`
	ID           string     `json:"id"`
	RecordKey    string     `json:"record_key"`
	MetadataPath string     `json:"metadata_path,omitempty"`
	LogPath      string     `json:"log_path,omitempty"`
	CreatedAt    string     `json:"created_at"`
	Filter       filterJSON `json:"filter"`
}

type indexJSON struct {
	SchemaVersion     int             `json:"schema_version"`
	FilterVersion     string          `json:"filter_version"`
	CollectionProfile string          `json:"collection_profile"`
	Filter            filterJSON      `json:"filter"`
	Source            sourceJSON      `json:"source"`
	Entity            indexEntityJSON `json:"entity"`
	Files             []fileJSON      `json:"files"`
	Records           []any           `json:"records"`
	Gaps              []Gap           `json:"gaps"`
}

type entityJSON struct {
	Kind      string   `json:"kind"`
	ID        string   `json:"id"`
	Number    int      `json:"number"`
	Title     string   `json:"title"`
	State     string   `json:"state"`
	AuthorID  *string  `json:"author_id"`
	Author    *string  `json:"author"`
	CreatedAt string   `json:"created_at"`
	UpdatedAt string   `json:"updated_at"`
	Labels    []string `json:"labels"`
}

type reviewRelJSON struct {
	ID                 string          `json:"id"`
	RecordKey          string          `json:"record_key"`
	State              string          `json:"state"`
	ReviewedSHA        string          `json:"reviewed_sha,omitempty"`
	SubmittedAt        string          `json:"submitted_at"`
	DismissedAt        json.RawMessage `json:"dismissed_at,omitempty"`
	DismissedByActorID json.RawMessage `json:"dismissed_by_actor_id,omitempty"`
}

type replyJSON struct {
	RecordKey       string `json:"record_key"`
	ParentRecordKey string `json:"parent_record_key"`
}

type threadRelJSON struct {
	ID                string      `json:"id"`
	ThreadKey         string      `json:"thread_key"`
	CreatedAt         string      `json:"created_at"`
	OrderPath         string      `json:"order_path"`
	RecordKeys        []string    `json:"record_keys"`
	Replies           []replyJSON `json:"replies"`
	ReviewID          string      `json:"review_id,omitempty"`
	ReviewRecordKey   string      `json:"review_record_key,omitempty"`
	ReviewedSHA       string      `json:"reviewed_sha,omitempty"`
	Path              string      `json:"path,omitempty"`
	Line              int         `json:"line,omitempty"`
	Side              string      `json:"side,omitempty"`
	StartLine         int         `json:"start_line,omitempty"`
	OriginalLine      int         `json:"original_line,omitempty"`
	OriginalStartLine int         `json:"original_start_line,omitempty"`
	OriginalSide      string      `json:"original_side,omitempty"`
}

type threadStateJSON struct {
	ID                string          `json:"id"`
	ThreadKey         string          `json:"thread_key"`
	Resolved          bool            `json:"resolved"`
	ResolvedByActorID json.RawMessage `json:"resolved_by_actor_id,omitempty"`
	Outdated          bool            `json:"outdated"`
	Minimized         *bool           `json:"minimized,omitempty"`
}

type threadsJSON struct {
	Threads []threadStateJSON `json:"threads"`
}

type actorJSON struct {
	ID           string  `json:"id"`
	Kind         string  `json:"kind"`
	Login        *string `json:"login"`
	Role         *string `json:"role"`
	RoleVerified bool    `json:"role_verified"`
}

type actorsJSON struct {
	Actors []actorJSON `json:"actors"`
}

// runJSON is one agent-runs.json run: the one receipt type.
type runJSON = acquisition.Receipt

type runsJSON struct {
	Runs []runJSON `json:"runs"`
}

type checkJSON struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Status       string `json:"status"`
	Conclusion   string `json:"conclusion,omitempty"`
	CreatedAt    string `json:"created_at"`
	HeadSHA      string `json:"head_sha"`
	StartedAt    string `json:"started_at,omitempty"`
	NeverStarted *bool  `json:"never_started,omitempty"`
	CompletedAt  string `json:"completed_at,omitempty"`
}

// nullable renders a required nullable string: JSON null when unavailable.
func nullable(s *string) json.RawMessage {
	return appendNullable(nil, s) // RFC 8785 bytes, so the direct row encoders copy them as they are
}
