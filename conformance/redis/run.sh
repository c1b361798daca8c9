#!/usr/bin/env bash
# Re-records the Redis conformance vectors from a live redis-server into a temporary file,
# replays that fresh recording against the model (the protocols crate's redis_conformance
# test, pointed at it by SPLITBRAIN_REDIS_VECTORS), and compares its time-independent fields
# with the committed vectors.json (compare.py). Exit non-zero if the model misses a recorded
# outcome or the recording drifted from the committed one.
#
# Needs redis-server (Debian's 7.0.x), a C compiler and python3 with venv; the Python
# packages come from requirements.txt into a throwaway virtualenv.
# --update: also copy the fresh recording over vectors.json (then review and commit it).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
work="$(mktemp -d /tmp/splitbrain-redis-conformance.XXXXXX)"
trap 'rm -rf "$work"' EXIT

cc -O2 -shared -fPIC -o "$work/wallshift.so" "$here/wallshift.c"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"
"$work/venv/bin/python" "$here/record.py" --shim "$work/wallshift.so" --out "$work/vectors.json"
(cd "$repo" && SPLITBRAIN_REDIS_VECTORS="$work/vectors.json" \
  cargo test -q -p splitbrain-protocols --test redis_conformance -- --nocapture)
if [ "${1:-}" = "--update" ]; then
  cp "$work/vectors.json" "$here/vectors.json"
  echo "updated $here/vectors.json"
fi
python3 "$here/compare.py" "$here/vectors.json" "$work/vectors.json"
