package feed

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cnsd/cnsd/zonegen"
)

// errNoUUID rejects an object without the uuid everything is keyed by.
var errNoUUID = errors.New("no uuid")

// cnapiServer is the part of a CNAPI server object that the compute-node
// rule reads. Everything else CNAPI sends (sysinfo, ram, …) is ignored.
type cnapiServer struct {
	UUID          string   `json:"uuid"`
	Hostname      string   `json:"hostname"`
	Status        string   `json:"status"`
	Setup         flexBool `json:"setup"`
	LastBoot      flexTime `json:"last_boot"`
	LastHeartbeat flexTime `json:"last_heartbeat"`
}

// decodeServers decodes a CNAPI GET /servers answer. Only a body that is
// not a JSON array is an error; a malformed element is returned in bad and
// the rest are kept.
func decodeServers(body []byte) (servers []zonegen.Server, bad []badEntry, err error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(body, &raws); err != nil {
		return nil, nil, fmt.Errorf("decode servers: %w", err)
	}
	for _, raw := range raws {
		s, err := decodeServer(raw)
		if err != nil {
			bad = append(bad, badEntry{ID: entryID(raw, "uuid"), Err: err})
			continue
		}
		servers = append(servers, s)
	}
	return servers, bad, nil
}

// decodeServer decodes one CNAPI server object.
func decodeServer(raw json.RawMessage) (zonegen.Server, error) {
	var c cnapiServer
	if err := json.Unmarshal(raw, &c); err != nil {
		return zonegen.Server{}, fmt.Errorf("decode server: %w", err)
	}
	if c.UUID == "" {
		return zonegen.Server{}, fmt.Errorf("decode server: %w", errNoUUID)
	}
	return zonegen.Server{
		UUID:          c.UUID,
		Hostname:      c.Hostname,
		Status:        c.Status,
		Setup:         bool(c.Setup),
		LastBoot:      time.Time(c.LastBoot),
		LastHeartbeat: time.Time(c.LastHeartbeat),
	}, nil
}

// serverRuleChanged reports whether a and b differ in a field the
// compute-node rule (zonegen.ServerDown) reads. A running server's
// heartbeat moves on every poll and the rule ignores its age, so that
// change alone is not reported: it would re-evaluate every VM of the cloud
// on every poll.
func serverRuleChanged(a, b zonegen.Server) bool {
	if a.Status != b.Status || a.Setup != b.Setup || !a.LastBoot.Equal(b.LastBoot) {
		return true
	}
	if a.LastHeartbeat.Equal(b.LastHeartbeat) {
		return false
	}
	return a.LastHeartbeat.IsZero() || b.LastHeartbeat.IsZero() || a.Status != "running"
}
