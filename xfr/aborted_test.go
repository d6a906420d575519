package xfr

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/logtest"
)

// TestTransferAborted: a secondary that resets the connection after the
// first message of an AXFR, as BIND does when it refuses an RRset
// ("too many records"), gets a warning naming the zone, the peer, the
// records sent and the likely cause, and is counted for the zone.
func TestTransferAborted(t *testing.T) {
	// More octets than the kernel's socket buffers hold (4 MiB on the
	// sending side at most), so that the server is still writing when the
	// reset comes however fast it assembles messages.
	var lines []string
	pad := strings.Repeat("x", 200)
	for i := range 20000 {
		lines = append(lines, fmt.Sprintf("vm%05d A 10.1.%d.%d", i, i/250, i%250+1),
			fmt.Sprintf(`vm%05d TXT "%s"`, i, pad))
	}
	src := testStore(t, map[string][]string{"example.test.": lines})
	var logs logtest.Buffer
	addr, srv := serveLogged(t, testConfig(t, loopbackTransfers), src, Options{}, slog.New(slog.NewTextHandler(&logs, nil)))

	// A small receive buffer, set before connecting so that the window
	// stays small, keeps the server from running far ahead.
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
		return errors.Join(err, serr)
	}}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c := &dns.Conn{Conn: conn}
	m := new(dns.Msg)
	m.SetAxfr("example.test.")
	if err := c.WriteMsg(m); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReadMsg(); err != nil {
		t.Fatal(err)
	}
	conn.(*net.TCPConn).SetLinger(0) // close with a reset, as an aborting secondary does
	conn.Close()

	deadline := time.Now().Add(10 * time.Second)
	for srv.AbortedTransfers()["example.test"] == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no aborted transfer counted: %v\n%s", srv.AbortedTransfers(), logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := srv.AbortedTransfers(); len(got) != 1 || got["example.test"] != 1 {
		t.Errorf("AbortedTransfers = %v, want example.test: 1", got)
	}
	warn := logs.Lines("level=WARN", "AXFR ended early", "zone=example.test.", "peer=127.0.0.1",
		"max-records-per-type", "largest_rrset=1")
	if len(warn) != 1 {
		t.Fatalf("want one warning naming zone, peer and hint:\n%s", logs.String())
	}
	var sent int
	if _, err := fmt.Sscanf(warn[0][strings.Index(warn[0], "records_sent=")+len("records_sent="):], "%d", &sent); err != nil || sent == 0 || sent >= 40000 {
		t.Errorf("records_sent %d (%v): want the records of the messages written before the reset: %s", sent, err, warn[0])
	}
	if n := srv.TransferCounts().AXFR; n != 0 {
		t.Errorf("the aborted transfer counted as completed: %d", n)
	}
}
