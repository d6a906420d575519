package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/cnsd/cnsd/schema"
)

// zonesKey is where the file keeps its forward zones: the current
// spelling, or RFD 1's.
func zonesKey(o *obj) string {
	if _, ok := o.get("forward_zones"); !ok {
		if _, old := o.get("dns_zones"); old {
			return "dns_zones"
		}
	}
	return "forward_zones"
}

func cmdZones(ctx context.Context, e *env, args []string) error {
	sub := "list"
	if len(args) > 0 {
		sub, args = args[0], args[1:]
	}
	o, err := e.loadConfig()
	if err != nil {
		return err
	}
	zones, err := o.child(zonesKey(o), true)
	if err != nil {
		return err
	}
	switch sub {
	case "list":
		return zonesList(ctx, e, zones, args)
	case "show":
		if err := wantArgs("zones show", args, 1, 1); err != nil {
			return err
		}
		z, err := zones.child(args[0], false)
		if err != nil {
			return fmt.Errorf("zones show: %w", err)
		}
		_, err = e.stdout.Write(marshal(z))
		return err
	case "add":
		if err := wantArgs("zones add", args, 2, 100); err != nil {
			return err
		}
		if _, exists := zones.get(args[0]); exists {
			return fmt.Errorf("zones add: zone %q exists (cnsadm zones edit changes it)", args[0])
		}
		z := newObj()
		zones.set(args[0], z)
		return editAndSave(ctx, e, o, z, args[1:])
	case "remove":
		if err := wantArgs("zones remove", args, 1, 1); err != nil {
			return err
		}
		if !zones.del(args[0]) {
			return fmt.Errorf("zones remove: no zone %q", args[0])
		}
		return e.saveConfig(ctx, o)
	case "rename":
		if err := wantArgs("zones rename", args, 2, 2); err != nil {
			return err
		}
		if _, ok := zones.get(args[0]); !ok {
			return fmt.Errorf("zones rename: no zone %q", args[0])
		}
		if _, exists := zones.get(args[1]); exists {
			return fmt.Errorf("zones rename: zone %q exists", args[1])
		}
		zones.rename(args[0], args[1])
		return e.saveConfig(ctx, o)
	case "edit":
		if err := wantArgs("zones edit", args, 2, 100); err != nil {
			return err
		}
		z, err := zones.child(args[0], false)
		if err != nil {
			return fmt.Errorf("zones edit: %w", err)
		}
		return editAndSave(ctx, e, o, z, args[1:])
	}
	return fmt.Errorf("zones: unknown subcommand %q (cnsadm help zones)", sub)
}

// editAndSave applies field edits to target and saves the whole file.
func editAndSave(ctx context.Context, e *env, whole, target *obj, edits []string) error {
	for _, s := range edits {
		ed, err := parseEdit(s)
		if err != nil {
			return err
		}
		if err := ed.apply(target); err != nil {
			return err
		}
	}
	return e.saveConfig(ctx, whole)
}

// zonesList prints the mapping from the file, with each zone's serial
// from cnsd when it answers.
func zonesList(ctx context.Context, e *env, zones *obj, args []string) error {
	if err := wantArgs("zones list", args, 0, 0); err != nil {
		return err
	}
	serials := map[string]string{}
	if live, err := e.api.Zones(ctx); err == nil {
		for _, z := range live {
			serials[z.Name] = strconv.FormatUint(uint64(z.Serial), 10)
		}
	}
	if e.json {
		_, err := e.stdout.Write(marshal(zones))
		return err
	}
	rows := [][]string{}
	for _, name := range zones.keys {
		z, _ := zones.m[name].(*obj)
		rows = append(rows, []string{name, listText(z, "networks"), listText(z, "peers"), orDash(serials[name])})
	}
	return table(e.stdout, []string{"ZONE", "NETWORKS", "PEERS", "SERIAL"}, rows)
}

func listText(z *obj, field string) string {
	if z == nil {
		return "-"
	}
	v, _ := z.get(field)
	list, _ := v.([]any)
	parts := []string{}
	for _, x := range list {
		parts = append(parts, fmt.Sprint(x))
	}
	return orDash(strings.Join(parts, ","))
}

// zoneSections are the keys config edit leaves to cnsadm zones.
var zoneSections = []string{"forward_zones", "dns_zones"}

func cmdConfig(ctx context.Context, e *env, args []string) error {
	sub := "show"
	if len(args) > 0 {
		sub, args = args[0], args[1:]
	}
	o, err := e.loadConfig()
	if err != nil {
		return err
	}
	switch sub {
	case "show":
		if err := wantArgs("config show", args, 0, 0); err != nil {
			return err
		}
		_, err := e.stdout.Write(marshal(o))
		return err
	case "edit":
		if err := wantArgs("config edit", args, 1, 100); err != nil {
			return err
		}
		for _, s := range args {
			ed, err := parseEdit(s)
			if err != nil {
				return err
			}
			if slices.Contains(zoneSections, ed.path[0]) {
				return fmt.Errorf("config edit %s: use cnsadm zones for the zones", s)
			}
			if err := ed.apply(o); err != nil {
				return err
			}
		}
		return e.saveConfig(ctx, o)
	}
	return fmt.Errorf("config: unknown subcommand %q (cnsadm help config)", sub)
}

func cmdUpgrade(ctx context.Context, e *env, args []string) error {
	dryRun := len(args) == 1 && args[0] == "-n"
	if !dryRun {
		if err := wantArgs("upgrade", args, 0, 0); err != nil {
			return err
		}
	}
	data, err := os.ReadFile(e.configPath)
	if err != nil {
		return fmt.Errorf("read the configuration: %w", err)
	}
	out, err := schema.Upgrade(data)
	if err != nil {
		return fmt.Errorf("%s: %w", e.configPath, err)
	}
	if dryRun {
		_, err := e.stdout.Write(out)
		return err
	}
	o, err := parseObj(out)
	if err != nil {
		return err
	}
	return e.saveConfig(ctx, o)
}
