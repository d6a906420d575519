package xfr

import "github.com/cnsd/cnsd/schema"

// catalogConfig returns how the catalog zone is served, or false when it
// is disabled. Placeholder until catalog.go lands.
func catalogConfig(cfg *schema.Config) (*zoneConf, bool) { return nil, false }
