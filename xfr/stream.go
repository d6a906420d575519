package xfr

import (
	"encoding/binary"
	"errors"
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
		x.tsig = t
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
func (x *stream) addRecord(r store.Record, ttl uint32) error {
	for {
		if err := x.room(); err != nil {
			return err
		}
		mark := len(x.buf)
		b, err := x.names.appendRecord(x.buf, r, ttl)
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
	var err error
	if x.tsig != nil {
		err = x.writeSigned()
	} else {
		x.bytes += len(x.buf)
		_, err = x.w.Write(x.buf)
	}
	x.msgs++
	if err == nil {
		x.sent += x.count
	}
	x.buf, x.count = x.buf[:x.head], 0
	x.names.resetMessage(x.qname)
	return err
}

// writeSigned sends the message through the writer's TSIG signing, which
// chains each message's MAC to the one before (RFC 8945 §5.3.1). It
// parses the assembled message back into a dns.Msg for that: signed
// transfers are rare next to unsigned ones, and the writer keeps the
// chain's state.
func (x *stream) writeSigned() error {
	m := new(dns.Msg)
	if err := m.Unpack(x.buf); err != nil {
		return err
	}
	m.Compress = true
	m.SetTsig(x.tsig.Hdr.Name, x.tsig.Algorithm, x.tsig.Fudge, time.Now().Unix())
	x.bytes += m.Len()
	err := x.w.WriteMsg(m)
	// RFC 8945 §5.3.1: later messages sign only the timers after the
	// previous MAC, which the writer chains.
	x.w.TsigTimersOnly(true)
	return err
}
