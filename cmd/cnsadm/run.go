package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/cnsd/cnsd/api/client"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// env is what every command gets: the API client, the output streams and
// the global flags.
type env struct {
	api        *client.Client
	apiURL     string
	stdout     io.Writer
	stderr     io.Writer
	json       bool   // -j: JSON instead of tables
	configPath string // -config: the file config edits go to
	noResolve  bool   // -no-resolve: do not check that secondaries resolve
}

// command is one cnsadm command.
type command struct {
	name, args, summary string
	run                 func(ctx context.Context, e *env, args []string) error
}

// commands lists cnsadm's commands in the order usage shows them.
var commands = []command{
	{"status", "", "zones, serials, and each secondary's confirmed serial and lag", cmdStatus},
	{"vm", "UUID", "the names and records of a VM and the reasons for what is and is not published", cmdVM},
	{"zones", "[list|show|add|remove|rename|edit] ...", "list, show, add, remove, rename or edit the zone → network mapping", cmdZones},
	{"config", "[show|edit] ...", "show or edit the configuration's settings", cmdConfig},
	{"peers", "[list|show|forget] ...", "the secondaries and the serial each one serves", cmdPeers},
	{"confirm", "CAUSE", "release a held mass deletion (re-list or compute-nodes)", cmdConfirm},
	{"upgrade", "", "rewrite an RFD 1 style configuration in the current spelling", cmdUpgrade},
	{"preview", "[-now TIME] FILE", "print the records a VM (or every VM of a cloud fixture) would get, without a running cnsd", cmdPreview},
	{"bind-config", "", "BIND zone statements for every zone, or the catalog-zone set-up", cmdBindConfig},
	{"help", "[COMMAND]", "explain a command", nil},
}

// run parses args and runs one cnsadm command. Help goes to stdout; a usage
// error is returned for main to print.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("cnsadm", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // usage is printed below, to the right stream
	e := &env{stdout: stdout, stderr: stderr}
	fs.StringVar(&e.apiURL, "api", "http://127.0.0.1:8080", "cnsd's REST API at `URL`")
	token := fs.String("token", os.Getenv("CNSADM_TOKEN"), "bearer `TOKEN` of the API (default $CNSADM_TOKEN, else the token file of -config)")
	fs.StringVar(&e.configPath, "config", "/etc/cnsd/cnsd.json", "cnsd's configuration `FILE`, which zones and config edit")
	fs.BoolVar(&e.json, "j", false, "print JSON instead of tables")
	fs.BoolVar(&e.noResolve, "no-resolve", false, "do not check that secondaries' host names resolve when editing")
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
	tok, why := *token, ""
	if tok == "" {
		tok, why = tokenOf(e.configPath)
	}
	e.api = client.New(e.apiURL, tok)
	name, rest := fs.Arg(0), fs.Args()[1:]
	if name == "help" {
		return help(stdout, rest)
	}
	for _, c := range commands {
		if c.name == name {
			if len(rest) > 0 && (rest[0] == "-help" || rest[0] == "--help" || rest[0] == "-h") {
				return help(stdout, []string{name})
			}
			err := c.run(ctx, e, rest)
			if why != "" && client.IsUnauthorized(err) {
				err = fmt.Errorf("%w\n%s", err, why)
			}
			return err
		}
	}
	return fmt.Errorf("unknown command %q (cnsadm -help lists the commands)", name)
}

func usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintln(w, "usage: cnsadm [flags] COMMAND [ARGS]")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-18s %s\n", strings.TrimSpace(c.name+" "+firstWord(c.args)), c.summary)
	}
	fmt.Fprintln(w, "\nflags:")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	fmt.Fprintln(w, "\ncnsadm help COMMAND, or cnsadm COMMAND -help, explains a command.")
}

func firstWord(s string) string {
	if strings.HasPrefix(s, "[") {
		return ""
	}
	w, _, _ := strings.Cut(s, " ")
	return w
}

// wantArgs checks a command's argument count.
func wantArgs(name string, args []string, min, max int) error {
	if len(args) < min || len(args) > max {
		return fmt.Errorf("%s: wrong number of arguments %q (cnsadm help %s)", name, args, strings.Fields(name)[0])
	}
	return nil
}
