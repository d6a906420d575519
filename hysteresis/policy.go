package hysteresis

import (
	"errors"
	"fmt"
	"time"
)

// ErrInvalidPolicy is wrapped by [Policy.Validate] for a setting out of range.
var ErrInvalidPolicy = errors.New("invalid hysteresis policy")

// Policy holds the three configurable numbers of RFD 1.
type Policy struct {
	// Window is the length of the sliding window over which the
	// self-removals of one service are counted. It must be positive.
	Window time.Duration
	// Divisor sets the limit per window: max(floor(n/Divisor), 1) for a
	// service of n members. It must be at least 1; 1 lets every member go
	// in one window.
	Divisor int
	// LastMemberDelay is how long after asking the last listed member of a
	// service must wait before its self-removal takes effect. It must not
	// be negative; 0 treats the last member like any other.
	LastMemberDelay time.Duration
}

// DefaultPolicy returns the numbers of RFD 1: 60 s, 3 and 600 s.
func DefaultPolicy() Policy {
	return Policy{Window: 60 * time.Second, Divisor: 3, LastMemberDelay: 600 * time.Second}
}

// Validate reports the first setting out of range, wrapping ErrInvalidPolicy.
func (p Policy) Validate() error {
	switch {
	case p.Window <= 0:
		return fmt.Errorf("%w: window %v is not positive", ErrInvalidPolicy, p.Window)
	case p.Divisor < 1:
		return fmt.Errorf("%w: divisor %d is less than 1", ErrInvalidPolicy, p.Divisor)
	case p.LastMemberDelay < 0:
		return fmt.Errorf("%w: last member delay %v is negative", ErrInvalidPolicy, p.LastMemberDelay)
	}
	return nil
}

// Limit returns how many self-removals a service of n members may have
// take effect in one window: max(floor(n/Divisor), 1). At least one, so a
// small service can still shed a member that is really down.
func (p Policy) Limit(n int) int {
	return max(n/p.Divisor, 1)
}
