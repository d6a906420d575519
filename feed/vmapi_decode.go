package feed

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	"github.com/cnsd/cnsd/zonegen"
)

// errVMNoUUID marks a VM object without a usable uuid: it cannot even be
// named in a log line, let alone kept.
var errVMNoUUID = errors.New("vm has no uuid")

// decodeVM reads one VMAPI VM object. It is strict about what naming
// depends on (uuid, and the string fields being strings) and lenient where
// VMAPI's own history is: nulls stand for absent fields (but not for
// absent metadata keys, see vmDecoder.metadata), customer_metadata values
// that are not strings keep their JSON text, tags keep their JSON values,
// and a NIC field of the wrong type is dropped rather than losing the
// whole VM. Malformed JSON, or JSON that is not an object, is refused
// whole.
//
// It reads the object in one pass (jsonScan): a listing decodes 100k of
// them, each with some forty fields cnsd does not read, and unmarshalling
// a map of raw messages first, then each field again, cost 30–64 µs a VM.
// It decodes exactly as that did (FuzzDecodeVMAgrees holds it to
// decodeVMRef): keys match exactly, after unescaping; a repeated key
// counts by its last value only, an earlier one of the wrong type
// included; and the errors are the same, in the same order of fields.
func decodeVM(b []byte) (zonegen.VM, error) {
	d := vmDecoder{s: jsonScan{b: b}}
	if d.s.peek() != '{' {
		return zonegen.VM{}, errors.New("decode vm: not a json object")
	}
	d.s.object(d.field)
	if !d.s.end() {
		return zonegen.VM{}, errors.New("decode vm: not a json object")
	}
	return d.result()
}

// vmDecoder holds what decodeVM has read so far: each field with the
// error its value gave, both replaced should the key come again.
type vmDecoder struct {
	s       jsonScan
	vm      zonegen.VM
	strErrs [5]error // uuid, owner_uuid, alias, state, server_uuid
	tagsErr error
	mdErr   error
	nicsErr error
}

// vmStringFields names the VM's string fields by their index in strErrs,
// which is the order decodeVM reports their errors in.
var vmStringFields = [...]string{"uuid", "owner_uuid", "alias", "state", "server_uuid"}

// field reads the value of the VM's key quoted; a key cnsd does not read
// is skipped.
func (d *vmDecoder) field(quoted []byte, plain bool) {
	vm := &d.vm
	switch key := unquoteBytes(quoted, plain); string(key) {
	case "uuid":
		vm.UUID, d.strErrs[0] = d.str(0)
	case "owner_uuid":
		vm.OwnerUUID, d.strErrs[1] = d.str(1)
	case "alias":
		vm.Alias, d.strErrs[2] = d.str(2)
	case "state":
		vm.State, d.strErrs[3] = d.str(3)
	case "server_uuid":
		vm.ServerUUID, d.strErrs[4] = d.str(4)
	case "destroyed":
		_ = vm.Destroyed.UnmarshalJSON(d.s.skip()) // Truthy accepts every JSON value
	case "tags":
		vm.Tags, d.tagsErr = d.tags()
	case "customer_metadata":
		vm.CustomerMetadata, d.mdErr = d.metadata()
	case "nics":
		vm.NICs, d.nicsErr = d.nics()
	default:
		d.s.skip()
	}
}

// result is the VM read, or the first error in decodeVM's order.
func (d *vmDecoder) result() (zonegen.VM, error) {
	if d.strErrs[0] != nil || d.vm.UUID == "" {
		return zonegen.VM{}, errVMNoUUID
	}
	for _, err := range [...]error{d.strErrs[1], d.strErrs[2], d.strErrs[3], d.strErrs[4], d.tagsErr, d.mdErr, d.nicsErr} {
		if err != nil {
			return zonegen.VM{}, fmt.Errorf("decode vm %s: %w", d.vm.UUID, err)
		}
	}
	d.own()
	return d.vm, nil
}

// own copies the VM's strings that are views of the text decoded
// (stringOrNullView: its own and its NICs') into one allocation of the
// size they take: one where each was one of its own, fifteen for a VM
// with two NICs. Nothing else of the VM is a view of the text, which the
// caller may reuse (a listing's page buffers).
func (d *vmDecoder) own() {
	vm := &d.vm
	fields := func(yield func(*string) bool) {
		for _, f := range [...]*string{&vm.UUID, &vm.OwnerUUID, &vm.Alias, &vm.State, &vm.ServerUUID} {
			if !yield(f) {
				return
			}
		}
		for i := range vm.NICs {
			n := &vm.NICs[i]
			for _, f := range [...]*string{&n.IP, &n.MAC, &n.NetworkUUID, &n.NICTag} {
				if !yield(f) {
					return
				}
			}
			for j := range n.IPs {
				if !yield(&n.IPs[j]) {
					return
				}
			}
		}
	}
	size := 0
	for f := range fields {
		size += len(*f)
	}
	if size == 0 {
		return
	}
	buf := make([]byte, 0, size) // never grown: the strings made stay put
	for f := range fields {
		if *f != "" {
			start := len(buf)
			buf = append(buf, *f...)
			*f = unsafe.String(&buf[start], len(*f))
		}
	}
}

// str reads string field f; null is "". The string is a view (own).
func (d *vmDecoder) str(f int) (string, error) {
	v, ok := d.s.stringOrNullView()
	if !ok {
		return "", fmt.Errorf("field %s: want a string", vmStringFields[f])
	}
	return v, nil
}

// stringOrNull reads a string, or null as ""; any other value is read
// whole and not ok.
func (s *jsonScan) stringOrNull() (string, bool) {
	v, ok := s.stringOrNullView()
	if v != "" {
		v = strings.Clone(v)
	}
	return v, ok
}

// stringOrNullView is stringOrNull returning, for a plain string, a
// view of the text rather than a copy: the caller must copy it (own)
// before the text may change.
func (s *jsonScan) stringOrNullView() (string, bool) {
	switch s.peek() {
	case '"':
		return s.view(s.str()), true
	case 'n':
		s.literal("null")
		return "", true
	}
	s.skip()
	return "", false
}

// view is unquote without a copy of a plain string, which is a view of
// the text.
func (s *jsonScan) view(quoted []byte, plain bool) string {
	if plain && len(quoted) > 2 {
		return unsafe.String(&quoted[1], len(quoted)-2)
	}
	return unquote(quoted, plain)
}

// tags reads the tags object, each value as encoding/json decodes it
// into an any (numbers as float64).
func (d *vmDecoder) tags() (map[string]any, error) {
	s := &d.s
	switch s.peek() {
	case 'n':
		s.literal("null")
		return nil, nil
	case '{':
	default:
		s.skip()
		return nil, errors.New("field tags: want an object")
	}
	tags := map[string]any{}
	ok := true
	s.object(func(quoted []byte, plain bool) {
		k := unquote(quoted, plain)
		v, vok := s.anyValue()
		ok = ok && vok
		tags[k] = v
	})
	if !ok {
		return nil, errors.New("field tags: want an object")
	}
	return tags, nil
}

// anyValue reads one value as json.Unmarshal into an any would, and
// whether that would succeed (a number beyond float64 would not).
// Objects and arrays, rare in tags, are left to encoding/json.
func (s *jsonScan) anyValue() (any, bool) {
	switch c := s.peek(); {
	case c == '"':
		return unquote(s.str()), true
	case c == 't':
		s.literal("true")
		return true, true
	case c == 'f':
		s.literal("false")
		return false, true
	case c == 'n':
		s.literal("null")
		return nil, true
	case c == '-' || '0' <= c && c <= '9':
		f, err := strconv.ParseFloat(string(s.number()), 64)
		return f, err == nil
	}
	raw := s.skip()
	if s.bad {
		return nil, true // the whole VM fails on its syntax
	}
	var v any
	err := json.Unmarshal(raw, &v)
	return v, err == nil
}

// metadata keeps every key, whatever its value, because Triton CNS
// tested triton.cns.status for presence and then against the string "up":
// a boolean, a number or null there means not up (docs/differences.md).
// VMAPI stores strings, numbers and booleans, older clouds anything; a
// value that is not a string is kept as its JSON text, null as "" (so an
// acme-challenge of null publishes nothing).
func (d *vmDecoder) metadata() (map[string]string, error) {
	s := &d.s
	switch s.peek() {
	case 'n':
		s.literal("null")
		return nil, nil
	case '{':
	default:
		s.skip()
		return nil, errors.New("field customer_metadata: want an object")
	}
	md := map[string]string{}
	s.object(func(quoted []byte, plain bool) {
		k := unquote(quoted, plain)
		if c := s.peek(); c == '"' || c == 'n' {
			md[k], _ = s.stringOrNull()
			return
		}
		raw := s.skip()
		if s.bad {
			return // the whole VM fails on its syntax
		}
		if text, ok := jsonText(raw); ok {
			md[k] = text
		}
	})
	return md, nil
}

// jsonText is the compact JSON of a value, with numbers exactly as sent
// and invalid UTF-8 replaced as in decoded strings, so that it reads the
// same after another round through JSON.
func jsonText(raw []byte) (string, bool) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return "", false
	}
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	if e.Encode(v) != nil {
		return "", false
	}
	return strings.TrimSuffix(buf.String(), "\n"), true
}

// nics reads the nics array; an element that is not an object makes the
// VM malformed (the first such names it), a NIC field of the wrong type
// is only dropped.
func (d *vmDecoder) nics() ([]zonegen.NIC, error) {
	s := &d.s
	switch s.peek() {
	case 'n':
		s.literal("null")
		return nil, nil
	case '[':
	default:
		s.skip()
		return nil, errors.New("field nics: want an array")
	}
	nics := []zonegen.NIC{}
	var err error
	s.array(func(i int) {
		if s.peek() != '{' {
			s.skip()
			if err == nil {
				err = fmt.Errorf("nics[%d]: want an object", i)
			}
			return
		}
		var n zonegen.NIC
		s.object(func(quoted []byte, plain bool) { s.nicField(&n, unquoteBytes(quoted, plain)) })
		nics = append(nics, n)
	})
	if err != nil {
		return nil, err
	}
	return nics, nil
}

// nicField reads the value of the NIC's field key into n, the last value
// of a repeated key counting.
func (s *jsonScan) nicField(n *zonegen.NIC, key []byte) {
	switch string(key) {
	case "ip":
		n.IP, _ = s.stringOrNullView()
	case "mac":
		n.MAC, _ = s.stringOrNullView()
	case "network_uuid":
		n.NetworkUUID, _ = s.stringOrNullView()
	case "nic_tag":
		n.NICTag, _ = s.stringOrNullView()
	case "ips":
		n.IPs = s.nicIPs()
	case "vlan_id":
		n.VLANID = s.nicVLAN()
	default:
		s.skip()
	}
}

// nicIPs accepts an array of strings or a single string, as views
// (own); null, empty
// strings and elements of other types are skipped. An element that
// encoding/json could not decode into an any (a number beyond float64)
// loses the whole array, as it did when the array was unmarshalled.
func (s *jsonScan) nicIPs() []string {
	switch s.peek() {
	case '"':
		if one := s.view(s.str()); one != "" {
			return []string{one}
		}
		return nil
	case '[':
	default:
		s.skip()
		return nil
	}
	var out []string
	ok := true
	s.array(func(int) {
		if s.peek() != '"' {
			_, vok := s.anyValue()
			ok = ok && vok
			return
		}
		if v := s.view(s.str()); v != "" {
			out = append(out, v)
		}
	})
	if !ok {
		return nil
	}
	return out
}

// nicVLAN accepts a number or a numeric string; anything else is VLAN
// 0, which is what an absent vlan_id means.
func (s *jsonScan) nicVLAN() int {
	var text string
	switch c := s.peek(); {
	case c == '"':
		text = unquote(s.str())
	case c == '-' || '0' <= c && c <= '9':
		// As json.Unmarshal into an int: an integer in range, or nothing.
		n, err := strconv.ParseInt(string(s.number()), 10, 64)
		if err != nil {
			return 0
		}
		return int(n)
	default:
		s.skip()
		return 0
	}
	n, err := strconv.Atoi(text)
	if err != nil {
		return 0
	}
	return n
}

// vmJSONNull reports an absent field or a JSON null.
func vmJSONNull(raw json.RawMessage) bool {
	return raw == nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

// vmString reads a string field; absent and null are "".
func vmString(obj map[string]json.RawMessage, name string) (string, error) {
	raw := obj[name]
	if vmJSONNull(raw) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("field %s: want a string", name)
	}
	return s, nil
}

// vmUUID digs the uuid out of a VM object that decodeVM refused, so that
// the log line and the listing can still name it; "" when there is none.
func vmUUID(b []byte) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(b, &obj) != nil {
		return ""
	}
	s, _ := vmString(obj, "uuid") // keys match exactly, as in decodeVM
	return s
}
