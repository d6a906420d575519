package feed

import (
	"encoding/json"
	"errors"
	"fmt"
)

// changefeedFrame is one decoded changefeed server frame: either the bootstrap
// (the first frame after registration) or a change item naming a VM.
type changefeedFrame struct {
	bootstrap bool
	route     string // bootstrap: where to list from ("/vms")
	resource  string // item: changeKind.resource
	id        string // item: changedResourceId
}

// errNotChangefeedFrame marks a frame that is neither a bootstrap nor an item.
var errNotChangefeedFrame = errors.New("changefeed frame is neither a bootstrap nor a change item")

// decodeFrame reads one server frame. The reference client tells a
// bootstrap from an item by the top-level bootstrapRoute key alone (the
// bootstrap lists the server's resource entry, not what was asked for), so
// this does too; v2's bootstrapRoutes is accepted the same way. The
// resourceObject of an item is not read: the VM is fetched afresh, because
// the same item arrives several times and may be older than the VM.
func decodeFrame(b []byte) (changefeedFrame, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil || obj == nil {
		return changefeedFrame{}, errors.New("decode changefeed frame: not a json object")
	}
	if raw, ok := obj["bootstrapRoute"]; ok {
		f := changefeedFrame{bootstrap: true}
		_ = json.Unmarshal(raw, &f.route) // a route of another type still marks a bootstrap
		return f, nil
	}
	if _, ok := obj["bootstrapRoutes"]; ok {
		return changefeedFrame{bootstrap: true}, nil
	}
	var item struct {
		ChangeKind *struct {
			Resource string `json:"resource"`
		} `json:"changeKind"`
		ID *string `json:"changedResourceId"`
	}
	if err := json.Unmarshal(b, &item); err != nil {
		return changefeedFrame{}, fmt.Errorf("decode changefeed item: %w", err)
	}
	if item.ID == nil || *item.ID == "" {
		return changefeedFrame{}, errNotChangefeedFrame
	}
	f := changefeedFrame{id: *item.ID}
	if item.ChangeKind != nil {
		f.resource = item.ChangeKind.Resource
	}
	return f, nil
}
