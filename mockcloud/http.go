package mockcloud

import (
	"encoding/json"
	"net/http"
)

// Handler serves the cloud's HTTP APIs on one mux, as if VMAPI, CNAPI and
// NAPI shared one address, plus the admin API under /_mock/ (admin.go).
func (c *Cloud) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /vms", c.listVMs)
	mux.HandleFunc("GET /vms/{uuid}", c.getVM)
	mux.HandleFunc("GET /changefeeds", c.serveChangefeed)
	mux.HandleFunc("GET /servers", c.listServers)
	mux.HandleFunc("GET /servers/{uuid}", c.getServer)
	mux.HandleFunc("GET /networks", c.listNetworks)
	mux.HandleFunc("GET /networks/{uuid}", c.getNetwork)
	mux.HandleFunc("GET /network_pools", c.listPools)
	mux.HandleFunc("GET /network_pools/{uuid}", c.getPool)
	mux.HandleFunc("GET /nics/{mac}", c.getNIC)
	mux.HandleFunc("GET /_mock/refused", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string][]string{"refused": c.Refused()})
	})
	c.adminRoutes(mux)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "ResourceNotFound", r.URL.Path+" does not exist")
	})
	return mux
}

// apiError is the body of every Triton API error.
type apiError struct {
	Code    string       `json:"code"`
	Message string       `json:"message"`
	Errors  []fieldError `json:"errors,omitempty"`
}

// fieldError is one entry of a validation error's errors array. Field is
// a parameter name, or a list of them in NAPI's UnknownParameters; VMAPI's
// ConflictingParameters names Fields instead, and its MissingParameter has
// no message.
type fieldError struct {
	Field   any      `json:"field,omitempty"`
	Fields  []string `json:"fields,omitempty"`
	Code    string   `json:"code"`
	Message string   `json:"message,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "InternalError", err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, apiError{Code: code, Message: msg})
}
