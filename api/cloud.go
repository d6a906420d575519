package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Cloud is what the process that writes the store knows of the VMs it
// follows. Only that process has one; the others answer the routes that
// need it with 503, naming the reason.
type Cloud interface {
	// VM explains one VM, or false when the pipeline does not know it.
	VM(uuid string) (VM, bool)
	// Suffixes returns the name suffixes a VM of owner on networks
	// (network or pool uuids) would get, as POST /suffixes-for-vm.
	Suffixes(ctx context.Context, owner string, networks []string) ([]string, error)
	PendingRemovals() []PendingRemoval
	HeldDeletions() []HeldDeletion
	// ConfirmDeletion releases the deletion held for cause; an error
	// wrapping ErrNothingHeld means there is none.
	ConfirmDeletion(cause string) error
	// Feed reports the state of the cloud feed, for the metrics.
	Feed() FeedStatus
}

// FeedStatus is the state of the writer's cloud feed.
type FeedStatus struct {
	Connected  bool // the VMAPI changefeed is established
	VMs        int  // VMs known
	Unresolved int  // VMs waiting for a lookup
	Queued     int  // changes received, not applied yet
	// PendingSources are the sources (VMs) whose records wait to be
	// committed: they pile up, one entry per source, while the store
	// cannot be written.
	PendingSources int
	Listings       int64     // complete VM listings applied
	Commits        int64     // commits to the store
	LastChange     time.Time // when a change was last applied; zero: never
}

// ErrNothingHeld is wrapped by Cloud.ConfirmDeletion when no deletion is
// held for the cause.
var ErrNothingHeld = errors.New("no deletion is held")

var errNoCloud = errors.New("this cnsd does not write the store or follows no cloud: ask the writing one")

// SetCloud gives the API the writer's view of the cloud; nil takes it away
// (the process stopped writing).
func (s *Server) SetCloud(c Cloud) {
	if c == nil {
		s.cloud.Store(nil)
		return
	}
	s.cloud.Store(&c)
}

func (s *Server) getCloud() Cloud {
	if c := s.cloud.Load(); c != nil {
		return *c
	}
	return nil
}

// getVM answers GET /vm/:uuid: the names the store holds for the VM (as
// Triton CNS did: every name with a TXT record of the VM's uuid), its
// records per zone and, in the writing process, why it has them.
func (s *Server) getVM(w http.ResponseWriter, r *http.Request) {
	uuid := strings.ToLower(r.PathValue("uuid"))
	out, known := VM{UUID: uuid}, false
	if c := s.getCloud(); c != nil {
		out, known = c.VM(uuid)
		out.UUID = uuid
	}
	out.SetRecords(s.recordsOf(uuid), *s.ttl.Load())
	if !known && len(out.Zones) == 0 {
		s.fail(w, r, fmt.Errorf("%w: VM %s: no records and not followed by this cnsd", errNotFound, uuid))
		return
	}
	s.reply(w, http.StatusOK, out)
}

// suffixesRequest is the body of POST /suffixes-for-vm.
type suffixesRequest struct {
	OwnerUUID string   `json:"owner_uuid"`
	Networks  []string `json:"networks"`
}

func (s *Server) postSuffixes(w http.ResponseWriter, r *http.Request) {
	c := s.getCloud()
	if c == nil {
		s.fail(w, r, errNoCloud)
		return
	}
	var req suffixesRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		if errors.As(err, new(*http.MaxBytesError)) {
			s.fail(w, r, err)
			return
		}
		s.fail(w, r, fmt.Errorf("%w: body: %v", errBadRequest, err))
		return
	}
	if req.OwnerUUID == "" || req.Networks == nil {
		s.fail(w, r, fmt.Errorf("%w: body needs owner_uuid (a string) and networks (an array of uuids)", errBadRequest))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	suffixes, err := c.Suffixes(ctx, req.OwnerUUID, req.Networks)
	if err != nil {
		s.fail(w, r, fmt.Errorf("%w: %v", errUnavailable, err))
		return
	}
	s.reply(w, http.StatusOK, Suffixes{Suffixes: suffixes})
}

func (s *Server) getPending(w http.ResponseWriter, r *http.Request) {
	c := s.getCloud()
	if c == nil {
		s.fail(w, r, errNoCloud)
		return
	}
	out := c.PendingRemovals()
	if out == nil {
		out = []PendingRemoval{}
	}
	s.reply(w, http.StatusOK, out)
}

func (s *Server) getHeld(w http.ResponseWriter, r *http.Request) {
	c := s.getCloud()
	if c == nil {
		s.fail(w, r, errNoCloud)
		return
	}
	out := slices.Clone(c.HeldDeletions())
	if out == nil {
		out = []HeldDeletion{}
	}
	for i := range out { // arrays, never null, as openapi.json says
		if out[i].VMs == nil {
			out[i].VMs = []string{}
		}
		if out[i].Zones == nil {
			out[i].Zones = []HeldZone{}
		}
	}
	s.reply(w, http.StatusOK, out)
}

func (s *Server) confirmHeld(w http.ResponseWriter, r *http.Request) {
	c := s.getCloud()
	if c == nil {
		s.fail(w, r, errNoCloud)
		return
	}
	cause := r.PathValue("cause")
	if err := c.ConfirmDeletion(cause); err != nil {
		if errors.Is(err, ErrNothingHeld) {
			err = fmt.Errorf("%w: %v", errNotFound, err)
		}
		s.fail(w, r, err)
		return
	}
	s.log.Warn("held deletion confirmed through the API", "cause", cause, "from", r.RemoteAddr)
	s.reply(w, http.StatusOK, Confirmed{Confirmed: cause})
}
