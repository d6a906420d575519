package schema

import (
	"fmt"
	"log/slog"
	"strings"
)

// logLevels are the names log.level and cnsd -log-level accept.
var logLevels = map[string]slog.Level{
	"debug": slog.LevelDebug,
	"info":  slog.LevelInfo,
	"warn":  slog.LevelWarn,
	"error": slog.LevelError,
}

// ParseLogLevel returns the level named s, one of debug, info, warn and
// error (as log.level spells them); any other value is an error that
// names it.
func ParseLogLevel(s string) (slog.Level, error) {
	if l, ok := logLevels[s]; ok {
		return l, nil
	}
	return 0, fmt.Errorf("log level %q: must be one of %s", s, strings.Join(logLevelNames, ", "))
}

// logLevelNames are the keys of logLevels from the most verbose.
var logLevelNames = []string{"debug", "info", "warn", "error"}
