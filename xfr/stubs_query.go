package xfr

import "github.com/miekg/dns"

// serveQuery answers a normal query. Placeholder until query.go lands.
func (s *Server) serveQuery(w dns.ResponseWriter, r *dns.Msg, st *settings) {
	s.reply(w, r, dns.RcodeNotImplemented)
}
