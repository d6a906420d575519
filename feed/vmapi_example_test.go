package feed_test

import (
	"context"
	"log/slog"
	"os"
	"os/signal"

	"github.com/cnsd/cnsd/feed"
	"github.com/cnsd/cnsd/zonegen"
)

// logSink shows what a VMSink is told; a real one feeds the decisions.
type logSink struct{ log *slog.Logger }

func (s logSink) Listing(l feed.VMListing) {
	s.log.Info("listing", "vms", len(l.VMs), "unreadable", len(l.Unreadable))
}
func (s logSink) Changed(vm zonegen.VM) { s.log.Info("changed", "vm", vm.UUID, "state", vm.State) }
func (s logSink) Gone(uuid string)      { s.log.Info("gone", "vm", uuid) }

// ExampleVMAPI follows a VMAPI until interrupted. Each cnsd process needs
// its own changefeed instance uuid: two connections with the same one take
// the feed from each other.
func ExampleVMAPI() {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	v := feed.NewVMAPI(feed.VMAPIConfig{
		URL:      "http://vmapi.dc1.example.com",
		Instance: "6f1c1ab4-1c43-4b8e-9d5b-0e0b7a1d2c3e",
	}, log)
	if err := v.Run(ctx, logSink{log}); err != nil {
		log.Error("vmapi follower", "err", err)
	}
}
