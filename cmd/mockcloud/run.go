package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/mockcloud/ufds"
	"golang.org/x/sync/errgroup"
)

// run parses args, starts the cloud and serves it until ctx is cancelled.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mockcloud", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:8080", "`address` to serve every API on")
	fixture := fs.String("fixture", "", "load the cloud from this JSON fixture `file`")
	generate := fs.String("generate", "", "generate a cloud of `N,M,K` VMs, accounts and servers")
	seed := fs.Uint64("seed", 1, "seed for -generate and -churn")
	churn := fs.Float64("churn", 0, "random changes per second (0: none)")
	verbose := fs.Bool("v", false, "log every change and connection")
	v2Only := fs.Bool("changefeed-v2-only", false, "refuse the v1 changefeed registration (400 InvalidVersion), as a publisher without it would")
	ufdsAddr := fs.String("ufds", "", "also serve the accounts as UFDS over LDAP (a real slapd) on `127.0.0.1:PORT`")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *churn < 0 {
		return fmt.Errorf("-churn %v: must be 0 or more changes per second", *churn)
	}
	ldapPort := -1
	if *ufdsAddr != "" {
		p, err := ufdsPort(*ufdsAddr)
		if err != nil {
			return err
		}
		ldapPort = p
		if _, lp, err := net.SplitHostPort(*listen); err == nil && p != 0 && lp == strconv.Itoa(p) {
			return fmt.Errorf("-ufds %q and -listen %q name the same port: slapd and the HTTP APIs each need their own", *ufdsAddr, *listen)
		}
	}
	f, err := loadCloud(*fixture, *generate, *seed)
	if err != nil {
		return err
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	cloud := mockcloud.New(f, &mockcloud.Options{Logger: log, ChangefeedV2Only: *v2Only})
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	printURLs(stdout, ln.Addr().String(), len(f.VMs), len(f.Users), len(f.Servers))
	var ldap *ufds.Server
	if ldapPort >= 0 {
		s, stop, err := startUFDS(cloud, ldapPort, stdout)
		if err != nil {
			ln.Close()
			return err
		}
		defer stop()
		ldap = s
	}
	return serve(ctx, cloud, ln, *churn, *seed, ldap, log)
}

// loadCloud reads the fixture or generates one; exactly one source is
// required so that a typo does not silently give an empty cloud.
func loadCloud(fixture, generate string, seed uint64) (*mockcloud.Fixture, error) {
	switch {
	case fixture != "" && generate != "":
		return nil, errors.New("-fixture and -generate exclude each other")
	case fixture != "":
		return mockcloud.LoadFixture(fixture)
	case generate != "":
		n, err := parseSizes(generate)
		if err != nil {
			return nil, err
		}
		return mockcloud.Generate(mockcloud.GenOptions{VMs: n[0], Accounts: n[1], Servers: n[2],
			Seed: seed, Now: time.Now()}), nil
	}
	return nil, errors.New("one of -fixture or -generate is required")
}

func parseSizes(s string) ([3]int, error) {
	var n [3]int
	parts := strings.Split(s, ",")
	if len(parts) != 3 {
		return n, fmt.Errorf("-generate %q: want N,M,K", s)
	}
	for i, p := range parts {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || v < 0 {
			return n, fmt.Errorf("-generate %q: %q is not a count", s, p)
		}
		n[i] = v
	}
	return n, nil
}

func printURLs(w io.Writer, addr string, vms, users, servers int) {
	base := "http://" + addr
	fmt.Fprintf(w, "mockcloud: %d VMs, %d accounts, %d servers\n", vms, users, servers)
	fmt.Fprintf(w, "VMAPI       %s/vms\n", base)
	fmt.Fprintf(w, "changefeed  ws://%s/changefeeds\n", addr)
	fmt.Fprintf(w, "CNAPI       %s/servers\n", base)
	fmt.Fprintf(w, "NAPI        %s/networks %s/network_pools %s/nics/:mac\n", base, base, base)
	fmt.Fprintf(w, "admin       %s/_mock/fixture (see docs/mockcloud.md)\n", base)
}

// serve runs the HTTP server, the churn and the copying of account changes
// to slapd under one errgroup until ctx is cancelled or one of them fails.
func serve(ctx context.Context, cloud *mockcloud.Cloud, ln net.Listener, churn float64, seed uint64, ldap *ufds.Server, log *slog.Logger) error {
	srv := &http.Server{Handler: cloud.Handler(), ReadHeaderTimeout: 10 * time.Second}
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("serve: %w", err)
		}
		return nil
	})
	g.Go(func() error {
		<-ctx.Done()
		cloud.DisconnectAll() // hijacked websockets are not closed by Shutdown
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(sctx)
	})
	if churn > 0 {
		g.Go(func() error { return cloud.Churn(ctx, churn, seed) })
	}
	if ldap != nil {
		g.Go(func() error { return syncUFDS(ctx, cloud, ldap, log) })
	}
	return g.Wait()
}
