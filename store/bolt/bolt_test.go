package bolt_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/store/bolt"
	"github.com/cnsd/cnsd/store/storetest"
	"github.com/cnsd/cnsd/zonegen"
)

func openBolt(t *testing.T, path string) *bolt.Backend {
	t.Helper()
	b, err := bolt.Open(path, bolt.Options{LockTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBoltConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Backend {
		b := openBolt(t, filepath.Join(t.TempDir(), "cnsd.db"))
		t.Cleanup(func() { b.Close() })
		return b
	})
}

// boltZone is a one-VM zone change for the bolt-specific tests.
func boltZone(prev, next store.Serial) store.ZoneChange {
	const vm = "c0000000-0000-4000-8000-000000000001"
	recs := []store.Record{
		{Name: "vm-1.inst.u1.dc1.example.com.", Type: zonegen.TypeA, Data: "198.51.0.1", Source: vm},
		{Name: "vm-1.inst.u1.dc1.example.com.", Type: zonegen.TypeAAAA, Data: "2001:db8::1", Source: vm},
	}
	return store.ZoneChange{Zone: "dc1.example.com", Prev: prev, Next: next,
		SetVMs:      map[string][]store.Record{vm: recs},
		Diff:        store.Diff{Zone: "dc1.example.com", From: prev, To: next, Added: recs},
		KeepJournal: 10}
}

func TestBoltCorruptValue(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cnsd.db")
	b := openBolt(t, path)
	c := boltZone(0, 100)
	c.SetVMs["c0000000-0000-4000-8000-000000000002"] = nil
	if err := b.Apply(t.Context(), 1, []store.ZoneChange{c}); err != nil {
		t.Fatal(err)
	}
	b.Close()
	corrupt(t, path, "zone/dc1.example.com", "vms", "c0000000-0000-4000-8000-000000000002", []byte{1, 9, 'x'})
	corrupt(t, path, "zone/dc1.example.com", "journal", string([]byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0}), []byte{7})
	// A chunk without the chunks before it: an entry cut short.
	corrupt(t, path, "zone/dc1.example.com", "journal", string([]byte{0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 3}), []byte{7})

	b = openBolt(t, path)
	defer b.Close()
	var keys []string
	zones, err := b.Load(t.Context(), func(key string, err error) {
		keys = append(keys, key)
		if !strings.Contains(err.Error(), "truncated") && !strings.Contains(err.Error(), "format byte 7") &&
			!strings.Contains(err.Error(), "chunk 3 without chunk 0") {
			t.Errorf("report %s: %v does not say what is wrong", key, err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"zone/dc1.example.com/vms/c0000000-0000-4000-8000-000000000002", "zone/dc1.example.com/journal/1",
		"zone/dc1.example.com/journal/9"}
	if strings.Join(keys, " ") != strings.Join(want, " ") {
		t.Errorf("reported keys %q, want %q", keys, want)
	}
	z := zones["dc1.example.com"]
	if z == nil || z.Serial != 100 || len(z.VMs) != 1 || len(z.Journal) != 0 {
		t.Errorf("zone after skipping corrupt values: %+v", z)
	}
}

// corrupt overwrites a value in the file behind the store's back.
func corrupt(t *testing.T, path, zone, sub, key string, val []byte) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bbolt.Tx) error {
		return tx.Bucket([]byte(zone)).Bucket([]byte(sub)).Put([]byte(key), val)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestBoltReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cnsd.db")
	b := openBolt(t, path)
	epoch, err := b.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Apply(t.Context(), epoch, []store.ZoneChange{boltZone(0, 100), boltZone(0, 100)}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second change from serial 0 in one Apply: %v, want ErrConflict", err)
	}
	if err := b.Apply(t.Context(), epoch, []store.ZoneChange{boltZone(0, 100)}); err != nil {
		t.Fatal(err)
	}
	b.Close()

	b = openBolt(t, path)
	defer b.Close()
	zones, err := b.Load(t.Context(), nil)
	if err != nil || zones["dc1.example.com"].Serial != 100 {
		t.Fatalf("serial after reopen: %v, %v", zones, err)
	}
	next, err := b.Acquire(t.Context())
	if err != nil || next != epoch+1 {
		t.Fatalf("Acquire after reopen = %d, %v; want %d", next, err, epoch+1)
	}
	if err := b.Apply(t.Context(), epoch, []store.ZoneChange{boltZone(100, 101)}); !errors.Is(err, store.ErrFenced) {
		t.Errorf("Apply with the epoch of the previous open: %v, want ErrFenced", err)
	}
}

func TestBoltInUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cnsd.db")
	b := openBolt(t, path)
	defer b.Close()
	_, err := bolt.Open(path, bolt.Options{LockTimeout: 50 * time.Millisecond})
	want := "store: " + path + " is in use by another process"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("second Open: %v, want %q", err, want)
	}
}
