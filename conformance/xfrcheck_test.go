package conformance

import "testing"

func testAXFR(t *testing.T, r *rig) {}

func testIXFR(t *testing.T, r *rig) {}
