package schema

import (
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// Config is a validated configuration. Parse fills every field, applying
// the defaults documented on each type for keys the file leaves out.
type Config struct {
	// MyName is this server's host name (SOA MNAME, NS), lower-cased.
	MyName string
	// Hostmaster is the administrator's address, user@domain, as written.
	Hostmaster string
	// ForwardZones are the forward zones in the order of the file; the
	// order breaks ties downstream.
	ForwardZones []Zone
	// ReverseZones are the transfer settings of every generated reverse
	// zone.
	ReverseZones ZoneAccess
	// CatalogZone is the RFC 9432 catalog of every other zone.
	CatalogZone CatalogZone
	// AllowTransfer lists who may transfer every zone; a single address
	// is a /32 or /128 prefix.
	AllowTransfer []netip.Prefix
	// UseAlias and UseLogin add names built from VM aliases and account
	// logins. Both default to false.
	UseAlias, UseLogin bool
	// RequireStatusUp makes an absent triton.cns.status mean down (RFD 1)
	// rather than up (shipped Triton CNS). Default false.
	RequireStatusUp bool

	Store        StoreConfig
	DNS          DNSConfig
	API          APIConfig
	TTL          TTLConfig
	Hysteresis   HysteresisConfig
	Coalesce     CoalesceConfig
	Journal      JournalConfig
	ComputeNodes ComputeNodeConfig
	LearnPeers   LearnPeersConfig
	RRL          RRLConfig
	Log          LogConfig

	// MassDeleteShare is the largest share of a zone's records one commit
	// may delete, in (0, 1]. Default 0.25.
	MassDeleteShare float64
	// RRsetWarn is the largest RRset a zone may have before cnsd warns
	// that secondaries with a per-RRset limit (BIND 9.18.28+
	// max-records-per-type, default 100) need it raised; 0 never warns.
	// Default 100.
	RRsetWarn int
	// MaxSvcMembers caps the members a service name publishes (0: no
	// cap): with more, those whose hash of VM UUID and name is lowest.
	// Default 0.
	MaxSvcMembers int
	// TSIGKeys are the TSIG keys by (lower-case) name.
	TSIGKeys map[string]TSIGKey

	VMAPI      VMAPIConfig
	UFDS       UFDSConfig
	CNAPI      CNAPIConfig
	NAPI       NAPIConfig
	Changefeed ChangefeedConfig
	// Legacy holds shipped Triton CNS settings cnsd accepts but does not
	// use itself.
	Legacy LegacyConfig
}

// Zone is one forward zone.
type Zone struct {
	// Name is the zone's lower-case name, without a trailing dot.
	Name string
	// Networks are NAPI network or network pool UUIDs, lower-cased, or
	// "*" for the catch-all zone.
	Networks []string
	ZoneAccess
}

// CatchAll reports whether the zone lists "*": it receives the addresses
// of NICs whose networks no other zone lists.
func (z Zone) CatchAll() bool { return slices.Contains(z.Networks, "*") }

// ZoneAccess are the transfer settings of a zone.
type ZoneAccess struct {
	// Peers are the zone's secondaries (IP addresses or host names,
	// lower-cased): they get NOTIFY and may transfer the zone.
	Peers []string
	// HiddenPrimary means the secondaries serve the zone and this server
	// is not listed in its NS records. It needs Peers.
	HiddenPrimary bool
	// AllowTransfer lists further addresses that may transfer the zone.
	AllowTransfer []netip.Prefix
	// TSIGKey names the key (in Config.TSIGKeys) transfers may be signed
	// with; empty for none.
	TSIGKey string
	// RequireTSIG refuses transfers that are not signed with TSIGKey. It
	// needs TSIGKey.
	RequireTSIG bool
}

// CatalogZone is the catalog zone (RFC 9432, version 2) listing every
// forward and reverse zone, so that a secondary configured with it alone
// serves every zone, including reverse zones that appear later.
type CatalogZone struct {
	// Name is the zone's lower-case name, without a trailing dot.
	// Default catalog.cnsd.invalid.
	Name string
	// Disabled turns the catalog zone off. Default false.
	Disabled bool
	// ZoneAccess are its transfer settings; its secondaries are these
	// Peers plus every forward and reverse zone's. HiddenPrimary is
	// unused: the catalog zone's NS is "invalid." (RFC 9432 §4.1).
	ZoneAccess
}

// TSIGKey is a shared secret for signed transfers.
type TSIGKey struct {
	// Algorithm is one of hmac-md5, hmac-sha1, hmac-sha224, hmac-sha256,
	// hmac-sha384 and hmac-sha512. Default hmac-sha256.
	Algorithm string
	// Secret is the key in standard base64, as written.
	Secret string
}

// CatchAll returns the catch-all zone, the zone that lists "*", if any.
func (c *Config) CatchAll() (Zone, bool) {
	for _, z := range c.ForwardZones {
		if z.CatchAll() {
			return z, true
		}
	}
	return Zone{}, false
}

// Zone returns the forward zone called name, compared without regard to
// case and to one trailing dot.
func (c *Config) Zone(name string) (Zone, bool) {
	name = strings.TrimSuffix(name, ".")
	for _, z := range c.ForwardZones {
		if strings.EqualFold(z.Name, name) {
			return z, true
		}
	}
	return Zone{}, false
}

// StoreConfig says where zones, serials and journals are kept.
type StoreConfig struct {
	// Redis is a redis://, rediss:// or unix:// URL; empty means the
	// embedded store.
	Redis string
	// RedisAcceptNoAOF lets the writer write to a Redis that does not
	// persist with an append-only file (appendonly no), or whose CONFIG
	// command is refused so that cnsd cannot check: a Redis crash then
	// loses the writes since its last RDB snapshot. Default false: the
	// writer refuses to write and says why.
	RedisAcceptNoAOF bool
	// Path is the embedded store's file. Default /var/db/cnsd/cnsd.db.
	Path string
}

// DNSConfig is the DNS server's.
type DNSConfig struct {
	// Listen are host:port addresses for UDP and TCP. Default
	// 127.0.0.1:53.
	Listen []string
	// UDPMaxPayload is the largest answer sent over UDP, and the size
	// the answers' EDNS0 record advertises (512 to 4096). Default 1232,
	// the DNS Flag Day 2020 value, which avoids IP fragmentation.
	UDPMaxPayload int
	// UDPReceiveBuffer and UDPSendBuffer are the socket buffer sizes
	// asked for each UDP socket, in bytes. Default 4 MiB each.
	UDPReceiveBuffer, UDPSendBuffer int
	// TCPIdleTimeout closes a TCP connection with no query in progress
	// after this long without a new one. Default 10 s.
	TCPIdleTimeout time.Duration
	// TCPMaxQueries is how many queries one TCP connection may send
	// before it is closed (every one read is answered first); 0, the
	// default, means no limit.
	TCPMaxQueries int
	// TCPMaxConnections and TCPMaxConnectionsPerClient cap the TCP
	// connections open at once, in all and from one client address; a
	// new connection beyond a cap closes the one idle longest. Default
	// 1000 and 100.
	TCPMaxConnections, TCPMaxConnectionsPerClient int
}

// APIConfig is the REST API's. It comes from the api key, or from the
// shipped api_server key: each of its addresses with its port (default
// 80).
type APIConfig struct {
	// Listen are host:port addresses. Default 127.0.0.1:8080.
	Listen []string
	// Auth says which routes need a token: AuthToken (the default), AuthWrites
	// or AuthNone.
	Auth string
	// Token, when set, is the token that opens every route. When it is
	// empty (and Auth is not AuthNone) the token is TokenFile's content.
	Token string
	// TokenFile holds the token when Token is empty; cnsd creates it at
	// first start. Parse makes it api.token beside the embedded store's
	// file; with a Redis store Load makes it api.token beside the
	// configuration file. Load resolves a relative name against the
	// configuration file's directory.
	TokenFile string
	// ReadToken, when set, is a second token that opens the routes that
	// only read (every GET, and POST /suffixes-for-vm, a query).
	ReadToken string
	// MetricsAuth is AuthToken (GET /metrics needs a token, the default)
	// or AuthNone.
	MetricsAuth string

	// key is the file's key, api or api_server, for error locations.
	key string
	// tokenFileSet: the file names TokenFile (rather than the default).
	tokenFileSet bool
}

// The values of APIConfig.Auth and MetricsAuth.
const (
	// AuthToken: every route but GET /ping, GET /ready and GET
	// /openapi.json needs a token.
	AuthToken = "token"
	// AuthWrites: only the routes that change state need a token.
	AuthWrites = "writes"
	// AuthNone: no route needs a token.
	AuthNone = "none"
)

// tokenFileName is the token file's name in the directory it defaults to.
const tokenFileName = "api.token"

// TTLConfig are TTLs and SOA timers.
type TTLConfig struct {
	// Record is the TTL of VM records. Default 30 s.
	Record time.Duration
	// NS is the TTL of NS and SOA records. Default 1 h.
	NS time.Duration
	// SOARefresh, SOARetry, SOAExpire and SOAMinimum are the SOA timers.
	// Defaults 1 h, 10 min, 7 days and 30 s.
	SOARefresh, SOARetry, SOAExpire, SOAMinimum time.Duration
}

// HysteresisConfig limits self-reported removals (docs/pipeline.md,
// Self-removals): at most
// max(floor(n/Divisor), 1) members of a service leave per Window, and the
// last member leaves after LastMemberDelay.
type HysteresisConfig struct {
	// Window defaults to 60 s.
	Window time.Duration
	// Divisor defaults to 3.
	Divisor int
	// LastMemberDelay defaults to 600 s.
	LastMemberDelay time.Duration
}

// CoalesceConfig turns a burst of changes into few serials: with a
// Window, a change waits that long for more, and never longer than
// MaxDelay in all; without, a change arriving while no commit is under
// way is committed at once and those arriving during a commit go into the
// next one.
type CoalesceConfig struct {
	// Window defaults to 0: commit at once when idle.
	Window time.Duration
	// MaxDelay defaults to 200 ms and is at least Window.
	MaxDelay time.Duration
}

// JournalConfig bounds each zone's journal of diffs, used for IXFR.
type JournalConfig struct {
	// MaxEntries defaults to 100 serials.
	MaxEntries int
	// MaxBytes defaults to 16 MiB.
	MaxBytes int64
}

// LearnPeersConfig says whether an address that may transfer a zone but
// is no configured peer of it becomes a NOTIFY target of the zone.
type LearnPeersConfig struct {
	// Enabled defaults to false: only configured peers get NOTIFY.
	Enabled bool
	// AfterTransfers is how many transfers of successive serials, each
	// within ForgetAfter of the one before, make the address a learnt
	// peer. Default 3.
	AfterTransfers int
	// ForgetAfter is how long a learnt peer may go without transferring
	// the zone before it is forgotten. Default 1 day.
	ForgetAfter time.Duration
}

// RRLConfig is response rate limiting of queries over UDP: answers of one
// kind to one client prefix beyond ResponsesPerSecond are dropped, every
// Slip-th of them sent truncated instead.
type RRLConfig struct {
	// Disabled turns rate limiting off. Default false.
	Disabled bool
	// ResponsesPerSecond is the average rate allowed per bucket. Default
	// 20.
	ResponsesPerSecond int
	// Window bounds a flooding bucket's debt: it stays limited for up to
	// this long after the flood ends. Default 15 s.
	Window time.Duration
	// Slip: every Slip-th limited answer goes out truncated (TC), the
	// others are dropped; 0 drops every one. Default 2.
	Slip int
	// IPv4PrefixLength and IPv6PrefixLength group clients into prefixes.
	// Defaults 24 and 56.
	IPv4PrefixLength, IPv6PrefixLength int
	// TableSize bounds the buckets tracked. Default 65536.
	TableSize int
	// Exempt are clients never limited.
	Exempt []netip.Prefix
}

// LogConfig is what cnsd logs and how.
type LogConfig struct {
	// Level is the least severe level logged. Default slog.LevelInfo.
	Level slog.Level
	// Format is "text" (slog's key=value lines) or "json". Default
	// "text".
	Format string
}

// ComputeNodeConfig says when a compute node counts as down
// (docs/pipeline.md, Compute nodes).
type ComputeNodeConfig struct {
	// HeartbeatLimit defaults to 1 h.
	HeartbeatLimit time.Duration
	// BootGrace defaults to 120 s.
	BootGrace time.Duration
}
