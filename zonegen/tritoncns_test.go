package zonegen

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestTritonCNSAgrees holds Decide and Generate to the records Triton CNS
// itself makes: it runs the original code (the compute-node rule of
// lib/cn-filter.js, lib/net-filter.js, lib/flag-filter.js and
// lib/vm-to-zones.js of a triton-cns checkout named by TRITON_CNS_DIR;
// testdata/tritoncns/reference.js) under node over a random corpus of
// VMs, accounts, compute nodes, networks, tags and configurations, and
// fails on any record one makes and the other does not. Records are
// compared by zone, name (case folded), type and data, SRV by port and
// target: SRV priority and weight are a documented difference
// (docs/differences.md), and the corpus leaves out the inputs of the other
// differences documented there (a 63-octet alias or login, the string
// "false" in triton.cns.disable, malformed tags, and so on), so that what
// remains must agree exactly.
//
// The original is not in any registry this project's CI reaches, so the
// test is skipped without TRITON_CNS_DIR; make tritoncns
// TRITON_CNS_DIR=… installs the packages it requires (testdata/tritoncns,
// npm ci) and runs it. TRITON_CNS_CASES sets the corpus size (2,000).

// tcnsInput is one line to the reference script.
type tcnsInput struct {
	Config tcnsConfig     `json:"config"`
	VM     tcnsVM         `json:"vm"`
	Server map[string]any `json:"server"` // CNAPI's object, for cn-filter.js's cutServerObj
}

type tcnsConfig struct {
	ForwardZones tcnsZones `json:"forward_zones"`
	UseAlias     bool      `json:"use_alias"`
	UseLogin     bool      `json:"use_login"`
}

// tcnsZones is forward_zones in the configuration's order, which Triton
// CNS keeps (Object.keys) and cnsd keeps too: it breaks PTR ties.
type tcnsZones []ZoneConfig

func (zs tcnsZones) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, z := range zs {
		name, err := json.Marshal(z.Name)
		if err != nil {
			return nil, err
		}
		nets, err := json.Marshal(z.Networks)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `%s:{"networks":%s}`, name, nets)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

type tcnsVM struct {
	UUID             string         `json:"uuid"`
	Alias            string         `json:"alias,omitempty"`
	State            string         `json:"state"`
	Destroyed        bool           `json:"destroyed,omitempty"`
	Tags             map[string]any `json:"tags"`
	CustomerMetadata map[string]any `json:"customer_metadata"`
	Owner            map[string]any `json:"owner"`
	NICs             []tcnsNIC      `json:"nics"`
}

type tcnsNIC struct {
	IP           string         `json:"ip,omitempty"`
	IPs          []string       `json:"ips,omitempty"`
	NetworkUUID  string         `json:"network_uuid"`
	NICTag       string         `json:"nic_tag"`
	VLANID       int            `json:"vlan_id"`
	Network      map[string]any `json:"network"`
	NetworkPools []string       `json:"network_pools,omitempty"`
}

type tcnsOutput struct {
	ListInstance bool                          `json:"listInstance"`
	ListServices bool                          `json:"listServices"`
	Reasons      []string                      `json:"reasons"`
	Zones        map[string]map[string][][]any `json:"zones"`
	Error        string                        `json:"error"`
}

type tcnsCase struct {
	view View
	cfg  Config
	in   tcnsInput
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

func randUUID(r *rand.Rand) string {
	return fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", r.Uint32(), r.IntN(1<<16), r.IntN(1<<12), r.IntN(1<<12), r.Uint64()&(1<<48-1))
}

// genCase makes case i: a VM, its owner, networks and compute node, and a
// configuration. The compute node's times are ages before now, none
// within a minute of a limit of the CN rule, so that the Go and node
// clocks read them alike.
func genCase(r *rand.Rand, i int, now time.Time) tcnsCase {
	owner := randUUID(r)
	login := pick(r, "alice", "Bob.Smith", "admin", "poseidon", "user_with_underscore", "carol99", strings.Repeat("l", 62), "x y", "Zoë", "ADMIN", "dave@example.com")
	nets := []Network{
		{UUID: "11111111-0000-4000-8000-000000000001", Name: "Public", OwnerUUIDs: nil},
		{UUID: "11111111-0000-4000-8000-000000000002", Name: "My Private", OwnerUUIDs: []string{owner}},
		{UUID: "11111111-0000-4000-8000-000000000003", Name: "pooled", Pools: []string{"22222222-0000-4000-8000-000000000001"}},
		{UUID: "11111111-0000-4000-8000-000000000004", Name: "other-owned", OwnerUUIDs: []string{"99999999-0000-4000-8000-000000000009"}},
	}
	cfg := Config{UseAlias: r.IntN(4) != 0, UseLogin: r.IntN(3) != 0, Zones: []ZoneConfig{
		{Name: "pub.example.com", Networks: []string{nets[0].UUID, "22222222-0000-4000-8000-000000000001"}},
		{Name: "dc1.cns.example.com", Networks: []string{"*"}},
	}}
	switch r.IntN(4) {
	case 0:
		cfg.Zones = append(cfg.Zones, ZoneConfig{Name: "priv.example.org", Networks: []string{nets[1].UUID}})
	case 1:
		cfg.Zones = append(cfg.Zones, ZoneConfig{Name: "a.example.org", Networks: []string{nets[0].UUID, nets[1].UUID}})
	case 2:
		cfg.Zones = append(cfg.Zones, ZoneConfig{Name: "all.example.net", Networks: []string{"*"}})
	case 3:
		// Two zones of the same length on one network: a PTR tie.
		cfg.Zones = append(cfg.Zones, ZoneConfig{Name: "x1.example.com", Networks: []string{nets[0].UUID}},
			ZoneConfig{Name: "x2.example.com", Networks: []string{nets[0].UUID}})
	}
	r.Shuffle(len(cfg.Zones), func(i, j int) { cfg.Zones[i], cfg.Zones[j] = cfg.Zones[j], cfg.Zones[i] })
	v := View{
		VM: VM{UUID: randUUID(r), OwnerUUID: owner,
			Alias: pick(r, "", "web0", "Web_Server 1", "a.b", "db-1", strings.Repeat("a", 62), "--x--", "über", "UPPER", "a--b", "  spaced  ", "日本", "x_y.z"),
			State: pick(r, "running", "running", "running", "stopped", "failed", "destroyed", "provisioning")},
		Owner: &Account{UUID: owner, Login: login,
			TritonCNSEnabled:        FlagString(pick(r, "true", "true", "true", "false", "")),
			ApprovedForProvisioning: FlagString(pick(r, "true", "true", "true", "false", ""))},
		Server:   &Server{UUID: "44454c4c-3200-1042-8052-b4c04f384d32"},
		Networks: map[string]Network{},
	}
	if r.IntN(20) == 0 {
		v.VM.Destroyed = true
	}
	tags := map[string]any{}
	if r.IntN(4) != 0 {
		tags["triton.cns.services"] = pick(r, "web", "web:80", "web:80,db:5432", "web:80:priority=5", "web:8080:weight=20",
			"web,web:80", "web:80,web:443", "Web:80", "api-v2:443", "a:1,b:2,c:3", "web:80, db", "x1:1:priority=1:weight=2",
			"MixedCase,other", "_ldap._tcp:389", "web:80,db:80", "a.b.c:80", strings.Repeat("s", 40)+"."+strings.Repeat("t", 40)+":8080")
	}
	if r.IntN(10) == 0 {
		tags["docker:label:triton.cns.services"] = pick(r, "dock:80", "dock")
	}
	if r.IntN(10) == 0 {
		tags["triton.cns.disable"] = pick[any](r, true, false, "true", "yes")
	}
	if r.IntN(15) == 0 {
		tags["docker:label:triton.cns.disable"] = pick[any](r, "true", "false")
	}
	if r.IntN(10) == 0 {
		tags["triton.cns.reverse_ptr"] = pick(r, "host.example.com", "Mail.Example.NET", "bad name", "x", "host.example.com.", "-bad.example.com", "a-b.c-d")
	}
	if r.IntN(15) == 0 {
		tags["docker:label:triton.cns.reverse_ptr"] = pick(r, "dock.example.com", "bad name")
	}
	if r.IntN(10) == 0 {
		tags["smartdc_role"] = pick(r, "nat", "cloudapi", "adminui", "CloudAPI")
	}
	if r.IntN(10) == 0 {
		tags["manta_role"] = pick(r, "loadbalancer", "storage")
	}
	v.VM.Tags = tags
	md := map[string]string{}
	if r.IntN(4) == 0 {
		md["triton.cns.status"] = pick(r, "up", "down", "maintenance", "UP", "")
	}
	if r.IntN(8) == 0 {
		md["triton.cns.acme-challenge"] = pick(r, "abc", "abc def", "xyz123")
	}
	v.VM.CustomerMetadata = md
	for n := range 1 + r.IntN(3) {
		net := nets[r.IntN(len(nets))]
		nic := NIC{MAC: fmt.Sprintf("90:b8:d0:00:%02x:%02x", i%256, n), NetworkUUID: net.UUID, NICTag: "external"}
		switch r.IntN(20) {
		case 0:
			nic.NICTag = "admin"
		case 1:
			nic.NICTag, nic.VLANID = "admin", 5
		case 2:
			nic.NICTag = "manta"
		case 3:
			nic.NICTag = "sdc_underlay"
		case 4:
			nic.NICTag = pick(r, "admin_rack_12", "Admin", "MANTA_rack_a-1", "admin_rack_", "admin_rack_x.y", "external_rack_3")
		}
		ip := func() string {
			switch r.IntN(12) {
			case 0, 1:
				return fmt.Sprintf("fd00::%x:%x", r.IntN(1<<16), r.IntN(1<<16))
			case 2:
				return fmt.Sprintf("FD00:0:0::%X", r.IntN(1<<16)) // not canonical
			case 3:
				return fmt.Sprintf("::ffff:10.%d.%d.%d", r.IntN(3), r.IntN(4), 1+r.IntN(250)) // IPv4-mapped
			}
			return fmt.Sprintf("10.%d.%d.%d", r.IntN(3), r.IntN(4), 1+r.IntN(250))
		}
		switch r.IntN(7) {
		case 6:
			if n > 0 && v.VM.NICs[0].IP != "" {
				nic.IP = v.VM.NICs[0].IP // an address two NICs carry
			} else {
				nic.IP = ip()
			}
		case 0:
			a, b := ip(), ip()
			nic.IP = a
			nic.IPs = []string{a + "/24", b + "/24"}
		case 1:
			nic.IP = pick(r, "dhcp", "addrconf")
		case 2:
			a := ip()
			nic.IP = a
			nic.IPs = []string{a + "/24", "addrconf"}
		default:
			nic.IP = ip()
		}
		v.VM.NICs = append(v.VM.NICs, nic)
		v.Networks[net.UUID] = net
	}
	sv := v.Server
	sv.Status = pick(r, "running", "running", "running", "unknown", "rebooting")
	sv.Setup = r.IntN(20) != 0
	sv.LastBoot = now.Add(-pick(r, 48*time.Hour, 48*time.Hour, 10*time.Minute, 30*time.Second))
	server := map[string]any{"uuid": sv.UUID, "hostname": "cn", "status": sv.Status, "setup": sv.Setup,
		"last_boot": sv.LastBoot.UTC().Format(time.RFC3339Nano), "sysinfo": map[string]any{}}
	if r.IntN(15) != 0 {
		sv.LastHeartbeat = now.Add(-pick(r, 5*time.Second, 5*time.Second, 30*time.Minute, 2*time.Hour))
		server["last_heartbeat"] = sv.LastHeartbeat.UTC().Format(time.RFC3339Nano)
	}

	// The same VM as Triton CNS saw it after its UFDS, CN and NAPI stages.
	in := tcnsInput{Server: server}
	in.Config.ForwardZones = tcnsZones(cfg.Zones)
	in.Config.UseAlias, in.Config.UseLogin = cfg.UseAlias, cfg.UseLogin
	ownerObj := map[string]any{"uuid": owner, "login": login}
	if f := v.Owner.TritonCNSEnabled; f != "" {
		ownerObj["triton_cns_enabled"] = string(f)
	}
	if f := v.Owner.ApprovedForProvisioning; f != "" {
		ownerObj["approved_for_provisioning"] = string(f)
	}
	mdAny := map[string]any{}
	for k, val := range md {
		mdAny[k] = val
	}
	in.VM = tcnsVM{UUID: v.VM.UUID, Alias: v.VM.Alias, State: v.VM.State, Destroyed: bool(v.VM.Destroyed),
		Tags: tags, CustomerMetadata: mdAny, Owner: ownerObj}
	for _, nic := range v.VM.NICs {
		net := v.Networks[nic.NetworkUUID]
		owners := net.OwnerUUIDs
		if owners == nil {
			owners = []string{}
		}
		in.VM.NICs = append(in.VM.NICs, tcnsNIC{IP: nic.IP, IPs: nic.IPs, NetworkUUID: nic.NetworkUUID, NICTag: nic.NICTag, VLANID: nic.VLANID,
			Network: map[string]any{"uuid": net.UUID, "name": net.Name, "owner_uuids": owners}, NetworkPools: net.Pools})
	}
	return tcnsCase{view: v, cfg: cfg, in: in}
}

func TestTritonCNSAgrees(t *testing.T) {
	dir := os.Getenv("TRITON_CNS_DIR")
	if dir == "" {
		t.Skip("TRITON_CNS_DIR is not set: see make tritoncns")
	}
	n := 2000
	if s := os.Getenv("TRITON_CNS_CASES"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			t.Fatalf("TRITON_CNS_CASES=%q is not a positive count", s)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	now := time.Now()
	cases := make([]tcnsCase, n)
	for i := range cases {
		cases[i] = genCase(r, i, now)
	}
	refs := runReference(t, dir, cases)
	var digests []string
	if *update {
		if n < corpusCases {
			t.Fatalf("-update writes the digests of the first %d cases: TRITON_CNS_CASES=%d is fewer", corpusCases, n)
		}
		digests = make([]string, corpusCases)
	}
	differ, failed, records := 0, 0, 0
	for i, c := range cases {
		ref := refs[i]
		if ref.Error != "" {
			failed++
			t.Errorf("case %d: Triton CNS threw: %s", i, strings.SplitN(ref.Error, "\n", 2)[0])
			continue
		}
		want := map[string]bool{}
		for zone, names := range ref.Zones {
			for name, recs := range names {
				for _, rec := range recs {
					want[refRecord(zone, name, rec)] = true
				}
			}
		}
		records += len(want)
		if i < len(digests) {
			digests[i] = corpusDigest(want)
		}
		d, got := generated(c, time.Now())
		missing, extra := setDiff(want, got), setDiff(got, want)
		if len(missing)+len(extra) == 0 {
			continue
		}
		if differ++; differ > 10 {
			continue
		}
		in, _ := json.Marshal(c.in)
		var reasons []string
		for _, x := range d.Reasons {
			reasons = append(reasons, x.String())
		}
		t.Errorf("case %d: reasons: cnsd %q, Triton CNS %q\ninput %s\nonly Triton CNS's:\n  %s\nonly cnsd's:\n  %s",
			i, reasons, ref.Reasons, in, strings.Join(missing, "\n  "), strings.Join(extra, "\n  "))
	}
	t.Logf("%d cases, %d records from Triton CNS; %d differ, %d threw", n, records, differ, failed)
	if records == 0 {
		t.Fatal("Triton CNS made no record at all: the corpus or the reference script is broken")
	}
	if *update && failed == 0 {
		writeCorpusDigests(t, dir, digests)
	}
}

// corpusCases is how many cases of the corpus testdata/tritoncns/corpus
// keeps the digests of Triton CNS's records for (TestTritonCNSCorpus).
const corpusCases = 5000

// corpusPath is the file of those digests.
var corpusPath = filepath.Join("testdata", "tritoncns", "corpus")

// TestTritonCNSCorpus holds Decide and Generate, in every go test and
// without node or a triton-cns checkout, to the records Triton CNS itself
// made for the first corpusCases cases of TestTritonCNSAgrees's corpus,
// kept as a digest of each case's record set (testdata/tritoncns/corpus,
// written by make tritoncns-corpus TRITON_CNS_DIR=…). A case that differs
// is named; make tritoncns shows its records beside Triton CNS's. A
// change to genCase changes the corpus: write the digests again.
func TestTritonCNSCorpus(t *testing.T) {
	b, err := os.ReadFile(corpusPath)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 || f[0] != strconv.Itoa(len(want)) {
			t.Fatalf("%s: line %q: want %q and a digest", corpusPath, line, strconv.Itoa(len(want)))
		}
		want = append(want, f[1])
	}
	if len(want) != corpusCases {
		t.Fatalf("%s holds %d cases, want %d", corpusPath, len(want), corpusCases)
	}
	r := rand.New(rand.NewPCG(1, 2))
	now := time.Now()
	var differ []int
	for i := range want {
		_, got := generated(genCase(r, i, now), now)
		if corpusDigest(got) != want[i] {
			differ = append(differ, i)
		}
	}
	if len(differ) > 0 {
		t.Errorf("%d of %d cases differ from Triton CNS's records (%v…); make tritoncns TRITON_CNS_DIR=<triton-cns checkout> shows how",
			len(differ), len(want), differ[:min(len(differ), 10)])
	}
}

// generated decides and generates case c at now and returns the decision
// and the records, spelt as ourRecord spells them.
func generated(c tcnsCase, now time.Time) (Decision, map[string]bool) {
	v := c.view
	d := Decide(&v, DefaultDecideOptions(), now)
	got := map[string]bool{}
	contrib := NewGenerator(c.cfg).Generate(&v, &d)
	for _, z := range contrib.Zones {
		for _, rec := range z.Records {
			got[ourRecord(z.Zone, rec)] = true
		}
	}
	return d, got
}

// corpusDigest is the digest of a record set: SHA-256 of its records,
// sorted, a line each, and the count.
func corpusDigest(recs map[string]bool) string {
	lines := slices.Sorted(maps.Keys(recs))
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return strconv.Itoa(len(lines)) + ":" + hex.EncodeToString(sum[:12])
}

// writeCorpusDigests writes the digests of Triton CNS's records to
// corpusPath, naming the checkout they came from.
func writeCorpusDigests(t *testing.T, dir string, digests []string) {
	t.Helper()
	rev, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		rev = []byte("unknown (not a git checkout)")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# The records Triton CNS made for the first %d cases of zonegen's\n", len(digests))
	fmt.Fprintf(&b, "# TestTritonCNSAgrees corpus (seed 1, 2), one line a case: its number and\n")
	fmt.Fprintf(&b, "# corpusDigest of its record set (count:SHA-256 prefix). Written by\n")
	fmt.Fprintf(&b, "# make tritoncns-corpus from triton-cns %s", strings.TrimSpace(string(rev))+"\n")
	for i, d := range digests {
		fmt.Fprintf(&b, "%d %s\n", i, d)
	}
	if err := os.WriteFile(corpusPath, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", corpusPath)
}

// runReference runs reference.js over the cases and returns its answer
// to each, in order.
func runReference(t *testing.T, dir string, cases []tcnsCase) []tcnsOutput {
	t.Helper()
	if _, err := os.Stat(filepath.Join(nodeDir, "node_modules")); err != nil {
		t.Fatalf("the reference's packages are missing: npm ci in %s (make tritoncns does)", nodeDir)
	}
	inputs := make([]any, len(cases))
	for i := range cases {
		inputs[i] = cases[i].in
	}
	lines := runNode(t, "reference.js", []string{"TRITON_CNS_DIR=" + dir}, inputs)
	refs := make([]tcnsOutput, len(lines))
	for i, line := range lines {
		if err := json.Unmarshal(line, &refs[i]); err != nil {
			t.Fatalf("reference.js answer %d: %v", i, err)
		}
	}
	return refs
}

// setDiff lists, sorted, the keys of a that b lacks.
func setDiff(a, b map[string]bool) []string {
	var out []string
	for k := range a {
		if !b[k] {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// refRecord and ourRecord spell a record of Triton CNS and of Generate
// the same way: "zone | name TYPE data", names and targets folded to
// lower case and without the final dot, TXT unquoted, SRV as "port
// target".
func refRecord(zone, name string, rec []any) string {
	typ := rec[0].(string)
	args := make([]string, len(rec)-1)
	for i, a := range rec[1:] {
		args[i] = fmt.Sprint(a)
	}
	data := strings.Join(args, " ")
	if typ == "SRV" {
		data = args[1] + " " + strings.ToLower(args[0])
	}
	if typ == "PTR" || typ == "CNAME" {
		data = strings.ToLower(data)
	}
	if typ == "A" || typ == "AAAA" {
		// Triton CNS kept the address as VMAPI spelt it; on the wire
		// only the address counts.
		if a, err := netip.ParseAddr(data); err == nil {
			data = a.String()
		}
	}
	return strings.ToLower(zone) + " | " + strings.ToLower(name+"."+zone) + " " + typ + " " + data
}

func ourRecord(zone string, rec Record) string {
	data := rec.Data
	switch rec.Type.String() {
	case "TXT":
		data, _ = strconv.Unquote(data)
	case "SRV":
		f := strings.Fields(data)
		data = f[2] + " " + strings.TrimSuffix(f[3], ".")
	case "PTR", "CNAME":
		data = strings.ToLower(strings.TrimSuffix(data, "."))
	}
	return strings.ToLower(zone) + " | " + strings.ToLower(strings.TrimSuffix(rec.Name, ".")) + " " + rec.Type.String() + " " + data
}
