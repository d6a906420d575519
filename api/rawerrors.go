package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
)

// net/http answers a request it cannot read (a malformed request line or
// header, headers over MaxHeaderBytes, an unsupported protocol version or
// transfer encoding) itself, before any handler runs: (*conn).serve
// writes a canned plain-text answer straight to the connection, in one
// Write, as
//
//	HTTP/1.1 <status> <text>[: <detail>] + rawErrorHeaders + <status> <text>[: <detail>]
//
// or, for 501, with "Unsupported transfer encoding" as the body. There is
// no hook for it, so jsonErrorListener's connections recognise exactly
// those writes and send an Error body in their place, like every other
// error of the API.
//
// The match is strict, so that nothing else is rewritten: the whole
// Write must be the canned answer, with no Date or Content-Length header
// (net/http puts both on every answer a handler writes unless the
// handler deletes them, which cnsd's never do), and its body must repeat
// its status line. Any other Write, a normal answer on a keep-alive
// connection included, goes through unchanged after a comparison of its
// first ten bytes (error answers: of at most maxRawError bytes). Should a later Go change the canned text, the answer
// stays net/http's plain text; TestRawErrors notices.
const rawErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// net/http also answers an Expect header other than 100-continue itself,
// through the response writer and so with a Date, as 417 with no body:
// expectFailed starts that answer and expectFailedEnd ends it. No handler
// of cnsd answers 417, so every 417 of that form is net/http's.
const (
	expectFailed    = "HTTP/1.1 417 Expectation Failed\r\n"
	expectFailedEnd = "\r\nContent-Length: 0\r\n\r\n"
)

// maxRawError bounds the length of a canned answer; longer writes are
// never one.
const maxRawError = 512

// jsonErrorListener gives its connections JSON answers for the requests
// net/http refuses itself.
type jsonErrorListener struct {
	net.Listener
	maxHeaderBytes int // as the http.Server has it, for the 431 message
}

// jsonErrors wraps l so that net/http's own error answers are Error
// bodies; maxHeaderBytes is the server's MaxHeaderBytes.
func jsonErrors(l net.Listener, maxHeaderBytes int) net.Listener {
	if maxHeaderBytes <= 0 {
		maxHeaderBytes = http.DefaultMaxHeaderBytes
	}
	return &jsonErrorListener{Listener: l, maxHeaderBytes: maxHeaderBytes}
}

func (l *jsonErrorListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &jsonErrorConn{Conn: c, maxHeaderBytes: l.maxHeaderBytes}, nil
}

// jsonErrorConn rewrites net/http's canned error answers to Error
// bodies.
type jsonErrorConn struct {
	net.Conn
	maxHeaderBytes int
	rewrote        atomic.Bool // an error answer was sent: Close lingers
}

func (c *jsonErrorConn) Write(p []byte) (int, error) {
	status, msg, ok := rawError(p, c.maxHeaderBytes)
	if !ok {
		return c.Conn.Write(p)
	}
	c.rewrote.Store(true)
	if _, err := c.Conn.Write(jsonAnswer(status, msg)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// CloseWrite half-closes the connection when the one below can, as
// net/http does before it closes after a 431.
func (c *jsonErrorConn) CloseWrite() error { return closeWrite(c.Conn) }

// Close closes the connection; after an error answer, it first reads
// (and drops) what the client still sends, for at most refusalTimeout,
// so that closing does not reset the connection before the client has
// read the answer.
func (c *jsonErrorConn) Close() error {
	if c.rewrote.Load() {
		drain(c.Conn)
	}
	return c.Conn.Close()
}

// rawError reports whether p is one of net/http's canned error answers,
// and if so the status and the message of the Error body to send
// instead.
func rawError(p []byte, maxHeaderBytes int) (status int, msg string, ok bool) {
	const proto = "HTTP/1.1 "
	if len(p) < len(proto)+4 || len(p) > maxRawError || string(p[:len(proto)]) != proto ||
		(p[len(proto)] != '4' && p[len(proto)] != '5') {
		return 0, "", false
	}
	if bytes.HasPrefix(p, []byte(expectFailed)) && bytes.HasSuffix(p, []byte(expectFailedEnd)) {
		return http.StatusExpectationFailed, "unsupported Expect header: the API knows only 100-continue", true
	}
	line, body, found := bytes.Cut(p[len(proto):], []byte(rawErrorHeaders))
	if !found || len(line) < 5 || line[3] != ' ' {
		return 0, "", false
	}
	status = int(line[0]-'0')*100 + int(line[1]-'0')*10 + int(line[2]-'0')
	text := http.StatusText(status)
	reason, detail, hasDetail := strings.Cut(string(line[4:]), ": ")
	switch {
	case text == "" || reason != text:
		return 0, "", false
	case status == http.StatusNotImplemented && !hasDetail && string(body) == "Unsupported transfer encoding":
		return status, "unsupported Transfer-Encoding: the API reads only chunked bodies", true
	case !bytes.Equal(body, line):
		return 0, "", false
	case hasDetail:
		return status, detail, true
	case status == http.StatusRequestHeaderFieldsTooLarge:
		return status, fmt.Sprintf("the request headers exceed %d bytes", maxHeaderBytes), true
	case status == http.StatusBadRequest:
		return status, "malformed request: the request line or a header does not parse", true
	}
	return status, strings.ToLower(text[:1]) + text[1:], true
}

// jsonAnswer is the whole answer with status and an Error body of msg.
func jsonAnswer(status int, msg string) []byte {
	body, _ := json.Marshal(Error{Code: restifyCode(status), Message: msg})
	body = append(body, '\n') // as reply's json.Encoder ends it
	return fmt.Appendf(nil, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"+
		"Connection: close\r\n\r\n%s", status, http.StatusText(status), len(body), body)
}

// restifyCode is restify's name for status, as restify-errors derives it
// from the status text: each word lower-cased but its first letter,
// joined, without non-word characters ("HTTP Version Not Supported" is
// HttpVersionNotSupported).
func restifyCode(status int) string {
	var b strings.Builder
	for _, w := range strings.Fields(http.StatusText(status)) {
		w = strings.ToUpper(w[:1]) + strings.ToLower(w[1:])
		b.WriteString(strings.Map(func(r rune) rune {
			if r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
				return r
			}
			return -1
		}, w))
	}
	return b.String()
}
