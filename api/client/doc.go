// Package client is the Go client of cnsd's REST API, used by cnsadm.
//
// It may import api (wire types) and schema. Like api, it must not import
// feed, zonegen or hysteresis, and cnsadm reaches cnsd only through it.
// deptest enforces this.
package client
