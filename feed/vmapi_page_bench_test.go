package feed

import (
	"bytes"
	"testing"
)

// BenchmarkListPage is the listing's work on one page of 1,000 VMs from
// mockcloud's generator once its body is read: splitting the array
// and finding the next page's marker (readPage), decoding the VMs
// (decodePage). ns/op is per page.
//
//	go test ./feed -run '^$' -bench ListPage -benchmem
func BenchmarkListPage(b *testing.B) {
	raws := generatedVMs(b, 1000)
	body := append([]byte{'['}, bytes.Join(raws, []byte{','})...)
	body = append(body, ']')
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		items, least, _, err := readPage(bytes.NewReader(body), 1000, nil)
		if err != nil {
			b.Fatal(err)
		}
		if least == "" {
			b.Fatal("no marker")
		}
		if _, errs := decodePage(items); errs[0] != nil {
			b.Fatal(errs[0])
		}
	}
}
