package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// errNotImplemented is what the commands return until they are written.
var errNotImplemented = errors.New("not implemented yet")

// commands lists cnsadm's commands with a one-line summary each, in the
// order usage shows them.
var commands = [][2]string{
	{"status", "zones, serials, and each secondary's confirmed serial and lag"},
	{"vm UUID", "the names of a VM and the reasons for what is and is not published"},
	{"zones", "list, add, remove or edit the zone → network mapping"},
	{"config", "show or edit the configuration"},
	{"peers", "the secondaries and the serial each one serves"},
	{"upgrade", "rewrite an RFD 1 style configuration in the current spelling"},
}

// run parses args and runs one cnsadm command. Help goes to stdout; a usage
// error is returned for main to print.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("cnsadm", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // usage is printed below, to the right stream
	apiURL := fs.String("api", "http://127.0.0.1:8080", "cnsd's REST API at `URL`")
	showVersion := fs.Bool("version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout, fs)
			return nil
		}
		return fmt.Errorf("%w (cnsadm -help lists the flags)", err)
	}
	if *showVersion {
		fmt.Fprintf(stdout, "cnsadm %s %s %s/%s\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return nil
	}
	if fs.NArg() == 0 {
		return errors.New("no command given (cnsadm -help lists the commands)")
	}
	name := fs.Arg(0)
	if !slices.ContainsFunc(commands, func(c [2]string) bool { return commandName(c[0]) == name }) {
		return fmt.Errorf("unknown command %q (cnsadm -help lists the commands)", name)
	}
	return fmt.Errorf("%s (api %s): %w", name, *apiURL, errNotImplemented)
}

// commandName is the first word of a commands entry.
func commandName(s string) string {
	name, _, _ := strings.Cut(s, " ")
	return name
}

func usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintln(w, "usage: cnsadm [flags] COMMAND [ARGS]")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-9s %s\n", c[0], c[1])
	}
	fmt.Fprintln(w, "\nflags:")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}
