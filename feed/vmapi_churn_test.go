package feed

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/zonegen"
)

// modelSink applies what it is told to a map, as a consumer would.
type modelSink struct {
	mu  sync.Mutex
	vms map[string]zonegen.VM
}

func (s *modelSink) Listing(l VMListing) {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := map[string]zonegen.VM{}
	for _, vm := range l.VMs {
		next[vm.UUID] = vm
	}
	for _, id := range l.Unreadable {
		if vm, ok := s.vms[id]; ok {
			next[id] = vm
		}
	}
	s.vms = next
}

func (s *modelSink) Changed(vm zonegen.VM) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.vms[vm.UUID] = vm
}

func (s *modelSink) Gone(uuid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.vms, uuid)
}

// summary describes the active VMs of the model, one line per VM, in the
// fields the changes touch.
func (s *modelSink) summary() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, id := range slices.Sorted(maps.Keys(s.vms)) {
		vm := s.vms[id]
		if vm.State == "failed" {
			continue // VMAPI's active listing leaves failed VMs out
		}
		tags, _ := json.Marshal(vm.Tags)
		out = append(out, fmt.Sprintf("%s %s %s %s %d %s", id, vm.Alias, vm.State, vm.ServerUUID, len(vm.NICs), tags))
	}
	return out
}

// cloudSummary is summary for the cloud's own active VMs.
func cloudSummary(c *mockcloud.Cloud) []string {
	var out []string
	for _, v := range c.Fixture().VMs {
		if v.State == "destroyed" || v.State == "failed" {
			continue
		}
		raw, _ := json.Marshal(v)
		vm, err := decodeVM(raw)
		if err != nil {
			return []string{err.Error()}
		}
		tags, _ := json.Marshal(vm.Tags)
		out = append(out, fmt.Sprintf("%s %s %s %s %d %s", vm.UUID, vm.Alias, vm.State, vm.ServerUUID, len(vm.NICs), tags))
	}
	return out
}

// TestVMAPIConvergesUnderChurn: after a few hundred random changes, with
// the feed cut in the middle, the consumer's view equals the cloud, and no
// VM was ever fetched twice at once.
func TestVMAPIConvergesUnderChurn(t *testing.T) {
	c := newVMCloud(40)
	sink := &modelSink{vms: map[string]zonegen.VM{}}
	var mu sync.Mutex
	fetching := map[string]bool{}
	overlaps := 0
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := strings.CutPrefix(r.URL.Path, "/vms/")
		if ok {
			mu.Lock()
			if fetching[id] {
				overlaps++
			}
			fetching[id] = true
			mu.Unlock()
			defer func() {
				mu.Lock()
				delete(fetching, id)
				mu.Unlock()
			}()
		}
		c.Handler().ServeHTTP(w, r)
	})
	runVMAPI(t, h, sink, nil)
	vmWaitFor(t, "the first listing", func() bool { return len(sink.summary()) > 0 })
	rng := mockcloud.NewRand(3)
	for i := range 300 {
		c.ChurnStep(rng)
		if i == 150 {
			c.DisconnectAll()
		}
	}
	vmWaitFor(t, "the consumer's view to equal the cloud", func() bool {
		return slices.Equal(sink.summary(), cloudSummary(c))
	})
	mu.Lock()
	defer mu.Unlock()
	if overlaps != 0 {
		t.Errorf("%d fetches of a VM overlapped another fetch of the same VM", overlaps)
	}
}
