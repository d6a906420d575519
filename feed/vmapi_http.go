package feed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
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
	var re *vmapiReadError
	return (errors.As(err, &ue) || errors.As(err, &re)) && !errors.Is(err, context.Canceled)
}

// vmapiReadError is an answer whose body could not be read whole (the
// connection dropped, the time ran out): as retryable as one that never
// came.
type vmapiReadError struct{ err error }

func (e *vmapiReadError) Error() string { return "read body: " + e.err.Error() }
func (e *vmapiReadError) Unwrap() error { return e.err }

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
	if err := vmapiStatus(path, resp); err != nil {
		return nil, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, vmapiMaxBody))
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", path, &vmapiReadError{err})
	}
	return body, nil
}

// vmapiStatus returns the error of an answer of 400 or above, with the
// start of its body.
func vmapiStatus(path string, resp *http.Response) error {
	if resp.StatusCode < 400 {
		return nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
	return fmt.Errorf("get %s: %w", path, &vmapiStatusError{resp.StatusCode, string(body)})
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
