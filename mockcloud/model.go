package mockcloud

// The types below are the JSON shapes of the cloud's APIs. Their fields
// are the keys the simulated cloud itself reads or writes (filters, NAPI
// NIC derivation, mutations, generated clouds); every other key an object
// came with — a dump of a real cloud has many — is kept in its Extra and
// sent back as it came (extra.go). Field order follows the APIs'
// documentation where it has one.

// VM is a VMAPI VM object.
type VM struct {
	UUID              string         `json:"uuid"`
	Alias             string         `json:"alias,omitempty"`
	Autoboot          bool           `json:"autoboot"`
	Brand             string         `json:"brand"`
	BillingID         string         `json:"billing_id,omitempty"`
	CreateTimestamp   string         `json:"create_timestamp"`
	CustomerMetadata  map[string]any `json:"customer_metadata"`
	Destroyed         string         `json:"destroyed,omitempty"`
	ImageUUID         string         `json:"image_uuid,omitempty"`
	InternalMetadata  map[string]any `json:"internal_metadata"`
	LastModified      string         `json:"last_modified"`
	MaxPhysicalMemory int            `json:"max_physical_memory,omitempty"`
	NICs              []NIC          `json:"nics"`
	OwnerUUID         string         `json:"owner_uuid"`
	Quota             int            `json:"quota,omitempty"`
	RAM               int            `json:"ram,omitempty"`
	ServerUUID        string         `json:"server_uuid"`
	State             string         `json:"state"`
	Tags              map[string]any `json:"tags"`
	ZoneState         string         `json:"zone_state,omitempty"`
	// Extra: every other key, as it came (cpu_cap, datasets, disks, …).
	Extra Extra `json:"-"`
}

// NIC is one network interface as VMAPI lists it inside a VM. IPs carries
// the address with its prefix length ("10.88.0.5/16"), IP the bare address.
type NIC struct {
	Interface   string   `json:"interface"`
	MAC         string   `json:"mac"`
	VLANID      int      `json:"vlan_id"`
	NICTag      string   `json:"nic_tag"`
	Gateway     string   `json:"gateway,omitempty"`
	Gateways    []string `json:"gateways,omitempty"`
	Netmask     string   `json:"netmask,omitempty"`
	IP          string   `json:"ip,omitempty"`
	IPs         []string `json:"ips,omitempty"`
	MTU         int      `json:"mtu,omitempty"`
	Model       string   `json:"model,omitempty"`
	NetworkUUID string   `json:"network_uuid,omitempty"`
	Primary     bool     `json:"primary,omitempty"`
	// Extra: every other key, as it came (allow_ip_spoofing, state, …).
	Extra Extra `json:"-"`
}

// User is a UFDS sdcPerson. UFDS keeps its flags as strings ("true",
// "false"); an absent flag is the empty string and is left out of JSON.
type User struct {
	UUID                    string `json:"uuid"`
	Login                   string `json:"login"`
	Email                   string `json:"email,omitempty"`
	TritonCNSEnabled        string `json:"triton_cns_enabled,omitempty"`
	ApprovedForProvisioning string `json:"approved_for_provisioning,omitempty"`
	// Extra: every other attribute, as it came (cn, sn, created_at, …):
	// a string, or a list of strings for a multi-valued one.
	Extra Extra `json:"-"`
}

// Server is a CNAPI compute node. Sysinfo is sent only when the request
// asks for it with extras=sysinfo (or extras=all), as CNAPI does.
type Server struct {
	UUID            string         `json:"uuid"`
	Hostname        string         `json:"hostname"`
	Datacenter      string         `json:"datacenter,omitempty"`
	Headnode        bool           `json:"headnode"`
	Status          string         `json:"status"`
	Setup           bool           `json:"setup"`
	Reserved        bool           `json:"reserved"`
	RAM             int            `json:"ram,omitempty"`
	CurrentPlatform string         `json:"current_platform,omitempty"`
	BootPlatform    string         `json:"boot_platform,omitempty"`
	Created         string         `json:"created,omitempty"`
	LastBoot        string         `json:"last_boot,omitempty"`
	LastHeartbeat   string         `json:"last_heartbeat,omitempty"`
	Sysinfo         map[string]any `json:"sysinfo,omitempty"`
	// Extra: every other key, as it came (traits, vms, memory_*, …).
	Extra Extra `json:"-"`
}

// Network is a NAPI network. OwnerUUIDs is set for fabric and other
// account-owned networks only.
type Network struct {
	UUID             string   `json:"uuid"`
	Name             string   `json:"name"`
	Family           string   `json:"family"`
	Fabric           bool     `json:"fabric,omitempty"`
	VLANID           int      `json:"vlan_id"`
	NICTag           string   `json:"nic_tag"`
	Subnet           string   `json:"subnet"`
	Netmask          string   `json:"netmask,omitempty"`
	Gateway          string   `json:"gateway,omitempty"`
	ProvisionStartIP string   `json:"provision_start_ip"`
	ProvisionEndIP   string   `json:"provision_end_ip"`
	Resolvers        []string `json:"resolvers"`
	MTU              int      `json:"mtu,omitempty"`
	OwnerUUIDs       []string `json:"owner_uuids,omitempty"`
	Description      string   `json:"description,omitempty"`
	// Extra: every other key, as it came (vnet_id, routes, …).
	Extra Extra `json:"-"`
}

// Pool is a NAPI network pool.
type Pool struct {
	UUID       string   `json:"uuid"`
	Name       string   `json:"name"`
	Family     string   `json:"family"`
	NICTag     string   `json:"nic_tag,omitempty"`
	Networks   []string `json:"networks"`
	OwnerUUIDs []string `json:"owner_uuids,omitempty"`
	// Extra: every other key, as it came (nic_tags_present, …).
	Extra Extra `json:"-"`
}

// NAPINIC is a NIC as NAPI returns it from GET /nics/:mac: the VMAPI NIC
// plus what NAPI knows about its owner and placement. A fixture's "nics"
// table holds them; NICs of VMs that the table lacks are derived from the
// VMs.
type NAPINIC struct {
	MAC           string   `json:"mac"`
	IP            string   `json:"ip,omitempty"`
	IPs           []string `json:"ips,omitempty"`
	Primary       bool     `json:"primary"`
	State         string   `json:"state"`
	BelongsToType string   `json:"belongs_to_type"`
	BelongsToUUID string   `json:"belongs_to_uuid"`
	OwnerUUID     string   `json:"owner_uuid"`
	NetworkUUID   string   `json:"network_uuid,omitempty"`
	NICTag        string   `json:"nic_tag"`
	VLANID        int      `json:"vlan_id"`
	Netmask       string   `json:"netmask,omitempty"`
	Gateway       string   `json:"gateway,omitempty"`
	MTU           int      `json:"mtu,omitempty"`
	Model         string   `json:"model,omitempty"`
	CNUUID        string   `json:"cn_uuid,omitempty"`
	// Extra: every other key, as it came (created_timestamp, …).
	Extra Extra `json:"-"`
}
