package pipeline

import (
	"strings"

	"github.com/cnsd/cnsd/zonegen"
)

// computeNodes returns the records of the compute nodes uuids as CNAPI
// lists them now: CMON names for a node that is set up, a removal for one
// no longer listed or not set up (zonegen.Generator.ComputeNode). It adds
// a removal for every compute node the store has records of and CNAPI
// does not list as set up: one that went while no cnsd was following
// CNAPI. Only a successful listing triggers this, so "not listed" is
// CNAPI's answer, not an outage. The caller holds mu.
func (p *Pipeline) computeNodes(uuids []string) []zonegen.Contribution {
	var cs []zonegen.Contribution
	seen := map[string]bool{}
	for _, id := range uuids {
		key := strings.ToLower(id)
		if seen[key] {
			continue
		}
		seen[key] = true
		var srv *zonegen.Server
		if s, ok := p.res.servers.Server(id); ok {
			srv = &s
		}
		cs = append(cs, p.computeNode(key, srv))
	}
	for _, source := range p.cfg.Store.Sources() {
		id, ok := zonegen.ComputeNodeOf(source)
		if _, listed := p.cns[id]; ok && !listed && !seen[id] {
			seen[id] = true
			cs = append(cs, p.computeNode(id, nil))
		}
	}
	return cs
}

// computeNode returns the records of compute node id (lower-case), srv
// being the node as CNAPI lists it or nil, and keeps p.cns up to date.
// The caller holds mu.
func (p *Pipeline) computeNode(id string, srv *zonegen.Server) zonegen.Contribution {
	c := p.gen.ComputeNode(id, srv)
	absoluteZones(&c)
	if srv != nil && srv.Setup {
		p.cns[id] = *srv
	} else {
		delete(p.cns, id)
	}
	return c
}

// allComputeNodes returns the records of every set-up compute node CNAPI
// listed, under the current settings: for a change of zones. The caller
// holds mu.
func (p *Pipeline) allComputeNodes() []zonegen.Contribution {
	cs := make([]zonegen.Contribution, 0, len(p.cns))
	for id, srv := range p.cns {
		c := p.gen.ComputeNode(id, &srv)
		absoluteZones(&c)
		cs = append(cs, c)
	}
	return cs
}
