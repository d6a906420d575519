// Command demo is what `make run` starts: the simulated cloud (bin/mockcloud
// with a generated cloud and slapd as UFDS, on ports it picks) and cnsd over
// it with the embedded store, DNS on 127.0.0.1:5300 and the API on
// 127.0.0.1:8053. It refuses ports another process holds, naming the
// process; checks that its programs answer on the ports it prints; prints
// dig, cnsadm and curl lines to try, with names taken from the running
// cnsd; and on Ctrl-C (or SIGTERM) stops both programs and exits 0,
// keeping the logs in bin/demo/logs.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout)
	switch {
	case err != nil && ctx.Err() != nil:
		// Stopped while starting: what the user asked for.
		fmt.Fprintln(os.Stderr, "demo: stopped")
	case err != nil:
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// options are the demo's addresses and where its programs are.
type options struct {
	bin                                   string // directory with cnsd, cnsadm and mockcloud
	dir                                   string // work directory: configuration, store, API token, logs/
	dnsPort, apiPort, cloudPort, ldapPort int    // cloudPort and ldapPort 0: mockcloud picks free ones
	generate                              string
	ready                                 func(try []string) // called with the commands to try; tests use it
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	o := options{}
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.StringVar(&o.bin, "bin", "bin", "`directory` holding cnsd, cnsadm and mockcloud")
	fs.StringVar(&o.dir, "dir", "bin/demo", "keep the configuration, store, API token and logs (in logs/) in `directory`; a new run starts from an empty store, the logs stay after exit")
	fs.IntVar(&o.dnsPort, "dns-port", 5300, "DNS `port` on 127.0.0.1")
	fs.IntVar(&o.apiPort, "api-port", 8053, "REST API `port` on 127.0.0.1")
	fs.IntVar(&o.cloudPort, "cloud-port", 0, "simulated cloud's HTTP `port` on 127.0.0.1 (0: a free one)")
	fs.IntVar(&o.ldapPort, "ldap-port", 0, "simulated UFDS's LDAP `port` on 127.0.0.1 (0: a free one)")
	fs.StringVar(&o.generate, "generate", "60,6,3", "generate a cloud of `N,M,K` VMs, accounts and servers")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return nil
	} else if err != nil {
		return err
	}
	return demo(ctx, o, stdout)
}
