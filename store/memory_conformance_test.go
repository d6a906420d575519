package store_test

import (
	"testing"

	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/store/storetest"
)

// TestMemoryConformance runs the backend conformance suite over Memory,
// the reference the other backends are held to.
func TestMemoryConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Backend { return store.NewMemory() })
}
