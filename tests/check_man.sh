#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# check_man.sh — each manual page against its command's --help: the options of the help's items and of its usage
# lines are the page's options, and the other way round; every command --help lists has its page.
# usage: check_man.sh MEMTRACK_BINARY MAN_DIR SOURCE_DIR
set -euo pipefail
bin=$1 man=$2 src=$3
fail=0
opts_of_help() {	# the options of the usage lines and of the items' tags (before the gap to their text)
	awk '/^usage: / || (NR > 1 && /^       memtrack /) { print; next }
	     /^ +-/ && !/^          / { sub(/^ +/, ""); sub(/  .*/, ""); print }' |
		grep -oE -- '(^|[ ,[|])--?[a-zA-Z][a-zA-Z-]*' | sed 's/^[] ,[|]//' | sort -u
}
cmds=$("$bin" --help | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p' | grep -vx help | sort -u)
for c in $cmds; do
	page=$man/memtrack-$c.1
	if [[ ! -f $page ]]; then
		echo "memtrack $c: no manual page $page"
		fail=1
		continue
	fi
	if ! diff <("$bin" "$c" --help | opts_of_help) <(bash "$src/docs/man/gen.sh" --options "$page") \
		>/tmp/check_man.$$ 2>&1; then
		echo "memtrack $c: --help (<) and $page (>) differ in their options:"
		cat /tmp/check_man.$$
		fail=1
	fi
done
rm -f /tmp/check_man.$$
[[ -f $man/memtrack.1 ]] || { echo "no $man/memtrack.1"; fail=1; }

# The completion: COMP_WORDS as bash sets them, the words offered.
complete_words() {
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMPREPLY=()
	_memtrack
	printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' '
}
expect() {	# expect WANT WORDS...
	local got
	got=$(complete_words "${@:2}")
	[[ $got == "$1" ]] || { echo "completion of '${*:2}': got '$got', want '$1'"; fail=1; }
}
source "$man/memtrack.bash"
dir=$(mktemp -d)
mkdir "$dir/run1" "$dir/run2"
touch "$dir/file"
expect "record report " memtrack re
expect "--leaks " memtrack report --le
expect "--paused --pid --portable --precise-time --python-malloc " memtrack record --p
expect "$dir/run1 $dir/run2 " memtrack report "$dir/r"
expect "$dir/run1 $dir/run2 " memtrack record -o "$dir/r"
expect "check-fp check-stacks " memtrack help che
rm -r "$dir"
exit $fail
