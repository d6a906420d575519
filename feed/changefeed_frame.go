package feed

import (
	"encoding/json"
	"errors"
	"fmt"
)

// frame is one decoded changefeed server frame: either the bootstrap
// (the first frame after registration) or a change item naming a VM.
type frame struct {
	bootstrap bool
	route     string // bootstrap: where to list from ("/vms")
	resource  string // item: changeKind.resource
	id        string // item: changedResourceId
}

// errNotFrame marks a frame that is neither a bootstrap nor an item.
var errNotFrame = errors.New("changefeed frame is neither a bootstrap nor a change item")

// decodeFrame reads one server frame. The reference client tells a
// bootstrap from an item by the top-level bootstrapRoute key alone (the
// bootstrap lists the server's resource entry, not what was asked for), so
// this does too; v2's bootstrapRoutes is accepted the same way. The
// resourceObject of an item is not read: the VM is fetched afresh, because
// the same item arrives several times and may be older than the VM.
func decodeFrame(b []byte) (frame, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil || obj == nil {
		return frame{}, errors.New("decode changefeed frame: not a json object")
	}
	if raw, ok := obj["bootstrapRoute"]; ok {
		f := frame{bootstrap: true}
		_ = json.Unmarshal(raw, &f.route) // a route of another type still marks a bootstrap
		return f, nil
	}
	if _, ok := obj["bootstrapRoutes"]; ok {
		return frame{bootstrap: true}, nil
	}
	var item struct {
		ChangeKind *struct {
			Resource string `json:"resource"`
		} `json:"changeKind"`
		ID *string `json:"changedResourceId"`
	}
	if err := json.Unmarshal(b, &item); err != nil {
		return frame{}, fmt.Errorf("decode changefeed item: %w", err)
	}
	if item.ID == nil || *item.ID == "" {
		return frame{}, errNotFrame
	}
	f := frame{id: *item.ID}
	if item.ChangeKind != nil {
		f.resource = item.ChangeKind.Resource
	}
	return f, nil
}
