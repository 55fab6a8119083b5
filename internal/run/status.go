package run

import (
	"context"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/status"
)

// statusComment is the agent's sticky status comment on the entity. The lookup runs once:
// the ID found or created is remembered and every later write edits that ID.
type statusComment struct {
	c      forge.Commenter
	ref    forge.Ref
	agent  string
	runURL string
	pipe   *filter.Pipeline
	log    zerolog.Logger
	id     string
	// report is what the final states add below the state line: the failed checks and the
	// partial-context line (contextReport; nil until a tree was staged).
	report *status.Context
}

var states = map[string]status.State{
	StatusSuccess: status.Success, StatusFailure: status.Failure, StatusSkipped: status.Skipped,
	StatusCancelled: status.Cancelled, StatusTimedOut: status.TimedOut,
}

// start posts (or edits the existing sticky comment into) the started state.
func (s *statusComment) start(ctx context.Context) error {
	return s.write(ctx, status.Started, "")
}

// finish writes the final state; when start never found or created the comment, it looks
// the comment up (or creates it) now.
func (s *statusComment) finish(ctx context.Context, st, detail string) error {
	state, ok := states[st]
	if !ok {
		return fmt.Errorf("status: unknown run status %q", st)
	}
	return s.write(ctx, state, detail)
}

func (s *statusComment) write(ctx context.Context, state status.State, detail string) error {
	body, err := status.Render(s.pipe, status.Status{Agent: s.agent, State: state, RunURL: s.runURL, Detail: detail, Context: s.report})
	if err != nil {
		return err
	}
	if s.id == "" {
		found, err := s.c.FindComments(ctx, s.ref, status.Marker(s.agent))
		if err != nil {
			return fmt.Errorf("status comment lookup: %w", err)
		}
		if len(found) > 0 {
			// The oldest is the sticky one; later duplicates (a race between two jobs) stay
			// untouched.
			s.id = found[0].ID
			s.log.Debug().Str("comment_id", s.id).Int("matches", len(found)).Msg("status comment found")
		}
	}
	if s.id == "" {
		cm, err := s.c.CreateComment(ctx, s.ref, body)
		if err != nil {
			return fmt.Errorf("status comment create: %w", err)
		}
		s.id = cm.ID
		return nil
	}
	if err := s.c.UpdateComment(ctx, s.ref, s.id, body); err != nil {
		return fmt.Errorf("status comment update: %w", err)
	}
	return nil
}
