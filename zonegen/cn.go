package zonegen

import (
	"slices"
	"strings"
	"time"
)

// ServerDown applies the compute-node rule of docs/pipeline.md: a CN is down
// when it is not set up, has never sent a heartbeat, is not running and has
// been silent for longer than o.HeartbeatLimit, or booted less than
// o.BootGrace ago. The reason names the rule that applied.
func ServerDown(s *Server, o DecideOptions, now time.Time) (bool, string) {
	switch {
	case !s.Setup:
		return true, "server " + s.UUID + " is not set up"
	case s.LastHeartbeat.IsZero():
		return true, "server " + s.UUID + " has no heartbeat"
	case s.Status != "running" && now.Sub(s.LastHeartbeat) > o.HeartbeatLimit:
		return true, "server " + s.UUID + " is " + s.Status + " with last heartbeat " + s.LastHeartbeat.UTC().Format(time.RFC3339)
	case !s.LastBoot.IsZero() && now.Sub(s.LastBoot) < o.BootGrace:
		return true, "server " + s.UUID + " booted at " + s.LastBoot.UTC().Format(time.RFC3339)
	}
	return false, ""
}

// computeNodePrefix starts the source of a compute node's records, so that
// they are never taken for a VM's (a VM's source is its bare UUID).
const computeNodePrefix = "cn:"

// ComputeNodeSource is the source compute node uuid's records carry in the
// union and the store: "cn:" and the lower-case UUID.
func ComputeNodeSource(uuid string) string { return computeNodePrefix + lowerASCII(uuid) }

// ComputeNodeOf returns the compute node uuid of a source ComputeNodeSource
// made, and false for any other source.
func ComputeNodeOf(source string) (string, bool) {
	return strings.CutPrefix(source, computeNodePrefix)
}

// ComputeNode returns the records compute node uuid contributes, as the
// shipped CNS published them for every set-up compute node CNAPI lists:
// <uuid>.cmon.<zone> CNAME cmon.<zone> in every forward zone, so that
// CMON finds the node under the same names as its VMs. Nothing else (no
// address, no service) is published for a node. s is the node as CNAPI
// lists it, nil when it is no longer listed; a node that is gone or not
// set up contributes nothing, which removes what it had. Whether the node
// is down does not matter.
func (g *Generator) ComputeNode(uuid string, s *Server) Contribution {
	c := Contribution{VM: ComputeNodeSource(uuid)}
	if s == nil || !s.Setup {
		return c
	}
	id := lowerASCII(uuid)
	recs := make([]Record, len(g.cfg.Zones))
	for zi, z := range g.cfg.Zones {
		recs[zi] = Record{Name: id + ".cmon" + g.suffix[zi], Type: TypeCNAME, Data: g.cmon[zi], Source: c.VM}
		c.Zones = append(c.Zones, ZoneRecords{Zone: z.Name, Records: recs[zi : zi+1 : zi+1]})
	}
	slices.SortFunc(c.Zones, func(x, y ZoneRecords) int { return strings.Compare(x.Zone, y.Zone) })
	return c
}
