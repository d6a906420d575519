package xfr

import (
	"net"
	"time"
)

// writeTimeout bounds each write to a TCP client. miekg/dns sets no write
// deadline, so without one a secondary that stops reading in the middle
// of a transfer would hold its goroutine and snapshot for ever.
const writeTimeout = 30 * time.Second

// deadlineListener hands out connections whose writes time out.
type deadlineListener struct{ net.Listener }

func (l deadlineListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return deadlineConn{c}, nil
}

type deadlineConn struct{ net.Conn }

func (c deadlineConn) Write(b []byte) (int, error) {
	if err := c.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil {
		return 0, err
	}
	return c.Conn.Write(b)
}
