#!/usr/bin/env bash
# check-tracked.sh fails when git tracks a file that does not belong in the
# repository: an executable that is not text (a built binary: ELF, Mach-O,
# anything with a NUL byte or that is not UTF-8, or that git itself calls
# binary) or any file over 1 MiB. Executable shell scripts are text and fine.
# What is checked is the index: what the next commit holds (in CI, HEAD).
#
# A legitimate exception is a line in scripts/check-tracked.allow: the path
# as git ls-files prints it, under a comment saying why. `make lint` runs
# this, and with it `make test` and CI.
#
# Usage: scripts/check-tracked.sh [DIR]   (DIR: another repository to check;
# deptest's TestCheckTracked uses it.)
set -euo pipefail

cd "${1:-$(dirname "$0")/..}"

limit=1048576 # bytes
allowfile=scripts/check-tracked.allow

declare -A allowed=()
if [ -f "$allowfile" ]; then
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line%"${line##*[![:space:]]}"} # trailing blanks
		case $line in '' | '#'*) continue ;; esac
		allowed[$line]=1
	done <"$allowfile"
fi

# What git calls binary: numstat against the empty tree prints "-	-	path".
empty=$(git hash-object -t tree /dev/null)
declare -A gitbinary=()
while IFS= read -r -d '' rec; do
	case $rec in $'-\t-\t'*) gitbinary[${rec#$'-\t-\t'}]=1 ;; esac
done < <(git -c core.quotepath=off diff --cached --numstat -z --no-renames --no-ext-diff --no-textconv "$empty" --)

# The index: mode, blob and path of every tracked file.
modes=() objs=() paths=()
while IFS= read -r -d '' rec; do
	meta=${rec%%$'\t'*}
	read -r mode obj _ <<<"$meta"
	modes+=("$mode") objs+=("$obj") paths+=("${rec#*$'\t'}")
done < <(git ls-files -s -z)
[ "${#paths[@]}" -gt 0 ] || exit 0

# Blob sizes, in the same order (gitlinks have no blob: "missing").
mapfile -t sizes < <(printf '%s\n' "${objs[@]}" | git cat-file --batch-check='%(objectsize)')

# binary reports whether blob $1 is not text: a NUL byte, or not UTF-8.
binary() {
	local all nonul
	all=$(git cat-file blob "$1" | wc -c)
	nonul=$(git cat-file blob "$1" | tr -d '\000' | wc -c)
	[ "$all" != "$nonul" ] && return 0
	! git cat-file blob "$1" | iconv -f UTF-8 -t UTF-8 >/dev/null 2>&1
}

bad=0
for i in "${!paths[@]}"; do
	path=${paths[i]} mode=${modes[i]} size=${sizes[i]}
	[ -z "${allowed[$path]:-}" ] || continue
	case $mode in 100644 | 100755) ;; *) continue ;; esac # symlinks, gitlinks
	if [ "$mode" = 100755 ] && { [ -n "${gitbinary[$path]:-}" ] || binary "${objs[i]}"; }; then
		echo "check-tracked: $path: an executable binary is tracked; git rm --cached it (and build it instead)"
		bad=1
	fi
	if [ "$size" -gt "$limit" ]; then
		echo "check-tracked: $path: $size bytes, over the limit of $limit; git rm --cached it"
		bad=1
	fi
done
if [ "$bad" -ne 0 ]; then
	echo "check-tracked: a legitimate exception goes in $allowfile, with a comment saying why"
	exit 1
fi
