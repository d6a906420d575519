package xfr

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"
	"weak"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/store"
)

// The packed-answer cache keeps the answers to plain queries as the
// octets that were sent, so that the same question asked again is
// answered by a copy with the request's ID, RD and CD patched in, without
// parsing the request, looking records up or packing a message.
//
// What makes a hit right:
//
//   - the cache belongs to one settings value: SetConfig starts an empty
//     one, so a new configuration is never answered from the old;
//   - an entry remembers the zone and the snapshot it was answered from
//     (weakly: an entry does not keep an old snapshot alive); a hit
//     finds the question's zone again, as the full path does, and takes
//     the entry only when that is the same snapshot, so a new serial is
//     answered from the new records;
//   - the key is everything else the answer depends on: the question
//     (lower-cased), whether the request had EDNS0 and its DO bit, and
//     the size the answer was cut to (the transport and the client's
//     buffer size);
//   - the request is read directly from the datagram (quickQuery) and
//     only when it is a shape the full path answers as a query: one
//     question, no other records than an OPT without options, opcode
//     QUERY, class IN. Anything else, or anything unsure, takes the full
//     path, whose FORMERR rules stay the only ones;
//   - an answer is cached from a request with a lower-case question,
//     and serves requests spelled in other cases only when answering an
//     upper-cased question gave the same octets apart from the question
//     (checked when the first request spelled otherwise comes, so that
//     most entries never pay for it): the names that echo the question
//     then point at it, and no other name points into it, so patching in
//     the request's spelling is what the full path would have sent.
//     Otherwise the entry serves lower-case requests only.
//
// SOA and ANY questions are not cached: a secondary's SOA query is
// tracked from the answer (unpolled.go). Transfers, NOTIFY, signed
// requests, REFUSED and SERVFAIL answers are not either.

// Bounds of one cache: answerCacheEntries answers and answerCacheBytes
// octets of keys and answers at most, split over answerShards shards
// (so that two cores seldom wait for the same lock). A full shard drops
// entries it picks at random to make room.
const (
	answerCacheEntries = 65536
	answerCacheBytes   = 32 << 20
	answerShards       = 16
)

// answerEntry is one cached answer. It never changes once stored but
// for spelling, which is learnt once.
type answerEntry struct {
	// key is the entry's key and msg the answer as sent, to the request
	// that filled it: one allocation, so that the octets a hit compares
	// and the ones it copies come in together.
	key   []byte
	msg   []byte
	rcode int
	qEnd  int    // where the question ends in msg
	qname string // the question, absolute and lower-case, as the full path looks it up
	zone  string
	snap  weak.Pointer[store.Snapshot]
	// fixed says that the configuration alone puts qname in zone (a
	// forward or the catalog zone), so that a hit need not find the zone
	// again, only its snapshot: a reverse zone the store creates may
	// take over a name, a configured one only with a new configuration,
	// which has a new cache.
	fixed bool
	// spelling says whether it serves any spelling of the question or
	// lower case only; unknown until a request spelled otherwise came.
	spelling atomic.Uint32
}

// Values of answerEntry.spelling.
const (
	spellingUnknown = iota
	spellingAny
	spellingLower
)

// answerCache is one configuration's cache of packed answers.
type answerCache struct {
	seed   maphash.Seed
	shards [answerShards]answerShard
}

// answerShard is one part of the cache. mu guards entries and bytes.
//
// entries is keyed by the key's hash, which picks the shard too, and
// each entry holds its key: a map of strings hashed the key again and
// read each key it compared from an allocation of its own, which with
// the entry and its answer made a hit four cache misses and more (a
// tenth of the server's CPU per query at 100k records, all hits). Two
// keys of one hash are told apart by the key an entry holds: the one
// put last stays, and the other misses.
type answerShard struct {
	mu      sync.Mutex
	entries map[uint64]*answerEntry
	bytes   int
}

func newAnswerCache() *answerCache {
	c := &answerCache{seed: maphash.MakeSeed()}
	for i := range c.shards {
		c.shards[i].entries = make(map[uint64]*answerEntry)
	}
	return c
}

func (c *answerCache) shard(h uint64) *answerShard {
	return &c.shards[h%answerShards]
}

// get returns the entry under key, or nil.
func (c *answerCache) get(key []byte) *answerEntry {
	h := maphash.Bytes(c.seed, key)
	sh := c.shard(h)
	sh.mu.Lock()
	e := sh.entries[h]
	sh.mu.Unlock()
	if e == nil || string(e.key) != string(key) {
		return nil
	}
	return e
}

// put stores e under key, its answer e.msg copied (with the key) into
// memory of its own, making room within the bounds first.
func (c *answerCache) put(key []byte, e *answerEntry) {
	size := entrySize(len(key), len(e.msg), e)
	if size > answerCacheBytes/answerShards {
		return
	}
	buf := make([]byte, len(key)+len(e.msg))
	copy(buf, key)
	copy(buf[len(key):], e.msg)
	e.key, e.msg = buf[:len(key):len(key)], buf[len(key):]
	h := maphash.Bytes(c.seed, key)
	sh := c.shard(h)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if old, ok := sh.entries[h]; ok {
		sh.bytes -= entrySize(len(old.key), len(old.msg), old)
		delete(sh.entries, h)
	}
	for k, old := range sh.entries {
		if len(sh.entries) < answerCacheEntries/answerShards && sh.bytes+size <= answerCacheBytes/answerShards {
			break
		}
		sh.bytes -= entrySize(len(old.key), len(old.msg), old)
		delete(sh.entries, k)
	}
	sh.entries[h] = e
	sh.bytes += size
}

// entrySize is what an entry counts against the octet bound: its key,
// answer and question, plus a guess at the map's and struct's overhead.
func entrySize(key, msg int, e *answerEntry) int {
	return key + msg + len(e.qname) + 128
}

// len returns the entries and octets held, for tests.
func (c *answerCache) len() (entries, bytes int) {
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		entries += len(sh.entries)
		bytes += sh.bytes
		sh.mu.Unlock()
	}
	return entries, bytes
}

// quickQuery is what the cache needs of a request, read from its octets.
type quickQuery struct {
	qEnd  int  // where the question ends
	lower bool // the question has no upper-case letter
	// key is the lower-cased question name (wire form), type, the size
	// limit of the answer and the EDNS0 shape; keyLen its length.
	key    [maxNameWire + 5]byte
	keyLen int
}

const maxNameWire = 255

// qnameOctet maps an octet of a question name to its lower case, and
// those that the full path would escape (all but letters, digits, '-'
// and '_') to 0: a table costs less than comparisons per octet.
var qnameOctet = func() (t [256]byte) {
	for c := range 256 {
		switch {
		case c >= 'A' && c <= 'Z':
			t[c] = byte(c) + 'a' - 'A'
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_':
			t[c] = byte(c)
		}
	}
	return t
}()

// EDNS0 shape bits in a key.
const (
	keyEDNS = 1 << iota
	keyDO
)

// parseQuick reads msg as a plain query to be answered within the
// transport's limit (dns.MaxMsgSize for TCP, 0 for UDP: the client's
// EDNS0 size decides), and reports false when it is anything else or
// anything it is not sure of: the full path answers that.
func (st *settings) parseQuick(msg []byte, limit int, q *quickQuery) bool {
	if len(msg) < headerLen+5 {
		return false
	}
	flags := binary.BigEndian.Uint16(msg[2:])
	if flags&(qrBit|0x7800) != 0 { // a response, or an opcode other than QUERY
		return false
	}
	if binary.BigEndian.Uint16(msg[4:]) != 1 || binary.BigEndian.Uint16(msg[6:]) != 0 || binary.BigEndian.Uint16(msg[8:]) != 0 {
		return false
	}
	ar := binary.BigEndian.Uint16(msg[10:])
	if ar > 1 {
		return false
	}
	off, n, upper := headerLen, 0, byte(0)
	for {
		l := int(msg[off])
		if l == 0 {
			break
		}
		if l > 63 || off+1+l >= len(msg) || n+1+l+1 > maxNameWire {
			return false
		}
		q.key[n] = byte(l)
		key := q.key[n+1 : n+1+l]
		for i, c := range msg[off+1 : off+1+l] {
			lc := qnameOctet[c]
			if lc == 0 {
				return false // the full path escapes it; rare enough to leave to it
			}
			key[i] = lc
			upper |= c ^ lc
		}
		n += 1 + l
		off += 1 + l
	}
	lower := upper == 0
	if n == 0 {
		return false // the root: no zone of ours
	}
	q.key[n] = 0
	n++
	off++
	if off+4 > len(msg) {
		return false
	}
	qtype := binary.BigEndian.Uint16(msg[off:])
	switch qtype {
	case dns.TypeAXFR, dns.TypeIXFR, dns.TypeSOA, dns.TypeANY:
		return false
	}
	if binary.BigEndian.Uint16(msg[off+2:]) != dns.ClassINET {
		return false
	}
	q.qEnd = off + 4
	shape := byte(0)
	if ar == 0 {
		if q.qEnd != len(msg) {
			return false
		}
		if limit == 0 {
			limit = dns.MinMsgSize
		}
	} else {
		// An OPT owned by the root, version 0, without options, ending
		// the message.
		o := msg[q.qEnd:]
		if len(o) != 11 || o[0] != 0 || binary.BigEndian.Uint16(o[1:]) != dns.TypeOPT || o[6] != 0 || o[9] != 0 || o[10] != 0 {
			return false
		}
		shape = keyEDNS
		if o[7]&0x80 != 0 {
			shape |= keyDO
		}
		if limit == 0 {
			limit = min(max(int(binary.BigEndian.Uint16(o[3:])), dns.MinMsgSize), st.udpMaxPayload())
		}
	}
	binary.BigEndian.PutUint16(q.key[n:], qtype)
	binary.BigEndian.PutUint16(q.key[n+2:], uint16(limit))
	q.key[n+4] = shape
	q.keyLen = n + 5
	q.lower = lower
	return true
}

// cached appends to out the cached answer to msg (parsed as q), with the
// request's ID, RD, CD and question spelling, and returns it with its
// rcode; ok is false on a miss.
func (s *Server) cached(st *settings, q *quickQuery, msg, out []byte) (ans []byte, rcode int, ok bool) {
	e := st.answers.get(q.key[:q.keyLen])
	if e == nil || !q.lower && e.spelling.Load() != spellingAny || e.qEnd != q.qEnd {
		return nil, 0, false
	}
	var snap *store.Snapshot
	if e.fixed {
		snap = s.src.Snapshot(e.zone)
	} else if z, found := st.findLower(s.src, e.qname); found && z.name == e.zone {
		snap = z.snap
	}
	if snap == nil || e.snap.Value() != snap {
		return nil, 0, false // a new serial, or another zone now holds the name
	}
	out = append(out[:0], e.msg...)
	copy(out, msg[:2])                                 // ID
	out[2] = out[2]&^0x01 | msg[2]&0x01                // RD
	out[3] = out[3]&^0x10 | msg[3]&0x10                // CD
	copy(out[headerLen:q.qEnd], msg[headerLen:q.qEnd]) // the question as spelled
	return out, e.rcode, true
}

// slipAnswer appends to out what rate limiting sends in place of an
// answer to msg (parsed as q): the header with TC and the question, as
// rateLimited builds it with SetReply.
func slipAnswer(msg []byte, q *quickQuery, out []byte) []byte {
	out = append(out[:0], msg[:q.qEnd]...)
	out[2] = 0x80 | 0x02 | msg[2]&0x01 // QR, TC, RD
	out[3] = msg[3] & 0x10             // CD
	binary.BigEndian.PutUint16(out[6:], 0)
	binary.BigEndian.PutUint16(out[8:], 0)
	binary.BigEndian.PutUint16(out[10:], 0)
	return out
}

// answerFiller is a ResponseWriter whose answers the cache may keep.
// fill returns the request as parseQuick read it with st and the octets
// last written, or nil when the request is not one the cache takes.
type answerFiller interface {
	fill(st *settings) (q *quickQuery, sent []byte)
}

// remember caches sent, the answer m to r (read as q) from zone z, when
// it can serve the same question again: from a lower-case request, as a
// new entry; from another spelling, by finding out which spellings the
// entry of the same answer serves.
func (s *Server) remember(st *settings, w dns.ResponseWriter, q *quickQuery, r, m *dns.Msg, z servedZone, sent []byte) {
	if z.snap == nil || m.Rcode != dns.RcodeSuccess && m.Rcode != dns.RcodeNameError ||
		len(sent) < q.qEnd || binary.BigEndian.Uint16(sent) != r.Id {
		return
	}
	if !q.lower {
		if e := st.answers.get(q.key[:q.keyLen]); e != nil && e.spelling.Load() == spellingUnknown &&
			e.qEnd == q.qEnd && e.snap.Value() == z.snap {
			s.learnSpelling(st, w, r, e)
		}
		return
	}
	qname := strings.ToLower(r.Question[0].Name)
	e := &answerEntry{msg: sent, rcode: m.Rcode, qEnd: q.qEnd,
		qname: qname, zone: z.name, snap: weak.Make(z.snap), fixed: !isReverse(qname)}
	st.answers.put(q.key[:q.keyLen], e)
}

// learnSpelling sets which spellings e, the cached answer to r's
// question, serves: any when the answer to the question upper-cased
// differs from it in the question alone (and in the header's ID, RD and
// CD, which are the request's), lower case only otherwise. An upper-case
// question matches none of the lower-case names of the answer, so the
// same octets mean that no name in it points into the question but those
// that echo it whole.
func (s *Server) learnSpelling(st *settings, w dns.ResponseWriter, r *dns.Msg, e *answerEntry) {
	r2 := *r
	r2.Question = []dns.Question{r.Question[0]}
	r2.Question[0].Name = strings.ToUpper(r.Question[0].Name)
	m2, z2 := s.answer(&r2, st)
	spelling := uint32(spellingLower)
	if z2.snap != nil && e.snap.Value() == z2.snap {
		st.shape(m2, &r2, st.sizeLimit(w, &r2))
		b, err := m2.Pack()
		if err == nil && len(b) == len(e.msg) && b[2]&^0x01 == e.msg[2]&^0x01 && b[3]&^0x10 == e.msg[3]&^0x10 &&
			bytes.Equal(b[4:headerLen], e.msg[4:headerLen]) && bytes.Equal(b[e.qEnd:], e.msg[e.qEnd:]) {
			spelling = spellingAny
		}
	}
	e.spelling.Store(spelling)
}
