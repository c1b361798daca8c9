#!/bin/sh
# Page size against run size: bytes of the `run --view` page for N and 4N lease workers
# (bench/view-lease-workers.json), with the trace's record count and bytes per record. A page
# linear in events keeps bytes per record flat as the workers grow (the goal: the 4N page's
# bytes per record within 1.5x of the N page's). N is $VIEW_N (default 100). Prints one line
# per size and `growth_view ratio=R` (bytes per record, 4N over N; linear 1.00).
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
BIN=$(splitbrain_bin)
N=${VIEW_N:-100}
N4=$((N * 4))
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Sets `per` to the page's bytes per trace record for $1 workers, and prints the figures.
measure() {
    records=$("$BIN" run bench/view-lease-workers.json --set "nodes.worker.count=$1" \
        --view "$tmp/$1.html" | sed -n 's/^trace *\([0-9]*\) records.*/\1/p')
    bytes=$(wc -c <"$tmp/$1.html" | tr -d ' ')
    per=$((bytes / records))
    echo "view workers=$1 records=$records page_bytes=$bytes bytes_per_record=$per"
}
measure "$N"
a=$per
measure "$N4"
b=$per
echo "growth_view ratio=$(ratio "$a" "$b") (bytes per trace record, ${N4} workers over ${N}; linear 1.00)"
