package hysteresis

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Tracker holds the members of every service and their pending
// self-removals. A Tracker is not safe for concurrent use: the caller
// serialises calls, typically in the one goroutine that consumes the VM
// feed.
//
// Removals that Set applies wait in the Tracker until the next Advance
// reports them, so a caller runs Advance whenever NextDue says so.
//
// Time passed to a Tracker must not go backwards. An earlier time is
// taken as the latest time seen, so a wall clock stepped back cannot
// reopen a window or shorten a delay.
type Tracker struct {
	policy    Policy
	services  map[string]*service
	byMember  map[string][]string // member → keys of the services it is in, for Forget
	scheduled schedule            // services with pending requests, by due time
	last      time.Time           // latest time seen
	// applied holds the removals that took effect since the last Advance,
	// in order, so that one applied inside Set is still reported once.
	applied []Removal
}

// Removal is a self-removal that took effect.
type Removal struct {
	Service   string
	Member    string
	Requested time.Time // when the member asked
	At        time.Time // when it took effect
}

// Member describes one member of a service, for inspection.
type Member struct {
	ID string
	// Status is Up or SelfDown.
	Status Status
	// Listed says whether the member is published in the service: Up
	// members are, and SelfDown ones until their self-removal takes effect.
	Listed bool
	// Requested is when a SelfDown member asked for its self-removal; zero
	// for Up members and for members that joined already down.
	Requested time.Time
}

// New returns an empty Tracker applying p. It panics if p is invalid:
// configuration is checked with [Policy.Validate] when it is loaded.
func New(p Policy) *Tracker {
	if err := p.Validate(); err != nil {
		panic(fmt.Sprintf("hysteresis.New: %v", err))
	}
	return &Tracker{
		policy:   p,
		services: make(map[string]*service),
		byMember: make(map[string][]string),
	}
}

// Policy returns the policy the Tracker applies.
func (t *Tracker) Policy() Policy { return t.policy }

// clock returns now, or the latest time seen if now is earlier, and
// records it.
func (t *Tracker) clock(now time.Time) time.Time {
	if now.Before(t.last) {
		return t.last
	}
	t.last = now
	return now
}

// Listed reports whether member is currently listed in service: false for
// an unknown member. It applies nothing; state is as of the latest Set,
// Forget or Advance, and a service other than the one last Set may have
// removals due that only Advance applies.
func (t *Tracker) Listed(service, member string) bool {
	sv := t.services[service]
	if sv == nil {
		return false
	}
	m := sv.members[member]
	return m != nil && m.listed
}

// Members returns the members of service sorted by id, or nil if the
// service has none. len(Members(service)) is the n of the policy.
func (t *Tracker) Members(service string) []Member {
	sv := t.services[service]
	if sv == nil {
		return nil
	}
	out := make([]Member, 0, len(sv.members))
	for _, m := range sv.members {
		out = append(out, Member{ID: m.id, Status: m.status, Listed: m.listed, Requested: m.requested})
	}
	slices.SortFunc(out, func(a, b Member) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Advance applies every self-removal that is due at now and returns, in
// the order they took effect, those and the ones Set applied since the
// previous Advance. Each removal is reported exactly once. A removal
// takes effect when it is applied, never backdated: if Advance runs late,
// At is now, so the window limit holds for what clients actually saw.
// A reported member may have been listed again or forgotten since; Listed
// gives its state now.
func (t *Tracker) Advance(now time.Time) []Removal {
	now = t.clock(now)
	for len(t.scheduled) > 0 && t.scheduled[0].dueBy(now) {
		// apply leaves the service's due after now or unscheduled, so
		// the loop ends.
		t.apply(t.scheduled[0], now)
	}
	out := t.applied
	t.applied = nil // the caller owns out
	return out
}

// NextDue returns the earliest time, not before now, at which Advance
// would apply or report something, and false if nothing is pending or
// unreported. A caller arms its timer for it after each Set and Advance.
func (t *Tracker) NextDue(now time.Time) (time.Time, bool) {
	now = later(now, t.last)
	if len(t.applied) > 0 {
		return now, true
	}
	if len(t.scheduled) == 0 {
		return time.Time{}, false
	}
	return later(now, t.scheduled[0].due), true
}
