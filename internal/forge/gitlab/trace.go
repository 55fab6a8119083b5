package gitlab

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"

	retryablehttp "github.com/hashicorp/go-retryablehttp"

	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// Trace reads the raw log of one job from GET /projects/:id/jobs/:job_id/trace, reading at
// most maxSourceBytes+1 bytes: a declared Content-Length above the cap is refused before the
// body is touched, and an undeclared or lying length is cut at the first byte past the cap.
// Either way the outcome is source_too_large and no prefix is kept (the spec's pre-decode
// max_source_bytes cap). A cap of zero or less means no cap was configured and every
// non-empty log is too large (fail closed). client-go's GetTraceFile is not used because it
// buffers the whole body and drains the remainder.
func (c *Client) Trace(ctx context.Context, pid any, jobID int64, maxSourceBytes int) acquisition.Log {
	u := c.base.JoinPath("projects", url.PathEscape(fmt.Sprint(pid)), "jobs", fmt.Sprint(jobID), "trace")
	req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return acquisition.Log{Outcome: acquisition.LogFetchFailed}
	}
	if c.opts.Token != "" {
		h := headerPrivateToken
		if c.opts.TokenKind == tokenJob {
			h = headerJobToken
		}
		req.Header.Set(h, c.opts.Token)
	}
	req.Header.Set("User-Agent", "forgectx")
	resp, err := c.retrier.Do(req)
	if err != nil {
		c.opts.Log.Warn().Int64("job_id", jobID).Msg("job trace fetch failed")
		return acquisition.Log{Outcome: acquisition.LogFetchFailed}
	}
	// Close without draining: the rest of an oversized body is never read.
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		c.opts.Log.Warn().Int64("job_id", jobID).Int("status", resp.StatusCode).Msg("job trace fetch failed")
		return acquisition.Log{Outcome: acquisition.LogFetchFailed}
	}
	limit := int64(maxSourceBytes)
	if limit < 0 {
		limit = 0
	}
	if resp.ContentLength > limit {
		c.opts.Log.Info().Int64("job_id", jobID).Int64("declared_bytes", resp.ContentLength).Msg("job trace larger than max_source_bytes")
		return acquisition.Log{Outcome: acquisition.LogSourceTooLarge}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		c.opts.Log.Warn().Int64("job_id", jobID).Msg("job trace read failed")
		return acquisition.Log{Outcome: acquisition.LogFetchFailed}
	}
	if int64(len(body)) > limit {
		c.opts.Log.Info().Int64("job_id", jobID).Msg("job trace larger than max_source_bytes")
		return acquisition.Log{Outcome: acquisition.LogSourceTooLarge}
	}
	return acquisition.Log{Outcome: acquisition.LogFetched, Content: body}
}
