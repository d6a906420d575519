package feed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"

	"github.com/cnsd/cnsd/parallel"
	"github.com/cnsd/cnsd/zonegen"
)

// List takes one complete listing of the active VMs, as Run does after
// each (re)connect of the changefeed; it delivers nothing to a sink.
func (v *VMAPI) List(ctx context.Context) (VMListing, error) { return v.list(ctx, nil) }

// listTo takes one complete listing for sink: a VMPageSink gets its pages
// as they are decoded, and ListingAbandoned when it fails.
func (v *VMAPI) listTo(ctx context.Context, sink VMSink) (VMListing, error) {
	ps, _ := sink.(VMPageSink)
	return v.list(ctx, ps)
}

// list reads every active VM, page by page, as VMAPI documents it: in its
// default order (uuid, descending), each page after the first continued
// with a marker naming the last uuid of the previous one rather than an
// offset, so that VMs created or destroyed during the listing shift
// nothing and each VM that exists throughout is listed exactly once.
//
// The pages are fetched one ahead of their decoding: one goroutine
// requests a page, reads it and splits its array into elements, taking
// the next page's marker from the elements' uuids in the same pass
// (readPage), then requests the next page while the VMs of the one
// before are decoded, over GOMAXPROCS goroutines (decodePage). A
// non-nil pages gets each page's readable VMs once decoded, and
// ListingAbandoned if the listing fails after the first.
//
// A page's body is read into the buffer of one decoded before, when
// there is one (spare): nothing decoded refers to the body, and reading
// 100 pages of a megabyte each into buffers grown from nothing
// allocated and cleared two and a half times their size.
func (v *VMAPI) list(ctx context.Context, pages VMPageSink) (VMListing, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fetched := make(chan listPage, 1)
	spare := make(chan []byte, 2)
	var ferr error
	go func() {
		ferr = v.fetchPages(ctx, fetched, spare)
		close(fetched)
	}()
	var l VMListing
	delivered := false
	for p := range fetched {
		before := len(l.VMs)
		v.addPage(&l, p.items, p.n)
		if pages != nil {
			pages.ListingPage(p.n, l.VMs[before:len(l.VMs):len(l.VMs)])
			delivered = true
		}
		select {
		case spare <- p.body:
		default:
		}
	}
	if ferr != nil {
		if delivered {
			pages.ListingAbandoned()
		}
		return VMListing{}, ferr
	}
	return l, nil
}

// listPage is one page of the listing: its VM objects, undecoded,
// slices of its body.
type listPage struct {
	n     int
	items []json.RawMessage
	body  []byte
}

// fetchPages sends the listing's pages to out in order until the last,
// or returns the error that ends the listing. It reads each page into a
// buffer from spare if one is there.
func (v *VMAPI) fetchPages(ctx context.Context, out chan<- listPage, spare <-chan []byte) error {
	marker := ""
	for page := 0; ; page++ {
		q := url.Values{"state": {"active"}, "limit": {strconv.Itoa(v.cfg.Limit)}}
		if marker != "" {
			m, _ := json.Marshal(map[string]string{"uuid": marker}) // a string map cannot fail
			q.Set("marker", string(m))
		}
		var buf []byte
		select {
		case buf = <-spare:
		default:
		}
		items, least, body, err := v.getPage(ctx, q, page, buf)
		if err != nil {
			return fmt.Errorf("list vms: %w", err)
		}
		select {
		case out <- listPage{n: page, items: items, body: body}:
		case <-ctx.Done():
			return fmt.Errorf("list vms: %w", ctx.Err())
		}
		if len(items) < v.cfg.Limit {
			return nil
		}
		if least == "" || marker != "" && least >= marker {
			return fmt.Errorf("list vms: page %d does not advance past %q", page, marker)
		}
		marker = least
	}
}

// errNotArray: a page is not a JSON array.
var errNotArray = errors.New("is not a json array")

// getPage fetches one page of GET /vms into buf, splits its array into
// the elements' JSON and finds the next page's marker (readPage); body
// is what holds the elements.
func (v *VMAPI) getPage(ctx context.Context, q url.Values, page int, buf []byte) (items []json.RawMessage, least string, body []byte, err error) {
	ctx, cancel := context.WithTimeout(ctx, vmapiRequestTimeout)
	defer cancel()
	u := strings.TrimSuffix(v.cfg.URL, "/") + "/vms?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, "", nil, fmt.Errorf("get /vms: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := v.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, "", nil, fmt.Errorf("get /vms: %w", err)
	}
	defer resp.Body.Close()
	if err := vmapiStatus("/vms", resp); err != nil {
		return nil, "", nil, err
	}
	items, least, body, err = readPage(io.LimitReader(resp.Body, vmapiMaxBody), v.cfg.Limit, buf)
	switch {
	case errors.Is(err, errNotArray):
		return nil, "", nil, fmt.Errorf("page %d %w", page, errNotArray)
	case err != nil:
		return nil, "", nil, fmt.Errorf("get /vms: %w", &vmapiReadError{err})
	}
	return items, least, body, nil
}

// readPage reads one JSON array, and nothing after it, into buf (grown
// as needed), and returns its elements, the body they are slices of,
// and the least of their uuids as vmUUID reads them (readable
// VMs or not: a malformed VM is listed as unreadable under it), the
// marker of the next page. Malformed JSON, or JSON that is not one
// array, is errNotArray; a failed read is its error.
//
// The elements are slices of the body read, not copies: the body is
// read whole and split by one scan (jsonScan), which costs a fraction of
// decoding each element off a json.Decoder. The same scan picks out
// each element's uuid where it is plain (topUUID): the others, rare,
// are left to vmUUID.
func readPage(r io.Reader, sizeHint int, buf []byte) (items []json.RawMessage, least string, body []byte, err error) {
	body, err = readAll(r, buf)
	if err != nil {
		return nil, "", nil, err
	}
	s := jsonScan{b: body}
	if s.peek() != '[' {
		return nil, "", nil, errNotArray
	}
	items = make([]json.RawMessage, 0, sizeHint)
	var leastPlain []byte // the least plain uuid, not yet copied
	s.array(func(int) {
		start := s.i
		id, plain := s.topUUID()
		if s.bad {
			return
		}
		raw := body[start:s.i:s.i] // an append must not run into the next one
		items = append(items, raw)
		if !plain {
			id = []byte(vmUUID(raw))
		}
		if len(id) > 0 && (leastPlain == nil || string(id) < string(leastPlain)) {
			leastPlain = id
		}
	})
	if !s.end() {
		return nil, "", nil, errNotArray
	}
	return items, string(leastPlain), body, nil
}

// readAll is io.ReadAll reading into buf[:0], grown as needed; without
// a buffer, io.ReadAll, which wastes less on the way to the size.
func readAll(r io.Reader, buf []byte) ([]byte, error) {
	if cap(buf) == 0 {
		return io.ReadAll(r)
	}
	b := buf[:0]
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // let append pick the new size
		}
	}
}

// addPage adds one page's VMs to l, logging and naming in l.Unreadable
// the malformed ones. An unnamed malformed VM is skipped; should it sort
// last, the next page starts before it and lists it again, which costs a
// log line, not a VM.
func (v *VMAPI) addPage(l *VMListing, items []json.RawMessage, page int) {
	vms, errs := decodePage(items)
	for i, raw := range items {
		if err := errs[i]; err != nil {
			id := vmUUID(raw)
			v.log.Warn("malformed vm in listing skipped", "vm", id, "page", page, "index", i, "err", err)
			if id != "" {
				l.Unreadable = append(l.Unreadable, id)
			}
			continue
		}
		l.VMs = append(l.VMs, vms[i])
	}
}

// decodePage decodes a page's VM objects over up to GOMAXPROCS
// goroutines; the results are in the page's order.
func decodePage(items []json.RawMessage) ([]zonegen.VM, []error) {
	vms, errs := make([]zonegen.VM, len(items)), make([]error, len(items))
	parallel.Each(len(items), min(runtime.GOMAXPROCS(0), max(len(items)/64, 1)), func(i int) {
		vms[i], errs[i] = decodeVM(items[i])
	})
	return vms, errs
}

// topUUID reads the value at the position, as skip does, and returns
// the value of its top-level "uuid" key when every top-level key and
// that value are plain strings (printable ASCII, no escape): then it is
// what vmUUID would read, the last of a repeated key, and "" when there
// is none. plain is false otherwise (not an object, an escape, a value
// that is not a string of ASCII), and vmUUID must decide. The uuid is a
// slice of the text, not a copy.
func (s *jsonScan) topUUID() (uuid []byte, plain bool) {
	if s.peek() != '{' {
		s.skip()
		return nil, false
	}
	plain = true
	s.object(func(quoted []byte, plainKey bool) {
		isUUID := plainKey && string(quoted) == `"uuid"`
		if !isUUID || s.peek() != '"' {
			plain = plain && plainKey && !isUUID
			s.skip()
			return
		}
		v, p := s.str()
		plain = plain && p
		if len(v) >= 2 { // else a syntax error: s.bad
			uuid = v[1 : len(v)-1]
		}
	})
	if !plain || s.bad {
		return nil, false
	}
	return uuid, true
}
