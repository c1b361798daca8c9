#!/bin/sh
# Memory against seed count: peak RSS of `splitbrain sweep --out` on lesson 12 for S and 10S
# seeds. Flat is a ratio of about 1 (a sweep holds one chunk of runs, not every run). Prints
# one line per seed count and `growth_sweep ratio=R (flat 1.00)`. S is $SWEEP_SEEDS (default
# 10000); $JOBS threads (default 2). Needs GNU time at /usr/bin/time.
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
BIN=$(splitbrain_bin)
S=${SWEEP_SEEDS:-10000}
J=${JOBS:-2}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
a=$(peak_rss_kb "$BIN" sweep scenarios/12-redlock-gc-pause.json --seeds "0..$S" -j "$J" --out "$out/a.jsonl")
b=$(peak_rss_kb "$BIN" sweep scenarios/12-redlock-gc-pause.json --seeds "0..$((S * 10))" -j "$J" --out "$out/b.jsonl")
echo "sweep_12 seeds=$S peak_rss_kb=$a"
echo "sweep_12 seeds=$((S * 10)) peak_rss_kb=$b"
echo "growth_sweep ratio=$(ratio "$a" "$b") (10x the seeds; flat 1.00)"
