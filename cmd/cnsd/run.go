package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"runtime"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// run parses args and runs cnsd until ctx is cancelled. Help goes to stdout;
// a usage error is returned for main to print.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("cnsd", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // usage is printed below, to the right stream
	configFile := fs.String("config", "", "read the configuration from `FILE` (JSON, checked against schema/)")
	showVersion := fs.Bool("version", false, "print the version and exit")
	var level levelFlag
	fs.Var(&level, "log-level", "log at `LEVEL` (debug, info, warn or error) whatever log.level in the configuration says")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout, fs)
			return nil
		}
		return fmt.Errorf("%w (cnsd -help lists the flags)", err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (cnsd -help lists the flags)", fs.Arg(0))
	}
	if *showVersion {
		fmt.Fprintf(stdout, "cnsd %s %s %s/%s\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return nil
	}
	if *configFile == "" {
		return errors.New("-config FILE is required (cnsd -help lists the flags)")
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return serve(ctx, *configFile, logSetup{w: stderr, level: level.level})
}

func usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintln(w, "usage: cnsd -config FILE [-log-level LEVEL]")
	fmt.Fprintln(w, "\ncnsd serves DNS zones generated from a Triton-style cloud's APIs.\n\nflags:")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}
