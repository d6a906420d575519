package mockcloud

import (
	"net/url"
	"slices"
	"strconv"
	"testing"
)

// scanPage is a listing page by definition: every VM filtered, sorted,
// then the marker, offset and limit applied, and the count of all that
// matched — what sortedPageLocked does for any sort, uuid's too.
// pageLocked must agree with it for every query.
func scanPage(c *Cloud, lq listQuery) ([]string, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	vms, n := c.sortedPageLocked(lq)
	uuids := make([]string, len(vms))
	for i, v := range vms {
		uuids[i] = v.UUID
	}
	return uuids, n
}

// TestListPageAgreesWithScan compares the pages of many queries (sorts,
// filters, markers on listed, unlisted and absent uuids, offsets,
// limits) with scanPage's, before and after the VMs change.
func TestListPageAgreesWithScan(t *testing.T) {
	c, _ := newTestCloud(t)
	c.mu.Lock()
	ids := slices.Clone(c.sortedLocked())
	c.mu.Unlock()
	owner := c.vms[ids[3]].OwnerUUID
	alias := c.vms[ids[5]].Alias[:1]
	markers := []string{"", "000000", "ffffffff-ffff-ffff-ffff-ffffffffffff", ids[0], ids[17], ids[len(ids)-1],
		ids[30][:20] + "0000-000000000000"}
	queries := 0
	check := func(t *testing.T) {
		t.Helper()
		for _, sort := range []string{"", "uuid", "uuid.asc", "uuid.DESC", "alias.desc"} {
			for _, filter := range []url.Values{{}, {"state": {"active"}}, {"state": {"running"}},
				{"owner_uuid": {owner}, "state": {"active"}}, {"alias": {alias}}} {
				for _, marker := range markers {
					for _, offset := range []int{0, 3} {
						for _, limit := range []int{1, 7, 1000} {
							q := url.Values{"limit": {strconv.Itoa(limit)}}
							for k, v := range filter {
								q[k] = v
							}
							if sort != "" {
								q.Set("sort", sort)
							}
							switch {
							case marker != "" && offset != 0:
								continue
							case marker != "" && sort == "alias.desc":
								q.Set("marker", `{"uuid":"`+marker+`","alias":"m"}`)
							case marker != "":
								q.Set("marker", `{"uuid":"`+marker+`"}`)
							case offset != 0:
								q.Set("offset", strconv.Itoa(offset))
							}
							p := parseParams(q.Encode())
							if ref := validateListVms(p); ref != nil {
								continue // (a marker on an unordered sort is refused elsewhere)
							}
							lq := newListQuery(p)
							if lq.marker != nil && lq.sort[0].order == "" {
								continue
							}
							queries++
							page, n := c.pageLocked(lq)
							want, wantN := scanPage(c, lq)
							got := []string{}
							for _, v := range page {
								got = append(got, v.UUID)
							}
							if !slices.Equal(got, want) || n != wantN {
								t.Errorf("%s: page %v count %d, want %v count %d", q.Encode(), got, n, want, wantN)
							}
						}
					}
				}
			}
		}
	}
	check(t)
	for i, id := range ids[:12] {
		var err error
		if i%2 == 0 {
			_, err = c.DestroyVM(id)
		} else {
			_, err = c.SetState(id, "stopped")
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.CreateVM(VM{UUID: "00000000-0000-4000-8000-00000000aaaa", OwnerUUID: owner}); err != nil {
		t.Fatal(err)
	}
	check(t)
	if queries < 500 {
		t.Fatalf("only %d queries were valid", queries)
	}
}
