#!/usr/bin/env bash
# fuzz.sh runs every native fuzz target in the module, one after the other,
# for FUZZTIME each (default 10s): `FUZZTIME=60s scripts/fuzz.sh`.
#
# Targets are found by grepping *_test.go files for `func FuzzXxx(`. A failure
# leaves the crashing input under the package's testdata/fuzz/FuzzXxx/; commit
# it (it becomes a regression case) and add it as a table case too.
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime=${FUZZTIME:-10s}
go=${GO:-go}

# Every *_test.go file the go tool would build: not in testdata, .git, or
# directories whose name starts with "." or "_".
mapfile -t targets < <(
	find . \( -name testdata -o -name '[._]?*' \) -prune -o -name '*_test.go' -print |
		sort |
		xargs -r grep -HoE '^func Fuzz[A-Za-z0-9_]*\(' |
		sed -E 's|^\./(.*)/[^/]*:func (Fuzz[A-Za-z0-9_]*)\($|\1 \2|; s|^\./[^/]*:func (Fuzz[A-Za-z0-9_]*)\($|. \1|'
)

if [ "${#targets[@]}" -eq 0 ]; then
	echo "fuzz: no fuzz targets found"
	exit 0
fi

echo "fuzz: ${#targets[@]} targets, ${fuzztime} each"
failed=()
flaked=()
for t in "${targets[@]}"; do
	read -r dir name <<<"$t"
	pkg=./$dir
	[ "$dir" = . ] && pkg=.
	echo "fuzz: $pkg $name"
	corpus="$dir/testdata/fuzz/$name"
	before=$(ls "$corpus" 2>/dev/null | sort || true)
	log=$(mktemp)
	if "$go" test "$pkg" -run='^$' -fuzz="^${name}\$" -fuzztime="$fuzztime" 2>&1 | tee "$log"; [ "${PIPESTATUS[0]}" -eq 0 ]; then
		rm -f "$log"
		continue
	fi
	after=$(ls "$corpus" 2>/dev/null | sort || true)
	# Go 1.26's fuzz coordinator can report its own -fuzztime deadline as a
	# failure ("context deadline exceeded", golang/go#75804, fixed in Go
	# 1.27). Such a run found nothing: no new input is written to the
	# corpus. A failure that wrote an input, or any other failure, counts.
	if [ "$before" = "$after" ] && grep -q '^    context deadline exceeded$' "$log" &&
		! grep -q -e '^--- FAIL: .*panic' -e 'Failing input written' "$log"; then
		echo "fuzz: $pkg $name: the coordinator's deadline race (golang/go#75804), no failing input; not a failure"
		flaked+=("$pkg $name")
	else
		failed+=("$pkg $name")
	fi
	rm -f "$log"
done

if [ "${#flaked[@]}" -ne 0 ]; then
	echo "fuzz: ${#flaked[@]} target(s) hit the fuzz coordinator's deadline race:"
	printf '  %s\n' "${flaked[@]}"
fi

if [ "${#failed[@]}" -ne 0 ]; then
	echo "fuzz: FAILED:"
	printf '  %s\n' "${failed[@]}"
	echo "fuzz: crashers are in <pkg>/testdata/fuzz/<target>/; commit them and add a table case"
	exit 1
fi
echo "fuzz: no target failed (${#targets[@]} run)"
