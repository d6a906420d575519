package zonegen

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// documentedRejections are ParseServices' errors for tags that
// triton-tags, the parser Triton CNS used, accepts: the values it never
// checked and names that are not DNS names (docs/differences.md,
// "Malformed triton.cns.services", "Empty labels in a service name",
// "Service name labels over 63 octets").
var documentedRejections = regexp.MustCompile(`: (port|priority|weight) "[^"]*" of "[^"]*" must be within |: unknown property "[^"]*" in service |: service name "[^"]*" has an empty label$|: service name "[^"]*" has a label longer than 63 octets$`)

// TestParseServicesAgreesWithTritonTags parses random tags, built from
// the fragments the grammar is made of, with ParseServices and with
// triton-tags 1.4.0's cns-svc-tag (under node; the version Triton CNS's
// package.json pins), and requires that ParseServices rejects every tag
// triton-tags rejects, finds the same services and ports (after the
// parseInt and merge of Triton CNS's lib/flag-filter.js) in every tag both
// accept, and rejects the others only for a documented reason.
//
// It needs node and the npm packages of testdata/tritoncns
// (scripts/testdeps.sh installs them); without them it skips, or fails
// when CNSD_REQUIRE_NODE is set, as make test sets it.
func TestParseServicesAgreesWithTritonTags(t *testing.T) {
	_, nodeErr := exec.LookPath("node")
	_, pkgErr := os.Stat(filepath.Join(nodeDir, "node_modules", "triton-tags"))
	if nodeErr != nil || pkgErr != nil {
		msg := fmt.Sprintf("needs node and triton-tags (npm ci in %s; scripts/testdeps.sh does it): %v, %v", nodeDir, nodeErr, pkgErr)
		if os.Getenv("CNSD_REQUIRE_NODE") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	n := 20000
	if testing.Short() {
		n = 2000
	}
	r := rand.New(rand.NewPCG(3, 4))
	frags := []string{"web", "db", "Web", "a", "x-y", "_ldap", "._tcp", "._udp", ":", ":", ",", "80", "443", "0", "007",
		"65535", "65536", "99999", "port=", "priority=", "weight=", "color=", "5", "=", " ", ".", "-", "foo.bar", "",
		strings.Repeat("s", 60)}
	tags := make([]string, n)
	inputs := make([]any, n)
	for i := range tags {
		var b strings.Builder
		for range 1 + r.IntN(6) {
			b.WriteString(frags[r.IntN(len(frags))])
		}
		tags[i] = b.String()
		inputs[i] = tags[i]
	}
	bothAccept, onlyTheirs := 0, 0
	for i, line := range runNode(t, "parse-services.js", nil, inputs) {
		var ref struct {
			Services []map[string]any `json:"services"`
			Error    string           `json:"error"`
		}
		if err := json.Unmarshal(line, &ref); err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
		tag := tags[i]
		ours, oerr := ParseServices(tag)
		switch {
		case ref.Error != "" && oerr == nil:
			t.Errorf("%q: triton-tags rejects it (%s), ParseServices accepts it as %v", tag, ref.Error, ours)
		case ref.Error != "":
		case oerr != nil:
			onlyTheirs++
			if !documentedRejections.MatchString(oerr.Error()) {
				t.Errorf("%q: triton-tags accepts it as %v, ParseServices rejects it for a reason docs/differences.md does not give: %v", tag, ref.Services, oerr)
			}
		default:
			bothAccept++
			if got, want := servicesOf(ours), flagFilterServices(ref.Services); got != want {
				t.Errorf("%q: ParseServices finds %s, Triton CNS %s", tag, got, want)
			}
		}
	}
	t.Logf("%d tags: %d accepted by both, %d by triton-tags only (documented)", n, bothAccept, onlyTheirs)
	if bothAccept < n/10 {
		t.Fatalf("only %d of %d tags accepted by both: the corpus no longer tests agreement", bothAccept, n)
	}
}

// flagFilterServices spells what Triton CNS's FlagFilter makes of
// triton-tags' services: merged by name in order of appearance, each
// port parseInt'd and kept unless NaN; ports sorted and made unique, as
// ParseServices keeps one SRV record per port (docs/differences.md, "One
// service listed twice").
func flagFilterServices(svcs []map[string]any) string {
	var names []string
	ports := map[string][]int{}
	for _, s := range svcs {
		name, _ := s["name"].(string)
		if _, seen := ports[name]; !seen {
			names = append(names, name)
			ports[name] = nil
		}
		if p, ok := s["port"]; ok {
			if v, err := strconv.Atoi(strings.TrimLeft(fmt.Sprint(p), "0")); err == nil {
				ports[name] = append(ports[name], v)
			} else if strings.Trim(fmt.Sprint(p), "0") == "" {
				ports[name] = append(ports[name], 0)
			}
		}
	}
	var b strings.Builder
	for _, name := range names {
		ps := slices.Compact(slices.Sorted(slices.Values(ports[name])))
		fmt.Fprintf(&b, "%s%v;", name, ps)
	}
	return b.String()
}

// servicesOf spells ParseServices' services as flagFilterServices does.
func servicesOf(svcs []Service) string {
	var b strings.Builder
	for _, s := range svcs {
		var ps []int
		for _, p := range s.Ports {
			ps = append(ps, int(p.Port))
		}
		fmt.Fprintf(&b, "%s%v;", s.Name, slices.Compact(slices.Sorted(slices.Values(ps))))
	}
	return b.String()
}
