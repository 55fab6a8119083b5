package reviewmcp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"syscall"
	"unicode/utf8"
)

// Evidence views: what the evidence tools serve of the verified snapshot.
const (
	// ViewSnapshot (the default, empty) serves the whole verified snapshot.
	ViewSnapshot = "snapshot"
	// ViewImmutable serves only immutable evidence: the collection profile and the entity's
	// immutable identity (kind, number, state, created_at) — no merge-request title, body or
	// labels, no participant, no conversation, CI or agent-run record — plus, when the run
	// admits it, the bounded metadata projection (MetadataPath). The review run always serves
	// this view: what else the engine reads comes from the context mode, never from the
	// snapshot profile.
	ViewImmutable = "immutable"
)

// Immutable-view document IDs.
const (
	docCollection     = "doc_collection"
	docEntityMetadata = "doc_entity_metadata"
	// docReviewMetadata is the bounded merge-request metadata projection (context mode
	// metadata), served as a document of the immutable view.
	docReviewMetadata = "doc_review_metadata"
)

// metadataSchema is the schema of the metadata projection file (MetadataDoc).
const metadataSchema = "forgectx.review-metadata/v1"

// maxMetadataFile bounds the metadata projection file.
const maxMetadataFile = 64 << 10

// MetadataDoc is the bounded merge-request metadata projection the review run hands to the
// server in context mode metadata: the DLP-checked, bounded, untrusted record reviewctx
// admitted (title, source branch, labels, description), its completeness and reasons.
type MetadataDoc struct {
	SchemaVersion string   `json:"schema_version"`
	Descriptor    string   `json:"descriptor"`
	Text          string   `json:"text"`
	Completeness  string   `json:"completeness"`
	Reasons       []string `json:"reasons"`
}

// entityIdentity is the immutable part of entity/metadata.json that the immutable view
// serves: no title, labels, author, raw forge ID or update time.
type entityIdentity struct {
	Kind      string `json:"kind"`
	Number    int64  `json:"number"`
	State     string `json:"state"`
	CreatedAt string `json:"created_at"`
}

// applyView narrows the indexed snapshot to the view. metadata is the validated metadata
// projection file's bytes (immutable view only; nil: none).
func (e *evidence) applyView(view string, metadata []byte) error {
	if view == "" || view == ViewSnapshot {
		return nil
	}
	var kept []*item
	e.byID = map[string]*item{}
	for _, it := range e.items {
		switch it.ID {
		case docCollection:
		case docEntityMetadata:
			var id entityIdentity
			if err := json.Unmarshal([]byte(it.content), &id); err != nil {
				return fmt.Errorf("entity/metadata.json: %v", err)
			}
			b, err := json.Marshal(id)
			if err != nil {
				return err
			}
			it.content = string(b)
			it.index()
		default:
			continue
		}
		kept = append(kept, it)
		e.byID[it.ID] = it
	}
	e.items = kept
	e.threads = 0
	e.immutable = true
	if metadata != nil {
		it := &item{ID: docReviewMetadata, Kind: kindDocument, content: string(metadata)}
		it.index()
		e.items = append(e.items, it)
		e.byID[it.ID] = it
	}
	return nil
}

// readMetadata reads the metadata projection file: a regular file (not a symlink), at most
// 64 KiB, with the given SHA-256 when one is set, decoding strictly to a MetadataDoc.
func readMetadata(path, want string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("metadata: %v", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("metadata: not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, maxMetadataFile+1))
	if err != nil {
		return nil, fmt.Errorf("metadata: %v", err)
	}
	if len(b) > maxMetadataFile {
		return nil, fmt.Errorf("metadata: larger than %d bytes", maxMetadataFile)
	}
	if want != "" {
		sum := sha256.Sum256(b)
		if hex.EncodeToString(sum[:]) != want {
			return nil, fmt.Errorf("metadata: content does not match the SHA-256")
		}
	}
	if !utf8.Valid(b) {
		return nil, fmt.Errorf("metadata: invalid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var d MetadataDoc
	if err := dec.Decode(&d); err != nil || dec.More() {
		return nil, fmt.Errorf("metadata: must be one %s object with only its fields", metadataSchema)
	}
	if d.SchemaVersion != metadataSchema {
		return nil, fmt.Errorf("metadata: schema_version: must be %s", metadataSchema)
	}
	return b, nil
}

// EncodeMetadata returns the bytes of d for the metadata projection file: its fields in
// declaration order, no HTML escaping, no trailing newline (same document, same bytes).
func EncodeMetadata(d MetadataDoc) ([]byte, error) {
	d.SchemaVersion = metadataSchema
	if d.Reasons == nil {
		d.Reasons = []string{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
