package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cnsd/cnsd/schema"
)

// loadConfig reads the configuration file as an ordered object.
func (e *env) loadConfig() (*obj, error) {
	data, err := os.ReadFile(e.configPath)
	if err != nil {
		return nil, fmt.Errorf("read the configuration: %w (-config names the file)", err)
	}
	o, err := parseObj(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e.configPath, err)
	}
	return o, nil
}

// saveConfig validates o and writes it in place of the file; an invalid
// configuration is refused with the reason and the file stays as it was.
func (e *env) saveConfig(ctx context.Context, o *obj) error {
	data := marshal(o)
	cfg, err := schema.Parse(data)
	if err != nil {
		return fmt.Errorf("not written: %w", err)
	}
	if err := e.checkConfig(ctx, cfg); err != nil {
		return fmt.Errorf("not written: %w", err)
	}
	if err := writeAtomic(e.configPath, data); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "wrote %s; cnsd applies it within seconds (or at once on SIGHUP)\n", e.configPath)
	return nil
}

// checkConfig makes the checks the schema (which also allows one
// catch-all zone only) cannot: secondaries that resolve, and networks
// NAPI knows when it answers.
func (e *env) checkConfig(ctx context.Context, cfg *schema.Config) error {
	if !e.noResolve {
		if err := resolvePeers(ctx, cfg); err != nil {
			return err
		}
	}
	return e.checkNetworks(ctx, cfg)
}

// resolvePeers checks that every secondary given by name resolves.
func resolvePeers(ctx context.Context, cfg *schema.Config) error {
	peers := append([]string(nil), cfg.ReverseZones.Peers...)
	for _, z := range cfg.ForwardZones {
		peers = append(peers, z.Peers...)
	}
	for _, p := range peers {
		host, _, err := schema.SplitPeer(p)
		if err != nil {
			return err
		}
		if _, err := netip.ParseAddr(host); err == nil {
			continue
		}
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err = net.DefaultResolver.LookupHost(lctx, host)
		cancel()
		if err != nil {
			return fmt.Errorf("secondary %q does not resolve: %v (-no-resolve skips this check)", p, err)
		}
	}
	return nil
}

// checkNetworks asks NAPI for every network or pool a zone lists. When
// NAPI does not answer, the check is skipped with a warning.
func (e *env) checkNetworks(ctx context.Context, cfg *schema.Config) error {
	base := cfg.NAPI.URL
	if base == "" && cfg.NAPI.Address != "" {
		base = "http://" + cfg.NAPI.Address
	}
	if base == "" {
		return nil
	}
	hc := &http.Client{Timeout: 5 * time.Second}
	for _, z := range cfg.ForwardZones {
		for _, n := range z.Networks {
			if n == "*" {
				continue
			}
			known, err := napiKnows(ctx, hc, base, n)
			if err != nil {
				fmt.Fprintf(e.stderr, "warning: NAPI at %s does not answer (%v); networks not checked\n", base, err)
				return nil
			}
			if !known {
				return fmt.Errorf("forward_zones.%s.networks: %s is neither a network nor a network pool in NAPI", z.Name, n)
			}
		}
	}
	return nil
}

func napiKnows(ctx context.Context, hc *http.Client, base, uuid string) (bool, error) {
	for _, path := range []string{"/networks/", "/network_pools/"} {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+path+uuid, nil)
		if err != nil {
			return false, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return false, err
		}
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusOK:
			return true, nil
		case resp.StatusCode != http.StatusNotFound:
			return false, errors.New(resp.Status)
		}
	}
	return false, nil
}

// writeAtomic replaces path with data through a temporary file in the
// same directory, keeping the file's mode, so that cnsd never reads half
// a file.
func writeAtomic(path string, data []byte) error {
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".cnsd.json.*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
