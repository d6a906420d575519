package store

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/cnsd/cnsd/logtest"
	"github.com/cnsd/cnsd/zonegen"
)

const (
	bigZone = "dc1.cns.example.com."
	svcName = "web.svc.alice.dc1.cns.example.com."
)

// member is VM i of a service: its instance name and its A record at
// the service name, as zonegen gives a member of "web".
func member(i int) zonegen.Contribution {
	vm := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
	addr := fmt.Sprintf("10.1.%d.%d", i/250, i%250+1)
	return contrib(vm, map[string][]Record{bigZone: {
		a(fmt.Sprintf("web%d.inst.alice.%s", i, bigZone), addr, vm),
		a(svcName, addr, vm),
	}})
}

// TestLargestRRsetWarning: a service of 180 members is an A RRset of 180
// records, which is what LargestRRset reports; the Store warns when the
// zone's largest RRset first passes RRsetWarn, once however many commits
// keep it there, says at info when it is back within, and warns again
// at the next crossing.
func TestLargestRRsetWarning(t *testing.T) {
	var logs logtest.Buffer
	st, err := Open(context.Background(), NewMemory(), Options{Clock: (&fakeClock{t: t0}).Now},
		slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	warned := func() int { return len(logs.Lines("level=WARN", "larger than rrset_warn_records", "zone="+bigZone)) }
	var cs []zonegen.Contribution
	for i := range 100 {
		cs = append(cs, member(i))
	}
	commit(t, st, cs...)
	if got := largest(t, st); got != (RRset{Name: svcName, Type: zonegen.TypeA, Records: 100}) {
		t.Fatalf("100 members: largest RRset %+v", got)
	}
	if n := warned(); n != 0 {
		t.Fatalf("warned at 100 records, BIND's limit itself:\n%s", logs.String())
	}
	for i := 100; i < 180; i++ {
		commit(t, st, member(i))
	}
	want := RRset{Name: svcName, Type: zonegen.TypeA, Records: 180}
	if got := largest(t, st); got != want {
		t.Fatalf("180 members: largest RRset %+v, want %+v", got, want)
	}
	if n := warned(); n != 1 {
		t.Fatalf("%d warnings after crossing once, want 1:\n%s", n, logs.String())
	}
	if l := logs.Lines("larger than rrset_warn_records")[0]; !strings.Contains(l, "name="+svcName+" type=A records=101 limit=100") {
		t.Errorf("warning lacks the RRset: %s", l)
	}
	// Shrink to 90 members: back within, said once at info.
	var gone []zonegen.Contribution
	for i := 90; i < 180; i++ {
		gone = append(gone, zonegen.Contribution{VM: member(i).VM})
	}
	commit(t, st, gone...)
	if got := largest(t, st).Records; got != 90 {
		t.Fatalf("90 members: LargestRRset has %d records", got)
	}
	if n := len(logs.Lines("level=INFO", "within rrset_warn_records again", "zone="+bigZone)); n != 1 {
		t.Errorf("%d notes that the zone is within the limit again, want 1:\n%s", n, logs.String())
	}
	for i := 90; i < 120; i++ {
		commit(t, st, member(i))
	}
	if n := warned(); n != 2 {
		t.Errorf("%d warnings after crossing twice, want 2:\n%s", n, logs.String())
	}
}

// largest is the largest RRset of bigZone, checking that the count the
// commits keep (LargestRRset) agrees with a scan of the zone.
func largest(t *testing.T, st *Store) RRset {
	t.Helper()
	snap := st.Snapshot(bigZone)
	got := snap.FindLargestRRset()
	if n := snap.LargestRRset(); n != got.Records {
		t.Fatalf("LargestRRset %d, the zone's largest RRset has %d records", n, got.Records)
	}
	return got
}

// TestRRsetWarnOff: a negative RRsetWarn never warns.
func TestRRsetWarnOff(t *testing.T) {
	var logs logtest.Buffer
	st, err := Open(context.Background(), NewMemory(), Options{RRsetWarn: -1},
		slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	var cs []zonegen.Contribution
	for i := range 150 {
		cs = append(cs, member(i))
	}
	commit(t, st, cs...)
	if l := logs.Lines("rrset_warn_records"); len(l) != 0 {
		t.Errorf("warned with the warning off: %q", l)
	}
}

// BenchmarkFindLargestRRset measures the scan FindLargestRRset makes
// (LargestRRset makes none) over a zone of 100,000 records: 50,000 VMs with an
// instance name each, in services of 50 members.
func BenchmarkFindLargestRRset(b *testing.B) {
	recs := map[string][]Record{}
	for i := range 50000 {
		vm := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		addr := fmt.Sprintf("10.%d.%d.%d", i>>16, i>>8&255, i&255)
		recs[vm] = []Record{
			a(fmt.Sprintf("vm%d.inst.alice.%s", i, bigZone), addr, vm),
			a(fmt.Sprintf("svc%d.svc.alice.%s", i/50, bigZone), addr, vm),
		}
	}
	snap := buildSnapshot(bigZone, 1, recs, 0)
	if snap.Len() != 100000 {
		b.Fatalf("%d records", snap.Len())
	}
	b.ResetTimer()
	for b.Loop() {
		if got := snap.FindLargestRRset().Records; got != 50 {
			b.Fatalf("largest %d", got)
		}
	}
}
