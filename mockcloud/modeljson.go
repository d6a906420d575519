package mockcloud

import (
	"encoding/json"
	"net/http"
	"slices"
)

// Each API type keeps the keys it does not model in its Extra field (see
// extra.go): decoding fills it, encoding sends it back after the modelled
// fields. The *Fields types are the same structs without these methods,
// so that encoding/json handles the modelled part as usual.

type (
	vmFields      VM
	nicFields     NIC
	userFields    User
	serverFields  Server
	networkFields Network
	poolFields    Pool
	napiNICFields NAPINIC
)

// MarshalJSON implements json.Marshaler. A NIC's extra keys are sent
// here, as part of its VM: NIC has no MarshalJSON of its own, so that the
// NICs of generated VMs (which have none) cost a listing nothing more.
func (v VM) MarshalJSON() ([]byte, error) {
	if !slices.ContainsFunc(v.NICs, func(n NIC) bool { return len(n.Extra) > 0 }) {
		return encodeExtra(vmFields(v), v.Extra)
	}
	nics := make([]json.RawMessage, len(v.NICs))
	for i, n := range v.NICs {
		b, err := encodeExtra(nicFields(n), n.Extra)
		if err != nil {
			return nil, err
		}
		nics[i] = b
	}
	return encodeExtra(vmWithNICs{vmFields: (*vmFields)(&v), NICs: nics}, v.Extra)
}

// vmWithNICs is a VM whose nics are already encoded: the outer NICs
// field hides the embedded one of the same JSON name.
type vmWithNICs struct {
	*vmFields
	NICs []json.RawMessage `json:"nics"`
}

// UnmarshalJSON implements json.Unmarshaler.
func (v *VM) UnmarshalJSON(b []byte) (err error) {
	v.Extra, err = decodeExtra(b, (*vmFields)(v))
	return errIn("vm", v.UUID, err)
}

// UnmarshalJSON implements json.Unmarshaler.
func (n *NIC) UnmarshalJSON(b []byte) (err error) {
	n.Extra, err = decodeExtra(b, (*nicFields)(n))
	return errIn("nic", n.MAC, err)
}

// MarshalJSON implements json.Marshaler.
func (u User) MarshalJSON() ([]byte, error) { return encodeExtra(userFields(u), u.Extra) }

// UnmarshalJSON implements json.Unmarshaler.
func (u *User) UnmarshalJSON(b []byte) (err error) {
	u.Extra, err = decodeExtra(b, (*userFields)(u))
	return errIn("user", u.UUID, err)
}

// MarshalJSON implements json.Marshaler.
func (s Server) MarshalJSON() ([]byte, error) { return encodeExtra(serverFields(s), s.Extra) }

// UnmarshalJSON implements json.Unmarshaler.
func (s *Server) UnmarshalJSON(b []byte) (err error) {
	s.Extra, err = decodeExtra(b, (*serverFields)(s))
	return errIn("server", s.UUID, err)
}

// MarshalJSON implements json.Marshaler.
func (n Network) MarshalJSON() ([]byte, error) { return encodeExtra(networkFields(n), n.Extra) }

// UnmarshalJSON implements json.Unmarshaler.
func (n *Network) UnmarshalJSON(b []byte) (err error) {
	n.Extra, err = decodeExtra(b, (*networkFields)(n))
	return errIn("network", n.UUID, err)
}

// MarshalJSON implements json.Marshaler.
func (p Pool) MarshalJSON() ([]byte, error) { return encodeExtra(poolFields(p), p.Extra) }

// UnmarshalJSON implements json.Unmarshaler.
func (p *Pool) UnmarshalJSON(b []byte) (err error) {
	p.Extra, err = decodeExtra(b, (*poolFields)(p))
	return errIn("network pool", p.UUID, err)
}

// MarshalJSON implements json.Marshaler.
func (n NAPINIC) MarshalJSON() ([]byte, error) { return encodeExtra(napiNICFields(n), n.Extra) }

// UnmarshalJSON implements json.Unmarshaler.
func (n *NAPINIC) UnmarshalJSON(b []byte) (err error) {
	n.Extra, err = decodeExtra(b, (*napiNICFields)(n))
	return errIn("napi nic", n.MAC, err)
}

// writeVMs answers with a JSON array of vms. It joins each VM's own
// encoding: json.Marshal of the slice would re-scan every VM's output (as
// it does for any json.Marshaler), doubling the cost of a 1000-VM page.
func writeVMs(w http.ResponseWriter, status int, vms []VM) {
	buf := make([]byte, 0, 1024*len(vms)+2)
	buf = append(buf, '[')
	for i := range vms {
		b, err := vms[i].MarshalJSON()
		if err != nil {
			writeError(w, http.StatusInternalServerError, "InternalError", err.Error())
			return
		}
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, b...)
	}
	buf = append(buf, ']')
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(buf)
}
