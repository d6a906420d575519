package main

import (
	"fmt"

	"github.com/cnsd/cnsd/api/client"
	"github.com/cnsd/cnsd/schema"
)

// tokenOf finds the API token as cnsd does from its configuration file
// at path: api.token, else the content of api.token_file. Without one it
// returns why, for cnsadm to add to a 401: commands that do not call the
// API need no token.
func tokenOf(path string) (token, why string) {
	cfg, err := schema.Load(path)
	if err != nil {
		return "", fmt.Sprintf("no API token: %v (-config names cnsd's configuration, -token or $CNSADM_TOKEN gives the token)", err)
	}
	a := cfg.API
	switch {
	case a.Auth == schema.AuthNone:
		return "", ""
	case a.Token != "":
		return a.Token, ""
	}
	token, err = client.ReadTokenFile(a.TokenFile)
	if err != nil {
		return "", fmt.Sprintf("no API token: %v (cnsd creates the file at start; run cnsadm as a user who may read it, or give -token or $CNSADM_TOKEN)", err)
	}
	return token, ""
}
