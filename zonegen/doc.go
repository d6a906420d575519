// Package zonegen turns one VM view into the DNS records it contributes to
// each zone.
//
// It is the pure core of cnsd: the tag grammar of triton.cns.services, the
// inclusion decisions (instance and service listing, with the reasons that
// applied), and the name families of docs/user-guide.md and
// docs/pipeline.md (Networks and zones). There is no I/O,
// no clock reading and no goroutine here; time, where a rule needs it, is a
// parameter. It imports only the standard library.
//
// A typical caller builds a Generator once per configuration and then, for
// each VM view:
//
//	d := zonegen.Decide(&view, opts, now)
//	// the pipeline may keep some services listed while hysteresis holds them
//	c := gen.Generate(&view, &d)
//	for _, z := range c.Zones { ... }
package zonegen
