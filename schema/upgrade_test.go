package schema

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"reflect"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// TestUpgrade rewrites a file in the RFD 1 spelling and compares the
// result with testdata/upgrade.golden.json (go test -update rewrites it).
func TestUpgrade(t *testing.T) {
	in := readFile(t, "testdata/upgrade.rfd1.json")
	got, err := Upgrade(in)
	if err != nil {
		t.Fatal(err)
	}
	const golden = "testdata/upgrade.golden.json"
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if want := readFile(t, golden); !bytes.Equal(got, want) {
		t.Errorf("Upgrade output differs from %s:\n%s", golden, got)
	}
	for _, old := range []string{`"dns_zones"`, `"slaves"`, `"hidden_master"`} {
		if bytes.Contains(got, []byte(old)) {
			t.Errorf("output still contains %s", old)
		}
	}
	before, err := Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	after, err := Parse(got)
	if err != nil {
		t.Fatalf("upgraded file does not parse: %v", err)
	}
	if !reflect.DeepEqual(before, after) {
		t.Errorf("upgraded file parses differently\nbefore: %+v\n after: %+v", before, after)
	}
}

// TestUpgradeKeepsCurrentFiles checks that a file already in the current
// spelling comes out with the same meaning, and that upgrading twice
// changes nothing.
func TestUpgradeKeepsCurrentFiles(t *testing.T) {
	for _, name := range []string{"minimal", "full", "triton", "rfd1"} {
		t.Run(name, func(t *testing.T) {
			in := readFile(t, "testdata/"+name+".good.json")
			once, err := Upgrade(in)
			if err != nil {
				t.Fatal(err)
			}
			twice, err := Upgrade(once)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(once, twice) {
				t.Errorf("second Upgrade changed the file:\n%s\n---\n%s", once, twice)
			}
			a, errA := Parse(in)
			b, errB := Parse(once)
			if errA != nil || errB != nil || !reflect.DeepEqual(a, b) {
				t.Errorf("Upgrade changed the meaning (%v, %v)", errA, errB)
			}
		})
	}
}

func TestUpgradeRejectsInvalid(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"syntax", `{"my_name": }`, "config: line 1, column 13: invalid character '}' looking for beginning of value"},
		{"both spellings", `{"dns_zones": {}, "forward_zones": {}}`,
			`config: both "dns_zones" and "forward_zones" are set; use only "forward_zones"`},
		{"missing key", `{"dns_zones": {"a.example.com": {"networks": ["*"]}}}`, "config: my_name: required key is missing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Upgrade([]byte(tc.in))
			if err == nil || err.Error() != tc.want || !errors.Is(err, ErrInvalid) {
				t.Errorf("Upgrade = %q, %v; want error %s", out, err, tc.want)
			}
		})
	}
}

func TestUpgradeStrings(t *testing.T) {
	in := `{"my_name": "ns1.example.com", "hostmaster": "a<b>&c@example.com",
		"forward_zones": {"a.example.com": {"networks": ["*"]}}, "binder_domain": "\u00e9\t\"x\""}`
	want := `{
  "my_name": "ns1.example.com",
  "hostmaster": "a<b>&c@example.com",
  "forward_zones": {
    "a.example.com": {
      "networks": [
        "*"
      ]
    }
  },
  "binder_domain": "é\t\"x\""
}
`
	got, err := Upgrade([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
