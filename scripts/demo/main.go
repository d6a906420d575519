// Command demo is what `make run` starts: the simulated cloud (bin/mockcloud
// with a generated cloud and slapd as UFDS) and cnsd over it with the
// embedded store, DNS on 127.0.0.1:5353 and the API on 127.0.0.1:8080. It
// prints the dig and cnsadm commands to try, with names taken from the
// running cnsd, and stops both programs on Ctrl-C.
package main

import (
	"context"
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
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// options are the demo's addresses and where its programs are.
type options struct {
	bin                                   string // directory with cnsd, cnsadm and mockcloud
	dir                                   string // work directory; a temporary one when empty
	dnsPort, apiPort, cloudPort, ldapPort int
	generate                              string
	ready                                 func(try []string) // called with the commands to try; tests use it
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	o := options{}
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.StringVar(&o.bin, "bin", "bin", "`directory` holding cnsd, cnsadm and mockcloud")
	fs.StringVar(&o.dir, "dir", "", "keep the store, configuration and logs in `directory` (default: a temporary one, removed on exit)")
	fs.IntVar(&o.dnsPort, "dns-port", 5353, "DNS `port` on 127.0.0.1")
	fs.IntVar(&o.apiPort, "api-port", 8080, "REST API `port` on 127.0.0.1")
	fs.IntVar(&o.cloudPort, "cloud-port", 8081, "simulated cloud's HTTP `port` on 127.0.0.1")
	fs.IntVar(&o.ldapPort, "ldap-port", 1389, "simulated UFDS's LDAP `port` on 127.0.0.1")
	fs.StringVar(&o.generate, "generate", "60,6,3", "generate a cloud of `N,M,K` VMs, accounts and servers")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return demo(ctx, o, stdout)
}
