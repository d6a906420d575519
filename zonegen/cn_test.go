package zonegen

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// cnCase is one file of testdata/computenodes: a compute node as CNAPI
// lists it (absent: no longer listed) and the configuration.
type cnCase struct {
	Comment string  `json:"comment"`
	Config  string  `json:"config"` // name of testdata/configs/<name>.json
	UUID    string  `json:"uuid"`
	Server  *Server `json:"server"`
}

// TestGoldenComputeNodes renders the records of each compute node of
// testdata/computenodes and compares them with the .golden file beside it
// (-update rewrites them).
func TestGoldenComputeNodes(t *testing.T) {
	files, err := filepath.Glob("testdata/computenodes/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no compute node cases: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			var c cnCase
			loadJSON(t, f, &c)
			var cfg Config
			loadJSON(t, filepath.Join("testdata/configs", c.Config+".json"), &cfg)
			got := NewGenerator(cfg).ComputeNode(c.UUID, c.Server)
			var b strings.Builder
			fmt.Fprintf(&b, "; source %s\n", got.VM)
			for _, z := range got.Zones {
				fmt.Fprintf(&b, "\n$ORIGIN %s.\n", z.Zone)
				for _, r := range z.Records {
					if r.Source != got.VM {
						fmt.Fprintf(&b, "; wrong source %q\n", r.Source)
					}
					fmt.Fprintf(&b, "%s\n", r)
				}
			}
			compareGolden(t, strings.TrimSuffix(f, ".json")+".golden", b.String())
		})
	}
}

func TestComputeNodeSource(t *testing.T) {
	src := ComputeNodeSource("44454C4C-3200-1042-8052-B4C04F384D32")
	if src != "cn:44454c4c-3200-1042-8052-b4c04f384d32" {
		t.Errorf("ComputeNodeSource = %q", src)
	}
	if id, ok := ComputeNodeOf(src); !ok || id != "44454c4c-3200-1042-8052-b4c04f384d32" {
		t.Errorf("ComputeNodeOf(%q) = %q, %v", src, id, ok)
	}
	if _, ok := ComputeNodeOf("44454c4c-3200-1042-8052-b4c04f384d32"); ok {
		t.Errorf("a VM's source is taken for a compute node's")
	}
}
