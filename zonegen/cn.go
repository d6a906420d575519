package zonegen

import "time"

// ServerDown applies the compute-node rule of DESIGN.md §4: a CN is down
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
