// Command cnsadm is the operator's tool for cnsd: it shows zones, serials and
// secondaries, explains why a VM's names are or are not published, and edits
// the zone-to-network mapping and the configuration, validating everything it
// writes.
//
// It talks to a running cnsd only through api/client; main only sets the exit
// code.
package main

import (
	"context"
	"fmt"
	"os"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "cnsadm:", err)
		os.Exit(1)
	}
}
