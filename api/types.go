package api

import "time"

// Zone is one zone in GET /zones: its name without the trailing dot, as
// Triton CNS lists it, and its current serial.
type Zone struct {
	Name   string `json:"name"`
	Serial uint32 `json:"serial"`
	// Records is how many records the zone serves (cnsd addition).
	Records int `json:"records"`
	// LargestRRset is how many records the zone's largest RRset holds
	// (cnsd addition): what a secondary's per-RRset limit, BIND's
	// max-records-per-type, must allow.
	LargestRRset int `json:"largest_rrset"`
	// CommittedAt is when the zone's serial was committed (RFC 3339, by
	// the writer's clock; a follower says when it applied it); absent
	// when this cnsd loaded the zone at start and has seen no commit of
	// it since (cnsd addition).
	CommittedAt string `json:"committed_at,omitempty"`
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
	Port uint16 `json:"port,omitempty"`
	// Endpoint is the secondary's address and port, an IPv6 address in
	// brackets ("192.0.2.53:53", "[2001:db8::53]:5302"): what tells
	// apart secondaries sharing an address on different ports.
	Endpoint string     `json:"endpoint"`
	Names    []string   `json:"names,omitempty"`
	Zones    []PeerZone `json:"zones"`
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
	// Ahead: the secondary serves a serial ahead of the zone's
	// (docs/operator-guide.md, Serials).
	Ahead bool `json:"ahead"`
	// Learnt: not a configured peer; NOTIFY goes to it because it
	// transfers the zone repeatedly (learn_peers), until it is quiet.
	Learnt bool `json:"learnt"`
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

// VM is GET /vm/:uuid. UUID, Names and LastVisit are what Triton CNS
// sends; the rest is cnsd's, present in the writing process only.
type VM struct {
	UUID  string   `json:"uuid"`
	Names []string `json:"names"`
	// LastVisit is when the VM was last evaluated, in ms since the epoch.
	LastVisit int64 `json:"last_visit,omitempty"`

	Instance   bool             `json:"instance"`
	Services   []ServiceListing `json:"services,omitempty"`
	Reasons    []Reason         `json:"reasons,omitempty"`
	Notes      []Reason         `json:"notes,omitempty"`
	Unresolved bool             `json:"unresolved,omitempty"`
	Pending    []PendingRemoval `json:"pending,omitempty"`
	// Held lists the causes of held deletions this VM's records wait in.
	Held []string `json:"held,omitempty"`

	// Zones are the VM's records as cnsd serves them, per zone in zone
	// order (cnsd addition, in every process).
	Zones []VMZone `json:"zones"`
}

// VMZone is what one VM contributes to one zone.
type VMZone struct {
	Zone    string   `json:"zone"` // without the trailing dot
	Records []Record `json:"records"`
}

// Record is one DNS record as a secondary receives it. Name is absolute,
// without the trailing dot, like the names of GET /vm/:uuid; Value is the
// zone-file presentation of the data (targets with the trailing dot,
// TXT quoted); TTL is in seconds.
type Record struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Value string `json:"value"`
	TTL   uint32 `json:"ttl"`
}

// ServiceListing is one service of a VM and whether the VM is listed in it.
type ServiceListing struct {
	Name   string `json:"name"`
	Ports  []int  `json:"ports,omitempty"`
	Listed bool   `json:"listed"`
}

// Reason is one rule that applied to a VM.
type Reason struct {
	Code   string `json:"code"`
	Detail string `json:"detail,omitempty"`
}

// PendingRemoval is a self-removal that has not taken effect yet
// (GET /pending-removals).
type PendingRemoval struct {
	Service   string    `json:"service"` // owner uuid/service
	VM        string    `json:"vm"`
	Requested time.Time `json:"requested"`
	Due       time.Time `json:"due"` // an estimate: later reports change it
}

// HeldDeletion is a mass deletion waiting for confirmation or for its
// condition to clear (GET /held-deletions).
type HeldDeletion struct {
	Cause string     `json:"cause"`
	Since time.Time  `json:"since"`
	VMs   []string   `json:"vms"`
	Zones []HeldZone `json:"zones"`
}

// HeldZone is one zone a held deletion would shrink too much.
type HeldZone struct {
	Zone    string `json:"zone"`
	Removed int    `json:"removed"`
	Records int    `json:"records"`
}

// Suffixes is the answer of POST /suffixes-for-vm.
type Suffixes struct {
	Suffixes []string `json:"suffixes"`
}

// Confirmed is the answer of POST /held-deletions/:cause/confirm: the
// cause whose held deletion now takes effect.
type Confirmed struct {
	Confirmed string `json:"confirmed"`
}
