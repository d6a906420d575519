package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"

	"github.com/cnsd/cnsd/api/client"
	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/zonegen"
)

// cmdPreview prints the records a VM view would get under the
// configuration file, computed here exactly as cnsd computes them.
func cmdPreview(_ context.Context, e *env, args []string) error {
	if err := wantArgs("preview", args, 1, 1); err != nil {
		return err
	}
	cfg, err := schema.Load(e.configPath)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(args[0])
	if err != nil {
		return fmt.Errorf("preview: %w", err)
	}
	views, notes, err := previewViews(data)
	if err != nil {
		return fmt.Errorf("preview: %s is %w", args[0], err)
	}
	opts, gen := zonegen.DecideOptionsFrom(cfg), zonegen.NewGenerator(zonegen.ConfigFrom(cfg))
	type result struct {
		Decision     zonegen.Decision     `json:"decision"`
		Contribution zonegen.Contribution `json:"contribution"`
	}
	results := make([]result, len(views))
	for i := range views {
		d := zonegen.Decide(&views[i], opts, now())
		results[i] = result{d, gen.Generate(&views[i], &d)}
	}
	if e.json {
		if len(results) == 1 {
			return printJSON(e.stdout, map[string]any{"decision": results[0].Decision, "contribution": results[0].Contribution, "assumed": notes})
		}
		return printJSON(e.stdout, map[string]any{"vms": results, "assumed": notes})
	}
	for _, n := range notes {
		fmt.Fprintf(e.stdout, "; assumed: %s\n", n)
	}
	for i, r := range results {
		if i > 0 || len(notes) > 0 {
			fmt.Fprintln(e.stdout)
		}
		printPreview(e.stdout, views[i].VM.UUID, r.Decision, r.Contribution)
	}
	return nil
}

// printPreview prints one VM's decision and records.
func printPreview(w io.Writer, uuid string, d zonegen.Decision, c zonegen.Contribution) {
	fmt.Fprintf(w, "VM %s: instance %s, unresolved %s\n", uuid, yesNo(d.Instance), yesNo(d.Unresolved))
	for _, s := range d.Services {
		fmt.Fprintf(w, "service %s: listed %s\n", s.Name, yesNo(s.Listed))
	}
	printReasons(w, "reasons", reasonsOf(d.Reasons))
	printReasons(w, "skipped", reasonsOf(c.Notes))
	for _, z := range c.Zones {
		fmt.Fprintf(w, "\n; zone %s\n", z.Zone)
		for _, r := range z.Records {
			fmt.Fprintln(w, r.String())
		}
	}
}

func reasonsOf(rs []zonegen.Reason) []client.Reason {
	out := make([]client.Reason, len(rs))
	for i, r := range rs {
		out[i] = client.Reason{Code: r.Code, Detail: r.Detail}
	}
	return out
}

// cmdBindConfig prints BIND statements that make a BIND server a
// secondary of every zone cnsd serves, or of its catalog zone.
func cmdBindConfig(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("bind-config", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	catalog := fs.Bool("catalog", false, "print the catalog-zone set-up (BIND 9.18+) instead of one zone statement per zone")
	primary := fs.String("primary", "", "cnsd's `ADDRESS` as the secondaries reach it (default: its first dns.listen address in the configuration)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("bind-config: %w (cnsadm help bind-config)", err)
	}
	cfg, cfgErr := schema.Load(e.configPath)
	addr, port := *primary, "53"
	if addr == "" {
		if cfgErr != nil || len(cfg.DNS.Listen) == 0 {
			return fmt.Errorf("bind-config: give -primary ADDRESS (the configuration gives none: %v)", cfgErr)
		}
		h, p, err := net.SplitHostPort(cfg.DNS.Listen[0])
		if err != nil {
			return err
		}
		addr, port = h, p
	}
	prim := addr
	if port != "53" {
		prim += " port " + port
	}
	if *catalog {
		name := "catalog.cnsd.invalid"
		if cfgErr == nil && cfg.CatalogZone.Name != "" {
			name = cfg.CatalogZone.Name
		}
		fmt.Fprintf(e.stdout, "options {\n\tallow-notify { %s; };\n\tcatalog-zones {\n\t\tzone %q\n\t\t\tdefault-primaries { %s; }\n\t\t\tzone-directory \"cnsd\";\n\t};\n};\n", addr, name, prim)
		fmt.Fprintf(e.stdout, "zone %q {\n\ttype secondary;\n\tprimaries { %s; };\n\tfile %q;\n};\n", name, prim, name+".db")
		return nil
	}
	zones, err := e.api.Zones(ctx)
	if err != nil {
		return err
	}
	for _, z := range zones {
		if cfgErr == nil && z.Name == cfg.CatalogZone.Name {
			continue
		}
		fmt.Fprintf(e.stdout, "zone %q {\n\ttype secondary;\n\tprimaries { %s; };\n\tfile %q;\n};\n", z.Name, prim, "cnsd/"+z.Name+".db")
	}
	return nil
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
