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
// requests a page, reads it and splits its array into elements, takes
// the next page's marker from the elements' uuids alone (pageMarker),
// then requests the next page while the VMs of the one
// before are decoded, over GOMAXPROCS goroutines (decodePage). A
// non-nil pages gets each page's readable VMs once decoded, and
// ListingAbandoned if the listing fails after the first.
func (v *VMAPI) list(ctx context.Context, pages VMPageSink) (VMListing, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fetched := make(chan listPage, 1)
	var ferr error
	go func() {
		ferr = v.fetchPages(ctx, fetched)
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
	}
	if ferr != nil {
		if delivered {
			pages.ListingAbandoned()
		}
		return VMListing{}, ferr
	}
	return l, nil
}

// listPage is one page of the listing: its VM objects, undecoded.
type listPage struct {
	n     int
	items []json.RawMessage
}

// fetchPages sends the listing's pages to out in order until the last,
// or returns the error that ends the listing.
func (v *VMAPI) fetchPages(ctx context.Context, out chan<- listPage) error {
	marker := ""
	for page := 0; ; page++ {
		q := url.Values{"state": {"active"}, "limit": {strconv.Itoa(v.cfg.Limit)}}
		if marker != "" {
			m, _ := json.Marshal(map[string]string{"uuid": marker}) // a string map cannot fail
			q.Set("marker", string(m))
		}
		items, err := v.getPage(ctx, q, page)
		if err != nil {
			return fmt.Errorf("list vms: %w", err)
		}
		least := pageMarker(items)
		select {
		case out <- listPage{n: page, items: items}:
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

// getPage fetches one page of GET /vms and splits its array into the
// elements' JSON.
func (v *VMAPI) getPage(ctx context.Context, q url.Values, page int) ([]json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, vmapiRequestTimeout)
	defer cancel()
	u := strings.TrimSuffix(v.cfg.URL, "/") + "/vms?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("get /vms: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := v.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("get /vms: %w", err)
	}
	defer resp.Body.Close()
	if err := vmapiStatus("/vms", resp); err != nil {
		return nil, err
	}
	items, err := readArray(io.LimitReader(resp.Body, vmapiMaxBody), v.cfg.Limit)
	switch {
	case errors.Is(err, errNotArray):
		return nil, fmt.Errorf("page %d %w", page, errNotArray)
	case err != nil:
		return nil, fmt.Errorf("get /vms: read body: %w", err)
	}
	return items, nil
}

// readArray reads one JSON array, and nothing after it. Malformed JSON,
// or JSON that is not one array, is errNotArray; a failed read is its
// error. The elements are slices of the body read, not copies: the body
// is read whole and split by one scan (jsonScan), which costs a fraction
// of decoding each element off a json.Decoder.
func readArray(r io.Reader, sizeHint int) ([]json.RawMessage, error) {
	body, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	s := jsonScan{b: body}
	if s.peek() != '[' {
		return nil, errNotArray
	}
	items := make([]json.RawMessage, 0, sizeHint)
	s.array(func(int) {
		if raw := s.skip(); raw != nil {
			items = append(items, raw[:len(raw):len(raw)]) // an append must not run into the next one
		}
	})
	if !s.end() {
		return nil, errNotArray
	}
	return items, nil
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

// pageMarker is the least uuid of a page's VM objects, as vmUUID reads
// them (readable or not: a malformed VM is listed as unreadable under it):
// the marker of the next page. Most objects give it up to topUUID
// without being decoded.
func pageMarker(items []json.RawMessage) string {
	least := ""
	for _, raw := range items {
		id, ok := topUUID(raw)
		if !ok {
			id = vmUUID(raw)
		}
		if id != "" && (least == "" || id < least) {
			least = id
		}
	}
	return least
}

// topUUID finds the plain string value of the top-level "uuid" key of
// valid JSON b (the last one, as decoding takes the last of a repeated
// key) by scanning it, without decoding. ok is false when b is not
// plain enough to be sure: not an object, an escape in a key or in the
// value, a value that is not a string of ASCII; vmUUID then decides. An
// object without the key has "" and ok.
func topUUID(b []byte) (uuid string, ok bool) {
	i := skipSpace(b, 0)
	if i == len(b) || b[i] != '{' {
		return "", false
	}
	depth, key := 0, false // key: the next string at depth 1 is a key
	for ; i < len(b); i++ {
		switch b[i] {
		case '{', '[':
			depth++
			key = depth == 1
		case '}', ']':
			depth--
		case ',':
			key = depth == 1
		case '"':
			end, plain := stringEnd(b, i)
			if end < 0 {
				return "", false
			}
			if depth == 1 && key {
				key = false
				if !plain {
					return "", false
				}
				if string(b[i+1:end]) == "uuid" {
					v, vend, ok := stringValue(b, end+1)
					if !ok {
						return "", false
					}
					uuid, end = v, vend
				}
			}
			i = end
		}
	}
	return uuid, true
}

// stringEnd returns the index of the quote closing the string opened at
// b[i], and whether the string is plain: printable ASCII, no escape.
func stringEnd(b []byte, i int) (end int, plain bool) {
	plain = true
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j, plain
		case c == '\\':
			plain = false
			j++
		case c < 0x20 || c >= 0x80:
			plain = false
		}
	}
	return -1, false
}

// stringValue reads `: "value"` from b[i:]; ok only for a plain string.
func stringValue(b []byte, i int) (v string, end int, ok bool) {
	i = skipSpace(b, i)
	if i == len(b) || b[i] != ':' {
		return "", 0, false
	}
	i = skipSpace(b, i+1)
	if i == len(b) || b[i] != '"' {
		return "", 0, false
	}
	end, plain := stringEnd(b, i)
	if end < 0 || !plain {
		return "", 0, false
	}
	return string(b[i+1 : end]), end, true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
