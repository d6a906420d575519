package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// fixture is the part of the simulated cloud's state the demo reads.
type fixture struct {
	Users []struct {
		UUID, Login      string
		TritonCNSEnabled string `json:"triton_cns_enabled"`
		Approved         string `json:"approved_for_provisioning"`
	} `json:"users"`
	NetworkPools []struct {
		UUID, Name string
		Networks   []string
	} `json:"network_pools"`
	VMs []struct {
		UUID             string
		OwnerUUID        string            `json:"owner_uuid"`
		State            string            `json:"state"`
		Tags             map[string]any    `json:"tags"`
		CustomerMetadata map[string]string `json:"customer_metadata"`
		NICs             []nic             `json:"nics"`
	} `json:"vms"`
}

type nic struct {
	IP          string   `json:"ip"`
	IPs         []string `json:"ips"`
	NetworkUUID string   `json:"network_uuid"`
}

const (
	publicZone   = "dc1.cns.example.com"
	internalZone = "dc1.cns.internal"
)

// config is cnsd's configuration for the demo: the public pool's networks
// in one zone, everything else in a catch-all zone. Loopback may transfer
// the zones, so that the printed dig AXFR works: cnsd lets nobody transfer
// unless the configuration says so.
func config(o options, dir, cloudURL, ldapURL string, f fixture) string {
	public := []string{}
	for _, p := range f.NetworkPools {
		if p.Name == "public" {
			public = append(public, p.UUID)
		}
	}
	zones, _ := json.Marshal(map[string]any{
		publicZone:   map[string]any{"networks": public},
		internalZone: map[string]any{"networks": []string{"*"}},
	})
	return fmt.Sprintf(`{
  "my_name": "ns1.dc1.cns.example.com",
  "hostmaster": "hostmaster@example.com",
  "use_alias": true,
  "use_login": true,
  "forward_zones": %s,
  "allow_transfer": ["127.0.0.1", "::1"],
  "store": {"path": %q},
  "dns": {"listen": ["127.0.0.1:%d"]},
  "api": {"listen": "127.0.0.1:%d"},
  "vmapi_opts": {"url": %q},
  "cnapi_opts": {"url": %q},
  "napi_opts": {"url": %q},
  "ufds_opts": {"url": %q, "bindDN": "cn=root, o=smartdc", "bindPassword": "ufdstest"}
}
`, zones, dir+"/cnsd.db", o.dnsPort, o.apiPort, cloudURL, cloudURL, cloudURL, ldapURL)
}

// published picks a running VM with a service whose owner has CNS
// enabled and waits until cnsd publishes it; it returns the VM and its
// names.
func published(ctx context.Context, a apiAccess, f fixture) (vm string, names []string, err error) {
	vm, err = example(f)
	if err != nil {
		return "", nil, err
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		var v struct{ Names []string }
		if getJSON(ctx, a.url+"/vm/"+vm, a.token, &v) == nil {
			names = v.Names
		}
		if slices.ContainsFunc(names, isPublicInst) {
			return vm, names, nil
		}
		if time.Now().After(deadline) {
			return "", nil, fmt.Errorf("cnsd did not publish VM %s within 60 s (names %v)", vm, names)
		}
		select {
		case <-ctx.Done():
			return "", nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// suggestions are the lines to try for vm and its names: dig lines when
// dig is installed, curl lines when curl is, cnsadm lines always. Every
// line works as printed from the directory the demo runs in; the last
// one changes the cloud.
func suggestions(o options, a apiAccess, cloudURL, vm string, names []string, t tools) []string {
	var try []string
	if t.dig {
		dig := fmt.Sprintf("dig @127.0.0.1 -p %d", o.dnsPort)
		try = append(try, dig+" +short "+shortest(names, isPublicInst))
		if svc := shortest(names, isPublicSvc); svc != "" {
			try = append(try, dig+" +short "+svc, dig+" +short SRV "+svc)
		}
		try = append(try, dig+" SOA "+publicZone, dig+" AXFR "+publicZone)
	}
	// cnsadm reads the API token from the file cnsd's configuration names.
	cnsadm := fmt.Sprintf("%s -api %s -config %s", shown(filepath.Join(o.bin, "cnsadm")), a.url, shown(a.config))
	for _, c := range []string{"status", "zones", "vm " + vm, "peers", "config show", "bind-config"} {
		try = append(try, cnsadm+" "+c)
	}
	if t.curl {
		try = append(try,
			fmt.Sprintf(`curl -fsS -w '\n' -H "Authorization: Bearer $(cat %s)" %s/zones`, shown(a.tokenFile), a.url),
			fmt.Sprintf(`curl -fsS -w '\n' -H "Authorization: Bearer $(cat %s)" %s/vm/%s`, shown(a.tokenFile), a.url, vm),
			fmt.Sprintf(`curl -fsS -w '\n' -X PUT -d '{"state":"stopped"}' %s/_mock/vms/%s/state   # stops the VM: dig again`, cloudURL, vm))
	}
	return try
}

// shortest returns the shortest of names that ok accepts: the one with
// alias and login rather than uuids.
func shortest(names []string, ok func(string) bool) string {
	best := ""
	for _, n := range names {
		if ok(n) && (best == "" || len(n) < len(best)) {
			best = n
		}
	}
	return best
}

func isPublicSvc(n string) bool {
	return strings.Contains(n, ".svc.") && strings.HasSuffix(n, "."+publicZone)
}

func isPublicInst(n string) bool {
	return strings.Contains(n, ".inst.") && strings.HasSuffix(n, "."+publicZone)
}

// example picks a running VM with a service tag whose owner has CNS
// enabled, with an address on the public pool.
func example(f fixture) (string, error) {
	enabled := map[string]bool{}
	for _, u := range f.Users {
		enabled[u.UUID] = u.TritonCNSEnabled == "true" && u.Approved == "true"
	}
	public := map[string]bool{}
	for _, p := range f.NetworkPools {
		for _, n := range p.Networks {
			public[n] = p.Name == "public"
		}
	}
	for _, v := range f.VMs {
		tag, _ := v.Tags["triton.cns.services"].(string)
		onPublic := slices.ContainsFunc(v.NICs, func(n nic) bool { return public[n.NetworkUUID] && (n.IP != "" || len(n.IPs) > 0) })
		if v.State == "running" && tag != "" && enabled[v.OwnerUUID] && onPublic && v.CustomerMetadata["triton.cns.status"] != "down" {
			return v.UUID, nil
		}
	}
	return "", errNoExample
}
