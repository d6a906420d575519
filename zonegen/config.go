package zonegen

import (
	"slices"
	"strings"
	"sync"
)

// Config is the part of cnsd's configuration that shapes names.
type Config struct {
	// Zones are the forward zones in configuration order; the order
	// breaks ties when the shortest PTR target is chosen.
	Zones    []ZoneConfig `json:"zones"`
	UseAlias bool         `json:"use_alias,omitempty"`
	UseLogin bool         `json:"use_login,omitempty"`
}

// ZoneConfig maps one forward zone to NAPI network or pool UUIDs; "*"
// makes it the catch-all zone.
type ZoneConfig struct {
	Name     string   `json:"name"`
	Networks []string `json:"networks"`
}

// Generator produces Contributions for one Config. It is immutable and
// safe for concurrent use.
type Generator struct {
	cfg       Config
	byNetwork map[string][]int // network or pool UUID → zone indexes, in config order
	catchAll  []int            // zones listing "*"
	suffix    []string         // "." + zone + "."
	cmon      []string         // "cmon." + zone + "."
	scratch   sync.Pool        // *scratch, reused between Generate calls
}

// NewGenerator prepares the lookups for cfg. Zone names are used as given
// (lower-case, no trailing dot: the configuration checks that).
func NewGenerator(cfg Config) *Generator {
	cfg.Zones = slices.Clone(cfg.Zones)
	g := &Generator{cfg: cfg, byNetwork: map[string][]int{}}
	for i, z := range cfg.Zones {
		z.Name = strings.TrimSuffix(z.Name, ".")
		cfg.Zones[i].Name = z.Name
		g.suffix = append(g.suffix, "."+z.Name+".")
		g.cmon = append(g.cmon, "cmon."+z.Name+".")
		for _, n := range z.Networks {
			if n == "*" {
				g.catchAll = append(g.catchAll, i)
				continue
			}
			n = lowerASCII(n)
			if idx := g.byNetwork[n]; len(idx) == 0 || idx[len(idx)-1] != i {
				g.byNetwork[n] = append(idx, i)
			}
		}
	}
	return g
}

// isCatchAll reports whether zone i lists "*".
func (g *Generator) isCatchAll(i int) bool {
	for _, c := range g.catchAll {
		if c == i {
			return true
		}
	}
	return false
}
