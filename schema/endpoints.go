package schema

import "time"

// Endpoint is how to reach a cloud API: URL when it is set, else Address
// (a host name or IP address, as in the shipped configuration).
type Endpoint struct {
	// Address is the host name or IP address of the shipped
	// configuration's *_opts.address.
	Address string
	// URL is an absolute URL (*_opts.url); it overrides Address.
	URL string
}

// VMAPIConfig is VMAPI's endpoint (vmapi_opts).
type VMAPIConfig struct {
	Endpoint
	// Limit is the page size of VM listings, 1-1000. Default 500.
	Limit int
}

// UFDSConfig is UFDS's endpoint and credentials (ufds_opts).
type UFDSConfig struct {
	Endpoint
	BindDN, BindPassword string
	// CacheTime is how long an account stays cached. Default 5 min.
	CacheTime time.Duration
}

// CNAPIConfig is CNAPI's endpoint (cnapi_opts).
type CNAPIConfig struct {
	Endpoint
	// PollInterval is how often compute nodes are listed. Default 60 s.
	PollInterval time.Duration
}

// NAPIConfig is NAPI's endpoint (napi_opts).
type NAPIConfig struct {
	Endpoint
	// CacheTime is how long a network or pool stays cached. Default
	// 5 min.
	CacheTime time.Duration
}

// ChangefeedConfig is the VMAPI changefeed subscription (changefeed_opts).
type ChangefeedConfig struct {
	// Resource defaults to "vm".
	Resource string
	// SubResources default to those the shipped Triton CNS asked for.
	SubResources []string
	// Instance identifies this subscriber; a second connection with the
	// same instance takes the feed over.
	Instance string
}

// LegacyConfig holds keys of the shipped Triton CNS that cnsd accepts, so
// an existing file loads unchanged, but does not act on by itself.
type LegacyConfig struct {
	// FullPollInterval, ReaperPollInterval and MinNotifyInterval are
	// given in milliseconds in the file.
	FullPollInterval, ReaperPollInterval, MinNotifyInterval time.Duration
	// RedisOpts is redis_opts as written (cnsd's own setting is
	// store.redis).
	RedisOpts map[string]any
	// BinderDomain is binder_domain.
	BinderDomain string
	// Mahi is mahi_opts.
	Mahi Endpoint
}
