package feed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/zonegen"
)

// Defaults of NAPIOptions.
const (
	DefaultNAPICacheTTL     = 600 * time.Second
	DefaultNAPIMissTTL      = 30 * time.Second
	DefaultNAPIFetchTimeout = 30 * time.Second
)

// errBadMAC rejects a MAC that is not six octets of hex before asking NAPI.
var errBadMAC = errors.New("malformed mac")

// NAPIOptions configures a NAPI client.
type NAPIOptions struct {
	// URL is NAPI's base URL (schema.NAPIConfig).
	URL string
	// HTTPClient defaults to http.DefaultClient.
	HTTPClient *http.Client
	// CacheTTL is how long an answer is used without asking again; default
	// DefaultNAPICacheTTL. An older answer is still used when NAPI fails.
	CacheTTL time.Duration
	// MissTTL is how long a 404 is remembered, and how long a stale
	// answer is used after NAPI failed before asking again; default
	// DefaultNAPIMissTTL.
	MissTTL time.Duration
	// FetchTimeout bounds one request; default DefaultNAPIFetchTimeout.
	FetchTimeout time.Duration
	// Now defaults to time.Now.
	Now func() time.Time
	// Logger defaults to discarding.
	Logger *slog.Logger
}

// NAPI looks up networks, network pools and NICs, with a cache. Its errors
// mean "unresolved": the caller keeps the VM's last records (DESIGN.md §1,
// §4); errors.Is(err, ErrNotFound) tells a 404 from an unreachable NAPI.
type NAPI struct {
	rest     restClient
	log      *slog.Logger
	networks *ttlCache[zonegen.Network]
	pools    *ttlCache[[]Pool]
	nics     *ttlCache[zonegen.NIC]
}

// NAPIOptionsFrom takes NAPI's endpoint and cache time from a validated
// configuration.
func NAPIOptionsFrom(c *schema.Config) NAPIOptions {
	return NAPIOptions{URL: endpointURL(c.NAPI.Endpoint), CacheTTL: c.NAPI.CacheTime}
}

// NewNAPI returns a client; nothing is requested before the first lookup.
func NewNAPI(o NAPIOptions) *NAPI {
	o.CacheTTL = orDefault(o.CacheTTL, DefaultNAPICacheTTL)
	o.MissTTL = orDefault(o.MissTTL, DefaultNAPIMissTTL)
	o.FetchTimeout = orDefault(o.FetchTimeout, DefaultNAPIFetchTimeout)
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	log := o.Logger.With("component", "napi")
	return &NAPI{rest: newRESTClient(o.URL, o.HTTPClient), log: log,
		networks: newTTLCache[zonegen.Network]("network", "network", o, log),
		pools:    newTTLCache[[]Pool]("network pools", "pools", o, log),
		nics:     newTTLCache[zonegen.NIC]("nic", "mac", o, log)}
}

func newTTLCache[V any](kind, logKey string, o NAPIOptions, log *slog.Logger) *ttlCache[V] {
	return &ttlCache[V]{kind: kind, logKey: logKey, ttl: o.CacheTTL, missTTL: o.MissTTL,
		fetchTimeout: o.FetchTimeout, now: o.Now, log: log}
}

// Network returns the network uuid with Pools set to the pools that
// contain it. It fails when either the network or the pool list is
// unresolved, since a network without its pools could map to the wrong
// zones.
func (n *NAPI) Network(ctx context.Context, uuid string) (zonegen.Network, error) {
	if uuid == "" {
		return zonegen.Network{}, fmt.Errorf("network: %w", errNoUUID)
	}
	net, err := n.networks.lookup(ctx, uuid, func(ctx context.Context) (zonegen.Network, error) {
		body, err := n.rest.get(ctx, "/networks/"+url.PathEscape(uuid))
		if err != nil {
			return zonegen.Network{}, err
		}
		return decodeNetwork(body)
	})
	if err != nil {
		return zonegen.Network{}, err
	}
	pools, err := n.Pools(ctx)
	if err != nil {
		return zonegen.Network{}, fmt.Errorf("network %s: %w", uuid, err)
	}
	net.OwnerUUIDs = slices.Clone(net.OwnerUUIDs)
	net.Pools = nil
	for _, p := range pools {
		if slices.Contains(p.Networks, uuid) {
			net.Pools = append(net.Pools, p.UUID)
		}
	}
	return net, nil
}

// Pools returns every network pool with its member networks. The result is
// the caller's to keep.
func (n *NAPI) Pools(ctx context.Context) ([]Pool, error) {
	pools, err := n.pools.lookup(ctx, "", n.fetchPools)
	if err != nil {
		return nil, err
	}
	out := make([]Pool, len(pools))
	for i, p := range pools {
		p.Networks = slices.Clone(p.Networks)
		out[i] = p
	}
	return out, nil
}

func (n *NAPI) fetchPools(ctx context.Context) ([]Pool, error) {
	body, err := n.rest.getAllPages(ctx, "/network_pools")
	if err != nil {
		return nil, err
	}
	pools, bad, err := decodePools(body)
	for _, b := range bad {
		n.log.Warn("skipping malformed network pool", "pool", b.ID, "err", b.Err)
	}
	return pools, err
}

// NIC returns NAPI's NIC with MAC mac (any case; colons, dashes or none).
func (n *NAPI) NIC(ctx context.Context, mac string) (zonegen.NIC, error) {
	key, ok := canonicalMAC(mac)
	if !ok {
		return zonegen.NIC{}, fmt.Errorf("nic %q: %w", mac, errBadMAC)
	}
	nic, err := n.nics.lookup(ctx, key, func(ctx context.Context) (zonegen.NIC, error) {
		body, err := n.rest.get(ctx, "/nics/"+url.PathEscape(key))
		if err != nil {
			return zonegen.NIC{}, err
		}
		return decodeNIC(body)
	})
	nic.IPs = slices.Clone(nic.IPs)
	return nic, err
}

// RepairNIC fills in a VMAPI NIC's missing network_uuid from NAPI, looked
// up by its MAC; a NIC that has one is returned unchanged.
func (n *NAPI) RepairNIC(ctx context.Context, nic zonegen.NIC) (zonegen.NIC, error) {
	if nic.NetworkUUID != "" {
		return nic, nil
	}
	got, err := n.NIC(ctx, nic.MAC)
	if err != nil {
		return nic, fmt.Errorf("repair nic: %w", err)
	}
	return repairedNIC(nic, got)
}

// repairedNIC is nic repaired from got, NAPI's NIC with the same MAC: what
// RepairNIC and Static.RepairNIC both return.
func repairedNIC(nic, got zonegen.NIC) (zonegen.NIC, error) {
	if got.NetworkUUID == "" {
		return nic, fmt.Errorf("repair nic %s: NAPI has no network_uuid either", nic.MAC)
	}
	nic.NetworkUUID = got.NetworkUUID
	return nic, nil
}
