package schema

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds Parse arbitrary files, seeded with every testdata file.
// Parse must not panic, must return either a Config or an *Error, and a
// Config it returns must keep the invariants later stages rely on.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			if c != nil {
				t.Fatalf("Parse returned a Config and %v", err)
			}
			switch e := err.(type) {
			case *Error:
			case Errors:
				if len(e) < 2 {
					t.Fatalf("Errors of %d problems: %v", len(e), err)
				}
			default:
				t.Fatalf("error %v is a %T, not an *Error or Errors", err, err)
			}
			return
		}
		checkInvariants(t, c)
		if _, err := Upgrade(data); err != nil {
			t.Fatalf("Parse accepted the file, Upgrade did not: %v", err)
		}
	})
}

// checkInvariants fails t when c breaks a promise of Parse.
func checkInvariants(t *testing.T, c *Config) {
	t.Helper()
	if c.MyName == "" || len(c.ForwardZones) == 0 {
		t.Fatalf("my_name %q, %d zones", c.MyName, len(c.ForwardZones))
	}
	catchAlls := 0
	names := map[string]bool{}
	for _, z := range c.ForwardZones {
		if len(z.Networks) == 0 {
			t.Fatalf("zone %q has no network", z.Name)
		}
		if z.CatchAll() {
			catchAlls++
		}
		if names[z.Name] || !isHostName(z.Name) {
			t.Fatalf("zone name %q duplicate or invalid", z.Name)
		}
		names[z.Name] = true
		if z.HiddenPrimary && len(z.Peers) == 0 {
			t.Fatalf("zone %q is a hidden primary without peers", z.Name)
		}
	}
	if catchAlls > 1 {
		t.Fatalf("%d catch-all zones", catchAlls)
	}
	if c.Coalesce.Window > c.Coalesce.MaxDelay || c.TTL.Record <= 0 || c.Hysteresis.Divisor < 1 {
		t.Fatalf("bounds broken: %+v %+v %+v", c.Coalesce, c.TTL, c.Hysteresis)
	}
}
