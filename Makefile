# cnsd — build, test and lint. `make help` lists the targets.

GO ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

# named and slapd are in /usr/sbin, which a normal user's PATH lacks; the
# tests look them up on PATH.
export PATH := $(PATH):/usr/sbin:/sbin

# staticcheck is pinned; the binary is built once into bin/tools/<version>/.
# v0.8.2 (2026.2.2) is the newest release on the module proxy and supports Go 1.26.
STATICCHECK_VERSION := v0.8.2
STATICCHECK := bin/tools/staticcheck-$(STATICCHECK_VERSION)/staticcheck

# A hung test fails its package after this long instead of go test's 10m
# default, which would eat most of the 15-minute CI budget.
TEST_TIMEOUT ?= 5m

# Fuzz time per target: short in `make test`, longer in `make fuzz`.
FUZZTIME ?=

# Go files gofmt checks: everything the go tool would build.
GOFILES = $(shell find . \( -name testdata -o -name '[._]?*' \) -prune -o -name '*.go' -print)

# The steps of `make test` must run in order, even under -j.
.NOTPARALLEL:

.PHONY: all help build deps test race fuzz-smoke fuzz bench-smoke bench cross lint run clean distclean faults faults-short fuzz-short conformance tritoncns tritoncns-corpus

all: build

help:
	@echo 'make build        go build ./... and bin/cnsd, bin/cnsadm, bin/mockcloud'
	@echo 'make run          build and start cnsd over a simulated cloud (DNS 127.0.0.1:5300, API 127.0.0.1:8053), print'
	@echo '                  dig, cnsadm and curl lines to try; Ctrl-C stops it, logs stay in bin/demo/logs'
	@echo '                  (needs slapd and ldap-utils, installed as root; RUNFLAGS="-dns-port N -api-port N")'
	@echo 'make test         deps, lint, race tests (fuzz seeds included), the short fault suite, 2 s of fuzzing per target, bench-smoke, illumos build'
	@echo 'make deps         check (and as root, install) redis, bind9, knot, nsd, powerdns, slapd and clients'
	@echo 'make lint         gofmt -l, go vet, staticcheck $(STATICCHECK_VERSION), no tracked binaries or files over 1 MiB'
	@echo 'make race         go test -race -count=1 -timeout=$(TEST_TIMEOUT) on every package but faults'
	@echo 'make faults-short the fault suite short form (docs/faults.md), as make test runs it'
	@echo 'make fuzz-short   every fuzz target for 2s, as make test runs them'
	@echo 'make fuzz-smoke   every fuzz target for FUZZTIME (default 5s)'
	@echo 'make fuzz         every fuzz target for FUZZTIME (default 60s)'
	@echo 'make bench-smoke  every benchmark once (-benchtime=1x -short)'
	@echo 'make bench        full benchmarks with -benchmem'
	@echo 'make faults       the fault-injection suite in its long form (docs/faults.md), about 9 minutes'
	@echo 'make conformance  cnsd against Knot and NSD over thousands of queries (conformance/); race runs its short form'
	@echo 'make tritoncns TRITON_CNS_DIR=dir  zonegen against Triton CNS'"'"'s own record generation, from a triton-cns checkout (zonegen/tritoncns_test.go)'
	@echo 'make tritoncns-corpus TRITON_CNS_DIR=dir  rewrite the digests of Triton CNS'"'"'s records that make test checks (zonegen/testdata/tritoncns/corpus)'
	@echo 'make cross        GOOS=illumos GOARCH=amd64 go build ./...'
	@echo 'make clean        remove built binaries and test artefacts (distclean: also bin/tools)'

build:
	$(GO) build ./...
	$(GO) build -ldflags '$(LDFLAGS)' -o bin/ ./cmd/cnsd ./cmd/cnsadm ./cmd/mockcloud

deps:
	scripts/testdeps.sh

# In make test a missing secondary (BIND, Knot, NSD, PowerDNS) fails the
# transfer tests instead of skipping them (xfr/secondarytest), and a
# missing node or npm package fails the tests that run the real Triton
# libraries (feed/realchangefeed_test.go, zonegen/tritontags_test.go);
# the values reach race through make's inheritance of target-specific
# variables by prerequisites.
#
# Every fuzz target's seed corpus and saved failing inputs run as ordinary
# tests in race; make test then fuzzes each target for 2 s (fuzz-short:
# about two minutes with a warm build cache, three on a cold one, most of
# it building each package with coverage instrumentation). make
# fuzz-smoke and make fuzz fuzz longer.
test: export CNSD_REQUIRE_SECONDARIES = 1
test: export CNSD_REQUIRE_NODE = 1
test: deps lint race faults-short fuzz-short bench-smoke cross
	@echo 'make test: all steps passed'

race:
	$(GO) test -race -count=1 -timeout=$(TEST_TIMEOUT) $$($(GO) list ./... | grep -v '/faults$$')

# The fault suite runs on its own, after the others: it loads the machine
# with real processes (cnsd, Redis, BIND) and the other packages' tests
# wait for their servers within limits of their own.
faults-short:
	$(GO) test -count=1 -timeout=15m ./faults

faults: deps
	FAULTS=full $(GO) test -count=1 -timeout=90m -v -run TestFaults ./faults

# The differential test against Knot and NSD in its long form; its short
# form runs in race like any package's tests. CONFORMANCE_SEED picks
# another corpus.
conformance: export CNSD_REQUIRE_SECONDARIES = 1
conformance: deps
	CONFORMANCE=full $(GO) test -count=1 -timeout=30m -v -run TestConformance ./conformance

# zonegen against the original: Triton CNS's compute-node rule (CNFilter),
# NetFilter, FlagFilter and buildZonesFromVm, run by node from a
# triton-cns checkout, over a random corpus (zonegen/tritoncns_test.go). The checkout is not in any registry
# CI reaches, so this is not part of make test. TRITON_CNS_CASES sets the
# corpus size.
# make tritoncns-corpus writes the digests of Triton CNS's records for the
# corpus's first 5,000 cases (zonegen/testdata/tritoncns/corpus), which
# TestTritonCNSCorpus checks in every make test without node.
tritoncns tritoncns-corpus:
	@test -n "$(TRITON_CNS_DIR)" || { echo 'make $@: set TRITON_CNS_DIR to a triton-cns checkout'; exit 2; }
	cd zonegen/testdata/tritoncns && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	TRITON_CNS_DIR=$(abspath $(TRITON_CNS_DIR)) $(if $(filter tritoncns-corpus,$@),TRITON_CNS_CASES=$(or $(TRITON_CNS_CASES),5000)) \
		$(GO) test -count=1 -v -run TestTritonCNSAgrees ./zonegen $(if $(filter tritoncns-corpus,$@),-args -update)

fuzz-short:
	FUZZTIME=2s GO=$(GO) scripts/fuzz.sh

fuzz-smoke:
	FUZZTIME=$(or $(FUZZTIME),5s) GO=$(GO) scripts/fuzz.sh

fuzz:
	FUZZTIME=$(or $(FUZZTIME),60s) GO=$(GO) scripts/fuzz.sh

# -short: the largest benchmarks (1M records) skip themselves; they run in
# `make bench`.
bench-smoke:
	$(GO) test -short -run='^$$' -bench=. -benchtime=1x ./...

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

cross:
	GOOS=illumos GOARCH=amd64 $(GO) build ./...

# check-tracked.sh: no executable binary and no file over 1 MiB is tracked
# (exceptions in scripts/check-tracked.allow).
lint: $(STATICCHECK)
	@out=$$(gofmt -l $(GOFILES)); \
	if [ -n "$$out" ]; then \
		echo 'gofmt: these files are not formatted (run gofmt -w on them):'; \
		echo "$$out"; \
		exit 1; \
	fi
	$(GO) vet ./...
	$(STATICCHECK) ./...
	scripts/check-tracked.sh

$(STATICCHECK):
	GOBIN=$(CURDIR)/$(@D) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

# The demo: a generated simulated cloud and cnsd over it; see README.md.
# It needs OpenLDAP for the cloud's UFDS, and dig and curl for some of the
# lines it prints (it leaves those out without them), not the test
# programs of make deps. RUNFLAGS passes it flags, e.g.
# RUNFLAGS='-dns-port 5301 -api-port 8054'. On Ctrl-C it stops its
# programs and exits 0, so make reports no error; its logs stay in
# bin/demo/logs. It is built and run, not `go run`: interrupted, go run
# exits 1 whatever its program does, and make would print "Error 1".
RUNFLAGS ?=
run: build
	scripts/testdeps.sh demo
	$(GO) build -o bin/cnsd-demo ./scripts/demo
	bin/cnsd-demo -bin bin -dir bin/demo $(RUNFLAGS)

clean:
	rm -f bin/cnsd bin/cnsadm bin/mockcloud bin/cnsd-demo
	find . -name testdata -prune -o \( -name '*.test' -o -name '*.prof' -o -name '*.pprof' \
		-o -name 'cpu.out' -o -name 'mem.out' -o -name 'coverage.out' \) -type f -print -exec rm -f {} +

distclean: clean
	rm -rf bin
