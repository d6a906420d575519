package pipeline

import (
	"strings"
	"testing"
	"time"

	"github.com/cnsd/cnsd/mockcloud"
)

// TestChangeLogLines: each VM change published is one info line with the
// VM's uuid and alias; a compute node going down and an account turning
// CNS off are one line each, saying how many VMs' names moved; a change
// that moves no name logs no such line.
func TestChangeLogLines(t *testing.T) {
	s := rulesSettings()
	w := startWorld(t, rulesFixture(), s)
	w.waitOracle(s)
	w.settle()
	if lines := w.logs.Lines("compute node changed"); len(lines) != 0 {
		t.Errorf("compute node lines for the first CNAPI listing: %q", lines)
	}
	if lines := w.logs.Lines("VM records published", "vm="+web1, "alias=web1", "names_added="); len(lines) != 1 {
		t.Errorf("first listing: want one line about web1, got %q", lines)
	}

	w.step(t, "alias", func(t *testing.T) {
		must[mockcloud.VM](t)(w.cloud.SetAlias(web1, "www1"))
		w.waitOracle(s)
		w.settle()
		lines := w.logs.Lines("VM records published", "vm="+web1, "alias=www1")
		if len(lines) != 1 || !strings.Contains(lines[0], "www1.inst.alice.pub.example.com.") ||
			!strings.Contains(lines[0], "web1.inst.alice.pub.example.com.") || !strings.Contains(lines[0], "pub.example.com.=") {
			t.Errorf("alias change: want one line with the names gained and lost and the serial, got %q", lines)
		}
	})

	w.step(t, "compute node down", func(t *testing.T) {
		status, old := "unknown", w.clock.Now().Add(-48*time.Hour).Format(time.RFC3339)
		must[mockcloud.Server](t)(w.cloud.UpdateServer(cn1, mockcloud.ServerPatch{Status: &status, LastHeartbeat: &old}))
		w.waitOracle(s)
		w.settle()
		lines := w.logs.Lines("compute node changed: its VMs' records moved", "server="+cn1, "status=unknown", "vms=2", "vms_changed=2")
		if len(lines) != 1 || strings.Contains(lines[0], "records_removed=0") {
			t.Errorf("cn1 down: want one line saying its 2 VMs lost names, got %q\nlog tail:\n%s", lines, tail(w.logs.String(), 20))
		}
	})

	w.step(t, "account", func(t *testing.T) {
		updateUser(t, w, bob, mockcloud.UserPatch{Email: ptr("bob@example.com")})
		// An account change that moves names comes after it; when its
		// line is there, the first was applied too.
		updateUser(t, w, alice, mockcloud.UserPatch{TritonCNSEnabled: ptr("false")})
		w.waitOracle(s)
		w.settle()
		if lines := w.logs.Lines("account changed: its VMs' records moved", "account="+alice, "login=alice", "vms=4", "vms_changed=4"); len(lines) != 1 {
			t.Errorf("alice off: want one line (her 4 VMs lose their records), got %q\nlog tail:\n%s",
				w.logs.Lines("account changed"), tail(w.logs.String(), 20))
		}
		if lines := w.logs.Lines("account changed", "account="+bob); len(lines) != 0 {
			t.Errorf("an account change that moved no name was logged: %q", lines)
		}
	})
}
