package schema

// Defaults of settings that the file may leave out. config.schema.json
// states the same values as "default"; a test keeps the two in step.
const (
	defaultAlgorithm = "hmac-sha256"
	defaultAPIListen = "127.0.0.1:8080"
	defaultAPIPort   = 80 // of api_server, as in the shipped Triton CNS
)

// defaults returns the file as it reads when every optional key is left
// out. Decoding lays the file's values over it.
func defaults() file {
	return file{
		Store:       fileStore{Path: "/var/db/cnsd/cnsd.db"},
		CatalogZone: fileCatalog{Name: "catalog.cnsd.invalid"},
		DNS: fileDNS{Listen: []string{"127.0.0.1:53"}, UDPMaxPayload: 1232,
			UDPReceiveBuffer: 4 << 20, UDPSendBuffer: 4 << 20, TCPIdleTimeoutSeconds: 10,
			TCPMaxConnections: 1000, TCPMaxConnectionsPerClient: 100},
		TTL: fileTTL{
			Record:     30,
			NS:         3600,
			SOARefresh: 3600,
			SOARetry:   600,
			SOAExpire:  604800,
			SOAMinimum: 30,
		},
		Hysteresis: fileHysteresis{
			WindowSeconds:          60,
			Divisor:                3,
			LastMemberDelaySeconds: 600,
		},
		Coalesce:     fileCoalesce{WindowMS: 0, MaxDelayMS: 200},
		Journal:      fileJournal{MaxEntries: 100, MaxBytes: 16 << 20},
		ComputeNodes: fileComputeNodes{HeartbeatLimitSeconds: 3600, BootGraceSeconds: 120},
		LearnPeers:   fileLearnPeers{AfterTransfers: 3, ForgetAfterSeconds: 86400},
		RRL: fileRRL{ResponsesPerSecond: 20, WindowSeconds: 15, Slip: 2,
			IPv4PrefixLength: 24, IPv6PrefixLength: 56, TableSize: 65536},
		Log:             fileLog{Level: "info", Format: "text"},
		MassDeleteShare: 0.25,
		RRsetWarn:       100,
		UFDSOpts:        fileUFDS{CacheSeconds: 300},
		CNAPIOpts:       fileCNAPI{PollSeconds: 60},
		NAPIOpts:        fileNAPI{CacheSeconds: 300},
		VMAPIOpts:       fileVMAPI{Limit: 500},
		ChangefeedOpts: fileChangefeed{
			Resource: "vm",
			SubResources: []string{"alias", "customer_metadata", "destroyed",
				"internal_metadata", "nics", "owner_uuid", "server_uuid", "state", "tags"},
		},
	}
}
