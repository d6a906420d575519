package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"reflect"
	"time"

	"github.com/cnsd/cnsd/api"
	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/xfr"
)

// configPollInterval is how often the configuration file is checked for a
// change. Polling works the same on Linux and illumos and sees a file
// replaced by rename, as editors and cnsadm write it.
const configPollInterval = 2 * time.Second

// reloadOnChange reads the configuration again on SIGHUP and when the
// file's content changes. A valid one replaces the running one; an
// invalid one is logged with the reason and the running one stays (and
// the same content is not tried again until it changes).
func reloadOnChange(ctx context.Context, hup <-chan os.Signal, path string, log *slog.Logger, dnsSrv *xfr.Server, conf *running) error {
	last, _ := os.ReadFile(path) // what is running was read from this
	tick := time.NewTicker(configPollInterval)
	defer tick.Stop()
	for {
		forced := false
		select {
		case <-ctx.Done():
			return nil
		case <-hup:
			forced = true
		case <-tick.C:
		}
		data, err := os.ReadFile(path)
		if err != nil {
			if forced {
				log.Error("configuration not reloaded; the running one stays", "file", path, "err", err)
			}
			continue
		}
		if !forced && bytes.Equal(data, last) {
			continue
		}
		last = data
		reload(data, path, log, dnsSrv, conf)
	}
}

// reload applies the configuration in data if it is valid.
func reload(data []byte, path string, log *slog.Logger, dnsSrv *xfr.Server, conf *running) {
	cfg, err := schema.ParseFile(path, data)
	if err == nil {
		_, err = cloudConfigured(cfg)
	}
	var token string
	if err == nil {
		token, err = apiToken(cfg, path, log)
	}
	if err != nil {
		args := []any{"file", path, "err", err}
		if es, ok := errors.AsType[schema.Errors](err); ok {
			args = append(args, "problems", len(es))
		}
		log.Error("configuration not reloaded; the running one stays", args...)
		return
	}
	old := conf.cfg.Load()
	conf.cfg.Store(cfg)
	dnsSrv.SetConfig(cfg)
	if conf.api != nil {
		conf.api.SetAccess(api.AccessOf(cfg.API, token))
		conf.api.SetTTL(cfg.TTL)
	}
	if zones := conf.zones.Load(); zones != nil {
		zones.SetConfig(cfg)
	}
	conf.applySettings(cfg)
	conf.level.apply(cfg, log)
	log.Info("configuration reloaded", "file", path)
	if old != nil {
		for _, key := range startOnlyChanges(old, cfg) {
			log.Warn("setting changed in the file is read at start only; restart cnsd to apply it", "file", path, "key", key)
		}
	}
}

// startOnlyChanges names the settings read only when cnsd starts that
// differ between old and next.
func startOnlyChanges(old, next *schema.Config) []string {
	var keys []string
	for _, s := range []struct {
		key  string
		a, b any
	}{
		{"dns.listen", old.DNS.Listen, next.DNS.Listen},
		{"api.listen", old.API.Listen, next.API.Listen},
		{"store", old.Store, next.Store},
		{"vmapi_opts", old.VMAPI, next.VMAPI},
		{"ufds_opts", old.UFDS, next.UFDS},
		{"cnapi_opts", old.CNAPI, next.CNAPI},
		{"napi_opts", old.NAPI, next.NAPI},
		{"changefeed_opts", old.Changefeed, next.Changefeed},
		// The store's options: MaxMembers must change in every process
		// at once, or readers would publish other members than the writer.
		{"rrset_warn_records", old.RRsetWarn, next.RRsetWarn},
		{"max_service_members", old.MaxSvcMembers, next.MaxSvcMembers},
		{"log.format", old.Log.Format, next.Log.Format},
	} {
		if !reflect.DeepEqual(s.a, s.b) {
			keys = append(keys, s.key)
		}
	}
	return keys
}
