package schema_test

import (
	"errors"
	"fmt"

	"github.com/cnsd/cnsd/schema"
)

func ExampleParse() {
	c, err := schema.Parse([]byte(`{
		"my_name": "cns.dc1.example.com",
		"hostmaster": "hostmaster@example.com",
		"dns_zones": {
			"dc1.cns.example.com": { "networks": ["*"] },
			"pub.example.com": { "networks": ["3484af3e-23db-4c63-8940-bf3e006347f3"] }
		}
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, z := range c.ForwardZones {
		fmt.Println(z.Name, z.Networks, z.CatchAll())
	}
	fmt.Println(c.TTL.Record, c.Hysteresis.Window, c.DNS.Listen)
	// Output:
	// dc1.cns.example.com [*] true
	// pub.example.com [3484af3e-23db-4c63-8940-bf3e006347f3] false
	// 30s 1m0s [127.0.0.1:53]
}

func ExampleParse_error() {
	_, err := schema.Parse([]byte(`{
		"my_name": "cns.dc1.example.com",
		"hostmaster": "hostmaster@example.com",
		"forward_zones": { "a.example.com": { "networks": ["*"], "hidden_primary": true } }
	}`))
	fmt.Println(err)
	fmt.Println(errors.Is(err, schema.ErrInvalid))
	// Output:
	// config: forward_zones["a.example.com"].hidden_primary: true needs a non-empty peers list
	// true
}
