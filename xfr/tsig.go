package xfr

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"hash"

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
	h := hmac.New(newHash, secret)
	h.Write(msg)
	return h.Sum(nil), nil
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
