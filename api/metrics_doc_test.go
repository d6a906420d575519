package api

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestOperatorGuideNamesEveryMetric keeps the metrics table of
// docs/operator-guide.md complete: every metric cnsd defines must be named
// there.
func TestOperatorGuideNamesEveryMetric(t *testing.T) {
	guide, err := os.ReadFile("../docs/operator-guide.md")
	if err != nil {
		t.Fatal(err)
	}
	c := newCollector(&Server{})
	fields := 0
	for f := range reflect.TypeFor[collector]().Fields() {
		if f.Type == reflect.TypeFor[*prometheus.Desc]() {
			fields++
		}
	}
	if n := len(c.descs()); n != fields {
		t.Fatalf("descs lists %d metrics, the collector has %d", n, fields)
	}
	fqName := regexp.MustCompile(`fqName: "([^"]+)"`)
	for _, d := range c.descs() {
		m := fqName.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("no name in %s", d)
		}
		if !strings.Contains(string(guide), "`"+m[1]+"`") {
			t.Errorf("metric %s is not in docs/operator-guide.md", m[1])
		}
	}
}
