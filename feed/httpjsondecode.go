package feed

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// flexTime reads the timestamps of Triton's APIs: an ISO 8601 string (with
// or without fractional seconds), null or "" for none, or milliseconds
// since the epoch, which some older API versions sent.
type flexTime time.Time

func (t *flexTime) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		*t = flexTime{}
		return nil
	}
	if len(b) > 0 && b[0] != '"' {
		ms, err := strconv.ParseInt(string(b), 10, 64)
		if err != nil {
			return fmt.Errorf("timestamp %s: not a string or integer milliseconds", b)
		}
		*t = flexTime(time.UnixMilli(ms).UTC())
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("timestamp: %w", err)
	}
	if s == "" {
		*t = flexTime{}
		return nil
	}
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return fmt.Errorf("timestamp %q: %w", s, err)
	}
	*t = flexTime(v.UTC())
	return nil
}

// flexBool reads a boolean that some API versions and hand-made objects
// send as the string "true" or "false"; null is false.
type flexBool bool

func (f *flexBool) UnmarshalJSON(b []byte) error {
	switch string(bytes.TrimSpace(b)) {
	case "true", `"true"`:
		*f = true
	case "false", `"false"`, "null", `""`:
		*f = false
	default:
		return fmt.Errorf("boolean %s: not true or false", b)
	}
	return nil
}

// badEntry is one object of a listing that could not be decoded; ID is its
// uuid (or MAC) when even that much could be read.
type badEntry struct {
	ID  string
	Err error
}

// entryID reads the identifying key of an object that failed to decode,
// for the log line that reports it.
func entryID(raw json.RawMessage, key string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(m[key], &s) != nil {
		return ""
	}
	return s
}
