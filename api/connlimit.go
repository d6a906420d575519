package api

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// refusalTimeout bounds the time spent answering a connection over the
// cap: writing the 429 and reading what the client sent meanwhile.
const refusalTimeout = time.Second

// connLimiter is a listener that serves at most cap connections at once.
// A connection over the cap is answered 429 TooManyRequests (with an
// Error body) and closed rather than left waiting in the kernel's
// backlog, so that the client learns why at once.
type connLimiter struct {
	net.Listener
	slots    chan struct{} // one element per connection served
	refusing chan struct{} // one element per refusal being written
	refusal  []byte        // the whole 429 answer
}

// limitListener caps l at max connections; max <= 0 means no cap.
func limitListener(l net.Listener, max int) net.Listener {
	if max <= 0 {
		return l
	}
	body, _ := json.Marshal(Error{Code: "TooManyRequests",
		Message: fmt.Sprintf("cnsd serves at most %d API connections at once; try again", max)})
	answer := fmt.Sprintf("HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"+
		"Retry-After: 1\r\nConnection: close\r\n\r\n%s", len(body), body)
	return &connLimiter{Listener: l, slots: make(chan struct{}, max), refusing: make(chan struct{}, max),
		refusal: []byte(answer)}
}

// Accept returns the next connection within the cap, refusing those
// over it meanwhile.
func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return &limitedConn{Conn: c, release: sync.OnceFunc(func() { <-l.slots })}, nil
		default:
		}
		select {
		case l.refusing <- struct{}{}:
			go l.refuse(c)
		default:
			c.Close() // a flood: not even an answer
		}
	}
}

// refuse answers c with 429 and closes it. The client's request is read
// (and dropped) after the answer so that closing does not reset the
// connection before the client has read it.
func (l *connLimiter) refuse(c net.Conn) {
	defer func() { <-l.refusing }()
	defer c.Close()
	c.SetDeadline(time.Now().Add(refusalTimeout))
	if _, err := c.Write(l.refusal); err != nil {
		return
	}
	drain(c)
}

// drain half-closes c after an answer and reads (and drops) what the
// client still sends until it closes too, refusalTimeout passes or
// MaxBodyBytes are read.
func drain(c net.Conn) {
	c.SetDeadline(time.Now().Add(refusalTimeout))
	closeWrite(c)
	io.Copy(io.Discard, io.LimitReader(c, MaxBodyBytes))
}

// closeWrite half-closes c when it can (a TCP connection can).
func closeWrite(c net.Conn) error {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// limitedConn gives its slot back when closed.
type limitedConn struct {
	net.Conn
	release func()
}

// CloseWrite half-closes the connection, as net/http does before it
// closes one whose request it has not read whole.
func (c *limitedConn) CloseWrite() error { return closeWrite(c.Conn) }

func (c *limitedConn) Close() error {
	c.release()
	return c.Conn.Close()
}
