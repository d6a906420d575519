package api

import (
	_ "embed"
	"net/http"
)

// openAPI is the OpenAPI 3.1 document of the REST API: every route New
// registers, its parameters, bodies, answers and errors, and the tokens
// it needs. GET /openapi.json serves it without a token, like the probes:
// it describes the API and reveals nothing of the running cnsd.
// docs/api.md is its human summary.
//
//go:embed openapi.json
var openAPI []byte

func getOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(openAPI)
}
