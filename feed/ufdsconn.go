package feed

import (
	"crypto/tls"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/go-ldap/ldap/v3"
)

// connState is the one LDAP connection lookups and the watcher share
// (go-ldap multiplexes requests on it) and the back-off after failed
// connects, so an unreachable UFDS is not redialled on every lookup.
type connState struct {
	mu       sync.Mutex // guards c, failures, retryAt, lastErr
	c        *ldap.Conn
	failures int
	retryAt  time.Time
	lastErr  error
}

// query runs a search on the shared connection. truncated reports that
// the server stopped at the request's size limit; the entries up to it
// are in res.
func (u *UFDS) query(req *ldap.SearchRequest) (res *ldap.SearchResult, truncated bool, err error) {
	c, err := u.connect()
	if err != nil {
		return nil, false, err
	}
	res, err = c.Search(req)
	if ldap.IsErrorWithCode(err, ldap.LDAPResultSizeLimitExceeded) {
		return res, true, nil
	}
	if err != nil {
		if c.IsClosing() || ldap.IsErrorWithCode(err, ldap.ErrorNetwork) {
			u.disconnect(c)
		}
		return nil, false, fmt.Errorf("search %s: %w", req.BaseDN, err)
	}
	return res, false, nil
}

// connect returns the shared connection, dialling a new one if there is
// none or it was lost, unless the back-off of earlier failures still runs.
func (u *UFDS) connect() (*ldap.Conn, error) {
	s := &u.conn
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c != nil && !s.c.IsClosing() {
		return s.c, nil
	}
	if s.c != nil {
		s.c.Close()
		s.c = nil
	}
	if now := u.now(); now.Before(s.retryAt) {
		return nil, fmt.Errorf("connect to %s: retry in %s: %w", u.url, s.retryAt.Sub(now).Round(time.Millisecond), s.lastErr)
	}
	c, err := u.dial()
	if err != nil {
		s.failures++
		wait := backoff(u.retryMin, u.retryMax, s.failures)
		s.retryAt, s.lastErr = u.now().Add(wait), err
		u.log.Warn("ufds unreachable", "url", u.url, "retry_in", wait, "err", err)
		return nil, err
	}
	if s.failures > 0 {
		u.log.Info("ufds reconnected", "url", u.url)
	}
	s.failures, s.c = 0, c
	return c, nil
}

// dial connects and binds.
func (u *UFDS) dial() (*ldap.Conn, error) {
	// UFDS serves LDAPS with a certificate made at setup that nothing
	// signs; the shipped CNS did not verify it either.
	tlsConf := &tls.Config{InsecureSkipVerify: true}
	c, err := ldap.DialURL(u.url, ldap.DialWithDialer(&net.Dialer{Timeout: u.dialTimeout}),
		ldap.DialWithTLSConfig(tlsConf))
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", u.url, err)
	}
	c.SetTimeout(u.timeout)
	if u.bindDN != "" {
		if err := c.Bind(u.bindDN, u.bindPassword); err != nil {
			c.Close()
			return nil, fmt.Errorf("bind to %s as %s: %w", u.url, u.bindDN, err)
		}
	}
	return c, nil
}

// disconnect forgets c if it is still the shared connection.
func (u *UFDS) disconnect(c *ldap.Conn) {
	s := &u.conn
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c == c {
		s.c = nil
	}
	c.Close()
}

// Close closes the LDAP connection; a later lookup opens a new one.
func (u *UFDS) Close() error {
	s := &u.conn
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c == nil {
		return nil
	}
	err := s.c.Close()
	s.c = nil
	return err
}

// backoff is the wait after the n-th failure in a row: doubling from lo,
// at most hi.
func backoff(lo, hi time.Duration, n int) time.Duration {
	d := lo
	for i := 1; i < n && d < hi; i++ {
		d *= 2
	}
	return min(d, hi)
}
