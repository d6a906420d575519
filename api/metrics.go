package api

import (
	"context"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// collector reads the store and the DNS server at each scrape, so the
// figures are never out of step with what is served and nothing is
// counted twice.
type collector struct {
	s *Server

	serial, records, journal, journalBytes, largestRRset *prometheus.Desc
	queries, transfers, refused, aborted, msgs, xbytes   *prometheus.Desc
	rrlDropped, rrlSlipped                               *prometheus.Desc
	udpDropped, tcpConns, tcpEvicted                     *prometheus.Desc

	peerSerial, peerLag, peerStale, notifySent, notifyFailed, peerXfr, peerAhead *prometheus.Desc

	pending, heldVMs, heldRecords *prometheus.Desc

	feedConnected, feedVMs, feedUnresolved, feedQueued, feedLag, listings, commits, pendingSources *prometheus.Desc

	storeUp, storeWriter, writesRefused, redisAOF, redisReplicas, commitsHeld, zonesRestored *prometheus.Desc
}

func newCollector(s *Server) *collector {
	zone := []string{"zone"}
	peer := []string{"peer", "zone"}
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("cnsd_"+name, help, labels, nil)
	}
	return &collector{s: s,
		serial:         d("zone_serial", "The zone's current SOA serial.", zone...),
		records:        d("zone_records", "Records the zone serves.", zone...),
		journal:        d("zone_journal_entries", "Diffs kept in the zone's journal.", zone...),
		journalBytes:   d("zone_journal_bytes", "Heap the zone's journal takes in this process: its diffs, encoded.", zone...),
		largestRRset:   d("zone_largest_rrset", "Records in the zone's largest RRset (one name and type, e.g. a service's A records); secondaries must accept RRsets this large (BIND 9.18.28+: max-records-per-type, default 100).", zone...),
		queries:        d("dns_queries_total", "Queries answered, by response code.", "rcode"),
		transfers:      d("dns_transfers_total", "Zone transfers completed, by what was sent.", "kind"),
		refused:        d("dns_transfers_refused_total", "Zone transfers refused by the ACL or TSIG."),
		aborted:        d("dns_transfers_aborted_total", "Zone transfers that ended before their last message was sent, the connection reset or closed: a secondary refusing the zone's data (BIND's max-records-per-type) aborts so.", zone...),
		msgs:           d("dns_transfer_messages_total", "Messages of completed zone transfers."),
		xbytes:         d("dns_transfer_bytes_total", "Octets of completed zone transfers."),
		rrlDropped:     d("dns_rrl_dropped_total", "Answers over UDP that response rate limiting dropped."),
		rrlSlipped:     d("dns_rrl_slipped_total", "Answers over UDP that response rate limiting sent empty and truncated (TC=1) instead, so that the client retries over TCP."),
		udpDropped:     d("dns_udp_dropped_total", "Queries the kernel dropped because a UDP socket's receive buffer was full (Linux; see dns.udp_receive_buffer)."),
		tcpConns:       d("dns_tcp_connections", "DNS TCP connections open."),
		tcpEvicted:     d("dns_tcp_evicted_total", "DNS TCP connections closed to make room for a new one over dns.tcp_max_connections or dns.tcp_max_connections_per_client."),
		peerSerial:     d("peer_confirmed_serial", "The serial the secondary was last seen serving.", peer...),
		peerLag:        d("peer_behind_seconds", "How long the secondary has been behind the zone's serial (0 when current).", peer...),
		peerStale:      d("peer_stale", "1 when the secondary has been behind for so long that it is no longer waited for.", peer...),
		notifySent:     d("peer_notify_sent_total", "NOTIFY messages sent to the secondary, retries included.", peer...),
		notifyFailed:   d("peer_notify_failed_total", "NOTIFYs the secondary never answered, or answered with an error.", peer...),
		peerXfr:        d("peer_transfers_total", "Transfers by the secondary, by kind.", "peer", "zone", "kind"),
		peerAhead:      d("peer_serial_ahead_total", "Times the secondary was found serving a serial ahead of the zone's (it ignores NOTIFY until the writer moves the serial past it).", peer...),
		pending:        d("pending_removals", "Self-removals the hysteresis policy has not let take effect yet (writer only)."),
		heldVMs:        d("held_deletion_vms", "VMs whose records a held mass deletion keeps, by cause (writer only).", "cause"),
		heldRecords:    d("held_deletion_records", "Records a held mass deletion would remove, by cause and zone (writer only).", "cause", "zone"),
		feedConnected:  d("feed_changefeed_connected", "1 while the VMAPI changefeed is established, 0 while cnsd re-lists instead (writer only)."),
		feedVMs:        d("feed_vms", "VMs the writer follows."),
		feedUnresolved: d("feed_unresolved_vms", "VMs whose owner, compute node or network lookup has not succeeded; they keep their records."),
		feedQueued:     d("feed_queued_changes", "Changes received from the cloud and not applied yet."),
		feedLag:        d("feed_last_change_age_seconds", "Seconds since the writer last applied a change or listing from the cloud."),
		listings:       d("feed_listings_total", "Complete VM listings applied (each changefeed connection starts with one)."),
		commits:        d("commits_total", "Commits of VM records to the store."),
		pendingSources: d("store_pending_sources", "Sources (VMs) whose records wait to be committed, e.g. while Redis is down (writer only)."),
		storeUp:        d("store_up", "1 when the store answered just now, 0 while it is unreachable (DNS is served from the zones last loaded)."),
		storeWriter:    d("store_writer", "1 when this process holds the writer lease."),
		writesRefused:  d("store_writes_refused", "1 while the writer refuses to write because Redis does not persist with an append-only file."),
		redisAOF:       d("redis_aof", "1 when Redis has appendonly yes, 0 when no, -1 when it refuses CONFIG GET; labelled with appendfsync.", "appendfsync"),
		redisReplicas:  d("redis_replicas", "Replicas connected to the Redis master at the last check; with any, each commit waits for one to acknowledge it."),
		commitsHeld:    d("redis_commits_held_total", "Commits written to Redis that no replica acknowledged in time, held back (not published, no NOTIFY) and retried."),
		zonesRestored:  d("store_zones_restored_total", "Zones the writer found the store had lost commits of (a failover or crash) and wrote back from what it serves, at a higher serial."),
	}
}

// descs are every metric the collector can emit, described up front so
// the registry checks what each scrape collects against them.
func (c *collector) descs() []*prometheus.Desc {
	return []*prometheus.Desc{
		c.serial, c.records, c.journal, c.journalBytes, c.largestRRset,
		c.queries, c.transfers, c.refused, c.aborted, c.msgs, c.xbytes, c.rrlDropped, c.rrlSlipped,
		c.udpDropped, c.tcpConns, c.tcpEvicted,
		c.peerSerial, c.peerLag, c.peerStale, c.notifySent, c.notifyFailed, c.peerXfr, c.peerAhead,
		c.pending, c.heldVMs, c.heldRecords,
		c.feedConnected, c.feedVMs, c.feedUnresolved, c.feedQueued, c.feedLag, c.listings, c.commits, c.pendingSources,
		c.storeUp, c.storeWriter, c.writesRefused, c.redisAOF, c.redisReplicas, c.commitsHeld, c.zonesRestored,
	}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs() {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	c.collectZones(ch)
	c.collectDNS(ch)
	c.collectPeers(ch)
	c.collectCloud(ch)
	c.collectStore(ch)
}

// collectStore reports the store's health when cmd/cnsd has set it.
func (c *collector) collectStore(ch chan<- prometheus.Metric) {
	h := c.s.getHealth()
	if h == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	st := h.Store(ctx)
	gauge(ch, c.storeUp, boolValue(st.Up))
	gauge(ch, c.storeWriter, boolValue(st.Writer))
	gauge(ch, c.writesRefused, boolValue(st.WritesRefused))
	ch <- prometheus.MustNewConstMetric(c.zonesRestored, prometheus.CounterValue, float64(st.ZonesRestored))
	if st.Redis != nil {
		gauge(ch, c.redisAOF, float64(st.Redis.AOF), st.Redis.AppendFsync)
		gauge(ch, c.redisReplicas, float64(st.Redis.Replicas))
		ch <- prometheus.MustNewConstMetric(c.commitsHeld, prometheus.CounterValue, float64(st.Redis.CommitsHeld))
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// collectCloud reports the writer's pipeline; other processes have none
// and report nothing, so a sum over processes counts each once.
func (c *collector) collectCloud(ch chan<- prometheus.Metric) {
	cloud := c.s.getCloud()
	if cloud == nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(len(cloud.PendingRemovals())))
	f := cloud.Feed()
	connected := 0.0
	if f.Connected {
		connected = 1
	}
	ch <- prometheus.MustNewConstMetric(c.feedConnected, prometheus.GaugeValue, connected)
	ch <- prometheus.MustNewConstMetric(c.feedVMs, prometheus.GaugeValue, float64(f.VMs))
	ch <- prometheus.MustNewConstMetric(c.feedUnresolved, prometheus.GaugeValue, float64(f.Unresolved))
	ch <- prometheus.MustNewConstMetric(c.feedQueued, prometheus.GaugeValue, float64(f.Queued))
	gauge(ch, c.pendingSources, float64(f.PendingSources))
	if !f.LastChange.IsZero() {
		ch <- prometheus.MustNewConstMetric(c.feedLag, prometheus.GaugeValue, time.Since(f.LastChange).Seconds())
	}
	ch <- prometheus.MustNewConstMetric(c.listings, prometheus.CounterValue, float64(f.Listings))
	ch <- prometheus.MustNewConstMetric(c.commits, prometheus.CounterValue, float64(f.Commits))
	for _, h := range cloud.HeldDeletions() {
		ch <- prometheus.MustNewConstMetric(c.heldVMs, prometheus.GaugeValue, float64(len(h.VMs)), h.Cause)
		for _, z := range h.Zones {
			ch <- prometheus.MustNewConstMetric(c.heldRecords, prometheus.GaugeValue, float64(z.Removed), h.Cause, strings.TrimSuffix(z.Zone, "."))
		}
	}
}

func (c *collector) collectZones(ch chan<- prometheus.Metric) {
	for _, name := range c.s.zones.Zones() {
		snap := c.s.zones.Snapshot(name)
		if snap == nil {
			continue
		}
		zone := strings.TrimSuffix(name, ".")
		entries, bytes := snap.Journal()
		gauge(ch, c.serial, float64(snap.Serial()), zone)
		gauge(ch, c.records, float64(snap.Len()), zone)
		gauge(ch, c.journal, float64(entries), zone)
		gauge(ch, c.journalBytes, float64(bytes), zone)
		gauge(ch, c.largestRRset, float64(snap.LargestRRset()), zone)
	}
}

func (c *collector) collectDNS(ch chan<- prometheus.Metric) {
	for rcode, n := range c.s.dns.QueryCounts() {
		counter(ch, c.queries, n, rcode)
	}
	t := c.s.dns.TransferCounts()
	counter(ch, c.transfers, t.AXFR, "axfr")
	counter(ch, c.transfers, t.IXFR, "ixfr")
	counter(ch, c.refused, t.Refused)
	for zone, n := range c.s.dns.AbortedTransfers() {
		counter(ch, c.aborted, n, zone)
	}
	counter(ch, c.msgs, t.Messages)
	counter(ch, c.xbytes, t.Bytes)
	rl := c.s.dns.RateLimitCounts()
	counter(ch, c.rrlDropped, rl.Dropped)
	counter(ch, c.rrlSlipped, rl.Slipped)
	tc := c.s.dns.TransportCounts()
	counter(ch, c.udpDropped, tc.UDPDropped)
	gauge(ch, c.tcpConns, float64(tc.TCPConnections))
	counter(ch, c.tcpEvicted, tc.TCPEvicted)
}

func (c *collector) collectPeers(ch chan<- prometheus.Metric) {
	now := time.Now()
	for _, p := range c.s.dns.Peers() {
		for _, z := range p.Zones {
			zone := strings.TrimSuffix(z.Zone, ".")
			gauge(ch, c.peerSerial, float64(z.Serial), p.Addr, zone)
			lag := 0.0
			if !z.BehindSince.IsZero() {
				lag = now.Sub(z.BehindSince).Seconds()
			}
			gauge(ch, c.peerLag, lag, p.Addr, zone)
			stale := 0.0
			if z.Stale {
				stale = 1
			}
			gauge(ch, c.peerStale, stale, p.Addr, zone)
			counter(ch, c.notifySent, z.NotifySent, p.Addr, zone)
			counter(ch, c.notifyFailed, z.NotifyFailed, p.Addr, zone)
			counter(ch, c.peerXfr, z.AXFR, p.Addr, zone, "axfr")
			counter(ch, c.peerXfr, z.IXFR, p.Addr, zone, "ixfr")
			counter(ch, c.peerAhead, z.AheadIncidents, p.Addr, zone)
		}
	}
}

func gauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func counter(ch chan<- prometheus.Metric, d *prometheus.Desc, v uint64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
}
