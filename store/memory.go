package store

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
)

// Memory is a Backend, Leaser and Follower that keeps everything in the
// process: the reference implementation, and the backend of tests. Its
// Apply is all-or-nothing across the whole batch, stricter than the
// per-zone atomicity Backend requires. Safe for concurrent use.
type Memory struct {
	// mu guards zones, floors, fence, holder, lastEpoch, leaseCh and subs.
	mu        sync.Mutex
	zones     map[string]*ZoneData
	floors    map[string]Serial // final serials of dropped zones
	fence     uint64            // the newest epoch handed out or written with
	holder    uint64            // the lease holder's epoch; 0 when free
	lastEpoch uint64
	leaseCh   chan struct{} // closed and replaced whenever the lease changes hands
	subs      map[chan struct{}]struct{}
	hints     map[string]Serial // SerialHinter
}

var (
	_ Backend      = (*Memory)(nil)
	_ Leaser       = (*Memory)(nil)
	_ Follower     = (*Memory)(nil)
	_ SerialLister = (*Memory)(nil)
	_ SerialHinter = (*Memory)(nil)
)

// NewMemory returns an empty Memory.
func NewMemory() *Memory {
	return &Memory{zones: map[string]*ZoneData{}, floors: map[string]Serial{}, leaseCh: make(chan struct{}), subs: map[chan struct{}]struct{}{}}
}

// Load returns a copy of every zone.
func (m *Memory) Load(ctx context.Context, report func(key string, err error)) (map[string]*ZoneData, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]*ZoneData, len(m.zones))
	for name, z := range m.zones {
		out[name] = copyZone(z)
	}
	return out, nil
}

// Apply checks the epoch and every zone's Prev first, then writes all the
// changes or none.
func (m *Memory) Apply(ctx context.Context, epoch uint64, changes []ZoneChange) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if epoch < m.fence {
		return fmt.Errorf("memory apply with epoch %d, fence %d: %w", epoch, m.fence, ErrFenced)
	}
	for _, c := range changes {
		var serial Serial
		if z := m.zones[c.Zone]; z != nil {
			serial = z.Serial
		}
		if serial != c.Prev {
			return fmt.Errorf("memory apply to zone %s at %d, expected %d: %w", c.Zone, serial, c.Prev, ErrConflict)
		}
	}
	m.fence = epoch
	for _, c := range changes {
		m.applyLocked(c)
	}
	for ch := range m.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	return nil
}

func (m *Memory) applyLocked(c ZoneChange) {
	if c.Drop {
		if m.zones[c.Zone] != nil {
			m.floors[c.Zone] = c.Prev
		}
		delete(m.zones, c.Zone)
		return
	}
	z := m.zones[c.Zone]
	if z == nil {
		z = &ZoneData{Name: c.Zone, VMs: map[string][]Record{}}
		m.zones[c.Zone] = z
	}
	z.Serial = c.Next
	if c.Replace {
		z.VMs, z.Journal = map[string][]Record{}, nil
	}
	// The slices are kept, not copied, as the journal's Diffs always
	// were: Apply's caller leaves them alone (Backend.Apply), and the
	// Store's own per-VM state holds the same slices, so that a copy
	// would add a record's 56 bytes for each one stored. Load and Since
	// hand out copies.
	for vm, recs := range c.SetVMs {
		z.VMs[vm] = recs
	}
	for _, vm := range c.DelVMs {
		delete(z.VMs, vm)
	}
	z.Journal = append(z.Journal, c.Diff)
	if drop := len(z.Journal) - max(c.KeepJournal, 0); drop > 0 {
		// In place: Load and Since hand out copies, never this array.
		n := copy(z.Journal, z.Journal[drop:])
		clear(z.Journal[n:])
		z.Journal = z.Journal[:n]
	}
}

// Serials returns every zone's serial (SerialLister).
func (m *Memory) Serials(ctx context.Context) (map[string]Serial, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]Serial, len(m.zones))
	for name, z := range m.zones {
		out[name] = z.Serial
	}
	return out, nil
}

// HintSerial raises zone's hint to serial (SerialHinter).
func (m *Memory) HintSerial(ctx context.Context, zone string, serial Serial) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.hints == nil {
		m.hints = map[string]Serial{}
	}
	if cur, ok := m.hints[zone]; !ok || cur.Less(serial) {
		m.hints[zone] = serial
	}
	return nil
}

// SerialHints returns a copy of the hints (SerialHinter).
func (m *Memory) SerialHints(ctx context.Context) (map[string]Serial, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.hints), nil
}

// ClearSerialHint deletes zone's hint if it is serial (SerialHinter).
func (m *Memory) ClearSerialHint(ctx context.Context, zone string, serial Serial) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.hints[zone] == serial {
		delete(m.hints, zone)
	}
	return nil
}

// Floors returns a copy of the final serials of the zones dropped.
func (m *Memory) Floors(ctx context.Context) (map[string]Serial, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.floors), nil
}

// Close does nothing: Memory holds no resources.
func (m *Memory) Close() error { return nil }

// Changed returns a channel signalled after every Apply, closed when ctx
// ends.
func (m *Memory) Changed(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{}, 1)
	m.mu.Lock()
	m.subs[ch] = struct{}{}
	m.mu.Unlock()
	go func() {
		<-ctx.Done()
		m.mu.Lock()
		delete(m.subs, ch)
		close(ch)
		m.mu.Unlock()
	}()
	return ch
}

// Since returns the journal after since (an empty, non-nil slice when the
// zone is at since), or the whole zone when the journal does not reach
// back to since; (nil, nil, nil) when the zone does not exist.
func (m *Memory) Since(ctx context.Context, zone string, since Serial) ([]Diff, *ZoneData, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	z := m.zones[zone]
	switch {
	case z == nil:
		return nil, nil, nil
	case z.Serial == since:
		return []Diff{}, nil, nil
	}
	for i, d := range z.Journal {
		if d.From == since {
			return slices.Clone(z.Journal[i:]), nil, nil
		}
	}
	return nil, copyZone(z), nil
}

// Zones lists the zones held, sorted.
func (m *Memory) Zones(ctx context.Context) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(maps.Keys(m.zones)), nil
}

func copyZone(z *ZoneData) *ZoneData {
	c := &ZoneData{Name: z.Name, Serial: z.Serial, VMs: make(map[string][]Record, len(z.VMs)), Journal: slices.Clone(z.Journal)}
	for vm, recs := range z.VMs {
		c.VMs[vm] = slices.Clone(recs)
	}
	return c
}
