# Shared by the bench/ scripts (sourced, not run). Figures are instruction counts (valgrind's
# cachegrind, without cache simulation) or peak RSS: neither moves with the machine's load,
# unlike seconds.

# The splitbrain binary to measure: $SPLITBRAIN, else a quick build (release without LTO,
# the same results), built if missing.
splitbrain_bin() {
    if [ -n "${SPLITBRAIN:-}" ]; then
        echo "$SPLITBRAIN"
        return
    fi
    target=${CARGO_TARGET_DIR:-target}
    if [ ! -x "$target/quick/splitbrain" ]; then
        cargo build --profile quick -p splitbrain-cli >&2
    fi
    echo "$target/quick/splitbrain"
}

# Instructions executed by a command (its output discarded), from cachegrind's `I refs` line.
instructions() {
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$@" \
        2>&1 >/dev/null | sed -n 's/.*I *refs: *//p' | tr -d ,
}

# Peak resident set size of a command in KB (GNU time).
peak_rss_kb() {
    /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -n 1
}

# b / a with two decimals.
ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b / a }'
}
