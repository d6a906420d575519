package zonegen

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseServices(t *testing.T) {
	p := func(port, prio, weight uint16) Port { return Port{Port: port, Priority: prio, Weight: weight} }
	tests := []struct {
		name, tag string
		want      []Service
		err       string
	}{
		{"single", "foobar", []Service{{Name: "foobar"}}, ""},
		{"upper case lowered", "someName", []Service{{Name: "somename"}}, ""},
		{"digit first", "5foobar", []Service{{Name: "5foobar"}}, ""},
		{"port", "foobar:1234", []Service{{Name: "foobar", Ports: []Port{p(1234, 0, 10)}}}, ""},
		{"two", "foobar,test", []Service{{Name: "foobar"}, {Name: "test"}}, ""},
		{"dotted", "foo.dev,test.dev", []Service{{Name: "foo.dev"}, {Name: "test.dev"}}, ""},
		{"dotted with port", "foobar.dev:123", []Service{{Name: "foobar.dev", Ports: []Port{p(123, 0, 10)}}}, ""},
		{"priority", "foobar:1234:priority=10", []Service{{Name: "foobar", Ports: []Port{p(1234, 10, 10)}}}, ""},
		{"port key", "foobar:port=1234", []Service{{Name: "foobar", Ports: []Port{p(1234, 0, 10)}}}, ""},
		{"all keys", "_foo._tcp:123:priority=20:weight=20", []Service{{Name: "_foo._tcp", Ports: []Port{p(123, 20, 20)}}}, ""},
		{"srv udp", "_dns._udp:389", []Service{{Name: "_dns._udp", Ports: []Port{p(389, 0, 10)}}}, ""},
		{"last key wins", "web:80:port=81:weight=1:weight=2", []Service{{Name: "web", Ports: []Port{p(81, 0, 2)}}}, ""},
		{"merge ports", "foo:1234,foo:1235,bar", []Service{{Name: "foo", Ports: []Port{p(1234, 0, 10), p(1235, 0, 10)}}, {Name: "bar"}}, ""},
		// One service listed twice is one service with every port it was
		// given, each once (docs/differences.md).
		{"same port twice", "foo:80,foo:80", []Service{{Name: "foo", Ports: []Port{p(80, 0, 10)}}}, ""},
		{"bare then with a port", "foo,foo:80", []Service{{Name: "foo", Ports: []Port{p(80, 0, 10)}}}, ""},
		{"same port, other priority", "foo:80,foo:80:priority=5", []Service{{Name: "foo", Ports: []Port{p(80, 0, 10), p(80, 5, 10)}}}, ""},
		{"duplicate port once", "foo:80,foo:80,foo", []Service{{Name: "foo", Ports: []Port{p(80, 0, 10)}}}, ""},
		{"priority without port", "foo:priority=3", []Service{{Name: "foo"}}, ""},
		{"weight zero", "foo:80:weight=0", []Service{{Name: "foo", Ports: []Port{p(80, 0, 0)}}}, ""},
		{"max values", "foo:65535:priority=65535:weight=65535", []Service{{Name: "foo", Ports: []Port{p(65535, 65535, 65535)}}}, ""},
		{"sixty-three octets", strings.Repeat("a", 63), []Service{{Name: strings.Repeat("a", 63)}}, ""},

		{"empty", "", nil, `invalid triton.cns.services tag "": at offset 0: expected a service name, found end of tag`},
		{"underscore alone", "_foobar", nil, `invalid triton.cns.services tag "_foobar": at offset 0: a name starting with "_" must have the form _name._tcp or _name._udp`},
		{"bad protocol", "_foo._bar:389", nil, `invalid triton.cns.services tag "_foo._bar:389": at offset 0: a name starting with "_" must have the form _name._tcp or _name._udp`},
		{"key without value", "foobar:abcd", nil, `invalid triton.cns.services tag "foobar:abcd": at offset 7: expected "key=value" after ":" in service "foobar"`},
		{"label too long", strings.Repeat("a", 64), nil, `invalid triton.cns.services tag "` + strings.Repeat("a", 64) + `": at offset 0: service name "` + strings.Repeat("a", 64) + `" has a label longer than 63 octets`},
		{"long name of short labels", strings.Repeat("a", 40) + "." + strings.Repeat("b", 40) + ":80", []Service{{Name: strings.Repeat("a", 40) + "." + strings.Repeat("b", 40), Ports: []Port{{Port: 80, Weight: 10}}}}, ""},
		{"second label too long", "web." + strings.Repeat("c", 64), nil, `invalid triton.cns.services tag "web.` + strings.Repeat("c", 64) + `": at offset 0: service name "web.` + strings.Repeat("c", 64) + `" has a label longer than 63 octets`},
		{"port too big", "foobar:123123123123", nil, `invalid triton.cns.services tag "foobar:123123123123": at offset 7: port "123123123123" of "foobar" must be within 1-65535`},
		{"port zero", "foobar:0", nil, `invalid triton.cns.services tag "foobar:0": at offset 7: port "0" of "foobar" must be within 1-65535`},
		{"port key zero", "foobar:port=0", nil, `invalid triton.cns.services tag "foobar:port=0": at offset 12: port "0" of "foobar" must be within 1-65535`},
		{"unknown key", "foobar:invalid=somevalue1", nil, `invalid triton.cns.services tag "foobar:invalid=somevalue1": at offset 7: unknown property "invalid" in service "foobar" (want port, priority or weight)`},
		{"bad priority", "foobar:priority=aaaaaaa", nil, `invalid triton.cns.services tag "foobar:priority=aaaaaaa": at offset 16: priority "aaaaaaa" of "foobar" must be within 0-65535`},
		{"negative weight", "foobar:80:weight=-1", nil, `invalid triton.cns.services tag "foobar:80:weight=-1": at offset 17: weight "-1" of "foobar" must be within 0-65535`},
		{"empty value", "foobar:weight=", nil, `invalid triton.cns.services tag "foobar:weight=": at offset 14: weight "" of "foobar" must be within 0-65535`},
		{"trailing comma", "foo,", nil, `invalid triton.cns.services tag "foo,": at offset 4: expected a service name, found end of tag`},
		{"space after comma", "foo, bar", nil, `invalid triton.cns.services tag "foo, bar": at offset 4: expected a service name, found " "`},
		{"junk after port", "foo:80x", nil, `invalid triton.cns.services tag "foo:80x": at offset 6: expected "," or end of tag`},
		{"empty label", "foo..bar", nil, `invalid triton.cns.services tag "foo..bar": at offset 0: service name "foo..bar" has an empty label`},
		{"trailing dot", "foo.", nil, `invalid triton.cns.services tag "foo.": at offset 0: service name "foo." has an empty label`},
		{"bare tcp", "_tcp:389", nil, `invalid triton.cns.services tag "_tcp:389": at offset 0: a name starting with "_" must have the form _name._tcp or _name._udp`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseServices(tt.tag)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("ParseServices(%q) error = %v, want %s", tt.tag, err, tt.err)
				}
				if got != nil {
					t.Errorf("services = %v, want none on error", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseServices(%q): %v", tt.tag, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseServices(%q) = %+v, want %+v", tt.tag, got, tt.want)
			}
		})
	}
}

// FuzzParseServices checks that any tag either parses into services that
// can become DNS labels, or fails with a TagError pointing into the tag.
func FuzzParseServices(f *testing.F) {
	for _, s := range []string{"web", "web:80", "a:1:priority=2:weight=3,b", "_x._tcp:1", "foo..bar", "x:port=65536", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tag string) {
		svcs, err := ParseServices(tag)
		if err != nil {
			te, ok := err.(*TagError)
			if !ok || te.Offset < 0 || te.Offset > len(tag) || te.Tag != tag {
				t.Fatalf("bad error %#v for %q", err, tag)
			}
			return
		}
		if len(svcs) == 0 {
			t.Fatalf("no services and no error for %q", tag)
		}
		for _, s := range svcs {
			if s.Name == "" || s.Name != strings.ToLower(s.Name) || !utf8.ValidString(s.Name) {
				t.Fatalf("bad service name %q from %q", s.Name, tag)
			}
			for _, l := range strings.Split(s.Name, ".") {
				if l == "" || len(l) > 63 {
					t.Fatalf("empty or over-long label in %q from %q", s.Name, tag)
				}
			}
			for _, p := range s.Ports {
				if p.Port == 0 {
					t.Fatalf("port 0 from %q", tag)
				}
			}
		}
	})
}
