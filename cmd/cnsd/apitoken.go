package main

import (
	"log/slog"

	"github.com/cnsd/cnsd/api"
	"github.com/cnsd/cnsd/schema"
)

// apiToken is the token the API asks for under cfg, read from the file
// at path: api.token, else the content of api.token_file, which is
// created at first start. A new token is logged with where it is and how
// clients find it, so that an upgrade from an open API does not lock
// cnsadm out unexplained.
func apiToken(cfg *schema.Config, path string, log *slog.Logger) (string, error) {
	a := cfg.API
	switch {
	case a.Auth == schema.AuthNone:
		return "", nil
	case a.Token != "":
		return a.Token, nil
	}
	token, created, err := api.EnsureTokenFile(a.TokenFile)
	if err != nil {
		return "", err
	}
	if created {
		log.Warn(`created the API token: API routes now need "Authorization: Bearer <token>" (api.auth); `+
			`cnsadm -config FILE reads it from the token file; `+
			`"auth": "writes" in api lets callers without it (CloudAPI's POST /suffixes-for-vm) read, "none" opens the API`,
			"token_file", a.TokenFile, "config", path, "auth", a.Auth)
	} else {
		log.Info("API routes need the token in the token file", "token_file", a.TokenFile, "auth", a.Auth)
	}
	return token, nil
}
