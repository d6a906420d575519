package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/cnsd/cnsd/feed"
	"github.com/cnsd/cnsd/pipeline"
	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/store"
)

// cloudConfigured reports whether the configuration names the cloud's
// APIs; without them cnsd serves only its configured zones. It fails when
// VMAPI is named but one of the APIs every VM's records depend on is not.
func cloudConfigured(c *schema.Config) (bool, error) {
	if c.VMAPI.Endpoint == (schema.Endpoint{}) {
		return false, nil
	}
	var missing []string
	for name, e := range map[string]schema.Endpoint{"ufds_opts": c.UFDS.Endpoint,
		"cnapi_opts": c.CNAPI.Endpoint, "napi_opts": c.NAPI.Endpoint} {
		if e == (schema.Endpoint{}) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return false, fmt.Errorf("vmapi_opts is set but %s %s not: every VM's records need UFDS, CNAPI and NAPI",
			strings.Join(missing, " and "), map[bool]string{true: "is", false: "are"}[len(missing) == 1])
	}
	return true, nil
}

// followCloud runs the feeds and the pipeline writing st until ctx ends.
// The pipeline is published in conf for reloads (and the API).
func followCloud(ctx context.Context, st *store.Store, conf *running, log *slog.Logger) error {
	cfg := conf.cfg.Load()
	ufds := feed.NewUFDS(cfg.UFDS, log)
	defer ufds.Close()
	cnapi := feed.NewCNAPI(withLogger(feed.CNAPIOptionsFrom(cfg), log))
	napiOpts := feed.NAPIOptionsFrom(cfg)
	napiOpts.Logger = log
	napi := feed.NewNAPI(napiOpts)
	vmapi := feed.NewVMAPI(feed.VMAPIConfigFrom(cfg, processInstance()), log)
	p := pipeline.New(pipeline.Config{Store: st, Owners: ufds, Servers: cnapi, Networks: napi,
		Settings: pipeline.SettingsFrom(cfg), Logger: log, Verify: vmapi.Verify})
	conf.pipeline.Store(p)
	defer conf.pipeline.Store(nil)
	if conf.api != nil {
		conf.api.SetCloud(cloudView{p: p, connected: vmapi.Connected})
		defer conf.api.SetCloud(nil)
	}
	// A reload may have come between reading cfg and publishing p.
	conf.applySettings(conf.cfg.Load())
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return p.Run(ctx) })
	g.Go(func() error { return cnapi.Run(ctx, p.ServersChanged) })
	g.Go(func() error { return ufds.Watch(ctx, p.AccountChanged) })
	g.Go(func() error { return vmapi.Run(ctx, p) })
	return g.Wait()
}

func withLogger(o feed.CNAPIOptions, log *slog.Logger) feed.CNAPIOptions {
	o.Logger = log
	return o
}

// processInstance is a changefeed instance of this process alone: two
// cnsd sharing one instance would take the feed from each other.
func processInstance() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// pipelineSettings holds the settings the pipeline was last given, so
// that a reload re-evaluates every VM only when they changed.
type pipelineSettings struct {
	last atomic.Pointer[pipeline.Settings]
}

// applySettings hands the pipeline the settings of cfg if they differ
// from the ones it has.
func (r *running) applySettings(cfg *schema.Config) {
	p := r.pipeline.Load()
	if p == nil {
		return
	}
	s := pipeline.SettingsFrom(cfg)
	if last := r.settings.last.Load(); last != nil && reflect.DeepEqual(*last, s) {
		return
	}
	r.settings.last.Store(&s)
	p.SetSettings(s)
}
