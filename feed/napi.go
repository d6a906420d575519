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
	"strings"
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
// mean "unresolved": the caller keeps the VM's last records (docs/pipeline.md,
// When an API cannot answer); errors.Is(err, ErrNotFound) tells a 404 from an unreachable NAPI.
type NAPI struct {
	rest     restClient
	log      *slog.Logger
	networks *ttlCache[zonegen.Network]
	pools    *ttlCache[[]Pool]
	nics     *ttlCache[NAPINIC]
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
		nics:     newTTLCache[NAPINIC]("nic", "mac", o, log)}
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
func (n *NAPI) NIC(ctx context.Context, mac string) (NAPINIC, error) {
	key, ok := canonicalMAC(mac)
	if !ok {
		return NAPINIC{}, fmt.Errorf("nic %q: %w", mac, errBadMAC)
	}
	nic, err := n.nics.lookup(ctx, key, func(ctx context.Context) (NAPINIC, error) {
		body, err := n.rest.get(ctx, "/nics/"+url.PathEscape(key))
		if err != nil {
			return NAPINIC{}, err
		}
		return decodeNIC(body)
	})
	nic.IPs = slices.Clone(nic.IPs)
	return nic, err
}

// errNotTheVMs is a NIC repair refused because NAPI's record of the MAC
// belongs to something other than the VM.
var errNotTheVMs = errors.New("nic belongs to another owner")

// NeedsRepair reports whether VMAPI's nic lacks what names it, as old
// VMAPIs sent NICs: a network_uuid, or any address (neither ip nor ips).
// Such a NIC is completed from NAPI's record of it (RepairNIC).
func NeedsRepair(nic *zonegen.NIC) bool {
	return nic.NetworkUUID == "" || (nic.IP == "" && len(nic.IPs) == 0)
}

// RepairNIC completes VM vm's NIC nic from NAPI's record of the same MAC
// when it needs it (NeedsRepair); any other NIC is returned unchanged.
func (n *NAPI) RepairNIC(ctx context.Context, vm string, nic zonegen.NIC) (zonegen.NIC, error) {
	if !NeedsRepair(&nic) {
		return nic, nil
	}
	got, err := n.NIC(ctx, nic.MAC)
	if err != nil {
		return nic, fmt.Errorf("repair nic: %w", err)
	}
	return repairedNIC(vm, nic, got)
}

// repairedNIC is VM vm's nic completed from got, NAPI's record of the same
// MAC, as Triton CNS did it: network_uuid, ip and nic_tag are NAPI's, ips
// too when the VM's NIC has none. A record that belongs to another VM is
// refused (NAPI reassigned the MAC, or VMAPI is stale), and so is one with
// no network, which would name nothing. What RepairNIC and
// Static.RepairNIC both return.
func repairedNIC(vm string, nic zonegen.NIC, got NAPINIC) (zonegen.NIC, error) {
	switch {
	case !strings.EqualFold(got.BelongsToUUID, vm):
		return nic, fmt.Errorf("repair nic %s: NAPI's nic belongs to %q, not to vm %s: %w", nic.MAC, got.BelongsToUUID, vm, errNotTheVMs)
	case got.NetworkUUID == "":
		return nic, fmt.Errorf("repair nic %s: NAPI has no network_uuid either", nic.MAC)
	}
	nic.NetworkUUID, nic.IP, nic.NICTag = got.NetworkUUID, got.IP, got.NICTag
	if len(nic.IPs) == 0 {
		nic.IPs = slices.Clone(got.IPs)
	}
	return nic, nil
}
