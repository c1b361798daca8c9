#!/bin/sh
# Peak RSS of `splitbrain run` (no --trace) on lesson 15 with its end raised to 300 s and to
# 3000 s of simulated time (issue 11, item 4: memory flat in run length). Prints one line per
# duration: `duration=D peak_rss_kb=K`. Needs GNU time at /usr/bin/time and a release build
# (or SPLITBRAIN=path/to/splitbrain).
set -eu
cd "$(dirname "$0")/.."
BIN=${SPLITBRAIN:-${CARGO_TARGET_DIR:-target}/release/splitbrain}
for d in 300s 3000s; do
    kb=$(/usr/bin/time -f %M "$BIN" run scenarios/15-redlock-minority-partition.json \
        --set "duration=$d" 2>&1 >/dev/null | tail -n 1)
    echo "duration=$d peak_rss_kb=$kb"
done
