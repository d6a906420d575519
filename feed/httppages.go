package feed

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// listPageLimit is the largest page CNAPI's GET /servers and NAPI's list
// endpoints hand out (and their default): a cloud with more servers or
// pools than this needs several requests.
const listPageLimit = 1000

// maxListPages bounds a paged listing, so that an API that ignores offset
// and keeps sending full pages is an error instead of an endless loop.
const maxListPages = 1000

// getAllPages fetches the JSON array at path page by page (limit and
// offset, as CNAPI and NAPI take them) and returns the whole array as one
// body. A page shorter than the limit is the last.
func (r restClient) getAllPages(ctx context.Context, path string) ([]byte, error) {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	var all []json.RawMessage
	for page := 0; page < maxListPages; page++ {
		paged := fmt.Sprintf("%s%slimit=%d&offset=%d", path, sep, listPageLimit, len(all))
		body, err := r.get(ctx, paged)
		if err != nil {
			return nil, err
		}
		var items []json.RawMessage
		if err := json.Unmarshal(body, &items); err != nil {
			return nil, fmt.Errorf("get %s%s: not a JSON array: %w", r.base, paged, err)
		}
		all = append(all, items...)
		// More than a page means the API ignores limit and sent it all.
		if len(items) != listPageLimit {
			if all == nil {
				all = []json.RawMessage{}
			}
			return json.Marshal(all)
		}
	}
	return nil, fmt.Errorf("get %s%s: still full pages after %d items; does the API ignore offset?", r.base, path, len(all))
}
