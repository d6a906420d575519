package xfr

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/logtest"
	"github.com/cnsd/cnsd/store"
)

// readerSource is the store of a process that does not hold the writer
// lease: it may not raise serials.
type readerSource struct{ *store.Store }

func (readerSource) RaiseSerial(context.Context, string, store.Serial) (store.Serial, bool, error) {
	return 0, false, store.ErrFollowing
}

// startAhead serves example.test from src to a fake secondary that
// serves serial ahead and ignores NOTIFY, logging into logs.
func startAhead(t *testing.T, src Source, ahead uint32) (*fakeSecondary, *Server, *logtest.Buffer, string) {
	t.Helper()
	f := startFake(t, nil)
	f.mu.Lock()
	f.serial, f.follow = ahead, false
	f.mu.Unlock()
	logs := &logtest.Buffer{}
	addr, s := serveLogged(t, parse(t, notifyConfig(t, f.addr.String(), "")+"}"), src, fastOptions,
		slog.New(slog.NewTextHandler(logs, nil)))
	return f, s, logs, addr
}

// aheadLines are the error lines about the fake secondary being ahead.
func aheadLines(logs *logtest.Buffer, f *fakeSecondary) []string {
	return logs.Lines("level=ERROR", "secondary serves a serial ahead", "zone=example.test.", "peer="+f.addr.String())
}

// TestSecondaryAheadRaised: a secondary serving a serial ahead of the
// zone's is an error logged once with the zone and the peer and counted;
// the writer moves the serial one past it, NOTIFYs it, and once the
// secondary serves the new serial the incident ends.
func TestSecondaryAheadRaised(t *testing.T) {
	src := testStore(t, map[string][]string{"example.test.": {"a A 192.0.2.1"}})
	cur := uint32(src.Snapshot("example.test.").Serial())
	ahead := cur + 1000
	f, s, logs, _ := startAhead(t, src, ahead)
	eventually(t, "the serial to move past the secondary's", func() bool {
		return uint32(src.Snapshot("example.test.").Serial()) == ahead+1
	}, logs.String)
	eventually(t, "the NOTIFY of the raised serial", func() bool { return slices.Contains(f.seen(), ahead+1) })
	pz, _, _ := peerZoneOf(s, f.addr, "example.test.")
	if !pz.Ahead || pz.AheadIncidents != 1 {
		t.Errorf("peer zone while ahead: %+v, want ahead with one incident", pz)
	}
	f.mu.Lock()
	f.serial = ahead + 1 // it transferred the zone
	f.mu.Unlock()
	eventually(t, "the incident to end", func() bool {
		pz, _, _ := peerZoneOf(s, f.addr, "example.test.")
		return !pz.Ahead && pz.Serial == ahead+1 && pz.BehindSince.IsZero()
	})
	if got := aheadLines(logs, f); len(got) != 1 || !strings.Contains(got[0], "zone_serial="+strconv.FormatUint(uint64(cur), 10)) {
		t.Errorf("error lines: %q, want one naming the zone's serial %d", got, cur)
	}
	if pz, _, _ := peerZoneOf(s, f.addr, "example.test."); pz.AheadIncidents != 1 {
		t.Errorf("%d incidents, want 1", pz.AheadIncidents)
	}
	if got := src.Snapshot("example.test.").Serial(); uint32(got) != ahead+1 {
		t.Errorf("serial %d after the incident, want %d: raised once", got, ahead+1)
	}
}

// tenMorePolls waits until the fake secondary has been polled ten more
// times and returns how many polls it had before them.
func tenMorePolls(t *testing.T, f *fakeSecondary) int {
	t.Helper()
	f.mu.Lock()
	polls := f.polls
	f.mu.Unlock()
	eventually(t, "ten more polls", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.polls >= polls+10
	})
	return polls
}

// TestSecondaryAheadReader: a process that does not write reports a
// secondary ahead (the error line, the count) and writes nothing.
func TestSecondaryAheadReader(t *testing.T) {
	st := testStore(t, map[string][]string{"example.test.": {"a A 192.0.2.1"}})
	cur := st.Snapshot("example.test.").Serial()
	f, s, logs, _ := startAhead(t, readerSource{st}, uint32(cur)+1000)
	eventually(t, "the incident", func() bool {
		return len(logs.Lines("not raising the serial", "zone=example.test.")) == 1
	}, logs.String)
	polls := tenMorePolls(t, f)
	if got := st.Snapshot("example.test.").Serial(); got != cur {
		t.Errorf("a reader changed the serial from %d to %d", cur, got)
	}
	if got := aheadLines(logs, f); len(got) != 1 {
		t.Errorf("error lines over %d polls: %q, want one", polls+10, got)
	}
	if got := logs.Lines("not raising the serial"); len(got) != 1 {
		t.Errorf("lines saying the reader does not raise: %q, want one", got)
	}
	if pz, _, _ := peerZoneOf(s, f.addr, "example.test."); !pz.Ahead || pz.AheadIncidents != 1 {
		t.Errorf("peer zone %+v, want ahead with one incident", pz)
	}
}

// hintingSource is the store of a follower on a backend that takes
// hints: RaiseSerial tells the writer (store.ErrHinted); calls counts.
type hintingSource struct {
	*store.Store
	calls *atomic.Int32
}

func (h hintingSource) RaiseSerial(context.Context, string, store.Serial) (store.Serial, bool, error) {
	h.calls.Add(1)
	return 0, false, store.ErrHinted
}

// TestSecondaryAheadFollowerHints: a process that does not write, on a
// store through which it can tell the writer, tells it once per
// incident, however many polls find the secondary ahead.
func TestSecondaryAheadFollowerHints(t *testing.T) {
	st := testStore(t, map[string][]string{"example.test.": {"a A 192.0.2.1"}})
	calls := &atomic.Int32{}
	f, _, logs, _ := startAhead(t, hintingSource{st, calls}, uint32(st.Snapshot("example.test.").Serial())+1000)
	eventually(t, "the writer told", func() bool {
		return len(logs.Lines("told the writer to raise the serial", "zone=example.test.")) == 1
	}, logs.String)
	tenMorePolls(t, f)
	if n := calls.Load(); n != 1 {
		t.Errorf("the writer was told %d times in one incident, want once", n)
	}
}

// TestSecondaryAheadByIXFR: a secondary that was current and then asks
// for an IXFR from a serial ahead of the zone's — it was loaded from
// elsewhere meanwhile — is polled again, found ahead, and the serial
// moves past it.
func TestSecondaryAheadByIXFR(t *testing.T) {
	src := testStore(t, map[string][]string{"example.test.": {"a A 192.0.2.1"}})
	cur := uint32(src.Snapshot("example.test.").Serial())
	f, s, logs, addr := startAhead(t, src, cur)
	eventually(t, "the secondary to be current", func() bool {
		pz, _, _ := peerZoneOf(s, f.addr, "example.test.")
		return pz.Serial == cur && pz.BehindSince.IsZero()
	})
	ahead := cur + 50
	f.mu.Lock()
	f.serial = ahead
	f.mu.Unlock()
	m := new(dns.Msg)
	m.SetIxfr("example.test.", ahead, "ns.example.test.", "hostmaster.example.test.")
	r, _, err := (&dns.Client{Net: "tcp"}).Exchange(m, addr)
	if err != nil || len(r.Answer) != 1 {
		t.Fatalf("IXFR from a serial ahead: %v, %v; want the one SOA", r, err)
	}
	eventually(t, "the serial to move past the secondary's", func() bool {
		return uint32(src.Snapshot("example.test.").Serial()) == ahead+1
	}, logs.String)
	if got := aheadLines(logs, f); len(got) != 1 {
		t.Errorf("error lines: %q, want one", got)
	}
}

// TestSecondaryAheadTwoSteps: a secondary ahead by 2^31-1, the most RFC
// 1982 orders, cannot be passed in one step: the serial moves by 2^31-2
// first (not onto the secondary's), then, at the next observation, one
// past it.
func TestSecondaryAheadTwoSteps(t *testing.T) {
	src := testStore(t, map[string][]string{"example.test.": {"a A 192.0.2.1"}})
	cur := uint32(src.Snapshot("example.test.").Serial())
	ahead := cur + 1<<31 - 1
	f, _, logs, _ := startAhead(t, src, ahead)
	eventually(t, "the serial to move past the secondary's", func() bool {
		return uint32(src.Snapshot("example.test.").Serial()) == ahead+1
	}, logs.String)
	raised := logs.Lines("serial raised past a secondary's", "peer="+f.addr.String())
	if len(raised) != 2 || !strings.Contains(raised[0], "two_steps=true") ||
		!strings.Contains(raised[0], "zone_serial="+strconv.FormatUint(uint64(cur+1<<31-2), 10)) ||
		!strings.Contains(raised[1], "two_steps=false") {
		t.Errorf("raise lines %q, want a first step to %d then the second", raised, cur+1<<31-2)
	}
	eventually(t, "the NOTIFY of the final serial", func() bool { return slices.Contains(f.seen(), ahead+1) })
}

// TestRecheckPeersFindsAheadOfAnUnchangedZone: a secondary that went
// ahead of a zone that has not changed since it was confirmed (it took a
// commit from a writer whose store then lost it) is not polled again by
// the tracker; RecheckPeers, called by a process that takes the writer
// lease, finds it, and the serial is raised past it.
func TestRecheckPeersFindsAheadOfAnUnchangedZone(t *testing.T) {
	src := testStore(t, map[string][]string{"example.test.": {"a A 192.0.2.1"}})
	cur := uint32(src.Snapshot("example.test.").Serial())
	f, s, logs, _ := startAhead(t, src, cur) // at the zone's serial, not ahead yet
	eventually(t, "the secondary confirmed at the zone's serial", func() bool {
		pz, _, _ := peerZoneOf(s, f.addr, "example.test.")
		return pz.Serial == cur
	}, logs.String)
	f.mu.Lock()
	f.serial, f.follow = cur+5, false // a lost commit, taken elsewhere
	polls := f.polls
	f.mu.Unlock()
	s.RecheckPeers()
	eventually(t, "the serial raised past the secondary's", func() bool {
		return uint32(src.Snapshot("example.test.").Serial()) == cur+6
	}, logs.String)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.polls < polls+2 {
		t.Errorf("%d polls after RecheckPeers, want two at least (an incident needs two observations)", f.polls-polls)
	}
}
