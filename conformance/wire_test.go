package conformance

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"time"
)

// target is one server the queries go to.
type target struct {
	name string
	addr string
}

// replyTimeout is how long a server may take to answer before its
// silence counts as "no answer". Loopback answers come in microseconds;
// the margin is for cnsd under -race on a busy machine.
const replyTimeout = 1500 * time.Millisecond

// exchange sends pkt to addr over UDP or TCP (in one frame of its own
// length) and returns the raw reply; nil, without error, when the server
// sent nothing within replyTimeout or closed the connection.
func exchange(addr string, pkt []byte, tcp bool) ([]byte, error) {
	if tcp {
		return exchangeTCP(addr, pkt)
	}
	c, err := net.Dial("udp", addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(replyTimeout))
	if _, err := c.Write(pkt); err != nil {
		return nil, err
	}
	buf := make([]byte, 65535)
	n, err := c.Read(buf)
	if isSilence(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return buf[:n], nil
}

func exchangeTCP(addr string, pkt []byte) ([]byte, error) {
	c, err := net.DialTimeout("tcp", addr, replyTimeout)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(replyTimeout))
	frame := binary.BigEndian.AppendUint16(nil, uint16(len(pkt)))
	if _, err := c.Write(append(frame, pkt...)); err != nil {
		return nil, nil // the server closed before reading it all
	}
	var size [2]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		if isSilence(err) {
			return nil, nil
		}
		return nil, err
	}
	buf := make([]byte, binary.BigEndian.Uint16(size[:]))
	if _, err := io.ReadFull(c, buf); err != nil {
		if isSilence(err) {
			return nil, nil
		}
		return nil, err
	}
	return buf, nil
}

// isSilence reports whether err means the server chose not to answer:
// a timeout, or a connection it closed or reset.
func isSilence(err error) bool {
	var ne net.Error
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || (errors.As(err, &ne) && ne.Timeout()) ||
		isReset(err)
}

func isReset(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "read"
}

func addrPort(a net.Addr) netip.AddrPort {
	return netip.MustParseAddrPort(a.String())
}
