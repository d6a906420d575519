package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cnsd/cnsd/store/redis"
	"golang.org/x/sync/errgroup"

	"github.com/cnsd/cnsd/api"
	"github.com/cnsd/cnsd/pipeline"
	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/store/bolt"
	"github.com/cnsd/cnsd/xfr"
)

// backend is a store backend that also decides which process writes and
// lets the others follow.
type backend interface {
	store.Backend
	store.Leaser
	store.Follower
}

// serve runs cnsd with the configuration in path until ctx ends: the
// store, the DNS server, the maintainer of configured zones and the API.
// Every process serves DNS and the API; the one holding the writer lease
// also writes, the others follow its commits (several cnsd on one Redis).
// SIGHUP reloads the configuration. The writer follows the cloud's APIs
// when the configuration names them.
func serve(ctx context.Context, path string, ls logSetup) error {
	// SIGHUP is caught from the start: its default action ends the process.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	cfg, err := schema.Load(path)
	if err != nil {
		return err
	}
	log, level := newLogger(ls.w, cfg, ls.level)
	if _, err := cloudConfigured(cfg); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	token, err := apiToken(cfg, path, log)
	if err != nil {
		return err
	}
	conf := &running{level: level}
	conf.cfg.Store(cfg)
	src := &source{}
	h := &health{src: src}
	var write func(context.Context) error
	if cfg.Store.Redis == "" {
		// bbolt's file lock already makes this the only process: the
		// lease is immediate and there is no writer to follow.
		b, err := bolt.Open(cfg.Store.Path, bolt.Options{})
		if err != nil {
			return err
		}
		defer b.Close()
		st, epoch, err := openWriter(ctx, b, cfg, conf.dns.retain, log)
		if err != nil {
			return err
		}
		src.cur.Store(st)
		h.loaded.Store(true)
		h.writer.Store(true)
		write = func(ctx context.Context) error { return lead(ctx, b, src, st, epoch, conf, log) }
	} else {
		// Redis may be down: DNS and the API start at once (with no
		// zones until they are loaded), and runOnRedis waits for it.
		r, err := redis.New(cfg.Store.Redis, redis.Options{AcceptNoAOF: cfg.Store.RedisAcceptNoAOF})
		if err != nil {
			return err
		}
		defer r.Close()
		redis.LogTo(log)
		h.redis = r
		write = func(ctx context.Context) error { return runOnRedis(ctx, r, src, conf, h, log) }
	}
	dnsSrv := xfr.New(cfg, src, xfr.Options{}, log)
	conf.dns.srv.Store(dnsSrv)
	apiSrv := api.New(src, dnsSrv, api.AccessOf(cfg.API, token), log)
	apiSrv.SetTTL(cfg.TTL)
	apiSrv.SetHealth(h)
	conf.api = apiSrv
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return dnsSrv.Run(ctx) })
	for _, addr := range cfg.API.Listen {
		g.Go(func() error { return serveAPI(ctx, addr, apiSrv) })
	}
	g.Go(func() error { return reloadOnChange(ctx, hup, path, log, dnsSrv, conf) })
	g.Go(func() error { return write(ctx) })
	log.Info("cnsd running", "dns", cfg.DNS.Listen, "api", cfg.API.Listen)
	if err := g.Wait(); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// logSetup is where cnsd logs and the level -log-level set (nil when
// the flag is not given); the format and the level otherwise come from
// the configuration.
type logSetup struct {
	w     io.Writer
	level *slog.Level
}

// openWriter takes the writer lease and opens the store that writes
// with it.
func openWriter(ctx context.Context, b backend, cfg *schema.Config, retain func(string) (uint32, bool), log *slog.Logger) (*store.Store, uint64, error) {
	epoch, err := b.Acquire(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("writer lease: %w", err)
	}
	st, err := store.Open(ctx, b, storeOptions(cfg, epoch, retain), log)
	if err != nil {
		release(ctx, b, epoch, log)
		return nil, 0, err
	}
	log.Info("writing the store", "epoch", epoch)
	return st, epoch, nil
}

// lead is the writer's work: the store st becomes what readers see, the
// maintainer of configured zones runs on it, and the lease is renewed
// until ctx ends (then released, so that a standby takes over at once)
// or lost to another process (then lead returns ErrFenced: it must not
// write any more). A store that is down does not end it: commits wait in
// memory and are retried.
func lead(ctx context.Context, b backend, src *source, st *store.Store, epoch uint64, conf *running, log *slog.Logger) error {
	defer release(ctx, b, epoch, log)
	src.writer.Store(st)
	defer src.writer.Store(nil)
	if srv := conf.dns.srv.Load(); srv != nil {
		// A secondary may hold a commit the previous writer made and a
		// failover lost, in a zone that does not change now.
		srv.RecheckPeers()
	}
	if st.Fresh() {
		// Before the first commit: the zones it makes start above
		// what the secondaries hold from an earlier store.
		seedFromPeers(ctx, st, conf.dns.srv.Load(), log)
	}
	zones := xfr.NewCatalog(conf.cfg.Load(), st, log)
	conf.zones.Store(zones)
	zones.SetConfig(conf.cfg.Load()) // a reload may have come in between
	g, ctx := errgroup.WithContext(ctx)
	following := src.follow(ctx, st)
	g.Go(func() error { <-following; return nil })
	g.Go(func() error { return zones.Run(ctx) })
	g.Go(func() error { return b.Keep(ctx, epoch) })
	if _, ok := b.(store.SerialLister); ok {
		g.Go(func() error { verifyStore(ctx, st, log); return nil })
	}
	if ok, _ := cloudConfigured(conf.cfg.Load()); ok {
		g.Go(func() error { return followCloud(ctx, st, conf, log) })
	} else {
		log.Info("no cloud APIs configured (vmapi_opts): the zones hold only their configured records")
	}
	return g.Wait()
}

// verifyInterval is how often the writer compares the store's serials
// with the ones it serves: after a Redis failover to a replica that
// missed the last commits, the zones are written back within it even
// when no change comes.
const verifyInterval = time.Second

// verifyStore runs st.Verify every verifyInterval until ctx ends. Errors
// (Redis unreachable) are left to the commits to report; a loss found is
// logged by the store.
func verifyStore(ctx context.Context, st *store.Store, log *slog.Logger) {
	t := time.NewTicker(verifyInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if found, err := st.Verify(ctx); err != nil && ctx.Err() == nil && len(found) > 0 {
			log.Error("writing back the zones the store lost failed; retrying", "zones", found, "err", err)
		}
	}
}

func release(ctx context.Context, b backend, epoch uint64, log *slog.Logger) {
	if err := b.Release(context.WithoutCancel(ctx), epoch); err != nil {
		log.Warn("cannot release the writer lease", "err", err)
	}
}

// serveAPI serves the API on addr with the default limits until ctx
// ends, then lets running requests finish.
func serveAPI(ctx context.Context, addr string, s *api.Server) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("api listen %s: %w", addr, err)
	}
	return s.Serve(ctx, l, api.DefaultLimits)
}

// running is the configuration in force, and the maintainer of
// configured zones once this process writes.
type running struct {
	cfg      atomic.Pointer[schema.Config]
	zones    atomic.Pointer[xfr.Catalog]
	pipeline atomic.Pointer[pipeline.Pipeline]
	settings pipelineSettings
	api      *api.Server // set before the writer starts
	level    *logLevel
	dns      dnsServer
}

// dnsServer is the DNS server once it exists; the stores, opened before
// it, ask it which serials secondaries still serve.
type dnsServer struct{ srv atomic.Pointer[xfr.Server] }

func (d *dnsServer) retain(zone string) (uint32, bool) {
	if s := d.srv.Load(); s != nil {
		return s.OldestConfirmed(zone)
	}
	return 0, false
}

// storeOptions are the store settings of cfg for a writer holding epoch
// (0 for a follower).
func storeOptions(cfg *schema.Config, epoch uint64, retain func(string) (uint32, bool)) store.Options {
	warn := cfg.RRsetWarn
	if warn == 0 {
		warn = -1 // rrset_warn_records 0: never
	}
	return store.Options{Epoch: epoch, JournalEntries: cfg.Journal.MaxEntries,
		JournalBytes: int(cfg.Journal.MaxBytes), Retain: retain, RRsetWarn: warn,
		MaxMembers: cfg.MaxSvcMembers}
}
