package feed

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/cnsd/cnsd/zonegen"
)

// Static is a cloud read from one JSON document instead of the live APIs:
// the simulated cloud's fixture format (docs/mockcloud.md), which is each
// API's own objects under "vms", "users", "servers", "networks",
// "network_pools" and "nics". Each object is decoded by the same code that
// decodes the live API's answers, and the lookups answer as the clients
// do (ErrNoAccount, ErrNotFound, NIC repair), so that cnsadm preview reads
// a cloud dump the way cnsd would read that cloud.
type Static struct {
	// VMs are the VMs that decoded; Unreadable the uuids (or positions)
	// of those that did not, with why: cnsd leaves such VMs as they were.
	VMs        []zonegen.VM
	Unreadable []string

	accounts map[string]zonegen.Account
	servers  map[string]zonegen.Server
	networks map[string]zonegen.Network
	pools    []Pool
	nics     map[string]NAPINIC // canonical MAC → NAPI's NIC
}

// staticDoc is the document ReadStatic reads, each array left raw so that
// every object goes through its API's own decoder.
type staticDoc struct {
	VMs      []json.RawMessage `json:"vms"`
	Users    []json.RawMessage `json:"users"`
	Servers  []json.RawMessage `json:"servers"`
	Networks []json.RawMessage `json:"networks"`
	Pools    json.RawMessage   `json:"network_pools"`
	NICs     []json.RawMessage `json:"nics"`
}

// NewStatic returns an empty cloud, to be filled with the Add methods.
func NewStatic() *Static {
	return &Static{accounts: map[string]zonegen.Account{}, servers: map[string]zonegen.Server{},
		networks: map[string]zonegen.Network{}, nics: map[string]NAPINIC{}}
}

// ReadStatic reads a cloud document. Only a document that is not a JSON
// object of arrays is an error; a VM that does not decode is listed in
// Unreadable, and a user, server, network, pool or NIC that does not
// decode is an error naming it, since leaving it out would change the
// records of VMs that refer to it.
func ReadStatic(data []byte) (*Static, error) {
	var doc staticDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("read cloud: %w", err)
	}
	s := NewStatic()
	for i, raw := range doc.VMs {
		vm, err := decodeVM(raw)
		if err != nil {
			s.Unreadable = append(s.Unreadable, fmt.Sprintf("vms[%d] %s: %v", i, vmUUID(raw), err))
			continue
		}
		s.VMs = append(s.VMs, vm)
	}
	if err := s.readRest(&doc); err != nil {
		return nil, fmt.Errorf("read cloud: %w", err)
	}
	return s, nil
}

// readRest decodes what the VMs refer to.
func (s *Static) readRest(doc *staticDoc) error {
	for i, raw := range doc.Users {
		var a zonegen.Account
		if err := json.Unmarshal(raw, &a); err != nil || a.UUID == "" {
			return fmt.Errorf("users[%d]: want an object with a uuid (%v)", i, err)
		}
		s.AddAccount(a)
	}
	for i, raw := range doc.Servers {
		srv, err := decodeServer(raw)
		if err != nil {
			return fmt.Errorf("servers[%d]: %w", i, err)
		}
		s.AddServer(srv)
	}
	for i, raw := range doc.Networks {
		n, err := decodeNetwork(raw)
		if err != nil {
			return fmt.Errorf("networks[%d]: %w", i, err)
		}
		s.AddNetwork(n)
	}
	if len(doc.Pools) > 0 {
		pools, bad, err := decodePools(doc.Pools)
		if err == nil && len(bad) > 0 {
			err = fmt.Errorf("network pool %q: %w", bad[0].ID, bad[0].Err)
		}
		if err != nil {
			return err
		}
		s.pools = pools
	}
	for i, raw := range doc.NICs {
		nic, err := decodeNIC(raw)
		if err != nil {
			return fmt.Errorf("nics[%d]: %w", i, err)
		}
		s.AddNIC(nic)
	}
	return nil
}

// AddAccount adds (or replaces) a UFDS account.
func (s *Static) AddAccount(a zonegen.Account) { s.accounts[a.UUID] = a }

// AddServer adds (or replaces) a CNAPI compute node.
func (s *Static) AddServer(srv zonegen.Server) { s.servers[srv.UUID] = srv }

// AddNetwork adds (or replaces) a NAPI network; its pools are taken from
// the pool list, as NAPI.Network does, not from n.Pools.
func (s *Static) AddNetwork(n zonegen.Network) { s.networks[n.UUID] = n }

// AddPool adds a network pool, or its networks to the pool of the same
// uuid.
func (s *Static) AddPool(p Pool) {
	for i := range s.pools {
		if s.pools[i].UUID == p.UUID {
			s.pools[i].Networks = append(s.pools[i].Networks, p.Networks...)
			return
		}
	}
	s.pools = append(s.pools, Pool{UUID: p.UUID, Name: p.Name, Networks: slices.Clone(p.Networks)})
}

// AddNIC adds (or replaces) a NIC of NAPI's NIC table.
func (s *Static) AddNIC(nic NAPINIC) {
	if key, ok := canonicalMAC(nic.MAC); ok {
		s.nics[key] = nic
	}
}

// User returns the account uuid, or an error wrapping ErrNoAccount.
func (s *Static) User(_ context.Context, uuid string) (zonegen.Account, error) {
	a, ok := s.accounts[uuid]
	if !ok {
		return zonegen.Account{}, fmt.Errorf("look up account %s: %w", uuid, ErrNoAccount)
	}
	return a, nil
}

// Server returns the compute node uuid; false means CNAPI.Server would
// not know it: the cloud has none, or it is not set up (CNAPI lists only
// set-up servers to cnsd, serversPath).
func (s *Static) Server(uuid string) (zonegen.Server, bool) {
	srv, ok := s.servers[uuid]
	return srv, ok && srv.Setup
}

// Network returns the network uuid with the pools that contain it, or an
// error wrapping ErrNotFound.
func (s *Static) Network(_ context.Context, uuid string) (zonegen.Network, error) {
	n, ok := s.networks[uuid]
	if !ok {
		return zonegen.Network{}, fmt.Errorf("network %s: %w", uuid, ErrNotFound)
	}
	n.OwnerUUIDs, n.Pools = slices.Clone(n.OwnerUUIDs), nil
	for _, p := range s.pools {
		if slices.Contains(p.Networks, uuid) {
			n.Pools = append(n.Pools, p.UUID)
		}
	}
	return n, nil
}

// Pools returns every network pool with its member networks.
func (s *Static) Pools(context.Context) ([]Pool, error) {
	out := make([]Pool, len(s.pools))
	for i, p := range s.pools {
		p.Networks = slices.Clone(p.Networks)
		out[i] = p
	}
	return out, nil
}

// RepairNIC repairs a NIC that lacks its network as NAPI.RepairNIC does,
// from NAPI's NIC with the same MAC: the NIC table first, then the NICs of
// the VMs that are not destroyed (NAPI frees a destroyed VM's NICs).
func (s *Static) RepairNIC(_ context.Context, vm string, nic zonegen.NIC) (zonegen.NIC, error) {
	if !NeedsRepair(&nic) {
		return nic, nil
	}
	got, err := s.nic(nic.MAC)
	if err != nil {
		return nic, fmt.Errorf("repair nic: %w", err)
	}
	return repairedNIC(vm, nic, got)
}

// nic looks a NIC up by MAC as NAPI.NIC does.
func (s *Static) nic(mac string) (NAPINIC, error) {
	key, ok := canonicalMAC(mac)
	if !ok {
		return NAPINIC{}, fmt.Errorf("nic %q: %w", mac, errBadMAC)
	}
	if n, ok := s.nics[key]; ok {
		return n, nil
	}
	for _, vm := range s.VMs {
		if vm.State == "destroyed" {
			continue
		}
		for _, n := range vm.NICs {
			if k, _ := canonicalMAC(n.MAC); k == key {
				return NAPINIC{NIC: n, BelongsToUUID: vm.UUID}, nil
			}
		}
	}
	return NAPINIC{}, fmt.Errorf("nic %s: %w", key, ErrNotFound)
}
