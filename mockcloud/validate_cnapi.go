package mockcloud

import (
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// CNAPI's parameter rules: ServerList's and ServerGet's rule tables
// (sdc-cnapi lib/endpoints/servers.js), checked by ensureParamsValid and
// answered by formatValidationErrors (lib/validation/endpoints.js); the
// server uuid of the path by prepopulateServer (lib/endpoints/index.js).

var (
	cnapiBoolRe  = regexp.MustCompile(`(?i)^(true|false)$`)
	cnapiListRe  = regexp.MustCompile(`(?i)^[a-zA-Z_]+(,[a-zA-Z_]+)*$`)
	cnapiUUIDsRe = regexp.MustCompile(`(?i)^[-a-z0-9A-Z]+(,[-a-z0-9A-Z]+)*$`)
	cnapiIntRe   = regexp.MustCompile(`^(?:-?(?:0|[1-9][0-9]*))$`)                                                     // node-validator 1.1.3 isInt
	cnapiUUIDRe  = regexp.MustCompile(`^[a-fA-F0-9]{8}-[a-fA-F0-9]{4}-[a-fA-F0-9]{4}-[a-fA-F0-9]{4}-[a-fA-F0-9]{12}$`) // isUuid
)

// cnapiRule is one parameter of a rule table: the message it fails with
// when ok says no, "" for the assertion's default.
type cnapiRule struct {
	name string
	ok   func(v string) (bool, string)
}

func cnapiMatch(re *regexp.Regexp) func(string) (bool, string) {
	return func(v string) (bool, string) { return re.MatchString(v), "" }
}

// serverListRules is ServerList's table, in its order.
var serverListRules = []cnapiRule{
	{"setup", cnapiMatch(cnapiBoolRe)},
	{"extras", cnapiMatch(cnapiListRe)},
	{"fields", cnapiMatch(cnapiListRe)},
	{"reserved", cnapiMatch(cnapiBoolRe)},
	{"reservoir", cnapiMatch(cnapiBoolRe)},
	{"headnode", cnapiMatch(cnapiBoolRe)},
	{"hostname", func(v string) (bool, string) {
		return strings.TrimSpace(v) == v, "value contains leading or trailing whitespace"
	}},
	{"limit", cnapiMatch(cnapiIntRe)},
	{"offset", cnapiMatch(cnapiIntRe)},
	{"uuids", cnapiMatch(cnapiUUIDsRe)},
}

// validateListServers checks a GET /servers query as CNAPI does, in its
// order: an unknown parameter (the first one) is 409 InvalidArgument; a
// value breaking its rule is 500 InvalidParameters, every such value
// listed; a limit outside 1–1000 is 400 InvalidParameters. A negative
// offset passes CNAPI's rules and fails in moray, which CNAPI answers
// with 500 InternalError.
func validateListServers(p params) *refusal {
	if ref := cnapiStrict(p, serverListRules); ref != nil {
		return ref
	}
	if ref := cnapiRules(p, serverListRules); ref != nil {
		return ref
	}
	if v, ok := p.get("limit"); ok {
		if n, _ := strconv.Atoi(v); n < 1 || n > pageLimit {
			return &refusal{status: http.StatusBadRequest, body: cnapiInvalid([]fieldError{{Field: "limit", Code: "Invalid",
				Message: "limit must be in the range 1-1000 (inclusive)"}})}
		}
	}
	if v, _ := p.get("offset"); strings.HasPrefix(v, "-") && v != "-0" {
		return &refusal{status: http.StatusInternalServerError,
			body: apiError{Code: "InternalError", Message: "OFFSET must not be negative"}}
	}
	return nil
}

// validateGetServer checks GET /servers/:server_uuid: the uuid must be a
// UUID (any case) or "default" (409 InvalidArgument "Invalid
// server_uuid"); found is asked only then, and an unknown server is 404
// before the query is looked at; the rule table names only server_uuid,
// so any query parameter is 409 InvalidArgument.
func validateGetServer(uuid string, p params, found func() bool) (ref *refusal, notFound bool) {
	if uuid != "default" && !cnapiUUIDRe.MatchString(uuid) {
		return &refusal{status: http.StatusConflict, body: apiError{Code: "InvalidArgument", Message: "Invalid server_uuid"}}, false
	}
	if !found() {
		return nil, true
	}
	return cnapiStrict(p, []cnapiRule{{name: "server_uuid"}}), false
}

// cnapiStrict is ensureParamsValid's strict mode: it stops at the first
// parameter without a rule.
func cnapiStrict(p params, rules []cnapiRule) *refusal {
	for _, name := range p.order {
		if !slices.ContainsFunc(rules, func(r cnapiRule) bool { return r.name == name }) {
			return &refusal{status: http.StatusConflict,
				body: apiError{Code: "InvalidArgument", Message: name + " is not an explicitly defined parameter"}}
		}
	}
	return nil
}

// cnapiRules checks each value sent against its rule. A parameter sent
// twice reaches CNAPI as a list, which no rule of ServerList accepts as
// it means; the mock fails its rule.
func cnapiRules(p params, rules []cnapiRule) *refusal {
	var errs []fieldError
	for _, r := range rules {
		v, ok := p.get(r.name)
		if !ok {
			continue
		}
		good, msg := r.ok(v)
		if len(p.vals[r.name]) > 1 {
			good, msg = false, ""
		}
		if !good {
			if msg == "" {
				msg = "Invalid value for param '" + r.name + "'"
			}
			errs = append(errs, fieldError{Field: r.name, Code: "Invalid", Message: msg})
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return &refusal{status: http.StatusInternalServerError, body: cnapiInvalid(errs)}
}

func cnapiInvalid(errs []fieldError) apiError {
	return apiError{Code: "InvalidParameters", Message: "Request parameters failed validation", Errors: errs}
}

// cnapiBool is the validator's toBoolean sanitizer that CNAPI applies to
// a boolean that passed its rule: only "false" is false, so "FALSE" and
// "False" mean true.
func cnapiBool(v string) bool { return v != "false" }
