package schema

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"net"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// bind lays tree v, which the schema has accepted, over the defaults and
// converts the result to a Config.
func bind(v any) (*Config, error) {
	data, err := json.Marshal(integral(plain(v)))
	if err != nil {
		return nil, &Error{Message: err.Error()}
	}
	f := defaults()
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(&f); err != nil {
		// The schema admits only what file can hold; this is a bug.
		return nil, &Error{Message: "schema and decoder disagree: " + err.Error()}
	}
	var order []string
	if top, ok := v.(*object); ok {
		if zones, ok := top.vals["forward_zones"].(*object); ok {
			order = zones.keys
		}
	}
	return convert(&f, order), nil
}

// integral rewrites numbers with an integer value as plain integers
// (1e3 and 1000.0 become 1000) so they decode into integer fields. The
// schema has bounded them.
func integral(v any) any {
	switch c := v.(type) {
	case map[string]any:
		for k, e := range c {
			c[k] = integral(e)
		}
	case []any:
		for i, e := range c {
			c[i] = integral(e)
		}
	case json.Number:
		if r, ok := new(big.Rat).SetString(string(c)); ok && r.IsInt() {
			return json.Number(r.Num().String())
		}
	}
	return v
}

// convert builds a Config from a decoded file; zones come in order.
func convert(f *file, order []string) *Config {
	c := &Config{
		MyName:       strings.ToLower(f.MyName),
		Hostmaster:   f.Hostmaster,
		ReverseZones: access(f.ReverseZones),
		CatalogZone: CatalogZone{
			Name:     strings.ToLower(f.CatalogZone.Name),
			Disabled: f.CatalogZone.Disabled,
			ZoneAccess: access(fileAccess{Peers: f.CatalogZone.Peers, AllowTransfer: f.CatalogZone.AllowTransfer,
				TSIGKey: f.CatalogZone.TSIGKey, RequireTSIG: f.CatalogZone.RequireTSIG}),
		},
		AllowTransfer:   prefixes(f.AllowTransfer),
		UseAlias:        f.UseAlias,
		UseLogin:        f.UseLogin,
		RequireStatusUp: f.RequireStatusUp,
		Store:           StoreConfig{Redis: f.Store.Redis, RedisAcceptNoAOF: f.Store.RedisAcceptNoAOF, Path: f.Store.Path},
		DNS:             dnsConfig(f.DNS),
		API:             api(f),
		TTL:             ttl(f.TTL),
		Hysteresis: HysteresisConfig{
			Window:          seconds(f.Hysteresis.WindowSeconds),
			Divisor:         f.Hysteresis.Divisor,
			LastMemberDelay: seconds(f.Hysteresis.LastMemberDelaySeconds),
		},
		Coalesce: CoalesceConfig{
			Window:   milliseconds(float64(f.Coalesce.WindowMS)),
			MaxDelay: milliseconds(float64(f.Coalesce.MaxDelayMS)),
		},
		Journal: JournalConfig{MaxEntries: f.Journal.MaxEntries, MaxBytes: f.Journal.MaxBytes},
		ComputeNodes: ComputeNodeConfig{
			HeartbeatLimit: seconds(f.ComputeNodes.HeartbeatLimitSeconds),
			BootGrace:      seconds(f.ComputeNodes.BootGraceSeconds),
		},
		LearnPeers: LearnPeersConfig{
			Enabled:        f.LearnPeers.Enabled,
			AfterTransfers: f.LearnPeers.AfterTransfers,
			ForgetAfter:    seconds(f.LearnPeers.ForgetAfterSeconds),
		},
		RRL: RRLConfig{
			Disabled:           f.RRL.Disabled,
			ResponsesPerSecond: f.RRL.ResponsesPerSecond,
			Window:             seconds(f.RRL.WindowSeconds),
			Slip:               f.RRL.Slip,
			IPv4PrefixLength:   f.RRL.IPv4PrefixLength,
			IPv6PrefixLength:   f.RRL.IPv6PrefixLength,
			TableSize:          f.RRL.TableSize,
			Exempt:             prefixes(f.RRL.Exempt),
		},
		Log:             LogConfig{Level: logLevels[f.Log.Level], Format: f.Log.Format},
		MassDeleteShare: f.MassDeleteShare,
		RRsetWarn:       f.RRsetWarn,
		MaxSvcMembers:   f.MaxSvcMembers,
		TSIGKeys:        tsigKeys(f.TSIGKeys),
	}
	for _, name := range order {
		z := f.ForwardZones[name]
		c.ForwardZones = append(c.ForwardZones, Zone{
			Name:       name,
			Networks:   lower(z.Networks),
			ZoneAccess: access(z.fileAccess),
		})
	}
	convertEndpoints(f, c)
	return c
}

// convertEndpoints fills the cloud API settings and legacy keys of c.
func convertEndpoints(f *file, c *Config) {
	c.VMAPI = VMAPIConfig{Endpoint{f.VMAPIOpts.Address, f.VMAPIOpts.URL}, f.VMAPIOpts.Limit}
	c.UFDS = UFDSConfig{
		Endpoint:     Endpoint{f.UFDSOpts.Address, f.UFDSOpts.URL},
		BindDN:       f.UFDSOpts.BindDN,
		BindPassword: f.UFDSOpts.BindPassword,
		CacheTime:    seconds(f.UFDSOpts.CacheSeconds),
	}
	c.CNAPI = CNAPIConfig{Endpoint{f.CNAPIOpts.Address, f.CNAPIOpts.URL}, seconds(f.CNAPIOpts.PollSeconds)}
	c.NAPI = NAPIConfig{Endpoint{f.NAPIOpts.Address, f.NAPIOpts.URL}, seconds(f.NAPIOpts.CacheSeconds)}
	c.Changefeed = ChangefeedConfig{
		Resource:     f.ChangefeedOpts.Resource,
		SubResources: f.ChangefeedOpts.SubResources,
		Instance:     f.ChangefeedOpts.Instance,
	}
	c.Legacy = LegacyConfig{
		FullPollInterval:   milliseconds(f.FullPollInterval),
		ReaperPollInterval: milliseconds(f.ReaperPollInterval),
		MinNotifyInterval:  milliseconds(f.MinNotifyInterval),
		RedisOpts:          f.RedisOpts,
		BinderDomain:       f.BinderDomain,
		Mahi:               Endpoint{Address: f.MahiOpts.Address},
	}
}

// access converts a zone's transfer settings.
func access(a fileAccess) ZoneAccess {
	return ZoneAccess{
		Peers:         lower(a.Peers),
		HiddenPrimary: a.HiddenPrimary,
		AllowTransfer: prefixes(a.AllowTransfer),
		TSIGKey:       a.TSIGKey,
		RequireTSIG:   a.RequireTSIG,
	}
}

// api returns the API settings from api, from the shipped api_server, or
// the defaults.
func api(f *file) APIConfig {
	switch {
	case f.API != nil:
		a := apiAuth(f, f.API.fileAPIAuth, "api")
		a.Listen = []string{f.API.Listen}
		if f.API.Listen == "" {
			a.Listen = []string{defaultAPIListen}
		}
		return a
	case f.APIServer != nil:
		a := apiAuth(f, f.APIServer.fileAPIAuth, "api_server")
		port := strconv.Itoa(defaultAPIPort)
		if f.APIServer.Port != nil {
			port = strconv.Itoa(*f.APIServer.Port)
		}
		for _, host := range f.APIServer.Listen {
			a.Listen = append(a.Listen, net.JoinHostPort(host, port))
		}
		if len(a.Listen) == 0 {
			a.Listen = []string{net.JoinHostPort("127.0.0.1", port)}
		}
		return a
	}
	a := apiAuth(f, fileAPIAuth{}, "api")
	a.Listen = []string{defaultAPIListen}
	return a
}

// apiAuth converts the access settings under key, with their defaults:
// a token for every route, read from api.token beside the embedded
// store's file (Load finds a place for a Redis store's).
func apiAuth(f *file, a fileAPIAuth, key string) APIConfig {
	c := APIConfig{Auth: a.Auth, Token: a.Token, TokenFile: a.TokenFile, ReadToken: a.ReadToken,
		MetricsAuth: a.MetricsAuth, key: key, tokenFileSet: a.TokenFile != ""}
	if c.Auth == "" {
		c.Auth = AuthToken
	}
	if c.MetricsAuth == "" {
		c.MetricsAuth = AuthToken
	}
	if c.TokenFile == "" && f.Store.Redis == "" {
		c.TokenFile = filepath.Join(filepath.Dir(f.Store.Path), tokenFileName)
	}
	return c
}

// ttl converts TTLs in seconds.
func ttl(t fileTTL) TTLConfig {
	return TTLConfig{
		Record:     seconds(t.Record),
		NS:         seconds(t.NS),
		SOARefresh: seconds(t.SOARefresh),
		SOARetry:   seconds(t.SOARetry),
		SOAExpire:  seconds(t.SOAExpire),
		SOAMinimum: seconds(t.SOAMinimum),
	}
}

// tsigKeys converts the TSIG keys, applying the default algorithm.
func tsigKeys(keys map[string]fileTSIG) map[string]TSIGKey {
	m := make(map[string]TSIGKey, len(keys))
	for name, k := range keys {
		if k.Algorithm == "" {
			k.Algorithm = defaultAlgorithm
		}
		m[name] = TSIGKey(k)
	}
	return m
}

// prefixes parses addresses and CIDR prefixes the schema has checked.
func prefixes(ss []string) []netip.Prefix {
	var ps []netip.Prefix
	for _, s := range ss {
		if p, err := parsePrefix(s); err == nil {
			ps = append(ps, p)
		}
	}
	return ps
}

// lower returns ss lower-cased, in a new slice.
func lower(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.ToLower(s)
	}
	return out
}

// seconds converts whole seconds the schema has bounded.
func dnsConfig(d fileDNS) DNSConfig {
	return DNSConfig{Listen: d.Listen, UDPMaxPayload: d.UDPMaxPayload,
		UDPReceiveBuffer: d.UDPReceiveBuffer, UDPSendBuffer: d.UDPSendBuffer,
		TCPIdleTimeout: seconds(d.TCPIdleTimeoutSeconds), TCPMaxQueries: d.TCPMaxQueries,
		TCPMaxConnections: d.TCPMaxConnections, TCPMaxConnectionsPerClient: d.TCPMaxConnectionsPerClient}
}

func seconds(n int64) time.Duration { return time.Duration(n) * time.Second }

// milliseconds converts milliseconds, saturating at the largest Duration.
func milliseconds(ms float64) time.Duration {
	ns := ms * float64(time.Millisecond)
	if ns >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(ns)
}
