package mockcloud

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// NAPI's parameter rules: the schemas of sdc-napi lib/models/network.js,
// network-pool.js and nic/get.js, checked by restify-warden's
// validate.params (lib/validate.js, validators.js, errors.js: 422
// InvalidParameters, errors sorted by field).

// napiField is one parameter of a schema and its validator, which gets
// every value sent (a parameter sent twice is a list to NAPI).
type napiField struct {
	name  string
	check func(name string, vals []string) *fieldError
}

// napiSchema is a warden schema: strict ones refuse unknown parameters.
type napiSchema struct {
	strict   bool
	required []napiField
	optional []napiField
	after    func(p params) *fieldError
}

// validate is warden's validateParams: missing required parameters,
// every validator, the unknown parameters of a strict schema, then (only
// if all passed) the schema's cross check.
func (s napiSchema) validate(p params) []fieldError {
	var errs []fieldError
	for _, f := range s.required {
		if !p.has(f.name) {
			errs = append(errs, fieldError{Field: f.name, Code: "MissingParameter", Message: "Missing parameter"})
		} else if e := f.check(f.name, p.vals[f.name]); e != nil {
			errs = append(errs, *e)
		}
	}
	for _, f := range s.optional {
		if p.has(f.name) {
			if e := f.check(f.name, p.vals[f.name]); e != nil {
				errs = append(errs, *e)
			}
		}
	}
	if s.strict {
		if unknown := s.unknown(p); len(unknown) > 0 {
			errs = append(errs, fieldError{Field: unknown, Code: "UnknownParameters",
				Message: "Unknown parameters: " + strings.Join(unknown, ", ")})
		}
	}
	if len(errs) == 0 && s.after != nil {
		if e := s.after(p); e != nil {
			errs = append(errs, *e)
		}
	}
	return errs
}

func (s napiSchema) unknown(p params) []string {
	var out []string
	for _, name := range p.order {
		in := func(f napiField) bool { return f.name == name }
		if !slices.ContainsFunc(s.required, in) && !slices.ContainsFunc(s.optional, in) {
			out = append(out, name)
		}
	}
	return out
}

// napiInvalidParams is warden's errResult: 422 with the errors sorted by
// field, "Missing parameters" when every error is a missing parameter.
func napiInvalidParams(errs []fieldError) *refusal {
	slices.SortStableFunc(errs, func(a, b fieldError) int { return cmp.Compare(fieldText(a.Field), fieldText(b.Field)) })
	msg := "Missing parameters"
	for _, e := range errs {
		if e.Code != "MissingParameter" {
			msg = "Invalid parameters"
		}
	}
	return &refusal{status: http.StatusUnprocessableEntity,
		body: apiError{Code: "InvalidParameters", Message: msg, Errors: errs}}
}

// fieldText is a field as JavaScript compares it: a list joined by commas.
func fieldText(f any) string {
	if l, ok := f.([]string); ok {
		return strings.Join(l, ",")
	}
	s, _ := f.(string)
	return s
}

func napiInvalid(field, msg string) *fieldError {
	return &fieldError{Field: field, Code: "InvalidParameter", Message: msg}
}

// The schemas.
var (
	// networkListSchema: LIST_SCHEMA of lib/models/network.js.
	networkListSchema = napiSchema{strict: true, optional: []napiField{
		{"uuid", napiUUIDPrefix}, {"fabric", napiBool}, {"family", napiFamily},
		{"limit", napiLimit}, {"name", napiStringOrArray}, {"nic_tag", napiStringOrArray},
		{"offset", napiOffset}, {"owner_uuid", napiUUID}, {"provisionable_by", napiUUID},
		{"vlan_id", napiVLAN},
	}}
	// networkGetSchema: GET_SCHEMA of lib/models/network.js; not strict.
	networkGetSchema = napiSchema{
		required: []napiField{{"uuid", napiNetworkUUID}},
		optional: []napiField{{"fields", napiNetworkFields}, {"owner_uuid", napiUUID}, {"provisionable_by", napiUUID}},
	}
	// poolListSchema: LIST_SCHEMA of lib/models/network-pool.js.
	poolListSchema = napiSchema{strict: true, optional: []napiField{
		{"uuid", napiUUIDPrefix}, {"limit", napiLimit}, {"offset", napiOffset},
		{"name", napiString}, {"family", napiFamily}, {"networks", napiStringOrArray},
		{"provisionable_by", napiUUID},
	}, after: func(p params) *fieldError {
		if len(p.vals["networks"]) > 1 {
			return napiInvalid("networks", "Only one network UUID allowed")
		}
		return nil
	}}
	// poolGetSchema: GET_SCHEMA of lib/models/network-pool.js; not strict.
	poolGetSchema = napiSchema{
		required: []napiField{{"uuid", napiUUID}},
		optional: []napiField{{"provisionable_by", napiUUID}},
	}
	// nicGetSchema: GET_SCHEMA of lib/models/nic/get.js; not strict.
	nicGetSchema = napiSchema{required: []napiField{{"mac", napiMAC}}}
)

// withPath is p with the path's parameter added first, as restify maps
// it into req.params beside the query's.
func withPath(p params, name, value string) params {
	out := params{order: []string{name}, vals: map[string][]string{name: {value}}}
	for _, k := range p.order {
		if k != name {
			out.order = append(out.order, k)
			out.vals[k] = p.vals[k]
		}
	}
	return out
}

// napiListPage validates a NAPI list query against schema and returns
// its page bounds.
func napiListPage(p params, schema napiSchema) (limit, offset int, ref *refusal) {
	if errs := schema.validate(p); len(errs) > 0 {
		return 0, 0, napiInvalidParams(errs)
	}
	limit, offset = pageBounds(p)
	return limit, offset, nil
}

// napiNotFound is restify's ResourceNotFoundError as NAPI words it.
func napiNotFound(kind string) *refusal {
	return &refusal{status: http.StatusNotFound, body: apiError{Code: "ResourceNotFound", Message: fmt.Sprintf("%s not found", kind)}}
}
