package deptest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// rules is the dependency direction README.md states (Layout): data moves
// feed → zonegen → store → xfr/api, and readers never import upstream.
// A package may always import within its own unit (see unit).
var rules = []rule{
	{pkg: "zonegen", restrict: true, allow: []string{"schema"}, stdOnly: true,
		why: "zonegen is pure: no I/O, no clock, no goroutines"},
	{pkg: "hysteresis", restrict: true, allow: []string{"schema"}, stdOnly: true,
		why: "hysteresis is a pure policy"},
	{pkg: "schema", restrict: true, stdOnly: true,
		external: []string{"github.com/santhosh-tekuri/jsonschema/v5"},
		why:      "schema is a leaf: embedded schemas and their validation"},
	{pkg: "store", restrict: true, allow: []string{"zonegen", "schema", "subproc", "parallel"},
		why: "the store holds zonegen's records and knows nothing of the cloud or the wire (subproc runs redistest's redis-server)"},
	{pkg: "xfr", deny: []string{"feed", "zonegen", "hysteresis"},
		why: "readers learn about new data from the store only"},
	{pkg: "api", deny: []string{"feed", "zonegen", "hysteresis"},
		why: "readers learn about new data from the store only"},
	{pkg: "feed", deny: []string{"xfr", "api", "store"},
		why: "feed is upstream of the store and its readers"},
	{pkg: "pipeline", deny: []string{"xfr", "api"},
		why: "the pipeline writes the store; readers learn from the store"},
	{pkg: "cmd/cnsadm", restrict: true, allow: []string{"api/client", "schema", "zonegen", "pipeline", "feed"},
		why: "cnsadm talks to cnsd only through api/client (previews run the pipeline's evaluation over feed's static cloud)"},
	{pkg: "mockcloud", restrict: true, allow: []string{"subproc"}, stdOnly: true,
		external: []string{"github.com/gorilla/websocket"},
		why:      "the simulated cloud speaks only the cloud's wire formats and shares no code with cnsd (subproc runs its slapd)"},
	{pkg: "loglimit", restrict: true, stdOnly: true,
		why: "loglimit is a leaf every package that logs may use"},
	{pkg: "logtest", restrict: true, stdOnly: true,
		why: "logtest is a leaf tests share; it knows nothing of cnsd"},
	{pkg: "parallel", restrict: true, stdOnly: true,
		why: "parallel is a leaf the bulk steps of feed, pipeline and store share"},
	{pkg: "subproc", restrict: true, stdOnly: true,
		why: "subproc is a leaf that starts servers; it knows nothing of cnsd"},
	{pkg: "", deny: []string{"cmd", "deptest"},
		why: "commands and this test are leaves"},
}

func TestImportDirection(t *testing.T) {
	root, mod, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	imports, err := loadImports(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"cmd/cnsd", "cmd/cnsadm", "deptest"} {
		if _, ok := imports[pkg]; !ok {
			t.Fatalf("loadImports(%s) found no package %s; the loader is broken", root, pkg)
		}
	}
	for _, v := range check(mod, imports, rules) {
		t.Errorf("forbidden import: %v", v)
	}
}

// TestRulesNameDirectories keeps the table honest: a rule about a directory
// that does not exist (a typo, a rename) would silently check nothing.
func TestRulesNameDirectories(t *testing.T) {
	root, _, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rules {
		for _, p := range slices.Concat([]string{r.pkg}, r.allow, r.deny) {
			if p == "" {
				continue
			}
			if fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err != nil || !fi.IsDir() {
				t.Errorf("rule for %q names %q, which is not a directory of the module", r.pkg, p)
			}
		}
	}
}

func TestCheck(t *testing.T) {
	const mod = "example.com/m"
	m := func(rel string) string { return mod + "/" + rel }
	tests := []struct {
		name    string
		imports map[string][]string
		want    []string // "from -> import", sorted
	}{
		{name: "clean graph", imports: map[string][]string{
			"zonegen":    {"strings", m("schema")},
			"hysteresis": {"time", m("schema")},
			"schema":     {"encoding/json", "github.com/santhosh-tekuri/jsonschema/v5"},
			"store":      {m("zonegen"), m("schema"), "github.com/redis/go-redis/v9"},
			"xfr":        {m("store"), "github.com/miekg/dns"},
			"api":        {m("store"), m("schema")},
			"api/client": {m("api"), "net/http"},
			"feed":       {m("zonegen"), m("hysteresis"), "github.com/gorilla/websocket"},
			"cmd/cnsd":   {m("feed"), m("store"), m("xfr"), m("api"), m("zonegen")},
			"cmd/cnsadm": {m("api/client"), m("schema"), m("zonegen"), m("cmd/cnsadm/cli")},
		}},
		{name: "zonegen imports hysteresis", imports: map[string][]string{
			"zonegen": {m("hysteresis")},
		}, want: []string{"zonegen -> " + m("hysteresis")}},
		{name: "zonegen imports a third-party package", imports: map[string][]string{
			"zonegen": {"github.com/miekg/dns"},
		}, want: []string{"zonegen -> github.com/miekg/dns"}},
		{name: "zonegen subpackage imports store", imports: map[string][]string{
			"zonegen/internal/x": {m("zonegen"), m("store")},
		}, want: []string{"zonegen/internal/x -> " + m("store")}},
		{name: "hysteresis imports zonegen", imports: map[string][]string{
			"hysteresis": {m("zonegen")},
		}, want: []string{"hysteresis -> " + m("zonegen")}},
		{name: "schema imports zonegen and yaml", imports: map[string][]string{
			"schema": {m("zonegen"), "gopkg.in/yaml.v3"},
		}, want: []string{"schema -> " + m("zonegen"), "schema -> gopkg.in/yaml.v3"}},
		{name: "store imports feed", imports: map[string][]string{
			"store": {m("feed")},
		}, want: []string{"store -> " + m("feed")}},
		{name: "xfr reaches upstream", imports: map[string][]string{
			"xfr": {m("feed"), m("zonegen"), m("hysteresis"), m("store")},
		}, want: []string{"xfr -> " + m("feed"), "xfr -> " + m("hysteresis"), "xfr -> " + m("zonegen")}},
		{name: "api client imports zonegen", imports: map[string][]string{
			"api/client": {m("zonegen")},
		}, want: []string{"api/client -> " + m("zonegen")}},
		{name: "feed imports the store and xfr", imports: map[string][]string{
			"feed": {m("store"), m("xfr/peers")},
		}, want: []string{"feed -> " + m("store"), "feed -> " + m("xfr/peers")}},
		{name: "cnsadm imports store", imports: map[string][]string{
			"cmd/cnsadm": {m("store"), m("api")},
		}, want: []string{"cmd/cnsadm -> " + m("api"), "cmd/cnsadm -> " + m("store")}},
		{name: "a package imports a command", imports: map[string][]string{
			"api":      {m("cmd/cnsd/internal/wire")},
			"cmd/cnsd": {m("cmd/cnsadm/cli")},
		}, want: []string{"api -> " + m("cmd/cnsd/internal/wire"), "cmd/cnsd -> " + m("cmd/cnsadm/cli")}},
		{name: "something imports deptest", imports: map[string][]string{
			"store": {m("deptest")},
		}, want: []string{"store -> " + m("deptest")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, v := range check(mod, tt.imports, rules) {
				got = append(got, v.from+" -> "+v.imp)
			}
			got = slices.Compact(got) // one import may break several rules
			if !slices.Equal(got, tt.want) {
				t.Errorf("violations:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}
