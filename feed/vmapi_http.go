package feed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cnsd/cnsd/zonegen"
)

// httpTimeout bounds one REST request; a page of 1000 VMs is well under a
// megabyte, so a request that takes longer is stuck.
const httpTimeout = time.Minute

// maxBody bounds what is read of one response; VMAPI's largest page is a
// few megabytes.
const maxBody = 256 << 20

// statusError is an HTTP answer of 400 or above.
type statusError struct {
	status int
	body   string // the start of the body: Triton puts its error code there
}

func (e *statusError) Error() string {
	return fmt.Sprintf("http status %d: %s", e.status, e.body)
}

// retryable reports whether a request that failed with err may succeed
// when tried again: transport errors and 5xx answers may; 4xx answers and malformed
// bodies never do.
func retryable(err error) bool {
	var se *statusError
	if errors.As(err, &se) {
		return se.status >= 500
	}
	var ue *url.Error
	return errors.As(err, &ue) && !errors.Is(err, context.Canceled)
}

// get fetches path?query from VMAPI and returns the body of a 2xx or 3xx
// answer.
func (v *VMAPI) get(ctx context.Context, path string, query url.Values) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, httpTimeout)
	defer cancel()
	u := strings.TrimSuffix(v.cfg.URL, "/") + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", path, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := v.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("get %s: read body: %w", path, err)
	}
	if resp.StatusCode >= 400 {
		return nil, fmt.Errorf("get %s: %w", path, &statusError{resp.StatusCode, string(body[:min(len(body), 200)])})
	}
	return body, nil
}

// errVMGone: GET /vms/{uuid} answered 404.
var errVMGone = errors.New("vm not found")

// getVM fetches one VM.
func (v *VMAPI) getVM(ctx context.Context, uuid string) (zonegen.VM, error) {
	body, err := v.get(ctx, "/vms/"+url.PathEscape(uuid), nil)
	var se *statusError
	if errors.As(err, &se) && se.status == http.StatusNotFound {
		return zonegen.VM{}, errVMGone
	}
	if err != nil {
		return zonegen.VM{}, err
	}
	return decodeVM(body)
}

// list reads every active VM, page by page. Pages are sorted by uuid and
// continued with a marker (the last uuid seen) rather than an offset, so
// that VMs created or destroyed during the listing shift nothing: each VM
// that exists throughout is listed exactly once.
func (v *VMAPI) list(ctx context.Context) (VMListing, error) {
	var l VMListing
	marker := ""
	for page := 0; ; page++ {
		q := url.Values{"state": {"active"}, "limit": {strconv.Itoa(v.cfg.Limit)}, "sort": {"uuid.ASC"}}
		if marker != "" {
			m, _ := json.Marshal(map[string]string{"uuid": marker}) // a string map cannot fail
			q.Set("marker", string(m))
		}
		body, err := v.get(ctx, "/vms", q)
		if err != nil {
			return VMListing{}, fmt.Errorf("list vms: %w", err)
		}
		var items []json.RawMessage
		if err := json.Unmarshal(body, &items); err != nil {
			return VMListing{}, fmt.Errorf("list vms: page %d is not a json array", page)
		}
		last := v.addPage(&l, items, page)
		if len(items) < v.cfg.Limit {
			return l, nil
		}
		if last <= marker {
			return VMListing{}, fmt.Errorf("list vms: page %d does not advance past %q", page, marker)
		}
		marker = last
	}
}

// addPage adds one page's VMs to l, logging and naming in l.Unreadable
// the malformed ones, and returns the greatest uuid seen on the page.
func (v *VMAPI) addPage(l *VMListing, items []json.RawMessage, page int) string {
	last := ""
	for i, raw := range items {
		vm, err := decodeVM(raw)
		if err != nil {
			id := vmUUID(raw)
			v.log.Warn("malformed vm in listing skipped", "vm", id, "page", page, "index", i, "err", err)
			if id != "" {
				l.Unreadable = append(l.Unreadable, id)
				last = max(last, id)
			}
			continue
		}
		l.VMs = append(l.VMs, vm)
		last = max(last, vm.UUID)
	}
	return last
}
