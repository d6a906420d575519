package mockcloud

import (
	"encoding/json"
	"strconv"
	"strings"
)

// subscription is a parsed registration frame: the instance and, per
// resource, the subResources it subscribes to.
type subscription struct {
	instance string
	subs     map[string][]string
	order    []string // resources in the order asked, for the v2 bootstrap
}

// wantsV2 reads the Accept-Version header the way the reference publisher's
// server does: absent or "*" means the original (v1) registration format, and
// so does any range that admits a version below 2.0.0 ("~1"); only a range
// whose lowest version is 2 or more ("~2") selects v2.
func wantsV2(acceptVersion string) bool {
	v := strings.TrimLeft(strings.TrimSpace(acceptVersion), "~^=>v ")
	end := strings.IndexFunc(v, func(r rune) bool { return r < '0' || r > '9' })
	if end >= 0 {
		v = v[:end]
	}
	major, err := strconv.Atoi(v)
	return err == nil && major >= 2
}

// parseRegistration checks a registration frame as the reference publisher
// does and returns the reason it would close the connection with, or "".
// The v1 frame carries one changeKind, the v2 frame a resources array.
func parseRegistration(msg []byte, v2 bool, known map[string]Resource) (subscription, string) {
	ver := "v1"
	if v2 {
		ver = "v2"
	}
	var raw any
	if err := json.Unmarshal(msg, &raw); err != nil {
		return subscription{}, "failed to parse " + ver + " registration payload"
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		return subscription{}, ver + " registration should be an object"
	}
	instance, ok := obj["instance"].(string)
	if !ok {
		return subscription{}, ver + ` registration should contain an "instance" identifier`
	}
	sub := subscription{instance: instance, subs: map[string][]string{}}
	var reason string
	if v2 {
		reason = sub.addV2(obj["resources"], known)
	} else {
		reason = sub.addV1(obj["changeKind"], known)
	}
	return sub, reason
}

func (s *subscription) addV1(changeKind any, known map[string]Resource) string {
	ck, ok := changeKind.(map[string]any)
	if !ok {
		return `v1 registration should contain a "changeKind"`
	}
	res, ok := ck["resource"].(string)
	if !ok {
		return `v1 registration should contain a valid "resource"`
	}
	subs, ok := ck["subResources"].([]any)
	if !ok {
		return `v1 registration should contain a valid "subResources" array`
	}
	if _, ok := known[res]; !ok {
		return "unknown resource: " + res
	}
	s.add(res, subs)
	return ""
}

func (s *subscription) addV2(resources any, known map[string]Resource) string {
	list, ok := resources.([]any)
	if !ok {
		return `v2 registration should contain a "resources" array`
	}
	if len(list) == 0 {
		return "no resources specified"
	}
	for _, r := range list {
		obj, ok := r.(map[string]any)
		if !ok {
			return `v2 registration "resources" array should contain objects`
		}
		res, ok := obj["resource"].(string)
		if !ok || res == "" {
			return `v2 registration resources should contain a "resource"`
		}
		subs, ok := obj["subResources"].([]any)
		if !ok {
			return `v2 registration resources should contain "subResources"`
		}
		if _, ok := known[res]; !ok {
			return "unknown resource: " + res
		}
		s.add(res, subs)
	}
	return ""
}

// add keeps the string subResources; anything else can never match an
// item's subResource names, so dropping it changes nothing.
func (s *subscription) add(res string, subs []any) {
	var names []string
	for _, v := range subs {
		if n, ok := v.(string); ok {
			names = append(names, n)
		}
	}
	if _, seen := s.subs[res]; !seen {
		s.order = append(s.order, res)
	}
	s.subs[res] = names
}

// bootstrap is the first server frame: the publisher's own resource entry
// (v1), or the list of them under bootstrapRoutes (v2), never an echo of
// what the client asked for.
func (s *subscription) bootstrap(v2 bool, known map[string]Resource) []byte {
	var v any
	if v2 {
		var list []Resource
		for _, res := range s.order {
			list = append(list, known[res])
		}
		v = map[string][]Resource{"bootstrapRoutes": list}
	} else {
		v = known[s.order[0]]
	}
	b, _ := json.Marshal(v) // plain structs of strings: cannot fail
	return b
}
