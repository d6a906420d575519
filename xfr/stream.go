package xfr

import (
	"time"

	"github.com/miekg/dns"
)

// targetMsgSize is the size transfer messages aim at: big enough that
// framing costs little, small enough that a secondary buffers little.
const targetMsgSize = 16 << 10

// stream writes a transfer answer as a sequence of messages of about
// targetMsgSize octets each, with name compression, signing each with
// TSIG when the request was signed.
type stream struct {
	w    dns.ResponseWriter
	req  *dns.Msg
	tsig *dns.TSIG // the request's, when it verified
	// opt is the OPT record of the first message when the request had
	// one; udpSize its size, do its DO bit.
	opt     bool
	udpSize uint16
	do      bool

	cur   []dns.RR
	est   int     // uncompressed size of cur
	ratio float64 // packed / uncompressed size of the last message

	msgs, bytes, records int
	sent                 int // records in the messages written
}

// newStream starts the answer to req. Its first message carries an OPT
// record when req did (RFC 5936 §2.2.5: the server "SHOULD include one
// OPT RR in the first response message"; RFC 6891 §6.1.1).
func newStream(w dns.ResponseWriter, req *dns.Msg, st *settings) *stream {
	x := &stream{w: w, req: req, ratio: 0.5}
	if o := req.IsEdns0(); o != nil {
		x.opt, x.udpSize, x.do = true, uint16(st.udpMaxPayload()), o.Do()
	}
	if t := req.IsTsig(); t != nil && w.TsigStatus() == nil {
		x.tsig = t
	}
	return x
}

// add queues rr, sending the queued records first when rr would take the
// message past its target size.
func (x *stream) add(rr dns.RR) error {
	n := dns.Len(rr)
	limit := min(int(targetMsgSize/x.ratio), dns.MaxMsgSize-2048)
	if len(x.cur) > 0 && x.est+n > limit {
		if err := x.flush(); err != nil {
			return err
		}
	}
	x.cur = append(x.cur, rr)
	x.est += n
	x.records++
	return nil
}

// flush sends the queued records as one message.
func (x *stream) flush() error {
	if len(x.cur) == 0 {
		return nil
	}
	m := new(dns.Msg)
	m.SetReply(x.req)
	m.Authoritative = true
	m.Compress = true
	m.Answer = x.cur
	if x.opt && x.msgs == 0 {
		m.SetEdns0(x.udpSize, x.do)
	}
	var err error
	if x.tsig != nil {
		m.SetTsig(x.tsig.Hdr.Name, x.tsig.Algorithm, x.tsig.Fudge, time.Now().Unix())
		x.bytes += m.Len()
		err = x.w.WriteMsg(m)
		// RFC 8945 §5.3.1: later messages sign only the timers after the
		// previous MAC, which the writer chains.
		x.w.TsigTimersOnly(true)
	} else {
		var b []byte
		if b, err = m.Pack(); err == nil {
			x.bytes += len(b)
			x.ratio = max(float64(len(b))/float64(x.est), 0.05)
			_, err = x.w.Write(b)
		}
	}
	x.msgs++
	if err == nil {
		x.sent += len(x.cur)
	}
	x.cur, x.est = x.cur[:0], 0
	return err
}
