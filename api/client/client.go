package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cnsd/cnsd/api"
)

// The API's wire types, for callers that may import only this package.
type (
	Zone           = api.Zone
	Peer           = api.Peer
	PeerZone       = api.PeerZone
	AllowedPeer    = api.AllowedPeer
	VM             = api.VM
	VMZone         = api.VMZone
	Record         = api.Record
	ServiceListing = api.ServiceListing
	Reason         = api.Reason
	PendingRemoval = api.PendingRemoval
	HeldDeletion   = api.HeldDeletion
	HeldZone       = api.HeldZone
	Ping           = api.Ping
)

// Client talks to one cnsd.
type Client struct {
	base  string
	token string
	http  *http.Client
}

// New returns a client of the API at base (http://127.0.0.1:8080) that
// presents token when it is not empty.
func New(base, token string) *Client {
	return &Client{base: strings.TrimSuffix(base, "/"), token: token, http: &http.Client{Timeout: 30 * time.Second}}
}

// Error is an answer of the API other than success: its HTTP status and
// the code and message of its body.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("cnsd answered %d %s", e.Status, http.StatusText(e.Status))
	}
	return fmt.Sprintf("cnsd answered %d %s: %s", e.Status, e.Code, e.Message)
}

// IsUnauthorized reports whether err is the API's 401 (no valid token)
// or 403 (a token that does not open the route).
func IsUnauthorized(err error) bool {
	var e *Error
	return errors.As(err, &e) && (e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden)
}

// ReadTokenFile returns the token in cnsd's API token file
// (api.token_file), refusing a file its group or others may read.
func ReadTokenFile(path string) (string, error) { return api.ReadTokenFile(path) }

// IsNotFound reports whether err is the API's 404.
func IsNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusNotFound
}

// do sends a request with body (JSON, or none when nil) and decodes the
// answer into out (ignored when nil).
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("cnsd API at %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		e := &Error{Status: resp.StatusCode}
		var body api.Error
		if json.Unmarshal(data, &body) == nil {
			e.Code, e.Message = body.Code, body.Message
		}
		return fmt.Errorf("%s %s: %w", method, path, e)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: the answer is not what cnsd sends: %w", method, path, err)
	}
	return nil
}

// Ping checks that cnsd answers, and says whether it writes and what it
// serves.
func (c *Client) Ping(ctx context.Context) (Ping, error) {
	var out Ping
	return out, c.do(ctx, http.MethodGet, "/ping", nil, &out)
}

// Zones lists the zones with their serials.
func (c *Client) Zones(ctx context.Context) ([]Zone, error) {
	var out []Zone
	return out, c.do(ctx, http.MethodGet, "/zones", nil, &out)
}

// VM explains one VM's names.
func (c *Client) VM(ctx context.Context, uuid string) (VM, error) {
	var out VM
	return out, c.do(ctx, http.MethodGet, "/vm/"+url.PathEscape(uuid), nil, &out)
}

// Peers lists the secondaries.
func (c *Client) Peers(ctx context.Context) ([]Peer, error) {
	var out []Peer
	return out, c.do(ctx, http.MethodGet, "/peers", nil, &out)
}

// Peer shows one secondary by address (or address:port).
func (c *Client) Peer(ctx context.Context, addr string) (Peer, error) {
	var out Peer
	return out, c.do(ctx, http.MethodGet, "/peer/"+url.PathEscape(addr), nil, &out)
}

// ForgetPeer drops what cnsd knows of a secondary.
func (c *Client) ForgetPeer(ctx context.Context, addr string) error {
	return c.do(ctx, http.MethodDelete, "/peer/"+url.PathEscape(addr), nil, nil)
}

// AllowedPeers lists who may transfer zones.
func (c *Client) AllowedPeers(ctx context.Context) ([]AllowedPeer, error) {
	var out []AllowedPeer
	return out, c.do(ctx, http.MethodGet, "/allowed-peers", nil, &out)
}

// Suffixes returns the name suffixes a VM of owner on networks would get.
func (c *Client) Suffixes(ctx context.Context, owner string, networks []string) ([]string, error) {
	var out api.Suffixes
	body := map[string]any{"owner_uuid": owner, "networks": networks}
	return out.Suffixes, c.do(ctx, http.MethodPost, "/suffixes-for-vm", body, &out)
}

// PendingRemovals lists the self-removals the damping holds back.
func (c *Client) PendingRemovals(ctx context.Context) ([]PendingRemoval, error) {
	var out []PendingRemoval
	return out, c.do(ctx, http.MethodGet, "/pending-removals", nil, &out)
}

// HeldDeletions lists the mass deletions waiting for confirmation.
func (c *Client) HeldDeletions(ctx context.Context) ([]HeldDeletion, error) {
	var out []HeldDeletion
	return out, c.do(ctx, http.MethodGet, "/held-deletions", nil, &out)
}

// ConfirmDeletion lets the mass deletion held for cause take effect.
func (c *Client) ConfirmDeletion(ctx context.Context, cause string) error {
	return c.do(ctx, http.MethodPost, "/held-deletions/"+url.PathEscape(cause)+"/confirm", nil, nil)
}
