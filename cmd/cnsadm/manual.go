package main

// manual holds the DESCRIPTION, OPTIONS and EXAMPLES of each command's
// manual page (cnsadm help COMMAND).
var manual = map[string]string{
	"status": `
DESCRIPTION
    Lists every zone cnsd serves with its serial, its record count and the
    age of the serial: how long ago it was committed (a following cnsd:
    since it applied it). For a zone cnsd loaded at start and has not
    changed since, the age is read from the serial (cnsd's serials count
    10-second steps, but run ahead of the clock under churn) and marked
    "~" as approximate. Then every secondary with, per zone, the
    serial it was last seen serving, the zone's serial, and whether it is
    current, behind (and for how long) or stale. Held mass deletions and
    pending self-removals are reported when the cnsd asked is the writer.

OPTIONS
    -j    print {"zones", "peers", "held_deletions", "pending_removals"} as JSON.

EXAMPLES
    cnsadm status
    cnsadm -api http://10.0.0.5:8080 -token "$TOKEN" status
`,
	"vm": `
DESCRIPTION
    Shows one VM as cnsd sees it: every name it has in DNS, whether its
    instance names are published, each of its services and whether it is
    listed in it, every reason that applied (account flags, state, compute
    node, tags), names that were skipped and why, a self-removal the
    damping holds back and when it falls due, a held mass deletion its
    records wait in, and its records per zone with the TTL they are served
    with. Every cnsd knows the names and records; only the writing one
    knows the rest.

OPTIONS
    -j    print the VM as JSON (GET /vm/UUID).

EXAMPLES
    cnsadm vm 6e9c9a0e-6f2b-4c7e-9a51-2b7e0c1d3f45
`,
	"zones": `
DESCRIPTION
    Reads and edits the zone → network mapping in the configuration file
    (-config). Every edit is checked before the file is written: the
    schema, at most one catch-all zone ("*"), secondaries that resolve,
    and networks that NAPI knows (when the file names NAPI and it
    answers). The file is replaced whole, so cnsd never reads half of it;
    cnsd applies it within seconds.

    zones list                      zones, their networks, peers and serial
    zones show ZONE                 one zone's settings as JSON
    zones add ZONE FIELD=VALUE...   a new zone (networks is required)
    zones remove ZONE
    zones rename ZONE NEW
    zones edit ZONE EDIT...         change fields of a zone

    An EDIT is FIELD=VALUE, FIELD+=A,B (add to a list) or FIELD-=A (remove
    from a list). Lists: networks, peers, allow_transfer. Others:
    hidden_primary, require_tsig (true or false), tsig_key.

EXAMPLES
    cnsadm zones add dc1.cns.example.com networks=1f1b0a8e-0b4e-4f4c-8f0c-5d1b7f2e9a10
    cnsadm zones edit dc1.cns.example.com peers+=ns2.example.com
    cnsadm zones edit dc1.cns.example.com networks-=1f1b0a8e-0b4e-4f4c-8f0c-5d1b7f2e9a10
    cnsadm zones rename dc1.cns.example.com dc1.cns.example.net
`,
	"config": `
DESCRIPTION
    config show prints the configuration file. config edit changes
    settings other than the zones, by dotted name, with the same checks as
    cnsadm zones: FIELD=VALUE sets a setting (a JSON scalar such as true,
    30 or "x", or else the text), FIELD+=A,B and FIELD-=A edit a list.

EXAMPLES
    cnsadm config edit use_login=true hysteresis.divisor=4
    cnsadm config edit allow_transfer+=192.0.2.0/24
    cnsadm config edit ttl.record=60
`,
	"peers": `
DESCRIPTION
    peers list (the default) shows every secondary cnsd knows, configured
    or learnt from transfers, with the serial it serves per zone. peers
    show ADDR adds its host names and counters. peers forget ADDR drops
    what cnsd knows of a secondary that is gone; a configured one comes
    back at the next NOTIFY.

EXAMPLES
    cnsadm peers
    cnsadm peers show 192.0.2.53
    cnsadm peers forget 192.0.2.53
`,
	"confirm": `
DESCRIPTION
    Lets a held mass deletion take effect. cnsd holds a re-list or a change
    of compute nodes that would remove more than mass_delete_share of a
    zone's records; cnsadm status shows it. CAUSE is re-list or
    compute-nodes. Confirm only when the VMs are really gone; otherwise fix
    the cloud API and the hold clears by itself.

EXAMPLES
    cnsadm confirm re-list
`,
	"upgrade": `
DESCRIPTION
    Rewrites a configuration in RFD 1's spelling (dns_zones, slaves,
    hidden_master, api_server) in the current one (forward_zones, peers,
    hidden_primary, api) and writes it after the usual checks.

OPTIONS
    -n    print the result instead of writing it.

EXAMPLES
    cnsadm -config /opt/triton/cns/etc/config.json upgrade -n
`,
	"preview": `
DESCRIPTION
    Prints the records a VM would get under the configuration file, and the
    reasons for them, without a running cnsd. It runs cnsd's own
    evaluation (the pipeline's: the same lookups of owner, compute node,
    networks and pools, the same NIC repair, the same decisions) over the
    cloud read from FILE, so a cnsd following that cloud publishes exactly
    these records. FILE is one of:

      a VM view     {"vm": VMAPI VM, "owner": UFDS account,
                     "server": CNAPI server, "networks": {uuid: NAPI network}}
      a VMAPI VM    {"uuid": ..., "owner_uuid": ..., "nics": [...], ...},
                    as GET /vms/:uuid returns it
      a cloud       a simulated-cloud fixture or a dump of a real cloud in
                    the same shape (docs/mockcloud.md): {"vms": [...],
                    "users": [...], "servers": [...], "networks": [...],
                    "network_pools": [...], "nics": [...]}; every VM is
                    previewed

    Every object is read as cnsd reads the API that sends it. For a view or
    a bare VM, what is left out is assumed and said so in a "; assumed:"
    line: the owner has CNS enabled, is approved for provisioning and has
    no login; the compute node is set up and running with a heartbeat at
    the preview's time; a network has no name, owners or pools. A cloud is
    taken as it is, as cnsd would see it: an owner UFDS does not have lists
    nothing; a compute node CNAPI does not list to cnsd (one not set up
    among them) leaves the VM unresolved.

    The preview has no history: a self-removal that a running cnsd damps
    (docs/user-guide.md) shows as already in effect.

OPTIONS
    -now TIME   evaluate at TIME (RFC 3339, e.g. 2026-03-01T12:00:00Z)
                instead of the clock: whether a compute node is down (its
                heartbeat's age, the boot grace) depends on it.
    -j          print each VM as GET /vm/UUID answers (a list for a cloud);
                the "; assumed:" lines go to stderr.

EXAMPLES
    cnsadm -config cnsd.json preview web0.json
    sdc-vmapi /vms/$UUID | json -H > vm.json; cnsadm preview vm.json
    curl -s http://127.0.0.1:8081/_mock/fixture > cloud.json; cnsadm preview -now 2026-03-01T12:00:00Z cloud.json
`,
	"bind-config": `
DESCRIPTION
    Prints BIND statements that make a BIND server a secondary of every
    zone cnsd serves now (forward and reverse), or with -catalog of cnsd's
    catalog zone, which lists every zone, reverse zones that appear later
    included (BIND 9.18 or later; recommended). Each zone, or with
    -catalog every zone of the catalog, gets check-names ignore: services
    tagged _name._tcp have A/AAAA records at that owner, as in Triton CNS,
    which BIND would otherwise log as bad owner names at every load.

    BIND 9.18.28 and later refuse a whole zone that holds an RRset of more
    than max-records-per-type records (default 100; "too many records" in
    BIND's log), and a service with more members than that is such an
    RRset. bind-config reads each zone's largest RRset from GET /zones and
    sets max-records-per-type to twice it where that exceeds BIND's
    default: per zone, or with -catalog once in the options block (member
    zones take it from there) for the largest RRset of any zone. Run it
    again when services grow (cnsd warns when a zone's largest RRset
    passes rrset_warn_records, and cnsd_zone_largest_rrset shows it). BIND
    before 9.18.28 has no such limit and rejects the option: delete those
    lines for it. max-types-per-name (also 100) is never reached: cnsd puts
    at most eight types at a name.

    Transfers are signed with the key each zone's tsig_key names in the
    configuration (the catalog's for -catalog), or the -key given; the key
    statements are printed too, secret included.

OPTIONS
    -catalog           the catalog-zone set-up.
    -primary ADDRESS   cnsd's address as the secondaries reach it, an IP
                       address with an optional port: 192.0.2.1,
                       192.0.2.1:5353, 2001:db8::1, [2001:db8::1]:5353
                       (printed as BIND wants it, "192.0.2.1 port 5353").
                       Default: the first dns.listen address of the
                       configuration.
    -key NAME          sign every transfer with the key NAME of the
                       configuration's tsig_keys.
    -max-records-per-type N
                       set max-records-per-type to N everywhere (0: no
                       limit) instead of sizing it from the zones.

EXAMPLES
    cnsadm bind-config -primary 192.0.2.1 > /etc/bind/cnsd-zones.conf
    cnsadm bind-config -catalog -primary 192.0.2.1
    cnsadm bind-config -primary 127.0.0.1:15353 -key xfr-key
`,
	"help": `
DESCRIPTION
    Prints the manual page of a command.
`,
}
