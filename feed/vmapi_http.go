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

// vmapiRequestTimeout bounds one REST request; a page of 1000 whole VM
// objects is a few megabytes, so a request that takes longer is stuck.
const vmapiRequestTimeout = time.Minute

// vmapiMaxBody bounds what is read of one response, far above any real
// page, so that a broken proxy cannot exhaust memory.
const vmapiMaxBody = 256 << 20

// vmapiStatusError is an HTTP answer of 400 or above.
type vmapiStatusError struct {
	status int
	body   string // the start of the body: Triton puts its error code there
}

func (e *vmapiStatusError) Error() string {
	return fmt.Sprintf("http status %d: %s", e.status, e.body)
}

// vmapiRetryable reports whether a request that failed with err may
// succeed when tried again: transport errors and 5xx answers may; 4xx
// answers and malformed bodies never do.
func vmapiRetryable(err error) bool {
	var se *vmapiStatusError
	if errors.As(err, &se) {
		return se.status >= 500
	}
	var ue *url.Error
	return errors.As(err, &ue) && !errors.Is(err, context.Canceled)
}

// get fetches path?query from VMAPI and returns the body of a 2xx or 3xx
// answer.
func (v *VMAPI) get(ctx context.Context, path string, query url.Values) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, vmapiRequestTimeout)
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
	body, err := io.ReadAll(io.LimitReader(resp.Body, vmapiMaxBody))
	if err != nil {
		return nil, fmt.Errorf("get %s: read body: %w", path, err)
	}
	if resp.StatusCode >= 400 {
		return nil, fmt.Errorf("get %s: %w", path, &vmapiStatusError{resp.StatusCode, string(body[:min(len(body), 200)])})
	}
	return body, nil
}

// errVMGone: GET /vms/{uuid} answered 404.
var errVMGone = errors.New("vm not found")

// getVM fetches one VM.
func (v *VMAPI) getVM(ctx context.Context, uuid string) (zonegen.VM, error) {
	body, err := v.get(ctx, "/vms/"+url.PathEscape(uuid), url.Values{"fields": {vmFields}})
	var se *vmapiStatusError
	if errors.As(err, &se) && se.status == http.StatusNotFound {
		return zonegen.VM{}, errVMGone
	}
	if err != nil {
		return zonegen.VM{}, err
	}
	return decodeVM(body)
}

// vmFields are the VM fields GET /vms/:uuid is asked for: the ones naming
// depends on. VMAPI's GetVm renders any field of the VM object by name
// and ignores names the object lacks. ListVms is never given fields: it
// checks each name against its list of settable VM fields (sdc-vmapi
// lib/common/validation.js, VM_FIELDS), which has neither nics nor
// destroyed, and answers 409 ValidationFailed to this list.
const vmFields = "uuid,owner_uuid,alias,state,destroyed,server_uuid,tags,customer_metadata,nics"

// list reads every active VM, page by page, as VMAPI documents it: in its
// default order (uuid, descending), each page after the first continued
// with a marker naming the last uuid of the previous one rather than an
// offset, so that VMs created or destroyed during the listing shift
// nothing and each VM that exists throughout is listed exactly once.
func (v *VMAPI) list(ctx context.Context) (VMListing, error) {
	var l VMListing
	marker := ""
	for page := 0; ; page++ {
		q := url.Values{"state": {"active"}, "limit": {strconv.Itoa(v.cfg.Limit)}}
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
		least := v.addPage(&l, items, page)
		if len(items) < v.cfg.Limit {
			return l, nil
		}
		if least == "" || marker != "" && least >= marker {
			return VMListing{}, fmt.Errorf("list vms: page %d does not advance past %q", page, marker)
		}
		marker = least
	}
}

// addPage adds one page's VMs to l, logging and naming in l.Unreadable
// the malformed ones, and returns the least uuid seen on the page: the
// marker of the next page. An unnamed malformed VM is skipped; should it
// sort last, the next page starts before it and lists it again, which
// costs a log line, not a VM.
func (v *VMAPI) addPage(l *VMListing, items []json.RawMessage, page int) string {
	least := ""
	seen := func(id string) {
		if least == "" || id < least {
			least = id
		}
	}
	for i, raw := range items {
		vm, err := decodeVM(raw)
		if err != nil {
			id := vmUUID(raw)
			v.log.Warn("malformed vm in listing skipped", "vm", id, "page", page, "index", i, "err", err)
			if id != "" {
				l.Unreadable = append(l.Unreadable, id)
				seen(id)
			}
			continue
		}
		l.VMs = append(l.VMs, vm)
		seen(vm.UUID)
	}
	return least
}
