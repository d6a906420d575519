package mockcloud

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
)

// VMAPI's parameter rules, copied from sdc-vmapi lib/common/validation.js
// (validateListVmsParams and the create*Fn validators it uses) and
// lib/errors.js (ValidationFailedError: 409, "Invalid Parameters").

var (
	vmapiUUIDRe  = regexp.MustCompile(`^[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}$`)
	vmapiAliasRe = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.\-]*$`)
	vmapiRAMRe   = regexp.MustCompile(`^0$|^([1-9][0-9]*$)`)
)

// The regexps as VMAPI prints them in its messages (RegExp toString).
const (
	vmapiAliasReText = `/^[a-zA-Z0-9][a-zA-Z0-9\_\.\-]*$/`
	vmapiRAMReText   = `/^0$|^([1-9][0-9]*$)/`
)

// vmapiStates and vmapiBrands are VALID_VM_STATES and VALID_VM_BRANDS,
// sorted as VMAPI prints them ("Must be one of: …").
var (
	vmapiStates = []string{"active", "destroyed", "running", "stopped"}
	vmapiBrands = []string{"bhyve", "joyent", "joyent-minimal", "kvm", "lx"}
)

// vmapiCheck is one validator of ListVms: it reads p and returns the
// errors elements of its parameter.
type vmapiCheck func(p params) []fieldError

// vmapiRule is one entry of ListVms's validator table.
type vmapiRule struct {
	name  string
	check vmapiCheck
}

// listVmsChecks is validateListVmsParams's table, in its order (the order
// of the errors in the answer).
var listVmsChecks = []vmapiRule{
	{"alias", vmapiString("alias", vmapiAliasRe, vmapiAliasReText)},
	{"billing_id", vmapiUUID("billing_id")},
	{"brand", vmapiOneOf("brand", vmapiBrands)},
	{"create_timestamp", vmapiTimestamp("create_timestamp")},
	{"docker", vmapiBool("docker")},
	{"fields", vmapiFields},
	{"image_uuid", vmapiUUID("image_uuid")},
	{"internal_metadata", vmapiPolymorphic("internal_metadata")},
	{"limit", vmapiNumber("limit", 1, maxListLimit)},
	{"marker", vmapiMarker},
	{"offset", vmapiNumber("offset", 0, -1)},
	{"owner_uuid", vmapiUUID("owner_uuid")},
	{"package_name", vmapiString("package_name", nil, "")},
	{"package_version", vmapiString("package_version", nil, "")},
	{"predicate", vmapiPredicate},
	{"query", vmapiString("query", nil, "")},
	{"ram", vmapiString("ram", vmapiRAMRe, vmapiRAMReText)},
	{"server_uuid", vmapiUUID("server_uuid")},
	{"sort", vmapiSort},
	{"state", vmapiOneOf("state", vmapiStates)},
	{"tag", vmapiPolymorphic("tag")},
	{"uuid", vmapiUUID("uuid")},
	{"uuids", vmapiUUIDList},
}

// validateListVms applies validateListVmsParams to p: the strict check of
// names (a name is known by its part before the first dot, so tag.x is
// tag's), then every validator, then the offset-and-marker conflict,
// which VMAPI checks only when all else passed.
func validateListVms(p params) *refusal {
	var errs []fieldError
	for _, name := range p.order {
		base, _, _ := strings.Cut(name, ".")
		if !slices.ContainsFunc(listVmsChecks, func(c vmapiRule) bool { return c.name == base }) {
			errs = append(errs, vmapiInvalid(name, ""))
		}
	}
	for _, name := range p.repeated() {
		errs = append(errs, vmapiInvalid(name, "")) // the mock's own rule (docs/mockcloud.md)
	}
	for _, c := range listVmsChecks {
		errs = append(errs, c.check(p)...)
	}
	if len(errs) == 0 && vmapiOffsetSet(p) && vmapiMarkerSet(p) {
		errs = append(errs, fieldError{Fields: []string{"offset", "marker"}, Code: "ConflictingParameters",
			Message: "offset and marker cannot be used at the same time"})
	}
	if len(errs) == 0 {
		return nil
	}
	return vmapiValidationFailed(errs)
}

// validateGetVm applies GetVm's checks (sdc-vmapi lib/apis/moray.js
// getVm, lib/common/validation.js validOwner): the uuid in the path and
// an owner_uuid parameter must be UUIDs. Nothing else of the query is
// checked, fields included.
func validateGetVm(uuid string, p params) *refusal {
	if !vmapiUUIDRe.MatchString(uuid) {
		return vmapiValidationFailed([]fieldError{vmapiInvalidUUID("uuid")})
	}
	if o, _ := p.get("owner_uuid"); o != "" && !vmapiUUIDRe.MatchString(o) {
		return vmapiValidationFailed([]fieldError{vmapiInvalidUUID("owner_uuid")})
	}
	return nil
}

func vmapiValidationFailed(errs []fieldError) *refusal {
	return &refusal{status: http.StatusConflict,
		body: apiError{Code: "ValidationFailed", Message: "Invalid Parameters", Errors: errs}}
}

// vmapiInvalid is invalidParamErrorsElem.
func vmapiInvalid(field, msg string) fieldError {
	if msg == "" {
		msg = "Invalid parameter"
	}
	return fieldError{Field: field, Code: "Invalid", Message: msg}
}

// vmapiInvalidUUID is invalidUuidErrorsElem.
func vmapiInvalidUUID(field string) fieldError {
	return fieldError{Field: field, Code: "Invalid", Message: "Invalid UUID"}
}

func vmapiUUID(name string) vmapiCheck {
	return func(p params) []fieldError {
		if v, ok := p.get(name); ok && !vmapiUUIDRe.MatchString(v) {
			return []fieldError{vmapiInvalidUUID(name)}
		}
		return nil
	}
}

// vmapiString is createValidateStringFn: a query value is always a
// string, so only the regexp can fail.
func vmapiString(name string, re *regexp.Regexp, reText string) vmapiCheck {
	return func(p params) []fieldError {
		if v, ok := p.get(name); ok && re != nil && !re.MatchString(v) {
			return []fieldError{vmapiInvalid(name, "String does not match regexp: "+reText)}
		}
		return nil
	}
}

func vmapiOneOf(name string, list []string) vmapiCheck {
	return func(p params) []fieldError {
		if v, ok := p.get(name); ok && !slices.Contains(list, v) {
			return []fieldError{vmapiInvalid(name, "Must be one of: "+strings.Join(list, ", "))}
		}
		return nil
	}
}

// vmapiBool is createValidateBooleanFn: exactly "true" or "false".
func vmapiBool(name string) vmapiCheck {
	return func(p params) []fieldError {
		if v, ok := p.get(name); ok && v != "true" && v != "false" {
			return []fieldError{vmapiInvalid(name, "")}
		}
		return nil
	}
}

func vmapiFields(p params) []fieldError {
	if v, ok := p.get("fields"); ok && !validListFields(v) {
		return []fieldError{vmapiInvalid("fields", "Invalid values: "+v)}
	}
	return nil
}

// vmapiUUIDList is createValidateCSVFn with validUUID.
func vmapiUUIDList(p params) []fieldError {
	v, ok := p.get("uuids")
	if !ok {
		return nil
	}
	for _, u := range strings.Split(v, ",") {
		if !vmapiUUIDRe.MatchString(u) {
			return []fieldError{vmapiInvalid("uuids", "Invalid values: "+v)}
		}
	}
	return nil
}

// vmapiPolymorphic is createValidatePolymorphicParamFn with
// validatePolymorphicParamStringKeyValue: every name.key parameter needs
// a non-empty key and value; the name alone has no key.
func vmapiPolymorphic(name string) vmapiCheck {
	return func(p params) []fieldError {
		var errs []fieldError
		for _, full := range p.order {
			base, key, dotted := strings.Cut(full, ".")
			if base != name {
				continue
			}
			v, _ := p.get(full)
			switch {
			case !dotted:
				errs = append(errs, vmapiInvalid(name, "Invalid "+name+" key: undefined"))
			case key == "":
				errs = append(errs, vmapiInvalid(name, "Invalid "+name+` key: ""`))
			case v == "":
				errs = append(errs, vmapiInvalid(name, "Invalid "+name+` value: ""`))
			}
		}
		return errs
	}
}
