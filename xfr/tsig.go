package xfr

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/schema"
)

// tsigProvider signs and verifies with the keys of the configuration in
// force when the message arrives.
type tsigProvider struct{ s *Server }

func (p tsigProvider) Generate(msg []byte, t *dns.TSIG) ([]byte, error) {
	return tsigMAC(p.s.settings().cfg.TSIGKeys, msg, t)
}

func (p tsigProvider) Verify(msg []byte, t *dns.TSIG) error {
	want, err := tsigMAC(p.s.settings().cfg.TSIGKeys, msg, t)
	if err != nil {
		return err
	}
	got, err := hex.DecodeString(t.MAC)
	if err != nil || !hmac.Equal(want, got) {
		return dns.ErrSig
	}
	return nil
}

// tsigMAC computes the MAC of msg with the key t names, provided the
// message's algorithm is the key's.
func tsigMAC(keys map[string]schema.TSIGKey, msg []byte, t *dns.TSIG) ([]byte, error) {
	h, err := tsigHMAC(keys, t)
	if err != nil {
		return nil, err
	}
	h.Write(msg)
	return h.Sum(nil), nil
}

// tsigHMAC returns the HMAC of the key t names, provided the message's
// algorithm is the key's.
func tsigHMAC(keys map[string]schema.TSIGKey, t *dns.TSIG) (hash.Hash, error) {
	key, ok := keys[keyName(t.Hdr.Name)]
	if !ok {
		return nil, dns.ErrSecret
	}
	newHash, ok := tsigHashes[dns.Fqdn(key.Algorithm)]
	if !ok || dns.CanonicalName(t.Algorithm) != algorithmName(key.Algorithm) {
		return nil, dns.ErrKeyAlg
	}
	secret, err := base64.StdEncoding.DecodeString(key.Secret)
	if err != nil {
		return nil, dns.ErrSecret
	}
	return hmac.New(newHash, secret), nil
}

// tsigHashes are the HMAC algorithms of RFC 8945 §6, by configured name.
var tsigHashes = map[string]func() hash.Hash{
	"hmac-md5.":    md5.New,
	"hmac-sha1.":   sha1.New,
	"hmac-sha224.": sha256.New224,
	"hmac-sha256.": sha256.New,
	"hmac-sha384.": sha512.New384,
	"hmac-sha512.": sha512.New,
}

// algorithmName is the algorithm's name as it appears in TSIG records;
// MD5's carries a domain (RFC 8945 §6).
func algorithmName(configured string) string {
	if configured == "hmac-md5" {
		return dns.HmacMD5
	}
	return dns.Fqdn(configured)
}

// tsigFor returns the TSIG key name and algorithm that sign what is sent
// about zone z, such as NOTIFY; ok is false when the zone has no key.
func (st *settings) tsigFor(z servedZone) (name, algorithm string, ok bool) {
	k := z.conf.access.TSIGKey
	if k == "" {
		return "", "", false
	}
	key, found := st.cfg.TSIGKeys[keyName(k)]
	if !found {
		return "", "", false
	}
	return dns.Fqdn(keyName(k)), algorithmName(key.Algorithm), true
}

// replyBadTSIG answers a request whose signature did not verify with
// NOTAUTH and a TSIG record that says why (RFC 8945 §5.2), so that the
// client can tell a wrong key from a wrong clock:
//
//   - BADKEY (a key or algorithm this server does not have) and BADSIG
//     (a MAC that does not verify) are unsigned: the MAC is empty, the
//     time signed is the server's (§5.3.2). Nothing is signed with a key
//     the client did not prove it holds.
//   - BADTIME (the MAC verified, the time is outside the fudge) is signed
//     with the key over the request's MAC and time signed, with the
//     server's time in Other Data (§5.2.3), as Knot and BIND send it.
func (s *Server) replyBadTSIG(w dns.ResponseWriter, r *dns.Msg, st *settings, verr error) {
	if s.rateLimited(w, r, dns.RcodeNotAuth) {
		return
	}
	t := r.IsTsig()
	m := new(dns.Msg)
	m.SetRcode(r, dns.RcodeNotAuth)
	if o := r.IsEdns0(); o != nil {
		m.SetEdns0(uint16(st.udpMaxPayload()), o.Do())
	}
	now := time.Now().Unix()
	rr := &dns.TSIG{Hdr: dns.RR_Header{Name: t.Hdr.Name, Rrtype: dns.TypeTSIG, Class: dns.ClassANY},
		Algorithm: t.Algorithm, Fudge: t.Fudge, OrigId: r.Id, Error: tsigError(verr)}
	m.Extra = append(m.Extra, rr)
	var err error
	if rr.Error == dns.RcodeBadTime {
		rr.TimeSigned = t.TimeSigned
		rr.OtherLen, rr.OtherData = 6, fmt.Sprintf("%012x", now)
		err = w.WriteMsg(m) // the server's writer signs it with the request's MAC
	} else {
		// Packed here: the writer would put time signed 0 in an
		// unsigned record.
		rr.TimeSigned = uint64(now)
		var b []byte
		if b, err = m.Pack(); err == nil {
			_, err = w.Write(b)
		}
	}
	if err != nil {
		s.log.Debug("cannot send an answer", "peer", w.RemoteAddr().String(), "err", err)
	}
}

// tsigError is the TSIG error of a verification that failed with err:
// miekg/dns checks the MAC before the time, so ErrTime means a valid MAC.
func tsigError(err error) uint16 {
	switch {
	case errors.Is(err, dns.ErrTime):
		return dns.RcodeBadTime
	case errors.Is(err, dns.ErrSecret), errors.Is(err, dns.ErrKeyAlg):
		return dns.RcodeBadKey
	}
	return dns.RcodeBadSig
}
