package hysteresis

import (
	"errors"
	"testing"
)

func TestPolicyValidate(t *testing.T) {
	tests := []struct {
		name    string
		policy  Policy
		wantErr string
	}{
		{"default", DefaultPolicy(), ""},
		{"zero delay", Policy{Window: s, Divisor: 1}, ""},
		{"zero window", Policy{Divisor: 3}, "invalid hysteresis policy: window 0s is not positive"},
		{"zero divisor", Policy{Window: s}, "invalid hysteresis policy: divisor 0 is less than 1"},
		{"negative delay", Policy{Window: s, Divisor: 3, LastMemberDelay: -s},
			"invalid hysteresis policy: last member delay -1s is negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.policy.Validate()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || err.Error() != tc.wantErr || !errors.Is(err, ErrInvalidPolicy) {
				t.Fatalf("Validate() = %v, want %q wrapping ErrInvalidPolicy", err, tc.wantErr)
			}
		})
	}
}

func TestPolicyLimit(t *testing.T) {
	p := DefaultPolicy()
	if got := New(p).Policy(); got != p {
		t.Errorf("New(p).Policy() = %+v, want %+v", got, p)
	}
	for n, want := range map[int]int{0: 1, 1: 1, 2: 1, 3: 1, 5: 1, 6: 2, 9: 3, 1000: 333} {
		if got := p.Limit(n); got != want {
			t.Errorf("Limit(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestStatusString(t *testing.T) {
	for s, want := range map[Status]string{Up: "up", SelfDown: "self-down", Gone: "gone", 0: "Status(0)"} {
		if got := s.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(s), got, want)
		}
	}
}

func TestPanics(t *testing.T) {
	tests := []struct {
		name string
		f    func()
	}{
		{"New with an invalid policy", func() { New(Policy{}) }},
		{"Set with the zero Status", func() { New(DefaultPolicy()).Set(t0, "web", "vm1", 0) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			tc.f()
		})
	}
}
