package schema

// file is the configuration file as written (current spelling), the
// target of decoding. Its fields mirror config.schema.json one to one; a
// test keeps them in step. Durations are whole seconds or milliseconds as
// the key names say.
type file struct {
	MyName          string              `json:"my_name"`
	Hostmaster      string              `json:"hostmaster"`
	ForwardZones    map[string]fileZone `json:"forward_zones"`
	ReverseZones    fileAccess          `json:"reverse_zones"`
	CatalogZone     fileCatalog         `json:"catalog_zone"`
	AllowTransfer   []string            `json:"allow_transfer"`
	UseAlias        bool                `json:"use_alias"`
	UseLogin        bool                `json:"use_login"`
	RequireStatusUp bool                `json:"require_status_up"`
	Store           fileStore           `json:"store"`
	DNS             fileDNS             `json:"dns"`
	API             *fileAPI            `json:"api"`
	APIServer       *fileAPIServer      `json:"api_server"`
	TTL             fileTTL             `json:"ttl"`
	Hysteresis      fileHysteresis      `json:"hysteresis"`
	Coalesce        fileCoalesce        `json:"coalesce"`
	Journal         fileJournal         `json:"journal"`
	ComputeNodes    fileComputeNodes    `json:"compute_nodes"`
	LearnPeers      fileLearnPeers      `json:"learn_peers"`
	RRL             fileRRL             `json:"rrl"`
	Log             fileLog             `json:"log"`
	MassDeleteShare float64             `json:"mass_delete_share"`
	RRsetWarn       int                 `json:"rrset_warn_records"`
	MaxSvcMembers   int                 `json:"max_service_members"`
	TSIGKeys        map[string]fileTSIG `json:"tsig_keys"`

	FullPollInterval   float64        `json:"full_poll_interval"`
	ReaperPollInterval float64        `json:"reaper_poll_interval"`
	MinNotifyInterval  float64        `json:"min_notify_interval"`
	RedisOpts          map[string]any `json:"redis_opts"`
	BinderDomain       string         `json:"binder_domain"`
	UFDSOpts           fileUFDS       `json:"ufds_opts"`
	CNAPIOpts          fileCNAPI      `json:"cnapi_opts"`
	NAPIOpts           fileNAPI       `json:"napi_opts"`
	VMAPIOpts          fileVMAPI      `json:"vmapi_opts"`
	MahiOpts           fileMahi       `json:"mahi_opts"`
	ChangefeedOpts     fileChangefeed `json:"changefeed_opts"`
}

type fileAccess struct {
	Peers         []string `json:"peers"`
	HiddenPrimary bool     `json:"hidden_primary"`
	AllowTransfer []string `json:"allow_transfer"`
	TSIGKey       string   `json:"tsig_key"`
	RequireTSIG   bool     `json:"require_tsig"`
}

type fileCatalog struct {
	Name          string   `json:"name"`
	Disabled      bool     `json:"disabled"`
	Peers         []string `json:"peers"`
	AllowTransfer []string `json:"allow_transfer"`
	TSIGKey       string   `json:"tsig_key"`
	RequireTSIG   bool     `json:"require_tsig"`
}

type fileZone struct {
	Networks []string `json:"networks"`
	fileAccess
}

type fileStore struct {
	Redis            string `json:"redis"`
	RedisAcceptNoAOF bool   `json:"redis_accept_no_aof"`
	Path             string `json:"path"`
}

type fileDNS struct {
	Listen        []string `json:"listen"`
	UDPMaxPayload int      `json:"udp_max_payload"`

	UDPReceiveBuffer           int   `json:"udp_receive_buffer"`
	UDPSendBuffer              int   `json:"udp_send_buffer"`
	TCPIdleTimeoutSeconds      int64 `json:"tcp_idle_timeout_seconds"`
	TCPMaxQueries              int   `json:"tcp_max_queries"`
	TCPMaxConnections          int   `json:"tcp_max_connections"`
	TCPMaxConnectionsPerClient int   `json:"tcp_max_connections_per_client"`
}

type fileAPI struct {
	Listen string `json:"listen"`
	fileAPIAuth
}

type fileAPIServer struct {
	Listen []string `json:"listen"`
	Port   *int     `json:"port"`
	fileAPIAuth
}

// fileAPIAuth are the access settings api and api_server share.
type fileAPIAuth struct {
	Token       string `json:"token"`
	Auth        string `json:"auth"`
	TokenFile   string `json:"token_file"`
	ReadToken   string `json:"read_token"`
	MetricsAuth string `json:"metrics_auth"`
}

type fileTTL struct {
	Record     int64 `json:"record"`
	NS         int64 `json:"ns"`
	SOARefresh int64 `json:"soa_refresh"`
	SOARetry   int64 `json:"soa_retry"`
	SOAExpire  int64 `json:"soa_expire"`
	SOAMinimum int64 `json:"soa_minimum"`
}

type fileHysteresis struct {
	WindowSeconds          int64 `json:"window_seconds"`
	Divisor                int   `json:"divisor"`
	LastMemberDelaySeconds int64 `json:"last_member_delay_seconds"`
}

type fileCoalesce struct {
	WindowMS   int64 `json:"window_ms"`
	MaxDelayMS int64 `json:"max_delay_ms"`
}

type fileJournal struct {
	MaxEntries int   `json:"max_entries"`
	MaxBytes   int64 `json:"max_bytes"`
}

type fileLearnPeers struct {
	Enabled            bool  `json:"enabled"`
	AfterTransfers     int   `json:"after_transfers"`
	ForgetAfterSeconds int64 `json:"forget_after_seconds"`
}

type fileRRL struct {
	Disabled           bool     `json:"disabled"`
	ResponsesPerSecond int      `json:"responses_per_second"`
	WindowSeconds      int64    `json:"window_seconds"`
	Slip               int      `json:"slip"`
	IPv4PrefixLength   int      `json:"ipv4_prefix_length"`
	IPv6PrefixLength   int      `json:"ipv6_prefix_length"`
	TableSize          int      `json:"table_size"`
	Exempt             []string `json:"exempt"`
}

type fileLog struct {
	Level  string `json:"level"`
	Format string `json:"format"`
}

type fileComputeNodes struct {
	HeartbeatLimitSeconds int64 `json:"heartbeat_limit_seconds"`
	BootGraceSeconds      int64 `json:"boot_grace_seconds"`
}

type fileTSIG struct {
	Algorithm string `json:"algorithm"`
	Secret    string `json:"secret"`
}

type fileMahi struct {
	Address string `json:"address"`
}

type fileUFDS struct {
	Address      string `json:"address"`
	URL          string `json:"url"`
	BindDN       string `json:"bindDN"`
	BindPassword string `json:"bindPassword"`
	CacheSeconds int64  `json:"cache_seconds"`
}

type fileCNAPI struct {
	Address     string `json:"address"`
	URL         string `json:"url"`
	PollSeconds int64  `json:"poll_seconds"`
}

type fileNAPI struct {
	Address      string `json:"address"`
	URL          string `json:"url"`
	CacheSeconds int64  `json:"cache_seconds"`
}

type fileVMAPI struct {
	Address string `json:"address"`
	URL     string `json:"url"`
	Limit   int    `json:"limit"`
}

type fileChangefeed struct {
	Resource     string   `json:"resource"`
	SubResources []string `json:"subResources"`
	Instance     string   `json:"instance"`
}
