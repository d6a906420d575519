package pipeline

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/cnsd/cnsd/zonegen"
)

// Cloud is what evaluating a VM looks up: its owner, its compute node and
// its NICs' networks. The daemon's are the feed clients; cnsadm preview
// gives in-memory ones (feed.Static) read from a file.
type Cloud struct {
	Owners   Owners
	Servers  Servers
	Networks Networks
}

// resolver does the lookups of one VM: the part of an evaluation that
// talks to the cloud.
type resolver struct {
	owners   Owners
	servers  Servers
	networks Networks
	timeout  time.Duration // bounds the lookups of one VM
	log      *slog.Logger
}

// Outcome is one evaluation of a VM.
type Outcome struct {
	// View is what the decision was made on: the VM with its NICs
	// repaired, its owner, compute node and networks (nil or missing
	// where a lookup failed).
	View     zonegen.View
	Decision zonegen.Decision
	// Contribution holds the VM's records, zone names absolute; it is
	// empty, with Unresolved set, when the decision is unresolved.
	Contribution zonegen.Contribution
}

// evaluate is the evaluation the pipeline and Evaluator share: resolve
// vm's view, decide at now, let adjust change the decision (the
// pipeline's self-removal damping; nil for none), and generate the
// records. An unresolved decision generates nothing.
func (r *resolver) evaluate(ctx context.Context, vm zonegen.VM, opts zonegen.DecideOptions, gen *zonegen.Generator,
	now time.Time, memo *lookups, adjust func(*zonegen.Decision)) Outcome {
	o := r.decide(ctx, vm, opts, now, memo, adjust)
	generate(gen, &o)
	return o
}

// decide is evaluate up to the records: the lookups, the decision and
// its adjustment, in that order, which is what must run one VM after the
// other (the lookups share memo, adjust the hysteresis tracker).
func (r *resolver) decide(ctx context.Context, vm zonegen.VM, opts zonegen.DecideOptions,
	now time.Time, memo *lookups, adjust func(*zonegen.Decision)) Outcome {
	v, why := r.resolve(ctx, vm, memo)
	d := zonegen.Decide(&v, opts, now)
	if why != nil {
		// A NIC that could not be repaired leaves the VM unresolved
		// whatever the rules say; they are listed after it.
		d = zonegen.Decision{Unresolved: true, Reasons: append([]zonegen.Reason{*why}, d.Reasons...)}
	}
	if !d.Unresolved && adjust != nil {
		adjust(&d)
	}
	return Outcome{View: v, Decision: d, Contribution: zonegen.Contribution{VM: vm.UUID, Unresolved: d.Unresolved}}
}

// generate fills in the records of a decided outcome: pure, and most of
// an evaluation's CPU, so that many VMs' may run in parallel.
func generate(gen *zonegen.Generator, o *Outcome) {
	if o.Decision.Unresolved {
		return
	}
	o.Contribution = gen.Generate(&o.View, &o.Decision)
	absoluteZones(&o.Contribution)
}

// Evaluator evaluates VMs exactly as the pipeline does, against a Cloud
// and at a given time, without a store: what cnsadm preview runs. It keeps
// no history between VMs, so it shows a VM as a cnsd that has just
// started sees it: a self-removal the running pipeline would still damp
// (docs/user-guide.md) shows as already in effect.
type Evaluator struct {
	res      *resolver
	settings Settings
	gen      *zonegen.Generator
}

// NewEvaluator returns an Evaluator over cloud with settings (zero values
// take the pipeline's defaults). log may be nil.
func NewEvaluator(cloud Cloud, s Settings, log *slog.Logger) *Evaluator {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s = withDefaults(s)
	return &Evaluator{settings: s, gen: zonegen.NewGenerator(s.Naming),
		res: &resolver{owners: cloud.Owners, servers: cloud.Servers, networks: cloud.Networks,
			timeout: defaultLookupTimeout, log: log.With("component", "evaluator")}}
}

// Evaluate evaluates vm at now.
func (e *Evaluator) Evaluate(ctx context.Context, vm zonegen.VM, now time.Time) Outcome {
	return e.res.evaluate(ctx, vm, e.settings.Decide, e.gen, now, newLookups(), nil)
}
