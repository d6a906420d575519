package feed

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cnsd/cnsd/logtest"
	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/mockcloud/ufdstest"
	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/zonegen"
)

// TestRequestsPassStrictValidation runs cnsd's own clients — the VMAPI
// bootstrap listing (marker pages) and changefeed with its GET /vms/:uuid,
// the CNAPI server poll, the NAPI network, pool and NIC lookups and the
// NIC repair, the UFDS account lookups — against mockcloud, which refuses
// what the real services refuse (docs/mockcloud.md, "Validation rules"),
// and checks that data arrived and that nothing was refused.
func TestRequestsPassStrictValidation(t *testing.T) {
	fixtures := []struct {
		name, path string
		pageSize   int // small enough that the VM listing takes several pages
	}{
		{"example", "../mockcloud/testdata/example.json", 1},
		{"realistic", realistic, 7},
	}
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			f, err := mockcloud.LoadFixture(fx.path)
			if err != nil {
				t.Fatal(err)
			}
			c := mockcloud.New(f, &mockcloud.Options{Logger: slog.New(slog.NewTextHandler(&logtest.Buffer{}, nil))})
			srv := httptest.NewServer(c.Handler())
			t.Cleanup(srv.Close)

			vms := followVMAPIStrictly(t, c, fx.pageSize)
			pollCNAPIStrictly(t, c, srv.URL)
			lookUpNAPIStrictly(t, c, srv.URL, vms)
			lookUpUFDSStrictly(t, c)

			if refused := c.Refused(); len(refused) > 0 {
				t.Errorf("mockcloud refused %d of cnsd's requests as the real services would:\n%s",
					len(refused), strings.Join(refused, "\n"))
			}
		})
	}
}

// followVMAPIStrictly runs a VMAPI follower until it has listed every
// active VM and fetched one changed by the changefeed; it returns the
// listed VMs.
func followVMAPIStrictly(t *testing.T, c *mockcloud.Cloud, pageSize int) []zonegen.VM {
	t.Helper()
	sink, _ := startVMAPI(t, c.Handler(), func(cfg *VMAPIConfig) { cfg.Limit = pageSize })
	want := activeUUIDs(c)
	vmWaitFor(t, "the first listing", func() bool { return sink.numListings() > 0 })
	listing := sink.lastListing()
	if len(listing.VMs) != len(want) || len(listing.Unreadable) > 0 {
		t.Fatalf("listing has %d VMs (%d unreadable), want the %d active ones",
			len(listing.VMs), len(listing.Unreadable), len(want))
	}
	renamed := listing.VMs[0].UUID
	if _, err := c.SetAlias(renamed, "strict-check"); err != nil {
		t.Fatal(err)
	}
	vmWaitFor(t, "the changed VM fetched", func() bool {
		return sink.changedMatch(func(v zonegen.VM) bool { return v.UUID == renamed && v.Alias == "strict-check" })
	})
	return listing.VMs
}

// pollCNAPIStrictly polls CNAPI's server list once (every page).
func pollCNAPIStrictly(t *testing.T, c *mockcloud.Cloud, url string) {
	t.Helper()
	cn := NewCNAPI(CNAPIOptions{URL: url})
	changed, ok := cn.poll(t.Context())
	setup := 0
	for _, s := range c.Fixture().Servers {
		if s.Setup {
			setup++
		}
	}
	if !ok || len(changed) != setup {
		t.Errorf("CNAPI poll: %d servers (ok %v), want the %d set up", len(changed), ok, setup)
	}
}

// lookUpNAPIStrictly looks up, for every NIC of vms, its network (with
// the pools), the NIC by MAC, and repairs it as if VMAPI had lost its
// network_uuid.
func lookUpNAPIStrictly(t *testing.T, c *mockcloud.Cloud, url string, vms []zonegen.VM) {
	t.Helper()
	n := NewNAPI(NAPIOptions{URL: url})
	looked := 0
	for _, vm := range vms {
		for _, nic := range vm.NICs {
			if nic.NetworkUUID == "" {
				continue
			}
			looked++
			if net, err := n.Network(t.Context(), nic.NetworkUUID); err != nil || net.UUID != nic.NetworkUUID {
				t.Errorf("Network(%s) = %+v, %v", nic.NetworkUUID, net, err)
			}
			if got, err := n.NIC(t.Context(), nic.MAC); err != nil || got.NetworkUUID != nic.NetworkUUID {
				t.Errorf("NIC(%s) = %+v, %v; want network %s", nic.MAC, got, err, nic.NetworkUUID)
			}
			lost := nic
			lost.NetworkUUID = ""
			if got, err := n.RepairNIC(t.Context(), vm.UUID, lost); err != nil || got.NetworkUUID != nic.NetworkUUID {
				t.Errorf("RepairNIC(%s) = %+v, %v; want network %s", nic.MAC, got, err, nic.NetworkUUID)
			}
		}
	}
	if looked == 0 {
		t.Error("no VM NIC names a network; the fixture cannot exercise NAPI")
	}
	if pools, err := n.Pools(t.Context()); err != nil || len(pools) != len(c.Fixture().NetworkPools) {
		t.Errorf("Pools = %d pools, %v; want %d", len(pools), err, len(c.Fixture().NetworkPools))
	}
}

// lookUpUFDSStrictly reads every account and the changelog's position
// from the cloud's accounts served by slapd (UFDS itself is not
// simulated: docs/mockcloud.md says why cnsd's searches are ones UFDS
// accepts).
func lookUpUFDSStrictly(t *testing.T, c *mockcloud.Cloud) {
	t.Helper()
	s := ufdstest.Start(t, c)
	u := NewUFDS(schema.UFDSConfig{Endpoint: schema.Endpoint{URL: s.URL}, BindDN: ufdstest.RootDN,
		BindPassword: ufdstest.Password, CacheTime: time.Hour}, slog.New(slog.NewTextHandler(&logtest.Buffer{}, nil)))
	t.Cleanup(func() { u.Close() })
	for _, want := range c.Users() {
		if got, err := u.User(context.Background(), want.UUID); err != nil || got.Login != want.Login {
			t.Errorf("User(%s) = %+v, %v; want login %s", want.UUID, got, err, want.Login)
		}
	}
	if _, err := u.latestChange(); err != nil {
		t.Errorf("latest changelog number: %v", err)
	}
}
