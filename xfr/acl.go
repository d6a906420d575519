package xfr

import (
	"net/netip"
	"strings"

	"github.com/miekg/dns"
)

// mayTransfer decides whether the client of w may transfer zone z: a
// request signed with the zone's TSIG key always may, and when the zone
// requires TSIG nothing else does; otherwise the zone's secondaries and
// the allow_transfer prefixes may. Loopback is no exception: a shell
// on the host is not a secondary, and the operator lists 127.0.0.1 where
// one is meant to transfer. The error says why not.
func (s *Server) mayTransfer(w dns.ResponseWriter, r *dns.Msg, st *settings, z servedZone) error {
	access := z.conf.access
	if t := r.IsTsig(); t != nil {
		if err := w.TsigStatus(); err != nil {
			return refusal("TSIG key %s does not verify: %v", t.Hdr.Name, err)
		}
		if access.TSIGKey != "" && keyName(t.Hdr.Name) == keyName(access.TSIGKey) {
			return nil
		}
		if access.RequireTSIG {
			return refusal("signed with key %s, the zone requires key %s", t.Hdr.Name, access.TSIGKey)
		}
	} else if access.RequireTSIG {
		return refusal("not signed, the zone requires TSIG key %s", access.TSIGKey)
	}
	addr := remoteAddr(w)
	if inPrefixes(addr, access.AllowTransfer) || inPrefixes(addr, st.cfg.AllowTransfer) {
		return nil
	}
	for _, peers := range st.transferPeers(z) {
		for _, p := range s.peers.peerAddrs(peers) {
			if p == addr {
				return nil
			}
		}
	}
	return refusal("%s is not a secondary of the zone nor in allow_transfer", addr)
}

func inPrefixes(addr netip.Addr, prefixes []netip.Prefix) bool {
	for _, p := range prefixes {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// keyName is a TSIG key's name as the configuration keys it: lower-case,
// without the trailing dot.
func keyName(name string) string {
	return strings.TrimSuffix(strings.ToLower(name), ".")
}
