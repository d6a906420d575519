package feed

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/zonegen"
)

// VMAPIConfig configures a VMAPI follower. Zero durations and limits take
// the defaults named on each field.
type VMAPIConfig struct {
	URL      string // VMAPI base URL, e.g. http://vmapi.dc1.example.com
	Instance string // changefeed instance uuid: one per cnsd process
	Limit    int    // GET /vms page size; default and maximum 1000
	// Fetchers is how many changed VMs are fetched at once; default 4.
	// Two fetches of the same VM never overlap.
	Fetchers int
	// HTTPClient makes the REST calls; its Transport's TLS and proxy
	// settings are used for the websocket too. Default http.DefaultClient.
	HTTPClient *http.Client
	// MinBackoff and MaxBackoff bound the jittered, doubling delay between
	// reconnection attempts; defaults 1 s and 60 s.
	MinBackoff, MaxBackoff time.Duration
	// ListInterval is how often the VMs are re-listed while the changefeed
	// cannot be established; default 5 min.
	ListInterval time.Duration
	// HeartbeatInterval is the period of the "heartbeat" text frame and of
	// websocket pings; default 27.8 s, the reference client's.
	HeartbeatInterval time.Duration
	// Silence: no frame and no pong within this bound means the connection
	// is dead; default three heartbeats, and never under two.
	Silence time.Duration
	// ItemSilence: no change item within this bound means reconnect and
	// re-list. A feed taken over by another connection with the same
	// instance stays open and keeps answering pings, so item silence is
	// the only sign of a takeover. Default 10 min; negative disables.
	ItemSilence time.Duration
}

// Defaults of VMAPIConfig.
const (
	DefaultVMAPILimit        = 1000
	DefaultVMAPIFetchers     = 4
	DefaultVMAPIMinBackoff   = time.Second
	DefaultVMAPIMaxBackoff   = time.Minute
	DefaultVMAPIListInterval = 5 * time.Minute
	DefaultVMAPIHeartbeat    = 27800 * time.Millisecond
	DefaultVMAPIItemSilence  = 10 * time.Minute
)

// VMListing is a complete listing of the active VMs, taken after every
// (re)connect of the changefeed and on every fallback re-list.
type VMListing struct {
	// VMs are the VMs listed and readable. A VM in neither VMs nor
	// Unreadable is gone and must be removed.
	VMs []zonegen.VM
	// Unreadable are the uuids of VMs listed but malformed: they still
	// exist, so their previous state must be kept.
	Unreadable []string
}

// VMSink receives what a VMAPI follower learns. Its methods are never
// called concurrently; the calls about one VM come in the order things
// were learnt, and a Listing comes before the changes learnt after it.
// They must not block for long, as the feed waits for them. A sink that
// also implements VMPageSink gets each listing's pages as they arrive,
// before the Listing.
type VMSink interface {
	// Listing replaces everything known about VMs with a complete listing.
	Listing(l VMListing)
	// Changed delivers one VM fetched after a change item: the VM as it is
	// now, which may be newer than the change that announced it, in any
	// state but destroyed (a failed VM, which listings leave out, included:
	// the decisions publish nothing for it).
	Changed(vm zonegen.VM)
	// Gone reports a VM that was destroyed or no longer exists.
	Gone(uuid string)
}

// VMPageSink is a VMSink that also takes a listing's pages as they
// arrive, so that it may start on them (look up what their VMs need)
// while the rest is listed. Its methods are called as VMSink's are: never
// concurrently with one another or with VMSink's, from the goroutine
// that calls Listing. A sink that is not a VMPageSink only gets Listing.
//
// A listing is delivered as ListingPage(0, …), ListingPage(1, …), …, then
// either the Listing that completes it, whose VMs are exactly the pages'
// VMs in their order, or ListingAbandoned when it failed. Pages commit
// nothing: only the Listing is the truth. Page 0 always starts a new
// listing: pages delivered before it and not completed are forgotten
// (a feed cut off before it could say so).
type VMPageSink interface {
	VMSink
	// ListingPage delivers the readable VMs of page n of the listing
	// under way, in the listing's order. The feed does not change vms
	// afterwards; the sink may keep it.
	ListingPage(n int, vms []zonegen.VM)
	// ListingAbandoned: the listing whose pages were delivered failed;
	// no Listing completes it, and what they staged must be dropped.
	ListingAbandoned()
}

// VMAPI follows VMAPI: its changefeed for changes, GET /vms for the full
// listing after each (re)connect, and periodic listings when the
// changefeed is unavailable.
type VMAPI struct {
	cfg VMAPIConfig
	log *slog.Logger
	// connected is set while a changefeed session is established.
	connected atomic.Bool
	// v2 is set once the publisher refused the v1 registration's
	// Accept-Version; every later connection registers the v2 way.
	v2 atomic.Bool
	// changes is the change queue of the established session whose
	// listing was delivered, nil between sessions (Verify).
	changes atomic.Pointer[changeQueue]
	// verifying are the VMs Verify was asked about whose fetch has not
	// ended yet: queued again on each new session, asked about once.
	verifyMu  sync.Mutex
	verifying map[string]bool
}

// Verify fetches the VMs named again, as the changefeed's items are
// fetched: each comes to the sink as Changed, or Gone when VMAPI answers
// 404 or destroyed. It queues them on the established changefeed
// session, and on every later one until their fetch ends (a session cut
// loses its queue); a VM already being asked about is not asked twice.
func (v *VMAPI) Verify(vms []string) {
	v.verifyMu.Lock()
	if v.verifying == nil {
		v.verifying = map[string]bool{}
	}
	var ask []string
	for _, uuid := range vms {
		if !v.verifying[uuid] {
			v.verifying[uuid] = true
			ask = append(ask, uuid)
		}
	}
	v.verifyMu.Unlock()
	if q := v.changes.Load(); q != nil {
		for _, uuid := range ask {
			q.push(uuid)
		}
	}
}

// verified ends Verify's interest in uuid: its fetch has ended.
func (v *VMAPI) verified(uuid string) {
	v.verifyMu.Lock()
	delete(v.verifying, uuid)
	v.verifyMu.Unlock()
}

// verifyNow fetches, one after the other, the VMs still being asked
// about, for the periodic listing while there is no changefeed session
// to queue them on; one whose fetch fails stays asked about.
func (v *VMAPI) verifyNow(ctx context.Context, sink VMSink) {
	v.verifyMu.Lock()
	ask := slices.Collect(maps.Keys(v.verifying))
	v.verifyMu.Unlock()
	w := &changeWorker{v: v, q: newChangeQueue(), sink: sink, tries: map[string]int{}, once: true}
	for _, uuid := range ask {
		if ctx.Err() != nil {
			return
		}
		w.apply(ctx, uuid)
	}
}

// verifyOn queues every VM still being asked about on q, a new session's.
func (v *VMAPI) verifyOn(q *changeQueue) {
	v.verifyMu.Lock()
	defer v.verifyMu.Unlock()
	for uuid := range v.verifying {
		q.push(uuid)
	}
}

// Connected reports whether the changefeed is established now (false
// while cnsd re-lists periodically instead).
func (v *VMAPI) Connected() bool { return v.connected.Load() }

// NewVMAPI returns a follower of the VMAPI at cfg.URL; a nil log discards.
func NewVMAPI(cfg VMAPIConfig, log *slog.Logger) *VMAPI {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &VMAPI{cfg: withVMAPIDefaults(cfg), log: log.With("component", "vmapi")}
}

func withVMAPIDefaults(c VMAPIConfig) VMAPIConfig {
	if c.Limit <= 0 || c.Limit > DefaultVMAPILimit {
		c.Limit = DefaultVMAPILimit
	}
	if c.Fetchers <= 0 {
		c.Fetchers = DefaultVMAPIFetchers
	}
	if c.HTTPClient == nil {
		c.HTTPClient = http.DefaultClient
	}
	if c.MinBackoff <= 0 {
		c.MinBackoff = DefaultVMAPIMinBackoff
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = max(DefaultVMAPIMaxBackoff, c.MinBackoff)
	}
	c.MaxBackoff = max(c.MaxBackoff, c.MinBackoff)
	if c.ListInterval <= 0 {
		c.ListInterval = DefaultVMAPIListInterval
	}
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = DefaultVMAPIHeartbeat
	}
	if c.Silence <= 0 {
		c.Silence = 3 * c.HeartbeatInterval
	}
	// Pongs come once a heartbeat: a shorter silence bound would cut
	// healthy connections.
	c.Silence = max(c.Silence, 2*c.HeartbeatInterval)
	if c.ItemSilence == 0 {
		c.ItemSilence = DefaultVMAPIItemSilence
	}
	return c
}

// Errors of Run.
var (
	// ErrVMAPIConfig: the configuration cannot work (no URL or instance).
	ErrVMAPIConfig = errors.New("vmapi: invalid configuration")
)

// backoff returns the delay before attempt n (0-based): doubling from
// MinBackoff, capped at MaxBackoff, drawn from its upper half so that many
// followers restarted together do not reconnect in step.
func (v *VMAPI) backoff(n int) time.Duration {
	d := v.cfg.MinBackoff
	for range min(n, 30) {
		if d >= v.cfg.MaxBackoff/2 {
			d = v.cfg.MaxBackoff
			break
		}
		d *= 2
	}
	d = min(d, v.cfg.MaxBackoff)
	return d/2 + rand.N(d/2+1)
}

// vmapiSleep waits d or until ctx ends, and reports whether ctx is still live.
func vmapiSleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// VMAPIConfigFrom takes VMAPI's endpoint, page size and changefeed
// instance from a validated configuration. An empty instance in the
// configuration takes fallback, which must differ between processes.
func VMAPIConfigFrom(c *schema.Config, fallback string) VMAPIConfig {
	instance := c.Changefeed.Instance
	if instance == "" {
		instance = fallback
	}
	return VMAPIConfig{URL: endpointURL(c.VMAPI.Endpoint), Instance: instance, Limit: c.VMAPI.Limit}
}
