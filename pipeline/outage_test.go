package pipeline

import (
	"slices"
	"strings"
	"testing"

	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/zonegen"
)

// TestLookupFailuresKeepRecords: a VM whose owner (UFDS down) or compute
// node (not listed by CNAPI) cannot be looked up keeps what it published,
// is reported once in the log and is retried until the lookup succeeds.
func TestLookupFailuresKeepRecords(t *testing.T) {
	s := rulesSettings()
	w := startWorld(t, rulesFixture(), s)
	w.waitOracle(s)

	w.step(t, "compute node unknown", func(t *testing.T) {
		before := w.records()
		const nowhere = "c0000009-0000-4000-8000-00000000000c"
		must[mockcloud.VM](t)(w.cloud.MoveVM(web1, nowhere))
		w.waitFor("web1 to be retried", func() bool {
			st, _ := w.p.VM(web1)
			return st.Retrying && st.VM.ServerUUID == nowhere && w.p.Idle()
		})
		if st, _ := w.p.VM(web1); !st.Decision.Unresolved || !hasReason(st.Decision.Reasons, zonegen.ReasonServerUnknown) {
			t.Errorf("decision %+v, want unresolved: server_unknown", st.Decision)
		}
		if !equalRecords(w.records(), before) {
			t.Errorf("records changed while web1's compute node is unknown")
		}
		if !strings.Contains(w.logs.String(), "VMs unresolved") {
			t.Errorf("no log line reports the unresolved VM")
		}
		must[mockcloud.VM](t)(w.cloud.MoveVM(web1, cn1))
		w.waitFor("web1 resolved again", func() bool { st, _ := w.p.VM(web1); return !st.Retrying })
	})

	w.step(t, "owner not in UFDS while it is down", func(t *testing.T) {
		const carol = "ca401000-0000-4000-8000-000000000003"
		const vm = "00000006-0000-4000-8000-000000000006"
		w.ldap.Stop()
		must[mockcloud.User](t)(w.cloud.AddUser(mockcloud.User{UUID: carol, Login: "carol", TritonCNSEnabled: "true", ApprovedForProvisioning: "true"}))
		v, _ := w.cloud.VM(db1)
		v.UUID, v.Alias, v.OwnerUUID = vm, "carol1", carol
		v.NICs = slices.Clone(v.NICs)
		v.NICs[0].IP, v.NICs[0].MAC = "192.0.2.16", "90:b8:d0:00:00:16"
		v.NICs[1].IP, v.NICs[1].MAC = "10.0.0.16", "90:b8:d0:00:01:16"
		must[mockcloud.VM](t)(w.cloud.CreateVM(v))
		w.waitFor("carol's VM to be retried", func() bool { st, _ := w.p.VM(vm); return st.Retrying && w.p.Idle() })
		w.waitAddrs("carol1.inst.carol.pub.example.com.")
		w.ldap.Restart()
		if err := w.ldap.Sync(w.cloud); err != nil {
			t.Fatal(err)
		}
		w.waitAddrs("carol1.inst.carol.pub.example.com.", "192.0.2.16")
		w.waitFor("the all-clear in the log", func() bool { return strings.Contains(w.logs.String(), "every VM resolved") })
	})
	w.waitOracle(s)
}

func hasReason(rs []zonegen.Reason, code string) bool {
	return slices.ContainsFunc(rs, func(r zonegen.Reason) bool { return r.Code == code })
}
