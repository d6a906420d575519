package store_test

import (
	"testing"

	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/store/bolt"
)

// init gives store's own tests the real backends (backends_test.go).
func init() {
	store.OpenBoltForTest = func(tb testing.TB, path string, noSync bool) store.Backend {
		tb.Helper()
		b, err := bolt.Open(path, bolt.Options{NoSync: noSync})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { b.Close() })
		return b
	}
}
