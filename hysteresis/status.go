package hysteresis

import "strconv"

// Status is the state a caller reports for a member of a service.
type Status int

// The zero Status is invalid so that a forgotten field is caught, not
// silently taken as Up.
const (
	// Up: the member is in service and wants to be listed.
	Up Status = iota + 1
	// SelfDown: the member reports itself down (triton.cns.status is not
	// "up") and asks for a self-removal, which the policy may delay.
	SelfDown
	// Gone: a hard removal (tag removed, VM stopped or destroyed, CN down,
	// account disabled). The member leaves the service at once.
	Gone
)

func (s Status) String() string {
	switch s {
	case Up:
		return "up"
	case SelfDown:
		return "self-down"
	case Gone:
		return "gone"
	}
	return "Status(" + strconv.Itoa(int(s)) + ")"
}
