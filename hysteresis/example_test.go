package hysteresis_test

import (
	"fmt"
	"time"

	"github.com/cnsd/cnsd/hysteresis"
)

// Nine members of a service all report down at once: three go at once,
// three a window later, two after another window, and the last listed
// member only after the last-member delay.
func Example() {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tr := hysteresis.New(hysteresis.DefaultPolicy())
	for i := 1; i <= 9; i++ {
		tr.Set(start, "owner/web", fmt.Sprintf("vm%d", i), hysteresis.Up)
	}
	for i := 1; i <= 9; i++ {
		tr.Set(start, "owner/web", fmt.Sprintf("vm%d", i), hysteresis.SelfDown)
	}
	now := start
	for {
		for _, r := range tr.Advance(now) {
			fmt.Printf("%v %s\n", r.At.Sub(start), r.Member)
		}
		next, ok := tr.NextDue(now)
		if !ok {
			break
		}
		now = next
	}
	// Output:
	// 0s vm1
	// 0s vm2
	// 0s vm3
	// 1m0s vm4
	// 1m0s vm5
	// 1m0s vm6
	// 2m0s vm7
	// 2m0s vm8
	// 10m0s vm9
}
