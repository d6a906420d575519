package main

import (
	"context"
	"io"
	"log/slog"

	"github.com/cnsd/cnsd/schema"
)

// logLevel is the level cnsd logs at: the configuration's log.level,
// applied again on every reload, unless -log-level fixed it.
type logLevel struct {
	v     slog.LevelVar
	fixed bool // -log-level was given: reloads leave the level alone
}

// newLogger returns the logger cnsd writes to w in the configuration's
// log.format, at flag's level when it is set (-log-level) and the
// configuration's otherwise.
func newLogger(w io.Writer, cfg *schema.Config, flag *slog.Level) (*slog.Logger, *logLevel) {
	lv := &logLevel{}
	lv.v.Set(cfg.Log.Level)
	if flag != nil {
		lv.v.Set(*flag)
		lv.fixed = true
	}
	opts := &slog.HandlerOptions{Level: &lv.v}
	if cfg.Log.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts)), lv
	}
	return slog.New(slog.NewTextHandler(w, opts)), lv
}

// apply sets the level of a reloaded configuration, unless -log-level
// fixed it, and logs a change.
func (l *logLevel) apply(cfg *schema.Config, log *slog.Logger) {
	if l == nil || l.fixed || l.v.Level() == cfg.Log.Level {
		return
	}
	old := l.v.Level()
	l.v.Set(cfg.Log.Level)
	// Logged at the more severe of the two levels, so that the line
	// shows whichever way the level moved.
	log.Log(context.Background(), max(old, cfg.Log.Level, slog.LevelInfo), "log level changed", "from", old, "to", cfg.Log.Level)
}

// levelFlag is the value of -log-level: nil until the flag is given.
type levelFlag struct{ level *slog.Level }

func (f *levelFlag) String() string {
	if f == nil || f.level == nil {
		return ""
	}
	return f.level.String()
}

func (f *levelFlag) Set(s string) error {
	l, err := schema.ParseLogLevel(s)
	if err != nil {
		return err
	}
	f.level = &l
	return nil
}
