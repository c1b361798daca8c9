#!/bin/sh
# Work against run length on Redis: instructions of `splitbrain run` on lesson 15 (Redlock, a
# minority partition) for D and 10D of simulated time. Linear work is a ratio of 10 (the goal:
# within 11). Prints one line per duration and `growth_redis ratio=R (linear 10.00)`. D is
# $REDIS_D (default 3000s; 30000 s runs about two minutes under valgrind). Needs valgrind.
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
BIN=$(splitbrain_bin)
D=${REDIS_D:-3000s}
D10=$(echo "$D" | awk '{ n = $0; sub(/[a-z]+$/, "", n); u = substr($0, length(n) + 1); print n * 10 u }')
a=$(instructions "$BIN" run scenarios/15-redlock-minority-partition.json --set "duration=$D")
b=$(instructions "$BIN" run scenarios/15-redlock-minority-partition.json --set "duration=$D10")
echo "redis_15 duration=$D instructions=$a"
echo "redis_15 duration=$D10 instructions=$b"
echo "growth_redis ratio=$(ratio "$a" "$b") (10x the simulated time; linear 10.00)"
