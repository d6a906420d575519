//go:build !linux

package xfr

import (
	"net"
	"syscall"

	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
)

// setBuffers asks for socket buffers of rcv and snd octets. Outside
// Linux the size granted cannot be read back portably; it reports what
// was asked for when the system took it.
func setBuffers(conn *net.UDPConn, rcv, snd int) (gotRcv, gotSnd int, err error) {
	if err = conn.SetReadBuffer(rcv); err == nil {
		gotRcv = rcv
	}
	if serr := conn.SetWriteBuffer(snd); serr == nil {
		gotSnd = snd
	} else if err == nil {
		err = serr
	}
	return gotRcv, gotSnd, err
}

// udpControl reads, on a socket bound to the unspecified address, the
// address each datagram was sent to, which the answer must come from.
// The kernel's drop count is Linux's alone.
type udpControl struct {
	pktinfo, v6 bool
}

func newControl(conn *net.UDPConn) (udpControl, error) {
	a, ok := conn.LocalAddr().(*net.UDPAddr)
	if !ok || !a.IP.IsUnspecified() {
		return udpControl{}, nil
	}
	c := udpControl{pktinfo: true, v6: a.IP.To4() == nil}
	if c.v6 {
		return c, ipv6.NewPacketConn(conn).SetControlMessage(ipv6.FlagDst|ipv6.FlagInterface, true)
	}
	return c, ipv4.NewPacketConn(conn).SetControlMessage(ipv4.FlagDst|ipv4.FlagInterface, true)
}

func (udpControl) drops([]byte) (uint32, bool) { return 0, false }

// read reads one datagram into ps[0].
func (udpControl) read(conn *net.UDPConn, ps []*udpPacket) (int, error) {
	p := ps[0]
	n, oobn, _, from, err := conn.ReadMsgUDPAddrPort(p.buf[:], p.oob[:])
	if err != nil {
		return 0, err
	}
	p.n, p.oobn, p.from = n, oobn, from
	return 1, nil
}

// reply appends to out the control message that sends an answer from
// the address the request (with control messages oob) was sent to.
func (c udpControl) reply(oob, out []byte) []byte {
	if !c.pktinfo {
		return out
	}
	if c.v6 {
		var cm ipv6.ControlMessage
		if cm.Parse(oob) != nil || cm.Dst == nil {
			return out
		}
		return append(out, (&ipv6.ControlMessage{Src: cm.Dst}).Marshal()...)
	}
	var cm ipv4.ControlMessage
	if cm.Parse(oob) != nil || cm.Dst == nil {
		return out
	}
	return append(out, (&ipv4.ControlMessage{Src: cm.Dst}).Marshal()...)
}

// udpBatchWriter is one worker's room for a batched write: none here.
type udpBatchWriter struct{}

// write sends the answers of ps one at a time, each from the address
// its request was sent to.
func (c udpControl) write(conn *net.UDPConn, _ *udpBatchWriter, ps []*udpPacket) {
	for _, p := range ps {
		if p.answer != nil {
			_, _, _ = conn.WriteMsgUDPAddrPort(p.answer, c.reply(p.oob[:p.oobn], p.replyOOB[:0]), p.from)
		}
	}
}

// reusePortSpreads is false: outside Linux, sockets sharing an address
// do not share its datagrams evenly (on the BSDs the last one bound
// takes them all), so ListenUDP binds one.
const reusePortSpreads = false

func reusePort(_, _ string, _ syscall.RawConn) error { return nil }
