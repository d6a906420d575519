package main

import (
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/miekg/dns"
)

// serving checks, before anything is printed, that what the demo prints
// reaches its own programs: cnsd answers an SOA query on its DNS port over
// UDP and TCP, and on Linux every socket listening on a printed port
// belongs to cnsd, mockcloud or mockcloud's slapd.
func serving(o options, cnsd, cloud *process, cloudURL, ldapURL string, dnsUDP, dnsTCP, api port) error {
	for _, proto := range []string{"udp", "tcp"} {
		if err := soa(proto, "127.0.0.1:"+strconv.Itoa(o.dnsPort)); err != nil {
			return err
		}
	}
	cloudPort, err := urlPort(cloudURL)
	if err != nil {
		return err
	}
	ldapPort, err := urlPort(ldapURL)
	if err != nil {
		return err
	}
	checks := []struct {
		p    port
		proc *process
		name string
	}{
		{dnsUDP, cnsd, "cnsd"}, {dnsTCP, cnsd, "cnsd"}, {api, cnsd, "cnsd"},
		{port{"simulated cloud", "tcp", cloudPort, ""}, cloud, "mockcloud"},
		{port{"UFDS", "tcp", ldapPort, ""}, cloud, "mockcloud"},
	}
	for _, c := range checks {
		if err := servedBy(c.p, c.proc.cmd.Process.Pid, c.name); err != nil {
			return err
		}
	}
	return nil
}

// soa asks addr for the public zone's SOA and wants an authoritative answer.
func soa(proto, addr string) error {
	m := new(dns.Msg).SetQuestion(dns.Fqdn(publicZone), dns.TypeSOA)
	c := &dns.Client{Net: proto, Timeout: 3 * time.Second}
	r, _, err := c.Exchange(m, addr)
	switch {
	case err != nil:
		return fmt.Errorf("DNS over %s on %s: %w", proto, addr, err)
	case r.Rcode != dns.RcodeSuccess || !r.Authoritative || len(r.Answer) == 0:
		return fmt.Errorf("DNS over %s on %s: the SOA query for %s got %s, authoritative %v, %d answers; is that cnsd?",
			proto, addr, publicZone, dns.RcodeToString[r.Rcode], r.Authoritative, len(r.Answer))
	}
	return nil
}

func urlPort(s string) (int, error) {
	u, err := url.Parse(s)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(u.Port())
}
