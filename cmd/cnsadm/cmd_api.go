package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cnsd/cnsd/api/client"
)

// now is the clock status reads ages against; tests fix it.
var now = time.Now

func cmdStatus(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("status", args, 0, 0); err != nil {
		return err
	}
	zones, err := e.api.Zones(ctx)
	if err != nil {
		return err
	}
	peers, err := e.api.Peers(ctx)
	if err != nil {
		return err
	}
	// Only the writing cnsd knows these; another answers 503.
	held, _ := e.api.HeldDeletions(ctx)
	pending, _ := e.api.PendingRemovals(ctx)
	if e.json {
		return printJSON(e.stdout, map[string]any{"zones": zones, "peers": peers, "held_deletions": held, "pending_removals": pending})
	}
	rows := [][]string{}
	for _, z := range zones {
		rows = append(rows, []string{z.Name, strconv.FormatUint(uint64(z.Serial), 10), strconv.Itoa(z.Records), zoneAge(now(), z)})
	}
	if err := table(e.stdout, []string{"ZONE", "SERIAL", "RECORDS", "AGE"}, rows); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout)
	if err := peerTable(e, peers); err != nil {
		return err
	}
	for _, h := range held {
		fmt.Fprintf(e.stdout, "\nHELD: a %s would remove too much (%s) from %d VMs since %s: cnsadm confirm %s\n",
			h.Cause, heldZones(h.Zones), len(h.VMs), h.Since.Format(time.RFC3339), h.Cause)
	}
	if len(pending) > 0 {
		fmt.Fprintf(e.stdout, "\n%d self-removals wait for the damping; cnsadm vm UUID shows when each is due.\n", len(pending))
	}
	return nil
}

// zoneAge says how long ago zone z's serial was committed: from the
// commit time cnsd reports, or, when it has none (a zone loaded at start
// and not changed since), from the serial, which cnsd makes from the
// clock; under churn a serial runs ahead of the clock, so that reading is
// marked "~" as approximate.
func zoneAge(now time.Time, z client.Zone) string {
	if t, err := time.Parse(time.RFC3339, z.CommittedAt); err == nil {
		return age(now, t)
	}
	return "~" + age(now, serialTime(z.Serial))
}

func heldZones(zs []client.HeldZone) string {
	var parts []string
	for _, z := range zs {
		parts = append(parts, fmt.Sprintf("%s %d of %d records", strings.TrimSuffix(z.Zone, "."), z.Removed, z.Records))
	}
	return strings.Join(parts, ", ")
}

// peerTable prints one row per secondary and zone.
func peerTable(e *env, peers []client.Peer) error {
	rows := [][]string{}
	for _, p := range peers {
		zs := append([]client.PeerZone(nil), p.Zones...)
		sort.Slice(zs, func(i, j int) bool { return zs[i].Zone < zs[j].Zone })
		for _, z := range zs {
			lag := "current"
			switch {
			case z.Ahead:
				lag = "ahead"
			case z.Serial != z.Want:
				lag = "behind"
				if z.BehindSince != "" {
					if t, err := time.Parse(time.RFC3339, z.BehindSince); err == nil {
						lag = "behind " + age(now(), t)
					}
				}
			}
			if z.Stale {
				lag = "stale"
			}
			if z.Learnt {
				lag += " (learnt)"
			}
			rows = append(rows, []string{endpoint(p), orDash(p.Version), strings.TrimSuffix(z.Zone, "."),
				strconv.FormatUint(uint64(z.Serial), 10), strconv.FormatUint(uint64(z.Want), 10), lag})
		}
		if len(zs) == 0 {
			rows = append(rows, []string{endpoint(p), orDash(p.Version), "-", "-", "-", "-"})
		}
	}
	return table(e.stdout, []string{"SECONDARY", "VERSION", "ZONE", "CONFIRMED", "SERIAL", "LAG"}, rows)
}

// endpoint is how a secondary is shown: its address and port, which
// tell apart secondaries sharing an address (BIND and Knot on one test
// host). A cnsd without the endpoint field gives address and port apart.
func endpoint(p client.Peer) string {
	if p.Endpoint != "" {
		return p.Endpoint
	}
	port := p.Port
	if port == 0 {
		port = 53
	}
	return net.JoinHostPort(p.Address, strconv.Itoa(int(port)))
}

func cmdVM(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("vm", args, 1, 1); err != nil {
		return err
	}
	vm, err := e.api.VM(ctx, args[0])
	if err != nil {
		return err
	}
	if e.json {
		return printJSON(e.stdout, vm)
	}
	w := e.stdout
	fmt.Fprintf(w, "VM %s\n", vm.UUID)
	if vm.LastVisit > 0 {
		fmt.Fprintf(w, "evaluated %s\n", time.UnixMilli(vm.LastVisit).UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(w, "instance names published: %s\n", yesNo(vm.Instance))
	if vm.Unresolved {
		fmt.Fprintln(w, "unresolved: a lookup has not succeeded; the VM keeps its last records and is retried")
	}
	printServices(w, vm.Services)
	printList(w, "names", vm.Names)
	printReasons(w, "reasons", vm.Reasons)
	printReasons(w, "skipped", vm.Notes)
	for _, p := range vm.Pending {
		fmt.Fprintf(w, "pending removal from %s, asked %s, due about %s\n", p.Service,
			p.Requested.Format(time.RFC3339), p.Due.Format(time.RFC3339))
	}
	for _, h := range vm.Held {
		fmt.Fprintf(w, "records held by a mass deletion guard: %s (cnsadm confirm %s)\n", h, h)
	}
	printZones(w, vm.Zones)
	return nil
}

func printServices(w io.Writer, ss []client.ServiceListing) {
	for _, s := range ss {
		fmt.Fprintf(w, "service %s (ports %v): listed %s\n", s.Name, s.Ports, yesNo(s.Listed))
	}
}

// printZones prints a VM's records per zone in zone-file form.
func printZones(w io.Writer, zones []client.VMZone) {
	for _, z := range zones {
		fmt.Fprintf(w, "\n; zone %s\n", z.Zone)
		for _, r := range z.Records {
			fmt.Fprintf(w, "%s.\t%d\t%s\t%s\n", r.Name, r.TTL, r.Type, r.Value)
		}
	}
}

func printList(w interface{ Write([]byte) (int, error) }, title string, items []string) {
	fmt.Fprintf(w, "%s:\n", title)
	if len(items) == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	for _, it := range items {
		fmt.Fprintf(w, "  %s\n", it)
	}
}

func printReasons(w interface{ Write([]byte) (int, error) }, title string, rs []client.Reason) {
	if len(rs) == 0 {
		return
	}
	fmt.Fprintf(w, "%s:\n", title)
	for _, r := range rs {
		if r.Detail == "" {
			fmt.Fprintf(w, "  %s\n", r.Code)
		} else {
			fmt.Fprintf(w, "  %s: %s\n", r.Code, r.Detail)
		}
	}
}

func cmdPeers(ctx context.Context, e *env, args []string) error {
	sub := "list"
	if len(args) > 0 {
		sub, args = args[0], args[1:]
	}
	switch sub {
	case "list":
		if err := wantArgs("peers list", args, 0, 0); err != nil {
			return err
		}
		peers, err := e.api.Peers(ctx)
		if err != nil {
			return err
		}
		if e.json {
			return printJSON(e.stdout, peers)
		}
		return peerTable(e, peers)
	case "show":
		if err := wantArgs("peers show", args, 1, 1); err != nil {
			return err
		}
		p, err := e.api.Peer(ctx, args[0])
		if err != nil {
			return err
		}
		if e.json {
			return printJSON(e.stdout, p)
		}
		fmt.Fprintf(e.stdout, "secondary %s  version %s  names %v\n", endpoint(p), orDash(p.Version), p.Names)
		return peerTable(e, []client.Peer{p})
	case "forget":
		if err := wantArgs("peers forget", args, 1, 1); err != nil {
			return err
		}
		if err := e.api.ForgetPeer(ctx, args[0]); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "forgot %s\n", args[0])
		return nil
	}
	return fmt.Errorf("peers: unknown subcommand %q (cnsadm help peers)", sub)
}

func cmdConfirm(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("confirm", args, 1, 1); err != nil {
		return err
	}
	if err := e.api.ConfirmDeletion(ctx, args[0]); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "confirmed: the deletion held for %s takes effect\n", args[0])
	return nil
}
