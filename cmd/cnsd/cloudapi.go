package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/cnsd/cnsd/api"
	"github.com/cnsd/cnsd/pipeline"
	"github.com/cnsd/cnsd/zonegen"
)

// cloudView shows the pipeline to the API in the API's own types, so that
// the API never imports the packages upstream of the store.
type cloudView struct {
	p         *pipeline.Pipeline
	connected func() bool // the changefeed's state
}

func (c cloudView) Feed() api.FeedStatus {
	s := c.p.Stats()
	return api.FeedStatus{Connected: c.connected(), VMs: s.VMs, Unresolved: s.Unresolved, Queued: s.Queued,
		Listings: s.Listings, Commits: s.Commits, LastChange: s.LastChange, PendingSources: s.PendingSources}
}

var _ api.Cloud = cloudView{}

func (c cloudView) VM(uuid string) (api.VM, bool) {
	st, ok := c.p.VM(uuid)
	if !ok {
		return api.VM{}, false
	}
	d := st.Decision
	out := api.VM{UUID: st.VM.UUID, Instance: d.Instance, Unresolved: d.Unresolved,
		Reasons: reasons(d.Reasons), Notes: reasons(st.Notes), Held: st.Held, Pending: pending(st.Pending)}
	if !st.Evaluated.IsZero() {
		out.LastVisit = st.Evaluated.UnixMilli()
	}
	for _, s := range d.Services {
		l := api.ServiceListing{Name: s.Name, Listed: s.Listed}
		for _, p := range s.Ports {
			l.Ports = append(l.Ports, int(p.Port))
		}
		out.Services = append(out.Services, l)
	}
	return out, true
}

func (c cloudView) Suffixes(ctx context.Context, owner string, networks []string) ([]string, error) {
	return c.p.Suffixes(ctx, owner, networks)
}

func (c cloudView) PendingRemovals() []api.PendingRemoval { return pending(c.p.Pending()) }

func (c cloudView) HeldDeletions() []api.HeldDeletion {
	var out []api.HeldDeletion
	for _, h := range c.p.Holds() {
		d := api.HeldDeletion{Cause: h.Cause, Since: h.Since, VMs: h.VMs}
		for _, z := range h.Zones {
			d.Zones = append(d.Zones, api.HeldZone{Zone: z.Zone, Removed: z.Removed, Records: z.Records})
		}
		out = append(out, d)
	}
	return out
}

func (c cloudView) ConfirmDeletion(cause string) error {
	err := c.p.Confirm(cause)
	if errors.Is(err, pipeline.ErrNoHold) {
		return fmt.Errorf("%w: %v", api.ErrNothingHeld, err)
	}
	return err
}

func reasons(rs []zonegen.Reason) []api.Reason {
	var out []api.Reason
	for _, r := range rs {
		out = append(out, api.Reason{Code: r.Code, Detail: r.Detail})
	}
	return out
}

func pending(ps []pipeline.PendingRemoval) []api.PendingRemoval {
	var out []api.PendingRemoval
	for _, p := range ps {
		out = append(out, api.PendingRemoval{Service: p.Service, VM: p.VM, Requested: p.Requested, Due: p.Due})
	}
	return out
}
