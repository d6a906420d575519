package zonegen

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// corpusCase is one file of testdata/views: a VM view, the configuration
// it is generated under, and what the pipeline would add (hysteresis holds).
type corpusCase struct {
	Comment string `json:"comment"`
	Config  string `json:"config"` // name of testdata/configs/<name>.json
	Options struct {
		RequireStatusUp bool `json:"require_status_up"`
	} `json:"options"`
	Now  time.Time `json:"now"`
	Held []string  `json:"held"`
	View View      `json:"view"`
}

func loadJSON(t testing.TB, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestGolden runs every VM view of testdata/views through Decide and
// Generate and compares a readable rendering with the .golden file beside
// it. Run with -update to rewrite them; check each change by hand against
// docs/user-guide.md and docs/pipeline.md before committing.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/views/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus files: %v", err)
	}
	gens := map[string]*Generator{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			var c corpusCase
			loadJSON(t, f, &c)
			g := gens[c.Config]
			if g == nil {
				var cfg Config
				loadJSON(t, filepath.Join("testdata/configs", c.Config+".json"), &cfg)
				g = NewGenerator(cfg)
				gens[c.Config] = g
			}
			opts := DefaultDecideOptions()
			opts.RequireStatusUp = c.Options.RequireStatusUp
			d := Decide(&c.View, opts, c.Now)
			for _, s := range c.Held {
				if !d.Hold(s) {
					t.Errorf("Hold(%q) = false", s)
				}
			}
			got := render(&d, g.Generate(&c.View, &d))
			compareGolden(t, strings.TrimSuffix(f, ".json")+".golden", got)
		})
	}
}

func compareGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs; got:\n%s\nwant:\n%s", path, got, want)
	}
}

// render prints a decision and a contribution in zone-file-like form.
func render(d *Decision, c Contribution) string {
	var b strings.Builder
	fmt.Fprintf(&b, "; decision: instance=%v self_removal=%v unresolved=%v\n", d.Instance, d.SelfRemoval, d.Unresolved)
	for _, s := range d.Services {
		fmt.Fprintf(&b, "; service %s listed=%v", s.Name, s.Listed)
		for _, p := range s.Ports {
			fmt.Fprintf(&b, " port=%d/%d/%d", p.Port, p.Priority, p.Weight)
		}
		b.WriteByte('\n')
	}
	for _, r := range d.Reasons {
		fmt.Fprintf(&b, "; reason %s\n", r)
	}
	for _, n := range c.Notes {
		fmt.Fprintf(&b, "; note %s\n", n)
	}
	for _, z := range c.Zones {
		fmt.Fprintf(&b, "\n$ORIGIN %s.\n", z.Zone)
		for _, r := range z.Records {
			if r.Source != c.VM {
				fmt.Fprintf(&b, "; wrong source %q\n", r.Source)
			}
			fmt.Fprintf(&b, "%s\n", r)
		}
	}
	return b.String()
}

// TestCorpusCoversEveryReason fails when a reason code declared in
// decide.go shows up in no golden file, so every rule keeps a case.
func TestCorpusCoversEveryReason(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "decide.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || !strings.HasPrefix(vs.Names[0].Name, "Reason") {
			return true
		}
		if lit, ok := vs.Values[0].(*ast.BasicLit); ok {
			codes = append(codes, strings.Trim(lit.Value, `"`))
		}
		return true
	})
	if len(codes) < 20 {
		t.Fatalf("found only %d reason codes in decide.go", len(codes))
	}
	goldens, _ := filepath.Glob("testdata/views/*.golden")
	var all strings.Builder
	for _, g := range goldens {
		data, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(data)
	}
	for _, c := range codes {
		if !strings.Contains(all.String(), "; reason "+c) && !strings.Contains(all.String(), "; note "+c) {
			t.Errorf("reason %q appears in no golden file", c)
		}
	}
}
