package redistest

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// MasterName is the name the Sentinels of a SentinelSet know the master by.
const MasterName = "cnsd"

// sentinelDownAfter is how long the Sentinels wait for a silent master
// before they call it down: short so that tests fail over in seconds.
const sentinelDownAfter = time.Second

// SentinelSet is a master with replicas and three Sentinels watching it,
// all on loopback ports the test picked, every data node with its
// append-only file synced on every write.
type SentinelSet struct {
	// Nodes are the data nodes: Nodes[0] starts as the master, the others
	// as its replicas; a failover changes the roles, not the order.
	Nodes []*Server
	// Sentinels are the three Sentinels (a quorum of two).
	Sentinels []*Server
}

// StartReplicated starts a master and replicas replicas of it and waits
// until every replica is in sync; the master is first.
func StartReplicated(t testing.TB, replicas int, opts ...Option) []*Server {
	t.Helper()
	// Without the default 5 s delay a replica (also one a failover
	// points at a new master) is in sync at once.
	opts = append([]Option{WithArgs("--repl-diskless-sync-delay", "0")}, opts...)
	nodes := []*Server{Start(t, opts...)}
	master := nodes[0]
	for range replicas {
		o := append([]Option{WithArgs("--replicaof", "127.0.0.1", strconv.Itoa(master.Port()))}, opts...)
		nodes = append(nodes, Start(t, o...))
	}
	waitFor(t, "replicas in sync", func() error {
		if n, err := ConnectedReplicas(master); err != nil || n != replicas {
			return fmt.Errorf("connected_slaves:%d (%v), want %d", n, err, replicas)
		}
		for _, r := range nodes[1:] {
			info, err := command(r.Addr(), "INFO", "replication")
			if err != nil {
				return err
			}
			if st := infoField(info, "master_link_status"); st != "up" {
				return fmt.Errorf("replica %s: master_link_status:%s", r.Addr(), st)
			}
		}
		return nil
	})
	return nodes
}

// StartSentinel starts a master, replicas replicas of it (StartReplicated)
// and three Sentinels, and waits until every Sentinel knows the others
// and the replicas, so that a failover can happen.
func StartSentinel(t testing.TB, replicas int, opts ...Option) *SentinelSet {
	t.Helper()
	set := &SentinelSet{Nodes: StartReplicated(t, replicas, opts...)}
	master := set.Nodes[0]
	conf := fmt.Sprintf("sentinel monitor %[1]s 127.0.0.1 %[2]d 2\n"+
		"sentinel down-after-milliseconds %[1]s %[3]d\n"+
		"sentinel failover-timeout %[1]s 10000\n"+
		"sentinel parallel-syncs %[1]s 1\n",
		MasterName, master.Port(), sentinelDownAfter.Milliseconds())
	for range 3 {
		set.Sentinels = append(set.Sentinels, Start(t, append([]Option{func(c *config) { c.sentinel = conf }}, opts...)...))
	}
	want := fmt.Sprintf("status=ok,address=%s,slaves=%d,sentinels=3", master.Addr(), replicas)
	waitFor(t, "sentinels to know each other and the replicas", func() error {
		for _, s := range set.Sentinels {
			info, err := command(s.Addr(), "INFO", "sentinel")
			if err != nil {
				return err
			}
			if !strings.Contains(info, want) {
				return fmt.Errorf("sentinel %s: %q, want %q", s.Addr(), infoField(info, "master0"), want)
			}
		}
		return nil
	})
	return set
}

// URL returns the redis:// URL of a Sentinel client: the first Sentinel
// as host, the others as addr parameters, and master_name.
func (set *SentinelSet) URL() string {
	u := "redis://" + set.Sentinels[0].Addr() + "?master_name=" + MasterName
	for _, s := range set.Sentinels[1:] {
		u += "&addr=" + s.Addr()
	}
	return u
}

// Master returns the data node the Sentinels name as master (asking the
// first that answers), or nil when none answers or it is none of Nodes.
func (set *SentinelSet) Master() *Server {
	for _, s := range set.Sentinels {
		info, err := command(s.Addr(), "INFO", "sentinel")
		if err != nil {
			continue
		}
		for _, n := range set.Nodes {
			if strings.Contains(infoField(info, "master0"), ",address="+n.Addr()+",") {
				return n
			}
		}
		return nil
	}
	return nil
}

// AwaitFailover waits until every Sentinel names a master other than old
// and that node says it is master, and returns it. It fails the test
// after a minute.
func (set *SentinelSet) AwaitFailover(t testing.TB, old *Server) *Server {
	t.Helper()
	var promoted *Server
	waitFor(t, "failover from "+old.Addr(), func() error {
		promoted = nil
		for _, s := range set.Sentinels {
			info, err := command(s.Addr(), "INFO", "sentinel")
			if err != nil {
				return err
			}
			m := infoField(info, "master0")
			if strings.Contains(m, ",address="+old.Addr()+",") {
				return fmt.Errorf("sentinel %s still names %s", s.Addr(), old.Addr())
			}
			for _, n := range set.Nodes {
				if strings.Contains(m, ",address="+n.Addr()+",") {
					promoted = n
				}
			}
		}
		if promoted == nil {
			return fmt.Errorf("the sentinels name no node of the set")
		}
		info, err := command(promoted.Addr(), "INFO", "replication")
		if err != nil {
			return err
		}
		if role := infoField(info, "role"); role != "master" {
			return fmt.Errorf("%s has role %s", promoted.Addr(), role)
		}
		return nil
	})
	return promoted
}

// ConnectedReplicas returns connected_slaves of INFO replication of n.
func ConnectedReplicas(n *Server) (int, error) {
	info, err := command(n.Addr(), "INFO", "replication")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(infoField(info, "connected_slaves"))
}

// Get returns the string value of key on n ("" when missing), read
// directly from that node, replica or master.
func Get(n *Server, key string) (string, error) {
	return command(n.Addr(), "GET", key)
}

// infoField returns the value of name in an INFO reply, or "".
func infoField(info, name string) string {
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return v
		}
	}
	return ""
}

// waitFor polls check until it returns nil, failing the test with its
// last error after a minute.
func waitFor(t testing.TB, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("redistest: waiting for %s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
