package mockcloud

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
)

// adminRoutes mounts the admin API under /_mock/ (docs/mockcloud.md).
// Every VM change publishes its changefeed item like the Go method it calls.
func (c *Cloud) adminRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /_mock/fixture", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, c.Fixture())
	})
	mux.HandleFunc("POST /_mock/vms", adminCall(c.CreateVM, http.StatusCreated))
	mux.HandleFunc("DELETE /_mock/vms/{uuid}", func(w http.ResponseWriter, r *http.Request) {
		v, err := c.DestroyVM(r.PathValue("uuid"))
		answer(w, v, err, http.StatusOK)
	})
	vmField(mux, "tags", c.SetTags)
	vmField(mux, "customer_metadata", c.SetCustomerMetadata)
	vmField(mux, "nics", c.SetNICs)
	vmField(mux, "state", func(uuid string, b struct{ State string }) (VM, error) { return c.SetState(uuid, b.State) })
	vmField(mux, "alias", func(uuid string, b struct{ Alias string }) (VM, error) { return c.SetAlias(uuid, b.Alias) })
	vmField(mux, "server_uuid", func(uuid string, b struct {
		ServerUUID string `json:"server_uuid"`
	}) (VM, error) {
		return c.MoveVM(uuid, b.ServerUUID)
	})
	mux.HandleFunc("PATCH /_mock/servers/{uuid}", adminUpdate(c.UpdateServer))
	mux.HandleFunc("GET /_mock/users", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, c.Users())
	})
	mux.HandleFunc("POST /_mock/users", adminCall(c.AddUser, http.StatusCreated))
	mux.HandleFunc("PATCH /_mock/users/{uuid}", adminUpdate(c.UpdateUser))
	mux.HandleFunc("GET /_mock/users/changes", c.userChanges)
	mux.HandleFunc("POST /_mock/changefeed/cut", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]int{"cut": c.DisconnectAll()})
	})
	mux.HandleFunc("GET /_mock/changefeed/stats", func(w http.ResponseWriter, r *http.Request) {
		conns, instances := c.feed.count()
		writeJSON(w, http.StatusOK, map[string]int{"connections": conns, "instances": instances})
	})
}

// DisconnectAll drops every changefeed connection as a network failure
// would (no close frame) and returns how many there were.
func (c *Cloud) DisconnectAll() int { return c.feed.cutAll() }

// vmField mounts PUT /_mock/vms/{uuid}/<field> with a body of type B.
func vmField[B any](mux *http.ServeMux, field string, f func(string, B) (VM, error)) {
	mux.HandleFunc("PUT /_mock/vms/{uuid}/"+field, adminUpdate(f))
}

// adminCall adapts a method taking the decoded body.
func adminCall[B, R any](f func(B) (R, error), status int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var b B
		if err := decodeBody(r.Body, &b); err != nil {
			answer(w, nil, err, status)
			return
		}
		v, err := f(b)
		answer(w, v, err, status)
	}
}

// adminUpdate adapts a method taking the {uuid} path value and the body.
func adminUpdate[B, R any](f func(string, B) (R, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var b B
		if err := decodeBody(r.Body, &b); err != nil {
			answer(w, nil, err, http.StatusOK)
			return
		}
		v, err := f(r.PathValue("uuid"), b)
		answer(w, v, err, http.StatusOK)
	}
}

func decodeBody(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errors.Join(ErrInvalid, err)
	}
	return nil
}

// answer is the one place where mutation errors become HTTP statuses.
func answer(w http.ResponseWriter, v any, err error, status int) {
	switch {
	case errors.Is(err, ErrNotFound):
		writeError(w, http.StatusNotFound, "ResourceNotFound", err.Error())
	case errors.Is(err, ErrInvalid):
		writeError(w, http.StatusConflict, "InvalidArgument", err.Error())
	case err != nil:
		writeError(w, http.StatusInternalServerError, "InternalError", err.Error())
	default:
		writeJSON(w, status, v)
	}
}

// userChanges serves GET /_mock/users/changes?after=N.
func (c *Cloud) userChanges(w http.ResponseWriter, r *http.Request) {
	var after int64
	if s := r.URL.Query().Get("after"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			writeError(w, http.StatusConflict, "InvalidArgument", "after: not a number")
			return
		}
		after = n
	}
	out := c.UserChanges(after)
	if out == nil {
		out = []UserChange{}
	}
	writeJSON(w, http.StatusOK, out)
}
