package mockcloud

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// TestChurnDeterministic: the same seed from the same state makes the same
// changes.
func TestChurnDeterministic(t *testing.T) {
	run := func(seed uint64) string {
		f := Generate(GenOptions{VMs: 40, Accounts: 5, Servers: 3, Seed: 9, Now: testNow})
		c := New(f, &Options{Now: func() time.Time { return testNow }})
		rng := NewRand(seed)
		for range 300 {
			c.ChurnStep(rng)
		}
		b, _ := json.Marshal(c.Fixture())
		return string(b) + mustJSON(c.UserChanges(0))
	}
	a, b := run(1), run(1)
	if a != b {
		t.Fatal("the same seed gave different clouds")
	}
	if a == run(2) {
		t.Fatal("different seeds gave the same cloud")
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestChurnPublishes runs the churn through the changefeed and checks that
// items arrive; ChurnStep on an empty cloud does not panic.
func TestChurnPublishes(t *testing.T) {
	c, srv := newTestCloud(t)
	ws := subscribeV1(t, srv, "cns0", VMResource.SubResources...)
	rng := NewRand(5)
	for range 50 {
		c.ChurnStep(rng)
	}
	if got := readItems(t, c, ws); len(got[0]) == 0 {
		t.Error("50 churn steps published nothing")
	}
	empty := New(&Fixture{}, nil)
	empty.ChurnStep(NewRand(1))
}

func TestChurnRate(t *testing.T) {
	c := New(&Fixture{}, nil)
	if err := c.Churn(context.Background(), 0, 1); !errors.Is(err, ErrInvalid) {
		t.Errorf("rate 0: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Churn(ctx, 100, 1); err != nil {
		t.Errorf("cancelled churn: %v", err)
	}
}
