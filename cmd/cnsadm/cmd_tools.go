package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/cnsd/cnsd/api/client"
	"github.com/cnsd/cnsd/pipeline"
	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/zonegen"
)

// cmdPreview prints the records a VM would get under the configuration
// file: the pipeline's own evaluation run over the cloud read from FILE.
func cmdPreview(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("preview", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	at := fs.String("now", "", "evaluate at `TIME` (RFC 3339) instead of the clock: compute-node heartbeat and boot-grace verdicts depend on it")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("preview: %w (cnsadm help preview)", err)
	}
	if err := wantArgs("preview", fs.Args(), 1, 1); err != nil {
		return err
	}
	when := now()
	if *at != "" {
		t, err := time.Parse(time.RFC3339, *at)
		if err != nil {
			return fmt.Errorf("preview: -now wants an RFC 3339 time such as 2026-03-01T12:00:00Z: %w", err)
		}
		when = t
	}
	cfg, err := schema.Load(e.configPath)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return fmt.Errorf("preview: %w", err)
	}
	in, err := readPreview(ctx, data, when)
	if err != nil {
		return fmt.Errorf("preview: %s is %w", fs.Arg(0), err)
	}
	vms := evaluatePreview(ctx, in, cfg, when)
	return printPreview(e, in, vms)
}

// evaluatePreview evaluates every VM of in at when with the pipeline's
// Evaluator and shows each as GET /vm/:uuid would.
func evaluatePreview(ctx context.Context, in *previewInput, cfg *schema.Config, when time.Time) []client.VM {
	cloud := pipeline.Cloud{Owners: in.cloud, Servers: in.cloud, Networks: in.cloud}
	ev := pipeline.NewEvaluator(cloud, pipeline.SettingsFrom(cfg), nil)
	vms := make([]client.VM, len(in.cloud.VMs))
	for i, vm := range in.cloud.VMs {
		vms[i] = apiVM(ev.Evaluate(ctx, vm, when), when, cfg.TTL)
	}
	return vms
}

// apiVM is an evaluation in the REST API's shape: what GET /vm/:uuid
// answers for the VM once the daemon has published this evaluation.
func apiVM(o pipeline.Outcome, when time.Time, ttl schema.TTLConfig) client.VM {
	d := o.Decision
	vm := client.VM{UUID: o.View.VM.UUID, LastVisit: when.UnixMilli(), Instance: d.Instance,
		Unresolved: d.Unresolved, Reasons: reasonsOf(d.Reasons), Notes: reasonsOf(o.Contribution.Notes)}
	for _, s := range d.Services {
		l := client.ServiceListing{Name: s.Name, Listed: s.Listed}
		for _, p := range s.Ports {
			l.Ports = append(l.Ports, int(p.Port))
		}
		vm.Services = append(vm.Services, l)
	}
	byZone := map[string][]zonegen.Record{}
	for _, z := range o.Contribution.Zones {
		byZone[z.Zone] = z.Records
	}
	vm.SetRecords(byZone, ttl)
	return vm
}

// printPreview prints the evaluated VMs: with -j each as GET /vm/:uuid
// answers (a list for a fixture) and the notes on stderr; otherwise the
// notes, then each VM's decision and records.
func printPreview(e *env, in *previewInput, vms []client.VM) error {
	if e.json {
		for _, n := range in.notes {
			fmt.Fprintf(e.stderr, "; %s\n", n)
		}
		if !in.fixture {
			return printJSON(e.stdout, vms[0])
		}
		return printJSON(e.stdout, vms)
	}
	for _, n := range in.notes {
		fmt.Fprintf(e.stdout, "; %s\n", n)
	}
	for i, vm := range vms {
		if i > 0 || len(in.notes) > 0 {
			fmt.Fprintln(e.stdout)
		}
		w := e.stdout
		fmt.Fprintf(w, "VM %s: instance %s, unresolved %s\n", vm.UUID, yesNo(vm.Instance), yesNo(vm.Unresolved))
		printServices(w, vm.Services)
		printReasons(w, "reasons", vm.Reasons)
		printReasons(w, "skipped", vm.Notes)
		printZones(w, vm.Zones)
	}
	return nil
}

func reasonsOf(rs []zonegen.Reason) []client.Reason {
	var out []client.Reason
	for _, r := range rs {
		out = append(out, client.Reason{Code: r.Code, Detail: r.Detail})
	}
	return out
}

// help prints the manual page of a command, or the list of them.
func help(w io.Writer, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(w, "usage: cnsadm [flags] COMMAND [ARGS]; cnsadm help COMMAND explains one:")
		for _, c := range commands {
			fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
		}
		return nil
	}
	i := slices.IndexFunc(commands, func(c command) bool { return c.name == args[0] })
	if i < 0 {
		return fmt.Errorf("help: unknown command %q", args[0])
	}
	c := commands[i]
	fmt.Fprintf(w, "NAME\n    cnsadm %s - %s\n\nSYNOPSIS\n    cnsadm [-api URL] [-token TOKEN] [-config FILE] [-j] %s %s\n\n",
		c.name, c.summary, c.name, c.args)
	fmt.Fprint(w, strings.TrimLeft(manual[c.name], "\n"))
	return nil
}
