package store

import (
	"crypto/rand"
	"encoding/hex"
)

// NewChangeID returns a new random ZoneChange.ID, naming one Apply call
// so that its scripts recognise their own earlier run. The Store names
// each commit with one; a backend given changes without an ID (a caller
// other than the Store) names the call itself with another.
func NewChangeID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}
