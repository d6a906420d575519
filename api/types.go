package api

// Zone is one zone in GET /zones: its name without the trailing dot, as
// Triton CNS lists it, and its current serial.
type Zone struct {
	Name   string `json:"name"`
	Serial uint32 `json:"serial"`
	// Records is how many records the zone serves (cnsd addition).
	Records int `json:"records"`
}

// Peer is one secondary in GET /peers and GET /peer/:addr. The fields
// Triton CNS sends come first; the rest are cnsd's.
type Peer struct {
	Address string            `json:"address"`
	Serials map[string]uint32 `json:"serials"`
	Version string            `json:"version"`
	// Only in GET /peer/:addr, as in Triton CNS.
	NotifyFailures *uint64        `json:"notify_failures,omitempty"`
	UsingNotify    *bool          `json:"using_notify,omitempty"`
	UsingIXFR      *bool          `json:"using_ixfr,omitempty"`
	Counters       map[string]any `json:"counters,omitempty"`

	// Port is where NOTIFY goes when it is not 53.
	Port  uint16     `json:"port,omitempty"`
	Names []string   `json:"names,omitempty"`
	Zones []PeerZone `json:"zones"`
}

// PeerZone is one zone on one secondary.
type PeerZone struct {
	Zone         string `json:"zone"`
	Serial       uint32 `json:"serial"`
	ConfirmedAt  string `json:"confirmed_at,omitempty"`
	Want         uint32 `json:"want"`
	BehindSince  string `json:"behind_since,omitempty"`
	Stale        bool   `json:"stale"`
	LastNotify   string `json:"last_notify,omitempty"`
	AXFR         uint64 `json:"axfr"`
	IXFR         uint64 `json:"ixfr"`
	NotifySent   uint64 `json:"notify_sent"`
	NotifyFailed uint64 `json:"notify_failed"`
}

// AllowedPeer is one entry of GET /allowed-peers: an address and the
// prefix length it stands for.
type AllowedPeer struct {
	Address string `json:"address"`
	Mask    int    `json:"mask"`
}

// Error is the body of every error answer.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}
