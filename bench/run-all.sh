#!/bin/sh
# Runs every benchmark of bench/ and prints its figures, then the ratios on their own:
# - growth_raft, growth_redis: instruction counts (valgrind) for a longer run against a
#   shorter one (work against run length);
# - growth_sweep, rss_run_length: peak RSS against seed count and run length;
# - W1 and W2 (bench/WORKLOADS.md): events/s of the examples in paired runs, W1 then W2,
#   $PAIRS times (default 3), each figure the median; the W2/W1 ratio is the median of the
#   pairs' ratios, so a change of the machine's load between pairs does not move it;
# - W3 (1,000 bully nodes, checkers on): its own w3_to_w1 (W1 run just before and after it),
#   the median of $PAIRS runs.
# Needs valgrind and GNU time. Builds with the quick profile (release without LTO) unless
# $SPLITBRAIN names a binary. Takes several minutes (growth_redis is the longest).
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
BIN=$(splitbrain_bin)
export SPLITBRAIN="$BIN"
log=$(mktemp)
trap 'rm -f "$log"' EXIT

echo "== growth: Raft run length (instructions)"
sh bench/growth-raft.sh | tee -a "$log"
echo "== growth: Redis run length (instructions)"
sh bench/growth-redis.sh | tee -a "$log"
echo "== growth: sweep seed count (peak RSS)"
sh bench/growth-sweep.sh | tee -a "$log"
echo "== lesson 15 peak RSS, 300 s and 3000 s"
sh bench/rss-run-length.sh | tee -a "$log"

echo "== W1 and W2, paired runs (events/s)"
cargo build --profile quick -p splitbrain-engine --example w1_timer_churn >&2
cargo build --profile quick -p splitbrain-protocols --example w2_bully_storm >&2
target=${CARGO_TARGET_DIR:-target}
rate() { "$@" | tail -n 1 | sed -n 's/.*events_per_s=\([0-9.]*\).*/\1/p'; }
w1s="" w2s="" rs=""
i=0
while [ "$i" -lt "${PAIRS:-3}" ]; do
    w1=$(rate "$target/quick/examples/w1_timer_churn")
    w2=$(rate "$target/quick/examples/w2_bully_storm")
    echo "pair $i w1_events_per_s=$w1 w2_events_per_s=$w2"
    w1s="$w1s $w1" w2s="$w2s $w2" rs="$rs $(ratio "$w1" "$w2")"
    i=$((i + 1))
done
median() { echo "$@" | tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "w1 events_per_s median=$(median $w1s)" | tee -a "$log"
echo "w2 events_per_s median=$(median $w2s)" | tee -a "$log"
echo "w2_to_w1 ratio=$(median $rs) (median of the pairs)" | tee -a "$log"

echo "== W3 against W1 in the same run (each run's w3_to_w1; the median of \$PAIRS runs)"
cargo build --profile quick -p splitbrain-scenario --example w3_bully_1000 >&2
w3s=""
i=0
while [ "$i" -lt "${PAIRS:-3}" ]; do
    w3=$("$target/quick/examples/w3_bully_1000" | sed -n 's/.*w3_to_w1=\([0-9.]*\).*/\1/p')
    echo "run $i w3_to_w1=$w3"
    w3s="$w3s $w3"
    i=$((i + 1))
done
echo "w3_to_w1 ratio=$(median $w3s) (median of the runs)" | tee -a "$log"

echo
echo "== ratios"
grep -E 'ratio=|peak_rss_kb=' "$log"
