package pipeline

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/cnsd/cnsd/feed"
	"github.com/cnsd/cnsd/hysteresis"
	"github.com/cnsd/cnsd/loglimit"
	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/zonegen"
	"golang.org/x/sync/errgroup"
)

// Owners looks up accounts: feed.UFDS. An error wrapping feed.ErrNoAccount
// means UFDS answered that there is no such account; any other error is an
// outage and the VM keeps its records.
type Owners interface {
	User(ctx context.Context, uuid string) (zonegen.Account, error)
}

// Servers looks up compute nodes: feed.CNAPI. false means the server is not
// known (yet), and its VMs keep their records.
type Servers interface {
	Server(uuid string) (zonegen.Server, bool)
}

// Networks looks up NAPI networks with their pools and repairs VM vm's
// NICs that lack a network or an address (feed.NeedsRepair): feed.NAPI. Errors wrapping feed.ErrNotFound are NAPI's
// answer; others are outages.
type Networks interface {
	Network(ctx context.Context, uuid string) (zonegen.Network, error)
	RepairNIC(ctx context.Context, vm string, nic zonegen.NIC) (zonegen.NIC, error)
}

// Settings are the parts of the configuration the pipeline applies; they
// can change at run time (SetSettings).
type Settings struct {
	Naming     zonegen.Config
	Decide     zonegen.DecideOptions
	Hysteresis hysteresis.Policy
	// MassDeleteShare is the largest share of a zone's records a re-list
	// or a compute-node change may remove without an operator's
	// confirmation; MassDeleteMin the fewest records a held removal has,
	// so that one VM leaving a small zone is never held.
	MassDeleteShare float64
	MassDeleteMin   int
	// CoalesceWindow and CoalesceMaxDelay turn bursts into one serial
	// (store.NewBatcher).
	CoalesceWindow, CoalesceMaxDelay time.Duration
}

// DefaultMassDeleteMin is the fewest records a held mass deletion removes.
const DefaultMassDeleteMin = 10

// warnKeys is how many VMs the repeated warnings are counted for.
const warnKeys = 10_000

// defaultLookupTimeout bounds the lookups of one VM unless Config says.
const defaultLookupTimeout = 10 * time.Second

// SettingsFrom takes the pipeline's settings from a validated configuration.
func SettingsFrom(c *schema.Config) Settings {
	return Settings{
		Naming: zonegen.ConfigFrom(c),
		Decide: zonegen.DecideOptionsFrom(c),
		Hysteresis: hysteresis.Policy{Window: c.Hysteresis.Window, Divisor: c.Hysteresis.Divisor,
			LastMemberDelay: c.Hysteresis.LastMemberDelay},
		MassDeleteShare:  c.MassDeleteShare,
		MassDeleteMin:    DefaultMassDeleteMin,
		CoalesceWindow:   c.Coalesce.Window,
		CoalesceMaxDelay: c.Coalesce.MaxDelay,
	}
}

// Config is what New needs. Store, Owners, Servers and Networks are
// required.
type Config struct {
	Store    *store.Store
	Owners   Owners
	Servers  Servers
	Networks Networks
	Settings Settings
	// RetryInterval is how often VMs whose lookups failed are tried
	// again (default 30 s); LookupTimeout bounds the lookups of one VM
	// (default 10 s).
	RetryInterval, LookupTimeout time.Duration
	// Progress is how often a long listing logs how far it got (default
	// 10 s).
	Progress time.Duration
	Clock    func() time.Time // default time.Now
	Logger   *slog.Logger
	// Verify, when set, asks the VM feed to fetch the VMs named again, as
	// if the changefeed had named them: their answers come back as
	// Changed or Gone. The pipeline asks it, after each listing, about
	// the VMs the listing left out that the mass-deletion guard holds.
	// It must not block, and should ask VMAPI once about a VM it is
	// already asking about.
	Verify func(vms []string)
}

// Pipeline applies feed changes to the store. Its feed-facing methods
// (Listing, ListingPage, ListingAbandoned, Changed, Gone, ServersChanged,
// AccountChanged) only queue or stage work and never block; Run does the
// work. The inspection methods (VM,
// Pending, Holds) are safe from any goroutine.
type Pipeline struct {
	cfg   Config
	log   *slog.Logger
	res   *resolver
	out   *store.Batcher
	queue queue
	// stage prepares listings from their pages (stage.go).
	stage stager
	// warns keeps warnings that every retry would repeat to one a
	// minute per VM.
	warns *loglimit.Limiter

	// mu guards the state below. Only Run's goroutine changes it; it
	// holds mu while it does and reads without it, other goroutines read
	// with it.
	mu       sync.Mutex
	settings Settings
	gen      *zonegen.Generator
	tracker  *hysteresis.Tracker
	vms      map[string]*vmState
	byOwner  index
	byServer index
	retry    map[string]bool // VMs whose lookups failed
	holds    map[string]*hold
	// cns are the set-up compute nodes CNAPI listed, by lower-case uuid:
	// those with CMON names (computenodes.go).
	cns map[string]zonegen.Server
	// serversListed: a compute-node change was applied (reportServers).
	serversListed bool
	// lastUnresolved is len(retry) when it was last logged.
	lastUnresolved int
	listings       int64     // complete listings applied
	lastReused     int       // staged outcomes the last listing used
	lastChange     time.Time // when a change or listing was last applied
}

var _ feed.VMSink = (*Pipeline)(nil)

// New returns a Pipeline writing to cfg.Store. It panics on an invalid
// hysteresis policy: the configuration is validated when it is loaded.
func New(cfg Config) *Pipeline {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.RetryInterval <= 0 {
		cfg.RetryInterval = 30 * time.Second
	}
	if cfg.LookupTimeout <= 0 {
		cfg.LookupTimeout = defaultLookupTimeout
	}
	if cfg.Progress <= 0 {
		cfg.Progress = 10 * time.Second
	}
	s := withDefaults(cfg.Settings)
	log := cfg.Logger.With("component", "pipeline")
	p := &Pipeline{
		cfg: cfg, log: log, settings: s,
		res: &resolver{owners: cfg.Owners, servers: cfg.Servers, networks: cfg.Networks,
			timeout: cfg.LookupTimeout, log: log},
		out:     store.NewBatcher(cfg.Store, s.CoalesceWindow, s.CoalesceMaxDelay, cfg.Logger),
		queue:   newQueue(),
		warns:   loglimit.New(time.Minute, warnKeys, cfg.Clock),
		gen:     zonegen.NewGenerator(s.Naming),
		tracker: hysteresis.New(s.Hysteresis),
		vms:     map[string]*vmState{}, byOwner: index{}, byServer: index{},
		retry: map[string]bool{}, holds: map[string]*hold{}, cns: map[string]zonegen.Server{},
	}
	p.out.SetDescribe(p.describeVM)
	return p
}

func withDefaults(s Settings) Settings {
	if s.Hysteresis == (hysteresis.Policy{}) {
		s.Hysteresis = hysteresis.DefaultPolicy()
	}
	if s.Decide == (zonegen.DecideOptions{}) {
		s.Decide = zonegen.DefaultDecideOptions()
	}
	if s.MassDeleteShare <= 0 || s.MassDeleteShare > 1 {
		s.MassDeleteShare = 0.25
	}
	if s.MassDeleteMin <= 0 {
		s.MassDeleteMin = DefaultMassDeleteMin
	}
	return s
}

// Run applies queued changes, due self-removals and lookup retries until
// ctx ends; it also runs the batcher that commits to the store.
func (p *Pipeline) Run(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	p.stage.setBase(ctx)
	g.Go(func() error { return p.out.Run(ctx) })
	g.Go(func() error { return p.loop(ctx) })
	return g.Wait()
}

// Flush commits everything applied so far: for tests and for a clean stop.
func (p *Pipeline) Flush(ctx context.Context) error { return p.out.Flush(ctx) }

// Idle reports whether no change waits to be applied or committed.
func (p *Pipeline) Idle() bool { return p.queue.empty() && p.out.Pending() == 0 }
