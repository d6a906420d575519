package feed

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/zonegen"
)

// Defaults of CNAPIOptions.
const (
	DefaultCNAPIPollInterval   = 30 * time.Second
	DefaultCNAPIRequestTimeout = 30 * time.Second
)

// serversPath is the listing docs/pipeline.md names: set-up servers only, with
// the status fields the compute-node rule reads.
const serversPath = "/servers?setup=true&extras=status,sysinfo"

// CNAPIOptions configures a CNAPI poller.
type CNAPIOptions struct {
	// URL is CNAPI's base URL (schema.CNAPIConfig).
	URL string
	// HTTPClient defaults to http.DefaultClient; set its Timeout.
	HTTPClient *http.Client
	// PollInterval defaults to DefaultCNAPIPollInterval.
	PollInterval time.Duration
	// RequestTimeout bounds one listing, so that a CNAPI that accepts
	// and never answers cannot stop the polling; default
	// DefaultCNAPIRequestTimeout.
	RequestTimeout time.Duration
	// Down is the compute-node rule's configuration; zero means
	// zonegen.DefaultDecideOptions.
	Down zonegen.DecideOptions
	// Now defaults to time.Now.
	Now func() time.Time
	// Logger defaults to discarding.
	Logger *slog.Logger
}

// CNAPI follows CNAPI's compute nodes by polling, and answers lookups from
// the last successful listing. CNAPI has no change feed.
type CNAPI struct {
	rest     restClient
	interval time.Duration
	timeout  time.Duration
	down     zonegen.DecideOptions
	now      func() time.Time
	log      *slog.Logger

	mu      sync.RWMutex // guards the fields below
	servers map[string]zonegen.Server
	isDown  map[string]bool // zonegen.ServerDown at the last poll
	failing bool            // the last poll failed; its error was logged
	bad     map[string]bool // servers malformed in the last listing, logged
}

// CNAPIOptionsFrom takes CNAPI's endpoint, its poll interval and the
// compute-node rule from a validated configuration.
func CNAPIOptionsFrom(c *schema.Config) CNAPIOptions {
	return CNAPIOptions{URL: endpointURL(c.CNAPI.Endpoint), PollInterval: c.CNAPI.PollInterval,
		Down: zonegen.DecideOptionsFrom(c)}
}

// NewCNAPI returns a poller; nothing is requested before Run.
func NewCNAPI(o CNAPIOptions) *CNAPI {
	c := &CNAPI{
		rest:     newRESTClient(o.URL, o.HTTPClient),
		interval: orDefault(o.PollInterval, DefaultCNAPIPollInterval),
		timeout:  orDefault(o.RequestTimeout, DefaultCNAPIRequestTimeout),
		down:     o.Down,
		now:      o.Now,
		log:      o.Logger,
		servers:  map[string]zonegen.Server{},
		isDown:   map[string]bool{},
		bad:      map[string]bool{},
	}
	if c.down == (zonegen.DecideOptions{}) {
		c.down = zonegen.DefaultDecideOptions()
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.log == nil {
		c.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	c.log = c.log.With("component", "cnapi")
	return c
}

// Server returns the compute node uuid as of the last successful listing.
// false means unknown: its VMs keep their records (docs/pipeline.md,
// Compute nodes).
func (c *CNAPI) Server(uuid string) (zonegen.Server, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	s, ok := c.servers[uuid]
	return s, ok
}

// Run lists the servers now and then every PollInterval until ctx ends,
// and returns ctx's error. After each successful listing it calls onChange
// (from this goroutine) with the servers whose VMs must be re-evaluated:
// new ones, those whose rule fields changed, those whose down verdict
// flipped with time, and those no longer listed (with their last state;
// Server then reports them unknown). A failed listing changes nothing.
func (c *CNAPI) Run(ctx context.Context, onChange func(changed []zonegen.Server)) error {
	t := time.NewTicker(c.interval)
	defer t.Stop()
	for {
		if changed, ok := c.poll(ctx); ok && len(changed) > 0 && onChange != nil {
			onChange(changed)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// poll lists the servers once and merges the answer; ok is false when the
// listing failed, and the failure is logged only when it starts.
func (c *CNAPI) poll(ctx context.Context) (changed []zonegen.Server, ok bool) {
	rctx, cancel := context.WithTimeout(ctx, c.timeout)
	body, err := c.rest.getAllPages(rctx, serversPath)
	cancel()
	var list []zonegen.Server
	var bad []badEntry
	if err == nil {
		list, bad, err = decodeServers(body)
	}
	if err != nil {
		if ctx.Err() == nil {
			c.setFailing(err)
		}
		return nil, false
	}
	c.setFailing(nil)
	c.reportBad(bad)
	return c.merge(list, bad), true
}

// reportBad logs the servers that became malformed; one that stays so is
// not logged again on every poll.
func (c *CNAPI) reportBad(bad []badEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	next := make(map[string]bool, len(bad))
	for _, b := range bad {
		if b.ID == "" || !c.bad[b.ID] {
			c.log.Warn("skipping malformed server; keeping its last state", "server", b.ID, "err", b.Err)
		}
		next[b.ID] = true
	}
	c.bad = next
}

// setFailing records whether polling fails and logs only the transitions,
// so an outage of CNAPI is one line, not one per poll.
func (c *CNAPI) setFailing(err error) {
	c.mu.Lock()
	was := c.failing
	c.failing = err != nil
	c.mu.Unlock()
	switch {
	case err != nil && !was:
		c.log.Error("cannot list servers; keeping the last list", "err", err)
	case err == nil && was:
		c.log.Info("listing servers again")
	}
}

// merge replaces the server list with list and returns what changed. A
// server in bad keeps its previous state rather than vanishing.
func (c *CNAPI) merge(list []zonegen.Server, bad []badEntry) []zonegen.Server {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	next := make(map[string]zonegen.Server, len(list)+len(bad))
	for _, b := range bad {
		if old, ok := c.servers[b.ID]; ok {
			next[b.ID] = old
		}
	}
	for _, s := range list {
		next[s.UUID] = s
	}
	var changed []zonegen.Server
	nextDown := make(map[string]bool, len(next))
	for id, s := range next {
		d, _ := zonegen.ServerDown(&s, c.down, now)
		nextDown[id] = d
		old, ok := c.servers[id]
		if !ok || serverRuleChanged(old, s) || c.isDown[id] != d {
			changed = append(changed, s)
		}
	}
	for id, old := range c.servers {
		if _, ok := next[id]; !ok {
			c.log.Info("server no longer listed; its VMs keep their records", "server", id)
			changed = append(changed, old)
		}
	}
	c.servers, c.isDown = next, nextDown
	slices.SortFunc(changed, func(a, b zonegen.Server) int { return cmp.Compare(a.UUID, b.UUID) })
	return changed
}
