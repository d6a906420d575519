package feed

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cnsd/cnsd/zonegen"
)

func newTestNAPI(tc *testCloud, clk *clock, log *bytes.Buffer) *NAPI {
	o := NAPIOptions{URL: tc.URL, Now: clk.Now}
	if log != nil {
		o.Logger = slog.New(slog.NewTextHandler(log, nil))
	}
	return NewNAPI(o)
}

func TestNAPINetwork(t *testing.T) {
	tests := []struct {
		name string
		uuid string
		want zonegen.Network
	}{
		{"in two pools", netExt, zonegen.Network{UUID: netExt, Name: "external", Pools: []string{pool1, pool2}}},
		{"fabric", netFab, zonegen.Network{UUID: netFab, Name: "My Fabric",
			OwnerUUIDs: []string{alice}, Pools: []string{pool2}}},
	}
	tc := newTestCloud(t)
	n := newTestNAPI(tc, &clock{t: testNow}, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := n.Network(t.Context(), tt.uuid)
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(got.Pools)
			if got.UUID != tt.want.UUID || got.Name != tt.want.Name ||
				!slices.Equal(got.OwnerUUIDs, tt.want.OwnerUUIDs) || !slices.Equal(got.Pools, tt.want.Pools) {
				t.Errorf("Network(%s) = %+v, want %+v", tt.uuid, got, tt.want)
			}
		})
	}
}

func TestNAPIPools(t *testing.T) {
	tc := newTestCloud(t)
	n := newTestNAPI(tc, &clock{t: testNow}, nil)
	pools, err := n.Pools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(pools, func(a, b Pool) int { return strings.Compare(a.UUID, b.UUID) })
	if len(pools) != 2 || pools[0].UUID != pool1 || pools[0].Name != "public" ||
		!slices.Equal(pools[0].Networks, []string{netExt}) || !slices.Equal(pools[1].Networks, []string{netExt, netFab}) {
		t.Errorf("Pools = %+v", pools)
	}
	pools[0].Networks[0] = "scribbled"
	again, _ := n.Pools(t.Context())
	for _, p := range again {
		if slices.Contains(p.Networks, "scribbled") {
			t.Error("a caller's change to Pools' result reached the cache")
		}
	}
}

func TestNAPICacheAndExpiry(t *testing.T) {
	tc := newTestCloud(t)
	clk := &clock{t: testNow}
	n := newTestNAPI(tc, clk, nil)
	lookup := func() {
		t.Helper()
		if _, err := n.Network(t.Context(), netExt); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string, nets, pools int) {
		t.Helper()
		if got := tc.count("/networks/" + netExt); got != nets {
			t.Errorf("%s: %d network requests, want %d", when, got, nets)
		}
		if got := tc.count("/network_pools"); got != pools {
			t.Errorf("%s: %d pool requests, want %d", when, got, pools)
		}
	}
	lookup()
	lookup()
	n.Pools(t.Context())
	check("cached", 1, 1)
	clk.Add(DefaultNAPICacheTTL - time.Second)
	lookup()
	check("just before expiry", 1, 1)
	clk.Add(time.Second)
	lookup()
	check("expired", 2, 2)
}

func TestNAPIStaleOnFailure(t *testing.T) {
	tc := newTestCloud(t)
	clk := &clock{t: testNow}
	var log bytes.Buffer
	n := newTestNAPI(tc, clk, &log)
	want, err := n.Network(t.Context(), netFab)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.NIC(t.Context(), mac1); err != nil {
		t.Fatal(err)
	}
	clk.Add(2 * DefaultNAPICacheTTL)
	tc.failWith(http.StatusInternalServerError, `{"code":"InternalError","message":"injected"}`)
	got, err := n.Network(t.Context(), netFab)
	if err != nil || got.Name != want.Name || !slices.Equal(got.Pools, want.Pools) {
		t.Errorf("Network during outage = %+v, %v; want the stale %+v", got, err, want)
	}
	if nic, err := n.NIC(t.Context(), mac1); err != nil || nic.NetworkUUID != netExt {
		t.Errorf("NIC during outage = %+v, %v; want the stale NIC", nic, err)
	}
	if tc.count("/networks/"+netFab) != 2 {
		t.Error("an expired entry was used without asking NAPI")
	}
	n.Network(t.Context(), netFab)
	if got := tc.count("/networks/" + netFab); got != 2 {
		t.Errorf("%d network requests: NAPI asked again right after it failed", got)
	}
	clk.Add(DefaultNAPIMissTTL)
	n.Network(t.Context(), netFab)
	if got := tc.count("/networks/" + netFab); got != 3 {
		t.Errorf("%d network requests: NAPI not asked again after the retry time", got)
	}
	if !strings.Contains(log.String(), "using the cached answer") || !strings.Contains(log.String(), "InternalError") {
		t.Errorf("the failure was not logged:\n%s", log.String())
	}
	_, err = n.Network(t.Context(), netExt)
	if err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("Network with nothing cached during outage: err = %v, want an error that is not ErrNotFound", err)
	}
}

func TestNAPINotFound(t *testing.T) {
	const missing = "00000000-0000-4000-8000-000000000000"
	tc := newTestCloud(t)
	clk := &clock{t: testNow}
	n := newTestNAPI(tc, clk, nil)
	lookups := []struct {
		name string
		path string
		do   func() error
	}{
		{"network", "/networks/" + missing, func() error { _, err := n.Network(t.Context(), missing); return err }},
		{"nic", "/nics/00:00:5e:00:53:01", func() error { _, err := n.NIC(t.Context(), "00-00-5E-00-53-01"); return err }},
	}
	for _, l := range lookups {
		t.Run(l.name, func(t *testing.T) {
			for range 2 {
				if err := l.do(); !errors.Is(err, ErrNotFound) {
					t.Errorf("err = %v, want ErrNotFound", err)
				}
			}
			if got := tc.count(l.path); got != 1 {
				t.Errorf("%d requests within the miss TTL, want 1", got)
			}
			clk.Add(DefaultNAPIMissTTL)
			l.do()
			if got := tc.count(l.path); got != 2 {
				t.Errorf("%d requests after the miss TTL, want 2", got)
			}
		})
	}
}

func TestNAPINIC(t *testing.T) {
	tc := newTestCloud(t)
	n := newTestNAPI(tc, &clock{t: testNow}, nil)
	for _, mac := range []string{mac1, "90B8D0000001", "90-b8-d0-00-00-01"} {
		nic, err := n.NIC(t.Context(), mac)
		if err != nil {
			t.Fatalf("NIC(%s): %v", mac, err)
		}
		if nic.MAC != mac1 || nic.NetworkUUID != netExt || nic.IP != "10.88.1.2" || nic.NICTag != "external" {
			t.Errorf("NIC(%s) = %+v", mac, nic)
		}
	}
	if got := tc.count("/nics/" + mac1); got != 1 {
		t.Errorf("%d requests for one MAC written three ways, want 1", got)
	}
	for _, bad := range []string{"", "90:b8:d0:00:00", "zz:b8:d0:00:00:01", "../networks"} {
		if _, err := n.NIC(t.Context(), bad); !errors.Is(err, errBadMAC) {
			t.Errorf("NIC(%q) err = %v, want errBadMAC", bad, err)
		}
	}
}

func TestNAPIRepairNIC(t *testing.T) {
	tc := newTestCloud(t)
	n := newTestNAPI(tc, &clock{t: testNow}, nil)
	// NAPI's record of mac1: vm1's NIC on the external network.
	napis := zonegen.NIC{MAC: mac1, NetworkUUID: netExt, IP: "10.88.1.2", IPs: []string{"10.88.1.2/16"}, NICTag: "external"}
	tests := []struct {
		name    string
		vm      string
		in      zonegen.NIC
		want    zonegen.NIC
		wantErr error
	}{
		// network_uuid, ip and nic_tag are NAPI's; ips too when the NIC has none.
		{"missing network", vm1, zonegen.NIC{MAC: mac1, IP: "10.0.0.9", VLANID: 3}, zonegen.NIC{MAC: mac1,
			NetworkUUID: netExt, IP: "10.88.1.2", IPs: []string{"10.88.1.2/16"}, NICTag: "external", VLANID: 3}, nil},
		{"missing address", vm1, zonegen.NIC{MAC: mac1, NetworkUUID: netFab, NICTag: "sdc_overlay"}, napis, nil},
		{"own ips kept", vm1, zonegen.NIC{MAC: mac1, IPs: []string{"10.88.9.9/16"}}, zonegen.NIC{MAC: mac1,
			NetworkUUID: netExt, IP: "10.88.1.2", IPs: []string{"10.88.9.9/16"}, NICTag: "external"}, nil},
		{"complete", vm1, zonegen.NIC{MAC: mac1, NetworkUUID: netFab, IP: "192.168.1.5"},
			zonegen.NIC{MAC: mac1, NetworkUUID: netFab, IP: "192.168.1.5"}, nil},
		{"another VM's NIC", "00000009-0000-4000-8000-000000000009", zonegen.NIC{MAC: mac1, IP: "10.0.0.9"},
			zonegen.NIC{MAC: mac1, IP: "10.0.0.9"}, errNotTheVMs},
		{"unknown mac", vm1, zonegen.NIC{MAC: "00:00:5e:00:53:02"}, zonegen.NIC{MAC: "00:00:5e:00:53:02"}, ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := n.RepairNIC(t.Context(), tt.vm, tt.in)
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("RepairNIC = %+v, %v; want %+v, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestNAPIConcurrentLookupsShareOneRequest(t *testing.T) {
	tc := newTestCloud(t)
	n := newTestNAPI(tc, &clock{t: testNow}, nil)
	arrived, release := tc.holdRequests()
	firstCtx, cancelFirst := context.WithCancel(t.Context())
	firstErr := make(chan error)
	go func() { _, err := n.NIC(firstCtx, mac1); firstErr <- err }()
	<-arrived

	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			nic, err := n.NIC(t.Context(), mac1)
			if err == nil && nic.NetworkUUID != netExt {
				err = errors.New("wrong nic " + nic.MAC)
			}
			errs <- err
		})
	}
	// The first caller giving up must not fail the request it started.
	cancelFirst()
	if err := <-firstErr; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled caller got %v", err)
	}
	release()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got := tc.count("/nics/" + mac1); got != 1 {
		t.Errorf("%d requests for concurrent lookups of one MAC, want 1", got)
	}
}
