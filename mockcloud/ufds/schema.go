package ufds

import "strings"

// schemaText is the subset of UFDS's schema cnsd reads. Attributes are
// multi-valued and mostly optional on purpose: UFDS's own schema is loose,
// and tests must be able to store the malformed entries a client has to
// survive. OIDs are under 1.3.6.1.4.1.32473, the enterprise number RFC 5612
// reserves for documentation. email is core.schema's.
const schemaText = `
attributetype ( 1.3.6.1.4.1.32473.1.1.1 NAME 'uuid'
	EQUALITY caseIgnoreMatch SUBSTR caseIgnoreSubstringsMatch
	SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 )
attributetype ( 1.3.6.1.4.1.32473.1.1.2 NAME 'login'
	EQUALITY caseExactMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 )
attributetype ( 1.3.6.1.4.1.32473.1.1.4 NAME 'tritoncnsenabled'
	EQUALITY caseIgnoreMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 )
attributetype ( 1.3.6.1.4.1.32473.1.1.5 NAME 'approvedforprovisioning'
	EQUALITY caseIgnoreMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 )
attributetype ( 1.3.6.1.4.1.32473.1.2.1 NAME 'changenumber'
	EQUALITY integerMatch ORDERING integerOrderingMatch
	SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 )
attributetype ( 1.3.6.1.4.1.32473.1.2.2 NAME 'targetdn'
	EQUALITY caseIgnoreMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 )
attributetype ( 1.3.6.1.4.1.32473.1.2.3 NAME 'changetype'
	EQUALITY caseIgnoreMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 )
attributetype ( 1.3.6.1.4.1.32473.1.2.4 NAME 'changes'
	EQUALITY caseExactMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 )
attributetype ( 1.3.6.1.4.1.32473.1.2.5 NAME 'changetime'
	EQUALITY caseIgnoreMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 )
attributetype ( 1.3.6.1.4.1.32473.1.2.6 NAME 'count'
	EQUALITY integerMatch ORDERING integerOrderingMatch
	SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )
objectclass ( 1.3.6.1.4.1.32473.2.1 NAME 'sdcPerson' SUP top STRUCTURAL
	MUST uuid
	MAY ( login $ email $ tritoncnsenabled $ approvedforprovisioning $ userPassword ) )
objectclass ( 1.3.6.1.4.1.32473.2.2 NAME 'changeLogEntry' SUP top STRUCTURAL
	MUST changenumber
	MAY ( targetdn $ changetype $ changes $ changetime ) )
objectclass ( 1.3.6.1.4.1.32473.2.3 NAME 'latestChangeNumber' SUP top STRUCTURAL
	MUST ( cn $ count ) )
`

// Suffixes are the three trees UFDS serves that cnsd reads, one slapd
// database each.
const (
	UsersDN     = "ou=users, o=smartdc"
	ChangelogDN = "cn=changelog"
	LatestDN    = "cn=latestchangenumber"
)

var suffixes = []string{"o=smartdc", ChangelogDN, LatestDN}

// indexes are each database's equality indexes: those of UFDS's own
// buckets in Moray (uuid, login and email unique, objectclass; the
// changelog's change number its key). Without them slapd answers a
// lookup of one account by uuid by reading every entry of o=smartdc:
// a bootstrap's thousand lookups then cost slapd a core for a second
// and more, on the cores cnsd and the cloud share in tests, which a
// directory that indexes them does not.
var indexes = map[string]string{
	"o=smartdc": "index objectClass eq\nindex uuid,login,email eq\n",
	ChangelogDN: "index changenumber eq\n",
}

// slapdConf is the configuration of a harness slapd living in dir.
func slapdConf(dir, password string) string {
	var b strings.Builder
	b.WriteString("include /etc/ldap/schema/core.schema\n")
	b.WriteString("include " + dir + "/ufds.schema\n")
	b.WriteString("modulepath /usr/lib/ldap\nmoduleload back_mdb\n")
	b.WriteString("pidfile " + dir + "/slapd.pid\n")
	for i, s := range suffixes {
		b.WriteString("\ndatabase mdb\nmaxsize 16777216\n")
		b.WriteString("suffix \"" + s + "\"\n")
		b.WriteString("directory " + dir + "/db" + string(rune('0'+i)) + "\n")
		// Writes come from the root of o=smartdc, as UFDS's own writer is
		// one identity; reads are open, as cnsd binds with a reader.
		b.WriteString("access to * by dn.exact=\"" + RootDN + "\" write by * read\n")
		if i == 0 {
			b.WriteString("rootdn \"" + RootDN + "\"\nrootpw " + password + "\n")
		}
		b.WriteString(indexes[s])
	}
	return b.String()
}

// RootDN is the identity the harness binds as, like UFDS's cn=root.
const RootDN = "cn=root, o=smartdc"

// LDAPName is the attribute name slapd stores a UFDS attribute under:
// UFDS's own name without underscores (see the package comment).
func LDAPName(ufdsName string) string { return strings.ReplaceAll(ufdsName, "_", "") }
