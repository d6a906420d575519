package zonegen

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestGenerateOwnsItsStrings: what Generate returns shares no memory with
// the scratch it writes its strings in first, which the next Generate
// writes over: contributions kept across many calls stay what they
// were. Among the views, names too long for the zones (notes that quote
// them), an alias to dnsify, and a VM whose names overflow the scratch
// chunk.
func TestGenerateOwnsItsStrings(t *testing.T) {
	views, cfg := benchViews(300)
	views[1].VM.Alias = strings.Repeat("Long Alias ", 5)
	views[2].VM.Alias = strings.Repeat("x", 62)
	views[2].Owner = &Account{UUID: views[2].Owner.UUID, Login: strings.Repeat("y", 62), TritonCNSEnabled: "true", ApprovedForProvisioning: "true"}
	views[3].VM.Tags[TagServices] = strings.Repeat("s", 60) + ":80"
	big := &views[4].VM
	big.Tags[TagServices] = "a:1,b:2,c:3,d:4"
	for i := range 200 {
		big.NICs[0].IPs = append(big.NICs[0].IPs, fmt.Sprintf("2001:db8::%x", i+1))
	}
	// Names in this zone are too long for a UUID owner and instance,
	// and the notes saying so quote them.
	cfg.Zones[0].Name = strings.Repeat("z", 60) + "." + strings.Repeat("y", 60) + "." + strings.Repeat("x", 50) + ".example.com"
	g := NewGenerator(cfg)
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	gen := func(v *View) Contribution {
		d := Decide(v, DefaultDecideOptions(), now)
		return g.Generate(v, &d)
	}
	kept, text := make([]Contribution, len(views)), make([]string, len(views))
	for i := range views {
		kept[i] = gen(&views[i])
		text[i] = fmt.Sprintf("%#v", kept[i])
	}
	n := 0
	for _, z := range kept[4].Zones {
		n += len(z.Records)
	}
	if n < 1000 {
		t.Fatalf("the big VM has %d records, too few to overflow the scratch chunk", n)
	}
	notes := 0
	for i := range views {
		gen(&views[(i+7)%len(views)]) // writes over the scratch between checks
		if now := fmt.Sprintf("%#v", kept[i]); now != text[i] {
			t.Fatalf("view %d: the contribution kept changed after other calls:\nthen %s\nnow  %s", i, text[i], now)
		}
		if again := gen(&views[i]); !reflect.DeepEqual(kept[i], again) {
			t.Fatalf("view %d: generated again, %v; first %v", i, again, kept[i])
		}
		notes += len(kept[i].Notes)
	}
	if notes == 0 {
		t.Fatal("no notes: the test does not reach them")
	}
}
