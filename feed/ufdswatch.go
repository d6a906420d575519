package feed

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/go-ldap/ldap/v3"
)

// changelogBatch is the most changelog entries read in one search, as
// the shipped CNS read them; a longer backlog takes several polls in a row.
const changelogBatch = 1000

// Watch follows UFDS's changelog until ctx ends, then returns nil. It
// starts at the current cn=latestchangenumber (what came before is
// already what a lookup reads) and polls for entries numbered above the
// last one seen. For each account whose login, triton_cns_enabled or
// approved_for_provisioning changed, it makes the cached account stale and
// then calls onChange(uuid), once per account per poll, on Watch's own
// goroutine. Malformed entries are logged with their DN and skipped. A
// lost connection is redialled with back-off and the changes made
// meanwhile are read when it returns.
func (u *UFDS) Watch(ctx context.Context, onChange func(uuid string)) error {
	w := &watcher{u: u, last: -1, onChange: onChange}
	failures := 0
	for {
		more, err := w.poll()
		wait := u.pollEvery
		switch {
		case err != nil:
			failures++
			wait = backoff(u.retryMin, u.retryMax, failures)
			u.log.Warn("ufds changelog poll failed", "after", w.last, "retry_in", wait, "err", err)
		case more:
			failures, wait = 0, 0
		default:
			failures = 0
		}
		if err == nil && u.onPoll != nil {
			u.onPoll(w.last)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// watcher is the state of one Watch.
type watcher struct {
	u        *UFDS
	last     int64 // the last change number seen; -1 before the first poll
	onChange func(uuid string)
}

// poll reads the changes above w.last once. more reports that the batch
// was full and more entries wait.
func (w *watcher) poll() (more bool, err error) {
	latest, err := w.u.latestChange()
	switch {
	case err != nil:
		return false, err
	case w.last < 0:
		w.u.log.Info("following ufds changelog", "from", latest)
		w.last = latest
		return false, nil
	case latest < w.last:
		// UFDS's changelog went back (a restore): nothing above w.last
		// will come, and what the cache holds may be anything.
		w.u.log.Warn("ufds changelog went backwards; all accounts will be read again", "was", w.last, "now", latest)
		w.last = latest
		w.notify(w.u.invalidateAll())
		return false, nil
	case latest == w.last:
		return false, nil
	}
	filter := "(changenumber>=" + strconv.FormatInt(w.last+1, 10) + ")"
	res, truncated, err := w.u.query(ldap.NewSearchRequest(changelogDN, ldap.ScopeSingleLevel,
		ldap.NeverDerefAliases, changelogBatch, int(w.u.timeout/time.Second), false, filter, nil, nil))
	if err != nil {
		return false, err
	}
	before := w.last
	w.notify(w.apply(res.Entries))
	if !truncated || w.last == before {
		w.last = max(w.last, latest)
		return false, nil
	}
	return true, nil
}

// apply reads entries in change-number order, advances w.last past them
// and returns the accounts whose naming attributes changed, each once.
func (w *watcher) apply(entries []*ldap.Entry) []string {
	changes := make([]logChange, 0, len(entries))
	for _, e := range entries {
		c, err := parseLogChange(e)
		if err != nil {
			w.u.log.Warn("malformed ufds changelog entry skipped", "dn", e.DN, "err", err)
		}
		changes = append(changes, c)
	}
	slices.SortStableFunc(changes, func(a, b logChange) int { return cmp.Compare(a.number, b.number) })
	var uuids []string
	for _, c := range changes {
		if c.number <= w.last {
			continue
		}
		w.last = c.number
		if c.uuid != "" && c.naming && !slices.Contains(uuids, c.uuid) {
			uuids = append(uuids, c.uuid)
		}
	}
	return uuids
}

// notify makes each account stale and then tells onChange.
func (w *watcher) notify(uuids []string) {
	for _, id := range uuids {
		w.u.invalidate(id)
		w.u.log.Info("account changed in ufds", "owner", id)
		w.onChange(id)
	}
}

// changelogDN and latestDN are UFDS's changelog and its counter.
const (
	changelogDN = "cn=changelog"
	latestDN    = "cn=latestchangenumber"
)

// latestChange reads cn=latestchangenumber. UFDS answers a search there
// with one entry whose "count" is the number; a whole-subtree search finds
// it whether a server keeps it in that entry or below it.
func (u *UFDS) latestChange() (int64, error) {
	res, _, err := u.query(ldap.NewSearchRequest(latestDN, ldap.ScopeWholeSubtree,
		ldap.NeverDerefAliases, 0, int(u.timeout/time.Second), false, "(objectclass=*)", []string{"count"}, nil))
	if err != nil {
		return 0, err
	}
	for _, e := range res.Entries {
		if v := e.GetAttributeValue("count"); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s: count %q: %w", e.DN, v, err)
			}
			return n, nil
		}
	}
	return 0, errors.New(latestDN + ": no count")
}
