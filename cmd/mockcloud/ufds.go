package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/mockcloud/ufds"
)

// ufdsSyncInterval is how often account changes made through the admin
// API or churn are written to slapd.
const ufdsSyncInterval = 200 * time.Millisecond

// ufdsPort reads the -ufds address: a port of 127.0.0.1, where slapd
// listens (0 picks a free one).
func ufdsPort(addr string) (int, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, fmt.Errorf("-ufds %q: %w (want 127.0.0.1:PORT)", addr, err)
	}
	if host != "127.0.0.1" && host != "" {
		return 0, fmt.Errorf("-ufds %q: slapd listens on 127.0.0.1 only", addr)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return 0, fmt.Errorf("-ufds %q: %q is not a port", addr, port)
	}
	return n, nil
}

// startUFDS runs slapd with the cloud's accounts in a temporary directory
// and prints how to reach it; stop ends it and removes the directory.
func startUFDS(cloud *mockcloud.Cloud, port int, stdout io.Writer) (s *ufds.Server, stop func(), err error) {
	dir, err := os.MkdirTemp("", "mockcloud-ufds-")
	if err != nil {
		return nil, nil, err
	}
	s, err = ufds.Start(cloud, ufds.Options{Dir: dir, Port: port})
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	fmt.Fprintf(stdout, "UFDS        %s bindDN %q password %q\n", s.URL, ufds.RootDN, ufds.Password)
	return s, func() { s.Stop(); os.RemoveAll(dir) }, nil
}

// syncUFDS writes the cloud's account changes to slapd until ctx ends. A
// failed write is logged and tried again: the changelog keeps its place.
func syncUFDS(ctx context.Context, cloud *mockcloud.Cloud, s *ufds.Server, log *slog.Logger) error {
	t := time.NewTicker(ufdsSyncInterval)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		err := s.Sync(cloud)
		if err != nil && !failing {
			log.Warn("cannot write account changes to slapd; retrying", "err", err)
		}
		failing = err != nil
	}
}
