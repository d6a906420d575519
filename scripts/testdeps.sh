#!/usr/bin/env bash
# testdeps.sh checks that the programs cnsd's tests start as real processes
# (Redis, BIND, Knot, NSD, PowerDNS, OpenLDAP and their clients, dnsperf
# for the load benchmark, and node for the real Triton libraries) are
# installed, and installs those libraries' npm packages from their
# lockfiles (npm_packages below).
# `testdeps.sh demo` checks only what `make run` needs: OpenLDAP (the
# simulated cloud's UFDS), and dig and curl for the lines the demo prints.
#
# Run as root on Debian or Ubuntu, it installs the missing packages without
# prompting and leaves none of their services running: the tests start their
# own servers on their own ports. Run as anyone else, it names the missing
# packages and the command that installs them, and exits 1 — except for
# the demo's dig and curl, without which the demo leaves their lines out.
set -euo pipefail

# named and slapd live in /usr/sbin, which is not on a normal user's PATH.
export PATH="$PATH:/usr/sbin:/sbin"

# command:package pairs, in the order they are reported; a command that is
# an absolute path is a file the package installs. optional ones are
# installed as root and only reported otherwise.
deps=(
	redis-server:redis-server
	redis-benchmark:redis-tools
	named:bind9
	dig:bind9-dnsutils
	knotd:knot
	kdig:knot-dnsutils
	nsd:nsd
	pdns_server:pdns-server
	pdnsutil:pdns-server
	/usr/share/pdns-backend-sqlite3/schema/schema.sqlite3.sql:pdns-backend-sqlite3
	sqlite3:sqlite3
	slapd:slapd
	ldapsearch:ldap-utils
	systemd-analyze:systemd
	dnsperf:dnsperf
	node:nodejs
	npm:npm
)
optional=()
what="the tests start"
mode=${1:-test}
case "$mode" in
test) ;;
demo)
	what="make run needs"
	deps=(slapd:slapd slapadd:slapd ldapmodify:ldap-utils)
	optional=(dig:bind9-dnsutils curl:curl)
	;;
*)
	echo "usage: $0 [test|demo]" >&2
	exit 2
	;;
esac

# package:service pairs for the packages whose install would start a daemon.
services=(
	redis-server:redis-server
	bind9:named
	knot:knot
	nsd:nsd
	pdns-server:pdns
	slapd:slapd
)

log() { printf 'testdeps: %s\n' "$*"; }

# have reports whether a command (or, given as an absolute path, a file) is there.
have() {
	case "$1" in
	/*) [ -e "$1" ] ;;
	*) command -v "$1" >/dev/null 2>&1 ;;
	esac
}

# where prints where a command (or file) is, or MISSING.
where() {
	case "$1" in
	/*) if [ -e "$1" ]; then echo "$1"; else echo MISSING; fi ;;
	*) command -v "$1" || echo MISSING ;;
	esac
}

# missing prints the package of each missing command of the command:package
# pairs given, once, space-separated.
missing() {
	local pkgs=() dep cmd pkg
	for dep in "$@"; do
		cmd=${dep%%:*} pkg=${dep#*:}
		if ! have "$cmd"; then
			case " ${pkgs[*]-} " in *" $pkg "*) ;; *) pkgs+=("$pkg") ;; esac
		fi
	done
	echo "${pkgs[*]-}"
}

# report lists each command and where it was found.
report() {
	local dep cmd
	for dep in "${deps[@]}" "${optional[@]}"; do
		cmd=${dep%%:*}
		printf '  %-16s %s\n' "${cmd##*/}" "$(where "$cmd")"
	done
}

# npm_packages installs, from their lockfiles, the npm packages of the
# tests that run the real Triton libraries under node: the changefeed
# bridge's (node-sdc-changefeed and restify 4, feed/testdata/changefeed)
# and triton-tags with what Triton CNS's record generation requires
# (zonegen/testdata/tritoncns); each when it is missing or older than its
# lockfile. No install script runs.
npm_packages() {
	[ "$mode" = test ] || return 0
	local root dir
	root="$(cd "$(dirname "$0")/.." && pwd)"
	for dir in "$root/feed/testdata/changefeed" "$root/zonegen/testdata/tritoncns"; do
		if [ -e "$dir/node_modules/.package-lock.json" ] &&
			[ ! "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
			continue
		fi
		log "installing the npm packages of $dir"
		if ! (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error); then
			log "npm ci failed in $dir: the tests of the real Triton libraries need its packages"
			exit 1
		fi
	done
}

read -r -a need <<<"$(missing "${deps[@]}" "${optional[@]}")"
if [ "${#need[@]}" -eq 0 ]; then
	log "all programs $what present"
	npm_packages
	exit 0
fi

install_cmd="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${need[*]}"
if [ "$(id -u)" -ne 0 ]; then
	read -r -a required <<<"$(missing "${deps[@]}")"
	if [ "${#required[@]}" -eq 0 ]; then
		log "the demo leaves out the lines of the programs it lacks; install ${need[*]} for them, for example:"
		printf '  sudo sh -c '\''%s'\''\n' "$install_cmd"
		exit 0
	fi
	log "missing programs $what:"
	report
	log "install the packages ${need[*]} as root, for example:"
	printf '  sudo sh -c '\''%s'\''\n' "$install_cmd"
	exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
	log "missing packages ${need[*]} and no apt-get here; install them with the system's package manager"
	exit 1
fi

start=$(date +%s)
log "installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive

# slapd asks for a directory suffix and password; the tests bring their own
# configuration, so tell it to create none.
case " ${need[*]} " in *" slapd "*)
	echo 'slapd slapd/no_configuration boolean true' | debconf-set-selections
	;;
esac

# Keep maintainer scripts from starting daemons (invoke-rc.d and
# deb-systemd-invoke both honour policy-rc.d). An existing policy is left alone.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' >"$policy"
	chmod 755 "$policy"
	trap 'rm -f "$policy"' EXIT
fi

# need_update reports whether the package lists lack a candidate for a package.
need_update() {
	local pkg policy
	for pkg in "${need[@]}"; do
		# Not a pipe into grep -q: under pipefail its early exit would fail
		# the pipeline with SIGPIPE.
		policy=$(apt-cache policy "$pkg" 2>/dev/null || true)
		case "$policy" in *"Candidate: ("* | "") return 0 ;; esac
	done
	return 1
}

apt_install() {
	apt-get install -y -q --no-install-recommends \
		-o DPkg::Lock::Timeout=300 \
		-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
		"${need[@]}"
}

updated=no
if need_update; then
	log "package lists lack some packages; running apt-get update"
	apt-get update -q
	updated=yes
fi
if ! apt_install; then
	if [ "$updated" = yes ]; then
		exit 1
	fi
	# Stale lists point at versions the mirror no longer has.
	log "install failed; running apt-get update and retrying"
	apt-get update -q
	apt_install
fi

# Stop and disable the daemons these packages brought, in case something
# started them anyway; they were not installed before, so nothing relies on them.
for svc in "${services[@]}"; do
	pkg=${svc%%:*} name=${svc#*:}
	case " ${need[*]} " in *" $pkg "*) ;; *) continue ;; esac
	service "$name" stop >/dev/null 2>&1 || true
	if [ -d /run/systemd/system ]; then
		systemctl disable --quiet "$name" >/dev/null 2>&1 || true
	else
		update-rc.d "$name" disable >/dev/null 2>&1 || true
	fi
done

read -r -a still <<<"$(missing "${deps[@]}" "${optional[@]}")"
if [ "${#still[@]}" -ne 0 ]; then
	log "still missing after install: ${still[*]}"
	report
	exit 1
fi
log "installed ${need[*]} in $(($(date +%s) - start))s"
report
npm_packages
