package reviewrun

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"

	"github.com/forgectx/forgectx/internal/review/reviewctx"
	"github.com/forgectx/forgectx/internal/review/reviewmcp"
	"github.com/forgectx/forgectx/internal/run/harness"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// The engine's view is derived from the context mode and the target's protection, never from
// the operator's snapshot profile (docs/review-context.md, "What the engine sees"):
//
//   - every mode: the immutable evidence of the verified snapshot (reviewmcp.ViewImmutable);
//   - metadata: plus the bounded metadata projection reviewctx admitted, as one evidence
//     document;
//   - enriched (protected only; reviewctx refuses it otherwise): plus the records the
//     protected policy selected, through the committed store's context tools.
//
// The snapshot is assembled with the entity alone, so no conversation, CI or agent-run record
// is even fetched; a profile that selects more is refused before any request.

// checkEngineView refuses a snapshot profile that selects any source but the entity: in no
// context mode may the snapshot carry discussions, reviews, CI or agent runs to the engine.
func checkEngineView(mode reviewctx.Mode, h *harness.Harness) error {
	p, err := h.ProfileFor(acquisition.KindChangeProposal)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	shown := string(mode)
	if shown == "" {
		shown = string(reviewctx.ModeOff)
	}
	for _, src := range p.IncludedSources {
		if src != acquisition.SourceEntity {
			return fmt.Errorf("%w: harness: profiles.change_proposal.included_sources: %s: context mode %s admits no %s source (the engine sees immutable evidence and only what the mode admits; only entity may be selected)",
				ErrConfig, src, shown, src)
		}
	}
	return nil
}

// writeMetadata hands the bounded metadata projection of a metadata run to the MCP server: a
// 0600 file in the session's MCP directory, pinned by its SHA-256. Other modes write nothing
// (off admits no mutable text; enriched serves the metadata record through the store).
func (r *runner) writeMetadata(c *reviewmcp.Config) error {
	if r.acq == nil || r.acq.Mode != reviewctx.ModeMetadata {
		return nil
	}
	doc := reviewmcp.MetadataDoc{Descriptor: "merge request metadata (untrusted)", Completeness: string(reviewctx.Unavailable)}
	for _, st := range r.acq.Sources {
		if st.Source == reviewctx.SourceMetadata {
			doc.Completeness, doc.Reasons = string(st.Completeness), st.Reasons
		}
	}
	content := r.acq.Metadata
	if content == nil && r.acq.Store != nil {
		for i := range r.acq.Store.Records {
			if rec := &r.acq.Store.Records[i]; rec.Source == reviewctx.SourceMetadata {
				content = &rec.Content
			}
		}
	}
	if content != nil {
		doc.Descriptor, doc.Text = content.Descriptor, content.Text
	}
	b, err := reviewmcp.EncodeMetadata(doc)
	if err != nil {
		return err
	}
	p := r.s.metadataPath()
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("reviewrun: metadata projection: %w", err)
	}
	_, werr := f.Write(b)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("reviewrun: metadata projection: %w", werr)
	}
	sum := sha256.Sum256(b)
	c.MetadataPath, c.MetadataSHA256 = p, hex.EncodeToString(sum[:])
	return nil
}
