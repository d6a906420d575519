package main

import (
	"net/netip"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/xfr/secondarytest"
)

// TestLostCommitOnASecondary: a BIND secondary of two cnsd on one Redis
// (stock settings, both listed as primaries) takes a commit from the
// writer while the other process is stopped; the writer is killed and
// Redis comes back without that commit (its files from before it), so
// the commit is lost everywhere but on BIND. The other process takes
// over and the cloud moves on. Its serials were ahead of the clock, so
// without the takeover gap its first commit would take the lost serial
// again with other records, and BIND would keep the lost records as
// current. BIND must come to serve the new writer's records.
func TestLostCommitOnASecondary(t *testing.T) {
	backup := t.TempDir()
	c := newCloudOnRedis(t)
	const zone = "cloud.example.test."
	svc := func(name string) string { return name + ".svc." + cloudOwner + "." + zone }
	ports := freePorts(t, 2)
	primaryA := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(ports[0]))
	primaryB := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(ports[1]))
	bind := secondarytest.StartBIND(t, secondarytest.Config{Primary: primaryB, MorePrimaries: []netip.AddrPort{primaryA},
		Zones: []string{zone}, AllowTransfer: true, SerialQueryRate: secondarytest.StockSerialQueryRate})
	a, aCmd := c.start(ports[0], bind.Addr().String())
	waitFor(t, "the writer to publish the VM", func() bool { return answers(a, svc("web"), "192.0.2.11") })
	b, bCmd := c.start(ports[1], bind.Addr().String())

	// Commits in quick succession put the serial ahead of the clock.
	for i := range 8 {
		name := "s" + string(rune('a'+i))
		setServices(t, c, "web,"+name)
		waitFor(t, "the writer to publish "+name, func() bool { return answers(a, svc(name), "192.0.2.11") })
	}
	waitForWithin(t, 30*time.Second, "both processes and BIND at one serial", func() bool {
		s := serialOf(a, zone)
		bs, _ := bind.Serial(zone)
		return s != 0 && serialOf(b, zone) == s && bs == s
	})
	if s := store.Serial(serialOf(a, zone)); !(store.TimeSerial(time.Now()) + 3).Less(s) {
		t.Fatalf("serial %d is not ahead of the clock's %d: the collision this test is about cannot happen", s, store.TimeSerial(time.Now()))
	}

	// Redis's files as they are now, to come back to.
	c.redis.Kill()
	if err := c.redis.SaveFiles(backup); err != nil {
		t.Fatal(err)
	}
	c.redis.Restart()

	// The commit to lose: B does not see it, BIND takes it from A.
	if err := bCmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	setServices(t, c, "web,lost")
	waitForWithin(t, 30*time.Second, "BIND to take the commit to lose", func() bool {
		return answers(bind.Addr().String(), svc("lost"), "192.0.2.11")
	})
	lost, _ := bind.Serial(zone)

	// The writer dies and Redis comes back without the commit.
	_ = aCmd.Process.Kill()
	_ = aCmd.Wait()
	c.redis.Kill()
	if err := c.redis.RestoreFiles(backup); err != nil {
		t.Fatal(err)
	}
	c.redis.Restart()
	setServices(t, c, "web,kept")
	if err := bCmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitForWithin(t, 30*time.Second, "B to take over and publish the cloud's change", func() bool {
		return answers(b, svc("kept"), "192.0.2.11")
	})
	waitForWithin(t, 60*time.Second, "BIND to serve B's records at B's serial", func() bool {
		s, _ := bind.Serial(zone)
		return s == serialOf(b, zone) && slices.Equal(axfrRecords(bind.Addr().String(), zone), axfrRecords(b, zone))
	})
	if answers(bind.Addr().String(), svc("lost"), "192.0.2.11") {
		t.Errorf("BIND still answers %s, from the lost commit at serial %d", svc("lost"), lost)
	}
}

func setServices(t *testing.T, c *cloudOnRedis, services string) {
	t.Helper()
	if _, err := c.cloud.SetTags(cloudVM, map[string]any{"triton.cns.services": services}); err != nil {
		t.Fatal(err)
	}
}

// axfrRecords transfers zone and returns its records but the SOA, in
// presentation form, sorted; nil when the transfer fails.
func axfrRecords(addr, zone string) []string {
	m := new(dns.Msg)
	m.SetAxfr(zone)
	ch, err := (&dns.Transfer{}).In(m, addr)
	if err != nil {
		return nil
	}
	var out []string
	for env := range ch {
		if env.Error != nil {
			return nil
		}
		for _, rr := range env.RR {
			if rr.Header().Rrtype != dns.TypeSOA {
				out = append(out, strings.ToLower(rr.String()))
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
