package xfr

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/store"
)

// targetMsgSize is the size transfer messages aim at: big enough that
// framing costs little, small enough that a secondary buffers little. A
// message is sent once it reaches this size, so it ends up to one record
// larger.
const targetMsgSize = 16 << 10

// maxMsgRoom is the largest a message may grow to, leaving room for the
// OPT and TSIG records added when it is sent.
const maxMsgRoom = dns.MaxMsgSize - 2048

// stream writes a transfer answer as a sequence of messages of about
// targetMsgSize octets each, assembled in wire form in one buffer that
// every message reuses, signing each with TSIG when the request was
// signed.
type stream struct {
	w    dns.ResponseWriter
	req  *dns.Msg
	tsig *dns.TSIG // the request's, when it verified
	// mac, when tsig is set, is the HMAC that signs and prevMAC the MAC
	// the next message's covers: the request's, then each message's in
	// turn (RFC 8945 §5.3.1).
	mac     hash.Hash
	prevMAC []byte
	// opt is the OPT record of the first message when the request had
	// one; udpSize its size, do its DO bit.
	opt     bool
	udpSize uint16
	do      bool

	buf     []byte // the message being assembled
	head    int    // length of its header and question
	count   int    // records in buf
	names   nameWriter
	qname   string
	scratch []byte

	msgs, bytes, records int
	sent                 int // records in the messages written
}

// newStream starts the answer to req. Its first message carries an OPT
// record when req did (RFC 5936 §2.2.5: the server "SHOULD include one
// OPT RR in the first response message"; RFC 6891 §6.1.1).
func newStream(w dns.ResponseWriter, req *dns.Msg, st *settings) *stream {
	x := &stream{w: w, req: req}
	if o := req.IsEdns0(); o != nil {
		x.opt, x.udpSize, x.do = true, uint16(st.udpMaxPayload()), o.Do()
	}
	if t := req.IsTsig(); t != nil && w.TsigStatus() == nil {
		// The writer verified it with these keys; a key removed since
		// leaves the transfer unsigned, and the client will refuse it.
		mac, err := tsigHMAC(st.cfg.TSIGKeys, t)
		prev, herr := hex.DecodeString(t.MAC)
		if err == nil && herr == nil {
			x.tsig, x.mac, x.prevMAC = t, mac, prev
		}
	}
	x.buf = make([]byte, headerLen, targetMsgSize+4096)
	binary.BigEndian.PutUint16(x.buf[0:], req.Id)
	flags := uint16(1<<15) | uint16(req.Opcode&0xf)<<11 | 1<<10 // QR, opcode, AA
	if req.Opcode == dns.OpcodeQuery {
		// As dns.Msg.SetReply: RD and CD are copied.
		if req.RecursionDesired {
			flags |= 1 << 8
		}
		if req.CheckingDisabled {
			flags |= 1 << 4
		}
	}
	binary.BigEndian.PutUint16(x.buf[2:], flags)
	if len(req.Question) > 0 {
		q := req.Question[0]
		x.qname = q.Name
		binary.BigEndian.PutUint16(x.buf[4:], 1)
		var ok bool
		if x.buf, ok = x.names.escapedName(x.buf, q.Name); !ok {
			x.buf = append(x.buf, 0) // not reached: the request parsed
		}
		x.buf = binary.BigEndian.AppendUint16(x.buf, q.Qtype)
		x.buf = binary.BigEndian.AppendUint16(x.buf, q.Qclass)
	}
	x.head = len(x.buf)
	x.names.resetMessage(x.qname)
	return x
}

// add queues rr, built by the caller (the SOA, configured NS records).
func (x *stream) add(rr dns.RR) error {
	if soa, ok := rr.(*dns.SOA); ok {
		for {
			if err := x.room(); err != nil {
				return err
			}
			mark := len(x.buf)
			b, ok := x.names.appendSOA(x.buf, soa)
			if !ok {
				break // packed in full below
			}
			if done, err := x.placed(b, mark); done || err != nil {
				return err
			}
		}
	}
	if n := dns.Len(rr) + 64; cap(x.scratch) < n {
		x.scratch = make([]byte, n)
	}
	n, err := dns.PackRR(rr, x.scratch[:cap(x.scratch)], 0, nil, false)
	if err != nil {
		return err
	}
	for {
		if err := x.room(); err != nil {
			return err
		}
		mark := len(x.buf)
		if done, err := x.placed(append(x.buf, x.scratch[:n]...), mark); done || err != nil {
			return err
		}
	}
}

// errBadRecord marks the errors of records that cannot be served: the
// transfer skips them.
var errBadRecord = errors.New("record")

// errTooLarge is a record that does not fit in a message of its own.
var errTooLarge = errors.New("a record does not fit in a message")

// addRecord queues a stored record with the given TTL. A record that
// cannot be served is not queued and its error wraps errBadRecord.
func (x *stream) addRecord(r *store.Record, ttl uint32) error {
	for {
		if err := x.room(); err != nil {
			return err
		}
		mark := len(x.buf)
		b, err := x.names.appendStored(x.buf, r, ttl)
		if err != nil {
			return err
		}
		if done, err := x.placed(b, mark); done || err != nil {
			return err
		}
	}
}

// room sends the message when it has reached its target size.
func (x *stream) room() error {
	if x.count > 0 && len(x.buf) >= targetMsgSize {
		return x.flush()
	}
	return nil
}

// placed keeps b, the message with one more record from mark on, unless
// the record takes it past maxMsgRoom: then the message is sent without
// it and done is false, for the caller to write the record again into
// the next message (whose compression starts afresh).
func (x *stream) placed(b []byte, mark int) (done bool, err error) {
	if len(b) <= maxMsgRoom {
		x.buf = b
		x.count++
		x.records++
		return true, nil
	}
	x.buf = b[:mark]
	if x.count == 0 {
		return false, errTooLarge
	}
	return false, x.flush()
}

// flush sends the queued records as one message.
func (x *stream) flush() error {
	if x.count == 0 {
		return nil
	}
	binary.BigEndian.PutUint16(x.buf[6:], uint16(x.count))
	binary.BigEndian.PutUint16(x.buf[10:], 0)
	if x.opt && x.msgs == 0 {
		// OPT (RFC 6891 §6.1.2): root owner, the payload size as class,
		// extended rcode and version 0, the DO bit, no options.
		x.buf = append(x.buf, 0, 0, 41)
		x.buf = binary.BigEndian.AppendUint16(x.buf, x.udpSize)
		var flags uint16
		if x.do {
			flags = 1 << 15
		}
		x.buf = append(x.buf, 0, 0)
		x.buf = binary.BigEndian.AppendUint16(x.buf, flags)
		x.buf = append(x.buf, 0, 0)
		binary.BigEndian.PutUint16(x.buf[10:], 1)
	}
	if x.tsig != nil {
		x.sign()
	}
	x.bytes += len(x.buf)
	_, err := x.w.Write(x.buf)
	x.msgs++
	if err == nil {
		x.sent += x.count
	}
	x.buf, x.count = x.buf[:x.head], 0
	x.names.resetMessage(x.qname)
	return err
}

// sign appends a TSIG record to the message (RFC 8945 §4.3): its MAC
// covers the previous MAC, the message, and the TSIG variables — all of
// them in the first message, only the timers in the later ones
// (§5.3.1), which each carry a signature here. The request's key name and
// algorithm are repeated as the request wrote them; the MAC covers their
// canonical form.
func (x *stream) sign() {
	t, now := x.tsig, uint64(time.Now().Unix())
	fudge := t.Fudge
	if fudge == 0 {
		fudge = 300 // RFC 8945 §10, as miekg/dns signs
	}
	x.mac.Reset()
	var n [2]byte
	binary.BigEndian.PutUint16(n[:], uint16(len(x.prevMAC)))
	x.mac.Write(n[:])
	x.mac.Write(x.prevMAC)
	x.mac.Write(x.buf)
	v := x.scratch[:0]
	if x.msgs == 0 {
		v, _ = x.names.escapedName(v, dns.CanonicalName(t.Hdr.Name))
		v = binary.BigEndian.AppendUint16(v, dns.ClassANY)
		v = binary.BigEndian.AppendUint32(v, 0) // TTL
		v, _ = x.names.escapedName(v, dns.CanonicalName(t.Algorithm))
	}
	v = appendTimers(v, now, fudge)
	if x.msgs == 0 {
		v = append(v, 0, 0, 0, 0) // error, other length
	}
	x.mac.Write(v)
	x.prevMAC = x.mac.Sum(x.prevMAC[:0])
	x.scratch = v

	b := x.buf
	b, _ = x.names.escapedName(b, t.Hdr.Name)
	b = binary.BigEndian.AppendUint16(b, dns.TypeTSIG)
	b = binary.BigEndian.AppendUint16(b, dns.ClassANY)
	b = binary.BigEndian.AppendUint32(b, 0)
	b = append(b, 0, 0) // RDLENGTH, set below
	rdata := len(b)
	b, _ = x.names.escapedName(b, t.Algorithm)
	b = appendTimers(b, now, fudge)
	b = binary.BigEndian.AppendUint16(b, uint16(len(x.prevMAC)))
	b = append(b, x.prevMAC...)
	b = binary.BigEndian.AppendUint16(b, x.req.Id) // original ID
	b = append(b, 0, 0, 0, 0)                      // error, other length
	binary.BigEndian.PutUint16(b[rdata-2:], uint16(len(b)-rdata))
	binary.BigEndian.PutUint16(b[10:], binary.BigEndian.Uint16(b[10:])+1)
	x.buf = b
}

// appendTimers appends TSIG's time signed (48 bits) and fudge.
func appendTimers(b []byte, now uint64, fudge uint16) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(now>>32))
	b = binary.BigEndian.AppendUint32(b, uint32(now))
	return binary.BigEndian.AppendUint16(b, fudge)
}
