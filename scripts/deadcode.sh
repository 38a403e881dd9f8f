#!/bin/sh
# deadcode.sh DEADCODE-COMMAND...: runs deadcode on the guardrun binary
# and compares what it finds unreachable with scripts/deadcode.allow.
# Fails on an unreachable function the list does not name, and on an
# entry the binary no longer has as unreachable.
set -eu
here=$(dirname "$0")
raw=$(mktemp) found=$(mktemp) allowed=$(mktemp)
trap 'rm -f "$raw" "$found" "$allowed"' EXIT
"$@" ./cmd/guardrun >"$raw"
# dir/file.go:L:C: unreachable func: Name -> dir.Name
sed -n 's|^\(.*\)/[^/]*\.go:[0-9]*:[0-9]*: unreachable func: \(.*\)$|\1.\2|p' "$raw" | sort -u >"$found"
sed -e 's|//.*||' -e 's/[[:space:]]*$//' -e '/^$/d' "$here/deadcode.allow" | awk '{print $1}' | sort -u >"$allowed"
new=$(comm -23 "$found" "$allowed")
stale=$(comm -13 "$found" "$allowed")
status=0
if [ -n "$new" ]; then
	echo "deadcode: the guardrun binary never reaches these functions; remove them, or add them to scripts/deadcode.allow saying why:"
	echo "$new" | sed 's/^/  /'
	status=1
fi
if [ -n "$stale" ]; then
	echo "deadcode: scripts/deadcode.allow names functions that are not unreachable any more (reached, renamed or gone); remove them from it:"
	echo "$stale" | sed 's/^/  /'
	status=1
fi
exit $status
