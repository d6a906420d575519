package feed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/cnsd/cnsd/schema"
)

// ErrNotFound is wrapped by lookups the API answered with 404: the object
// does not exist, which is a different thing from the API being unreachable.
var ErrNotFound = errors.New("not found")

// maxAPIBody bounds what one API answer may be, so that a broken or hostile
// upstream cannot make cnsd allocate without limit. A CNAPI listing with
// sysinfo for thousands of servers stays well below it.
const maxAPIBody = 64 << 20

// APIError is a non-2xx answer of a Triton API, with the code and message
// of its JSON error body when it had one.
type APIError struct {
	URL     string
	Status  int
	Code    string
	Message string
}

func (e *APIError) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("GET %s: HTTP %d", e.URL, e.Status)
	}
	return fmt.Sprintf("GET %s: HTTP %d %s: %s", e.URL, e.Status, e.Code, e.Message)
}

// Is makes a 404 match ErrNotFound.
func (e *APIError) Is(target error) bool {
	return target == ErrNotFound && e.Status == http.StatusNotFound
}

// restClient issues the GETs of one HTTP-JSON API.
type restClient struct {
	base   string
	client *http.Client
}

func newRESTClient(base string, c *http.Client) restClient {
	if c == nil {
		c = http.DefaultClient
	}
	return restClient{base: strings.TrimRight(base, "/"), client: c}
}

// get fetches base+path and returns the raw body of a 2xx answer; any other
// status becomes an *APIError.
func (r restClient) get(ctx context.Context, path string) ([]byte, error) {
	url := r.base + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", url, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAPIBody+1))
	if err != nil {
		return nil, fmt.Errorf("get %s: read body: %w", url, err)
	}
	if len(body) > maxAPIBody {
		return nil, fmt.Errorf("get %s: body larger than %d bytes", url, maxAPIBody)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, apiError(url, resp.StatusCode, body)
	}
	return body, nil
}

// apiError reads Triton's error body ({"code":…,"message":…}) when there is
// one; a body of another shape only loses its detail.
func apiError(url string, status int, body []byte) *APIError {
	e := &APIError{URL: url, Status: status}
	var b struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &b) == nil {
		e.Code, e.Message = b.Code, b.Message
	}
	return e
}

// orDefault is v, or def when v is not positive: an option left zero.
func orDefault(v, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return v
}

// endpointURL is the base URL of an API endpoint of the configuration: its
// URL, or plain HTTP to its address as the shipped configuration meant.
func endpointURL(e schema.Endpoint) string {
	if e.URL != "" {
		return e.URL
	}
	return "http://" + e.Address
}
