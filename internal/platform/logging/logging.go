// Package logging builds the one structured logger forgectx writes to stderr.
//
// Fields are counts, digests, IDs and codes: never a comment body, log line, token or header
// value (DEVELOPERS.md, "Standards"). Callers must not pass source text to the logger.
package logging

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rs/zerolog"
)

// Formats accepted by --log-format.
const (
	formatText = "text"
	formatJSON = "json"
)

// levels are the documented --log-level values. zerolog.ParseLevel alone would also take
// "panic", "fatal", "" and bare numbers, none of which is documented.
var levels = map[string]zerolog.Level{
	"trace": zerolog.TraceLevel, "debug": zerolog.DebugLevel, "info": zerolog.InfoLevel,
	"warn": zerolog.WarnLevel, "error": zerolog.ErrorLevel, "disabled": zerolog.Disabled,
}

// New returns a zerolog logger writing to w in the given format ("text" or "json") at the given
// level ("trace", "debug", "info", "warn", "error", "disabled"). An unknown format or level is an
// error naming the flag and the accepted values.
func New(w io.Writer, format, level string) (zerolog.Logger, error) {
	lvl, ok := levels[strings.ToLower(level)]
	if !ok {
		return zerolog.Nop(), fmt.Errorf("--log-level: %q is not one of trace, debug, info, warn, error, disabled", level)
	}
	var out io.Writer
	switch format {
	case formatJSON:
		out = w
	case formatText:
		out = zerolog.ConsoleWriter{Out: w, NoColor: true, TimeFormat: time.RFC3339}
	default:
		return zerolog.Nop(), fmt.Errorf("--log-format: %q is not one of text, json", format)
	}
	return zerolog.New(out).Level(lvl).With().Timestamp().Logger(), nil
}
