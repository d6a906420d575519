// Package hysteresis decides when a service member's self-reported removal
// may take effect, so a flaky health probe cannot empty a service at once.
//
// It implements the damping of RFD 1 (docs/pipeline.md, Self-removals). A VM is a member of a
// service while it carries the service tag and has not been hard-removed.
// A member that reports itself down asks for a self-removal; per service at
// most max(floor(n/Divisor), 1) self-removals take effect in any window of
// Window, and the removal of the last listed member waits LastMemberDelay
// after it was asked for. Hard removals ([Gone]) and returns to [Up] are
// never delayed.
//
// Precisely, for one service:
//
//   - n is the number of its members: Up, pending (SelfDown and still
//     listed) and self-removed (SelfDown and not listed, including members
//     that joined already down). Hard-removed members do not count. n is
//     taken when a removal is applied, so members joining or leaving
//     change the limit from then on.
//   - The window is half-open: a request may take effect at t if fewer
//     than max(floor(n/Divisor), 1) self-removals took effect in
//     (t-Window, t]. A removal at t0 therefore stops counting at exactly
//     t0+Window. A removal takes effect when it is applied, never earlier.
//   - A request whose member is the only listed one may take effect only
//     at or after its request time plus LastMemberDelay, and then only
//     within the window limit.
//   - Requests are served in FIFO order of request time, ties by member
//     id; a later request never overtakes an earlier one.
//   - A service left with no members is deleted with its window: members
//     that join later start a new one.
//
// The package is pure: no clock reading, no goroutine, no I/O. Time is a
// parameter of every call, so the caller's clock (and a test's) drives it.
// It imports only the standard library.
//
// A typical caller keeps one [Tracker], reports every member's status as
// the VM feed changes, and runs [Tracker.Advance] when [Tracker.NextDue]
// says something is due:
//
//	listed := tr.Set(now, owner+"/"+svc, vmUUID, hysteresis.SelfDown)
//	// publish the VM under svc only while listed
//	for _, r := range tr.Advance(now) {
//		// withdraw r.Member from r.Service
//	}
package hysteresis
