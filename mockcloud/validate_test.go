package mockcloud

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// validationCase is one request and the real service's answer to it:
// status and, for a refusal, the exact error body. A case without a body
// is a valid variant of the rule before it, which must not be recorded
// as refused. {vm}, {server}, {network} and {pool} stand for the uuids
// of the cloud's first ones.
type validationCase struct {
	name   string
	path   string // path and query, the query written as a client sends it
	status int
	body   string // JSON; "" for a 200
}

// runValidationCases sends each case to a fresh cloud and checks the
// status, the error body, and that exactly the refusals were recorded.
func runValidationCases(t *testing.T, cases []validationCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			c, srv := newTestCloud(t)
			f := c.Fixture()
			fill := strings.NewReplacer("{vm}", f.VMs[0].UUID, "{server}", f.Servers[0].UUID,
				"{network}", f.Networks[0].UUID, "{pool}", f.NetworkPools[0].UUID)
			path := fill.Replace(tt.path)
			resp, err := http.Get(srv.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status {
				t.Fatalf("GET %s: status %d, want %d; body %s", path, resp.StatusCode, tt.status, got)
			}
			refused := c.Refused()
			if tt.body == "" {
				if len(refused) != 0 {
					t.Errorf("valid request recorded as refused: %v", refused)
				}
				return
			}
			if !sameJSON(t, got, []byte(fill.Replace(tt.body))) {
				t.Errorf("GET %s:\n body %s\n want %s", path, got, fill.Replace(tt.body))
			}
			if len(refused) != 1 || !strings.HasPrefix(refused[0], "GET "+path+": ") {
				t.Errorf("Refused() = %q, want the one request GET %s", refused, path)
			}
		})
	}
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var av, bv any
	if err := json.Unmarshal(a, &av); err != nil {
		t.Fatalf("answer is not JSON: %s", a)
	}
	if err := json.Unmarshal(b, &bv); err != nil {
		t.Fatalf("test's body is not JSON: %s", b)
	}
	return reflect.DeepEqual(av, bv)
}

// vmapiFailed is VMAPI's ValidationFailedError body around errs.
func vmapiFailed(errs string) string {
	return `{"code":"ValidationFailed","message":"Invalid Parameters","errors":[` + errs + `]}`
}

func vmapiInvalidBody(field, msg string) string {
	return vmapiFailed(`{"field":"` + field + `","code":"Invalid","message":` + jsonText(msg) + `}`)
}

func TestVMAPIValidation(t *testing.T) {
	q := url.QueryEscape
	runValidationCases(t, []validationCase{
		{"unknown parameter", "/vms?colour=blue", 409, vmapiInvalidBody("colour", "Invalid parameter")},
		{"known parameters", "/vms?state=active&limit=5", 200, ""},
		{"limit 0", "/vms?limit=0", 409, vmapiInvalidBody("limit", "Not a valid number: number must be >= 1 and <= 1000")},
		{"limit 1001", "/vms?limit=1001", 409, vmapiInvalidBody("limit", "Not a valid number: number must be >= 1 and <= 1000")},
		{"limit not a number", "/vms?limit=many", 409, vmapiInvalidBody("limit", "Not a valid number: number must be >= 1 and <= 1000")},
		{"limit 1000", "/vms?limit=1000", 200, ""},
		{"offset negative", "/vms?offset=-1", 409, vmapiInvalidBody("offset", "Not a valid number: number must be >= 0")},
		{"offset 3", "/vms?offset=3", 200, ""},
		{"marker not JSON", "/vms?marker=abc", 409, vmapiInvalidBody("marker",
			"Invalid marker: abc. Could not parse marker as an object JSON representation, reason: invalid character 'a' looking for beginning of value")},
		{"marker not an object", "/vms?marker=" + q(`["x"]`), 409, vmapiInvalidBody("marker", `Invalid marker: ["x"]. Marker must represent an object.`)},
		{"marker without uuid", "/vms?marker=" + q(`{"alias":"x"}`), 409, vmapiFailed(
			`{"field":"marker","code":"Invalid","message":"Invalid marker: {\"alias\":\"x\"}. A marker needs to have a uuid property from which a strict total order can be established"},` +
				`{"field":"marker","code":"Invalid","message":"Invalid marker: {\"alias\":\"x\"}. All marker keys except uuid must be present in the sort parameter. Sort fields: undefined."}`)},
		{"marker missing the sort key", "/vms?sort=alias.ASC&marker=" + q(`{"uuid":"x"}`), 409, vmapiInvalidBody("marker",
			`Invalid marker: {"uuid":"x"}. All sort fields must be present in marker. Sort fields: alias.ASC.`)},
		{"marker with uuid", "/vms?marker=" + q(`{"uuid":"x"}`), 200, ""},
		{"offset and marker", "/vms?offset=2&marker=" + q(`{"uuid":"x"}`), 409, vmapiFailed(
			`{"fields":["offset","marker"],"code":"ConflictingParameters","message":"offset and marker cannot be used at the same time"}`)},
		{"offset 0 and marker", "/vms?offset=0&marker=" + q(`{"uuid":"x"}`), 200, ""},
		{"fields outside VM_FIELDS", "/vms?fields=uuid,nics", 409, vmapiInvalidBody("fields", "Invalid values: uuid,nics")},
		{"fields of VM_FIELDS", "/vms?fields=uuid,state,tags", 200, ""},
		{"sort key unknown", "/vms?sort=colour", 409, vmapiInvalidBody("sort", "Invalid sort param: colour")},
		{"sort order unknown", "/vms?sort=alias.up", 409, vmapiInvalidBody("sort", "Invalid sort param: alias.up")},
		{"sort by alias", "/vms?sort=alias.desc", 200, ""},
		{"state unknown", "/vms?state=sleeping", 409, vmapiInvalidBody("state", "Must be one of: active, destroyed, running, stopped")},
		{"brand unknown", "/vms?brand=docker", 409, vmapiInvalidBody("brand", "Must be one of: bhyve, joyent, joyent-minimal, kvm, lx")},
		{"owner_uuid not a UUID", "/vms?owner_uuid=nobody", 409, vmapiInvalidBody("owner_uuid", "Invalid UUID")},
		{"owner_uuid in capitals", "/vms?owner_uuid=930896AF-BF8C-48D4-885C-6573A94B1853", 409, vmapiInvalidBody("owner_uuid", "Invalid UUID")},
		{"uuids with a bad one", "/vms?uuids={vm},x", 409, vmapiInvalidBody("uuids", "Invalid values: {vm},x")},
		{"uuids", "/vms?uuids={vm}", 200, ""},
		{"alias breaking its regexp", "/vms?alias=-x", 409, vmapiInvalidBody("alias", `String does not match regexp: /^[a-zA-Z0-9][a-zA-Z0-9\_\.\-]*$/`)},
		{"ram not a number", "/vms?ram=1g", 409, vmapiInvalidBody("ram", `String does not match regexp: /^0$|^([1-9][0-9]*$)/`)},
		{"docker not a boolean", "/vms?docker=yes", 409, vmapiInvalidBody("docker", "Invalid parameter")},
		{"create_timestamp not a date", "/vms?create_timestamp=soon", 409, vmapiInvalidBody("create_timestamp", "Invalid timestamp: soon")},
		{"tag without key", "/vms?tag=x", 409, vmapiInvalidBody("tag", "Invalid tag key: undefined")},
		{"tag without value", "/vms?tag.role=", 409, vmapiInvalidBody("tag", `Invalid tag value: ""`)},
		{"tag.role", "/vms?tag.role=db", 200, ""},
		{"predicate not JSON", "/vms?predicate=x", 409, vmapiInvalidBody("predicate", "Unable to parse predicate as JSON")},
		{"predicate of two keys", "/vms?predicate=" + q(`{"eq":["a","b"],"ne":["a","c"]}`), 409,
			vmapiInvalidBody("predicate", "Predicate syntax error: Error: found too many keys: 2. expected one")},
		{"predicate bad operator", "/vms?predicate=" + q(`{"like":["alias","x"]}`), 409,
			vmapiInvalidBody("predicate", "Predicate syntax error: Error: invalid key: like")},
		{"predicate constant an object", "/vms?predicate=" + q(`{"eq":["alias",{}]}`), 409,
			vmapiInvalidBody("predicate", "Predicate syntax error: Error: predicate constant is not a constant: got {}.")},
		{"parameter sent twice", "/vms?state=active&state=running", 409, vmapiInvalidBody("state", "Invalid parameter")},
		{"errors in VMAPI's order", "/vms?zzz=1&limit=0&alias=-", 409, vmapiFailed(
			`{"field":"zzz","code":"Invalid","message":"Invalid parameter"},` +
				`{"field":"alias","code":"Invalid","message":"String does not match regexp: /^[a-zA-Z0-9][a-zA-Z0-9\\_\\.\\-]*$/"},` +
				`{"field":"limit","code":"Invalid","message":"Not a valid number: number must be >= 1 and <= 1000"}`)},
		{"get: uuid not a UUID", "/vms/nope", 409, vmapiInvalidBody("uuid", "Invalid UUID")},
		{"get: owner_uuid not a UUID", "/vms/{vm}?owner_uuid=x", 409, vmapiInvalidBody("owner_uuid", "Invalid UUID")},
		{"get: fields are not checked", "/vms/{vm}?fields=uuid,nics,destroyed,colour", 200, ""},
		{"get: unknown parameters are ignored", "/vms/{vm}?colour=blue", 200, ""},
	})
}

func cnapiInvalidBody(field, msg string) string {
	return `{"code":"InvalidParameters","message":"Request parameters failed validation","errors":[{"field":"` +
		field + `","code":"Invalid","message":` + jsonText(msg) + `}]}`
}

func TestCNAPIValidation(t *testing.T) {
	runValidationCases(t, []validationCase{
		{"unknown parameter", "/servers?setup=true&colour=blue", 409,
			`{"code":"InvalidArgument","message":"colour is not an explicitly defined parameter"}`},
		{"cnsd's listing", "/servers?setup=true&extras=status,sysinfo&limit=1000&offset=0", 200, ""},
		{"setup not a boolean", "/servers?setup=yes", 500, cnapiInvalidBody("setup", "Invalid value for param 'setup'")},
		{"setup in capitals", "/servers?setup=TRUE", 200, ""},
		{"extras with a space", "/servers?extras=status,%20sysinfo", 500, cnapiInvalidBody("extras", "Invalid value for param 'extras'")},
		{"limit not an integer", "/servers?limit=1.5", 500, cnapiInvalidBody("limit", "Invalid value for param 'limit'")},
		{"limit 0", "/servers?limit=0", 400, cnapiInvalidBody("limit", "limit must be in the range 1-1000 (inclusive)")},
		{"limit 1001", "/servers?limit=1001", 400, cnapiInvalidBody("limit", "limit must be in the range 1-1000 (inclusive)")},
		{"offset not an integer", "/servers?offset=x", 500, cnapiInvalidBody("offset", "Invalid value for param 'offset'")},
		{"offset negative", "/servers?offset=-1", 500, `{"code":"InternalError","message":"OFFSET must not be negative"}`},
		{"hostname with spaces", "/servers?hostname=%20cn01", 500, cnapiInvalidBody("hostname", "value contains leading or trailing whitespace")},
		{"uuids with a bad character", "/servers?uuids=a;b", 500, cnapiInvalidBody("uuids", "Invalid value for param 'uuids'")},
		{"get: uuid not a UUID", "/servers/nope", 409, `{"code":"InvalidArgument","message":"Invalid server_uuid"}`},
		{"get: any query parameter", "/servers/{server}?extras=sysinfo", 409,
			`{"code":"InvalidArgument","message":"extras is not an explicitly defined parameter"}`},
		{"get", "/servers/{server}", 200, ""},
	})
}

// napiInvalidBody is NAPI's InvalidParamsError with one InvalidParameter.
func napiInvalidBody(field, msg string) string {
	return `{"code":"InvalidParameters","message":"Invalid parameters","errors":[{"field":"` + field +
		`","code":"InvalidParameter","message":` + jsonText(msg) + `}]}`
}

const (
	napiLimitMsg  = "invalid limit, must be an integer greater than 0 or less than or equal to 1000"
	napiOffsetMsg = "invalid value, offset must be an integer greater than or equal to 0"
)

func TestNAPIValidation(t *testing.T) {
	runValidationCases(t, []validationCase{
		{"networks: unknown parameters", "/networks?terra=1&elbereth=2", 422,
			`{"code":"InvalidParameters","message":"Invalid parameters","errors":[{"field":["terra","elbereth"],"code":"UnknownParameters","message":"Unknown parameters: terra, elbereth"}]}`},
		{"networks: limit 0", "/networks?limit=0", 422, napiInvalidBody("limit", napiLimitMsg)},
		{"networks: limit 1001", "/networks?limit=1001", 422, napiInvalidBody("limit", napiLimitMsg)},
		{"networks: limit not a number", "/networks?limit=asdf", 422, napiInvalidBody("limit", napiLimitMsg)},
		{"networks: offset negative", "/networks?offset=-1", 422, napiInvalidBody("offset", napiOffsetMsg)},
		{"networks: errors sorted by field", "/networks?offset=-1&limit=0", 422,
			`{"code":"InvalidParameters","message":"Invalid parameters","errors":[` +
				`{"field":"limit","code":"InvalidParameter","message":"` + napiLimitMsg + `"},` +
				`{"field":"offset","code":"InvalidParameter","message":"` + napiOffsetMsg + `"}]}`},
		{"networks: page", "/networks?limit=1000&offset=0", 200, ""},
		{"networks: vlan_id out of range", "/networks?vlan_id=5000", 422,
			napiInvalidBody("vlan_id", "VLAN ID must be a number between 0 and 4094, and not 1")},
		{"networks: fabric not a boolean", "/networks?fabric=yes", 422, napiInvalidBody("fabric", "must be a boolean value")},
		{"networks: owner_uuid not a UUID", "/networks?owner_uuid=x", 422, napiInvalidBody("owner_uuid", "invalid UUID")},
		{"networks: filters", "/networks?nic_tag=admin&vlan_id=0&fabric=false", 200, ""},
		{"network: uuid not a UUID", "/networks/nope", 404, `{"code":"ResourceNotFound","message":"network not found"}`},
		{"network: admin", "/networks/admin", 200, ""},
		{"network", "/networks/{network}", 200, ""},
		{"pools: unknown parameter", "/network_pools?terra=1", 422,
			`{"code":"InvalidParameters","message":"Invalid parameters","errors":[{"field":["terra"],"code":"UnknownParameters","message":"Unknown parameters: terra"}]}`},
		{"pools: limit 0", "/network_pools?limit=0", 422, napiInvalidBody("limit", napiLimitMsg)},
		{"pools: two networks", "/network_pools?networks={network}&networks={network}", 422,
			napiInvalidBody("networks", "Only one network UUID allowed")},
		{"pools: page", "/network_pools?limit=1000&offset=0", 200, ""},
		{"pool: uuid not a UUID", "/network_pools/nope", 422, napiInvalidBody("uuid", "invalid UUID")},
		{"pool", "/network_pools/{pool}", 200, ""},
		{"nic: MAC not hex", "/nics/zz:zz:zz:zz:zz:zz", 422, napiInvalidBody("mac", "invalid MAC address")},
		{"nic: MAC too short", "/nics/00000000000", 422, napiInvalidBody("mac", "invalid MAC address")},
		{"nic: mixed separators", "/nics/00:00:5e-00:53:01", 422, napiInvalidBody("mac", "invalid MAC address")},
		{"nic: well-formed and unknown is not a refusal", "/nics/00-00-5e-00-53-01", 404, ""},
	})
}

// TestRefusedChangefeedRegistration: a registration the publisher closes
// the connection over is recorded.
func TestRefusedChangefeedRegistration(t *testing.T) {
	c, srv := newTestCloud(t)
	ws := dial(t, srv, "")
	defer ws.Close()
	if err := ws.WriteMessage(1, []byte(`{"instance":"x"}`)); err != nil {
		t.Fatal(err)
	}
	ws.ReadMessage() // the close frame
	refused := c.Refused()
	if len(refused) != 1 || !strings.Contains(refused[0], `changefeed closed: v1 registration should contain a "changeKind"`) {
		t.Errorf("Refused() = %q, want the registration without changeKind", refused)
	}
}
