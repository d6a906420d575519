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
// format is documented in docs/mockcloud.md.
type Fixture struct {
	Users        []User    `json:"users"`
	Servers      []Server  `json:"servers"`
	Networks     []Network `json:"networks"`
	NetworkPools []Pool    `json:"network_pools"`
	VMs          []VM      `json:"vms"`
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

// DecodeFixture decodes a fixture strictly (an unknown key is an error, so
// a misspelt field does not silently vanish) and checks it.
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
	return nil
}
