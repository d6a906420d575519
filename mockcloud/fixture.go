package mockcloud

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Fixture is a whole simulated cloud in the APIs' own JSON shapes; the file
// format is documented in docs/mockcloud.md. Its own keys are strict (a
// misspelt one is an error); the objects in it may carry any keys the
// real services send, which are kept (Extra).
type Fixture struct {
	Users        []User    `json:"users"`
	Servers      []Server  `json:"servers"`
	Networks     []Network `json:"networks"`
	NetworkPools []Pool    `json:"network_pools"`
	VMs          []VM      `json:"vms"`
	// NICs is NAPI's own NIC table, GET /nics/:mac's first source: NICs
	// that no VM lists, and NAPI's record of a VM NIC that VMAPI shows
	// without network_uuid. NICs of VMs it lacks are derived from them.
	NICs []NAPINIC `json:"nics,omitempty"`
}

// ErrFixture is wrapped by every error about a fixture's content.
var ErrFixture = errors.New("invalid fixture")

// LoadFixture reads and checks a fixture file.
func LoadFixture(path string) (*Fixture, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load fixture: %w", err)
	}
	f, err := DecodeFixture(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("load fixture %s: %w", path, err)
	}
	return f, nil
}

// DecodeFixture decodes a fixture and checks it. Its top-level keys are
// strict (an unknown one is an error, so a misspelt array does not
// silently vanish); keys of the objects in it that mockcloud does not
// model are kept and sent as they came.
func DecodeFixture(r io.Reader) (*Fixture, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var f Fixture
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("decode fixture: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("decode fixture: %w: data after the top-level object", ErrFixture)
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	return &f, nil
}

// check rejects what would make the simulated APIs ambiguous: missing or
// repeated identifiers. Dangling references (a VM whose owner or server is
// unknown) are allowed on purpose: real clouds have them and cnsd must cope.
func (f *Fixture) check() error {
	seen := map[string]string{}
	claim := func(kind, id string) error {
		if id == "" && kind == "nic" {
			return fmt.Errorf("%w: a nic has no mac", ErrFixture)
		}
		if id == "" {
			return fmt.Errorf("%w: a %s has no uuid", ErrFixture, kind)
		}
		if prev, ok := seen[kind+" "+id]; ok {
			return fmt.Errorf("%w: %s %s appears twice (%s)", ErrFixture, kind, id, prev)
		}
		seen[kind+" "+id] = kind
		return nil
	}
	for _, u := range f.Users {
		if err := claim("user", u.UUID); err != nil {
			return err
		}
	}
	for _, s := range f.Servers {
		if err := claim("server", s.UUID); err != nil {
			return err
		}
	}
	for _, n := range f.Networks {
		if err := claim("network", n.UUID); err != nil {
			return err
		}
	}
	for _, p := range f.NetworkPools {
		if err := claim("network pool", p.UUID); err != nil {
			return err
		}
	}
	for _, v := range f.VMs {
		if err := claim("vm", v.UUID); err != nil {
			return err
		}
	}
	for _, n := range f.NICs {
		if err := claim("nic", macKey(n.MAC)); err != nil {
			return err
		}
	}
	return nil
}

// ExtraKeys counts, per kind of object, the keys the fixture's objects
// carry that mockcloud does not model (kept and sent as they came).
func (f *Fixture) ExtraKeys() map[string]int {
	n := map[string]int{}
	for _, v := range f.VMs {
		v.Extra.count(n, "vm")
		for _, nic := range v.NICs {
			nic.Extra.count(n, "vm_nic")
		}
	}
	for _, u := range f.Users {
		u.Extra.count(n, "user")
	}
	for _, s := range f.Servers {
		s.Extra.count(n, "server")
	}
	for _, x := range f.Networks {
		x.Extra.count(n, "network")
	}
	for _, p := range f.NetworkPools {
		p.Extra.count(n, "network_pool")
	}
	for _, nic := range f.NICs {
		nic.Extra.count(n, "nic")
	}
	return n
}
