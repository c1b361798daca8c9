#!/bin/sh
# Work against run length on Raft: instructions of `splitbrain run` on lesson 21a (three Raft
# replicas, two workers taking turns on a lock) for D and 4D of simulated time. Linear work is
# a ratio of 4; a Raft append that copied the whole log made it grow with the square of the
# log. Prints `raft_21a D=... instructions=...` per duration and `growth_raft ratio=R (linear
# 4.00)`. D is $RAFT_D (default 150s). Needs valgrind.
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
BIN=$(splitbrain_bin)
D=${RAFT_D:-150s}
D4=$(echo "$D" | awk '{ n = $0; sub(/[a-z]+$/, "", n); u = substr($0, length(n) + 1); print n * 4 u }')
a=$(instructions "$BIN" run scenarios/21a-raft-crashes.json --set "duration=$D")
b=$(instructions "$BIN" run scenarios/21a-raft-crashes.json --set "duration=$D4")
echo "raft_21a duration=$D instructions=$a"
echo "raft_21a duration=$D4 instructions=$b"
echo "growth_raft ratio=$(ratio "$a" "$b") (4x the simulated time; linear 4.00)"
