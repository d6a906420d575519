package conformance

import (
	"bufio"
	"fmt"
	"os"
	"path"
	"strings"
)

// allowedFile lists the differences from Knot and NSD that cnsd makes on
// purpose, each with the row of docs/differences.md that gives the RFC
// text allowing it.
const (
	allowedFile     = "testdata/allowed.txt"
	differencesFile = "../docs/differences.md"
)

// rule matches a class of differences by their key: five glob patterns
// (path.Match) for variant, kind of name, type, transport and field.
type rule struct {
	pattern []string
	why     string // the row of differences.md
	line    int
}

func (r rule) String() string { return strings.Join(r.pattern, " ") }

func (r rule) matches(d difference) bool {
	key := strings.Fields(d.key())
	for i, p := range r.pattern {
		if ok, _ := path.Match(p, key[i]); !ok {
			return false
		}
	}
	return true
}

// loadAllowed reads allowedFile: one rule a line, the five patterns and
// then the topic of a row of differencesFile's table of answers; # starts
// a comment. Every topic must be a row there.
func loadAllowed() ([]rule, error) {
	doc, err := os.ReadFile(differencesFile)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(allowedFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []rule
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		words := strings.Fields(line)
		if len(words) == 0 {
			continue
		}
		if len(words) < 6 {
			return nil, fmt.Errorf("%s:%d: want five patterns and the topic of a row of %s", allowedFile, n, differencesFile)
		}
		r := rule{pattern: words[:5], why: strings.Join(words[5:], " "), line: n}
		for _, p := range r.pattern {
			if _, err := path.Match(p, ""); err != nil {
				return nil, fmt.Errorf("%s:%d: %q: %w", allowedFile, n, p, err)
			}
		}
		if !strings.Contains(string(doc), "\n| "+r.why+" |") {
			return nil, fmt.Errorf("%s:%d: %s has no row %q", allowedFile, n, differencesFile, r.why)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}
