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

// TestBatcherReport: a commit logs one line per VM whose records changed,
// with what it gained and lost and the zones' new serials; a commit that
// changes nothing logs nothing; a commit of more than ReportVMs VMs logs
// one summary line.
func TestBatcherReport(t *testing.T) {
	const rev = "0.0.10.in-addr.arpa."
	var buf logtest.Buffer
	s, _ := open(t, NewMemory(), Options{})
	b := NewBatcher(s, 0, 0, slog.New(slog.NewTextHandler(&buf, nil)))
	b.SetDescribe(func(vm string) []any {
		if vm == "vm1" {
			return []any{"alias", "web1"}
		}
		return nil
	})
	ctx := context.Background()
	flush := func(cs ...zonegen.Contribution) {
		t.Helper()
		b.AddAll(cs)
		if err := b.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	vm1 := func(addr string) zonegen.Contribution {
		return contrib("vm1", map[string][]Record{zone: {a("web1.example.com.", addr, "vm1")},
			rev: {ptr(strings.TrimPrefix(addr, "10.0.0.")+"."+rev, "web1.example.com.", "vm1")}})
	}
	flush(vm1("10.0.0.1"))
	serial := func(z string) string { return fmt.Sprintf("%s=%d", z, s.Snapshot(z).Serial()) }
	lines := buf.Lines("VM records published", "vm=vm1", "alias=web1",
		`zones="[`+serial(rev)+"(+1,-0) "+serial(zone)+`(+1,-0)]"`,
		`names_added="[web1.example.com. 1.0.0.10.in-addr.arpa.]"`, "names_removed=[]")
	if len(lines) != 1 {
		t.Fatalf("first commit: want one line naming vm1, its changes per zone, serials and names; log:\n%s", buf.String())
	}

	flush(vm1("10.0.0.1"))
	if n := len(buf.Lines("VM records published")); n != 1 {
		t.Errorf("a commit that changes nothing logged; log:\n%s", buf.String())
	}

	flush(vm1("10.0.0.2"), contrib("vm2", map[string][]Record{zone: {a("db.example.com.", "10.0.0.9", "vm2")}}))
	if lines := buf.Lines("vm=vm1", `zones="[`+serial(rev)+"(+1,-1) "+serial(zone)+`(+1,-1)]"`,
		"names_added=[2.0.0.10.in-addr.arpa.]", "names_removed=[1.0.0.10.in-addr.arpa.]"); len(lines) != 1 {
		t.Errorf("the change of vm1's address: no line with what it gained and lost; log:\n%s", buf.String())
	}
	if lines := buf.Lines("vm=vm2", `zones="[`+serial(zone)+`(+1,-0)]"`, "names_added=[db.example.com.]"); len(lines) != 1 {
		t.Errorf("vm2: no line of its own; log:\n%s", buf.String())
	}

	names := map[string][]Record{}
	for i := range 6 {
		names[zone] = append(names[zone], a(fmt.Sprintf("n%d.example.com.", i), "10.0.0.3", "vm3"))
	}
	flush(contrib("vm3", names))
	if lines := buf.Lines("vm=vm3", `names_added="[n0.example.com. n1.example.com. n2.example.com. n3.example.com. and 2 more]"`); len(lines) != 1 {
		t.Errorf("vm3: want four of its six names and a count of the rest; log:\n%s", buf.String())
	}

	var many []zonegen.Contribution
	for i := range ReportVMs + 1 {
		vm := fmt.Sprintf("bulk%03d", i)
		many = append(many, contrib(vm, map[string][]Record{zone: {a(vm+".example.com.", "10.0.1.1", vm)}}))
	}
	flush(many...)
	if n := len(buf.Lines("bulk")); n != 0 {
		t.Errorf("%d lines about single VMs of a large commit; log:\n%s", n, buf.String())
	}
	if lines := buf.Lines("VM records published (summary)", fmt.Sprintf("vms=%d", ReportVMs+1),
		fmt.Sprintf("added=%d", ReportVMs+1), "removed=0", `serials="[`+serial(zone)+`]"`); len(lines) != 1 {
		t.Errorf("large commit: want one summary line; log:\n%s", buf.String())
	}
}
