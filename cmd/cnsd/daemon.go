package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/cnsd/cnsd/api"
	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/xfr"
)

// backend is a store backend that also decides which process writes.
type backend interface {
	store.Backend
	store.Leaser
}

// serve runs cnsd with the configuration in path until ctx ends: the
// store, the DNS server, the maintainer of configured zones and the API.
// SIGHUP reloads the configuration. The cloud feed is not wired yet, so
// the zones hold only what earlier runs or other processes wrote.
func serve(ctx context.Context, path string, log *slog.Logger) error {
	// SIGHUP is caught from the start: its default action ends the process.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	cfg, err := schema.Load(path)
	if err != nil {
		return err
	}
	b, err := openBackend(ctx, cfg)
	if err != nil {
		return err
	}
	defer b.Close()
	log.Info("waiting for the writer lease")
	epoch, err := b.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("writer lease: %w", err)
	}
	st, err := store.Open(ctx, b, store.Options{Epoch: epoch, JournalEntries: cfg.Journal.MaxEntries,
		JournalBytes: int(cfg.Journal.MaxBytes)}, log)
	if err != nil {
		return err
	}
	dnsSrv := xfr.New(cfg, st, xfr.Options{}, log)
	zones := xfr.NewCatalog(cfg, st, log)
	apiSrv := api.New(st, dnsSrv, cfg.API.Token, log)
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return dnsSrv.Run(ctx) })
	g.Go(func() error { return zones.Run(ctx) })
	g.Go(func() error { return b.Keep(ctx, epoch) })
	for _, addr := range cfg.API.Listen {
		g.Go(func() error { return serveHTTP(ctx, addr, apiSrv, log) })
	}
	g.Go(func() error { return reloadOnHUP(ctx, hup, path, log, dnsSrv, zones) })
	log.Info("cnsd running", "dns", cfg.DNS.Listen, "api", cfg.API.Listen, "epoch", epoch)
	if err := g.Wait(); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// openBackend opens Redis when the configuration names it, else the
// embedded file.
func openBackend(ctx context.Context, cfg *schema.Config) (backend, error) {
	if cfg.Store.Redis != "" {
		return store.OpenRedis(ctx, cfg.Store.Redis, store.RedisOptions{})
	}
	return store.OpenBolt(cfg.Store.Path, store.BoltOptions{})
}

// serveHTTP serves the API on addr until ctx ends, then lets running
// requests finish.
func serveHTTP(ctx context.Context, addr string, h http.Handler, log *slog.Logger) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("api listen %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		return fmt.Errorf("api on %s: %w", addr, err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		log.Warn("api shutdown", "addr", addr, "err", err)
	}
	return nil
}

// reloadOnHUP reads the configuration again on SIGHUP. A valid one
// replaces the running one; an invalid one is logged with the reason and
// the running one stays.
func reloadOnHUP(ctx context.Context, hup <-chan os.Signal, path string, log *slog.Logger, dnsSrv *xfr.Server, zones *xfr.Catalog) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-hup:
		}
		cfg, err := schema.Load(path)
		if err != nil {
			log.Error("configuration not reloaded; the running one stays", "file", path, "err", err)
			continue
		}
		dnsSrv.SetConfig(cfg)
		zones.SetConfig(cfg)
		log.Info("configuration reloaded", "file", path)
	}
}
