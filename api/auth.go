package api

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"

	"github.com/cnsd/cnsd/schema"
)

// Access says which requests the API lets in.
type Access struct {
	// Mode is schema.AuthToken (every route but GET /ping, GET /ready
	// and GET /openapi.json needs a token), schema.AuthWrites (only the routes that change
	// state do) or schema.AuthNone (none does).
	Mode string
	// Token opens every route. With Mode AuthToken or AuthWrites an empty
	// Token lets no request in where a token is needed.
	Token string
	// ReadToken, when set, opens the routes that only read.
	ReadToken string
	// MetricsOpen lets GET /metrics in without a token.
	MetricsOpen bool
}

// AccessOf is the access of the API settings c, with token the token
// cnsd uses (c.Token, or the content of c.TokenFile).
func AccessOf(c schema.APIConfig, token string) Access {
	return Access{Mode: c.Auth, Token: token, ReadToken: c.ReadToken, MetricsOpen: c.MetricsAuth == schema.AuthNone}
}

// level is what a route does, which decides the token it needs.
type level int

const (
	open    level = iota // probes and the API's description: never a token
	read                 // reads: the read token or the token
	metrics              // GET /metrics: as read, unless MetricsOpen
	write                // changes state: the token only
)

// errForbidden: the read token was presented on a route that writes.
var errForbidden = errors.New("the read token does not open routes that change state; present api.token")

// check lets r in on a route of level lv, or says why not.
func (a Access) check(lv level, r *http.Request) error {
	switch {
	case lv == open, a.Mode == schema.AuthNone:
		return nil
	case lv == metrics && a.MetricsOpen:
		return nil
	case lv == read && a.Mode == schema.AuthWrites:
		return nil
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	switch {
	case !ok:
		return errUnauthorized
	case same(got, a.Token):
		return nil
	case same(got, a.ReadToken) && lv != write:
		return nil
	case same(got, a.ReadToken):
		return errForbidden
	}
	return errUnauthorized
}

// same compares a presented token with a configured one in constant time;
// an empty configured token matches nothing.
func same(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}
