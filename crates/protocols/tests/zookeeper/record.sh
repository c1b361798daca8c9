#!/usr/bin/env bash
# Records crates/protocols/tests/zookeeper/zookeeper-3.8.json from a real ZooKeeper: starts a
# standalone server on loopback from a temporary config (tickTime 500 ms), installs kazoo
# into a throwaway virtualenv, runs record.py, stops the server.
# Usage: record.sh OUT.json. Needs Debian's zookeeper (zkServer.sh, java) and python3-venv.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(realpath -m "$1")"
work="$(mktemp -d /tmp/splitbrain-zookeeper.XXXXXX)"
port=21819
# The server dies of the SIGTERM sent here, so `wait` returns 143; under `set -e` that status
# would become the script's own, hence the `|| true`.
cleanup() {
  if [ -n "${zk_pid:-}" ]; then
    kill "$zk_pid" 2>/dev/null || true
    wait "$zk_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/data"
cat >"$work/zoo.cfg" <<CFG
tickTime=500
dataDir=$work/data
clientPort=$port
clientPortAddress=127.0.0.1
admin.enableServer=false
CFG
ZOO_LOG_DIR="$work" /usr/share/zookeeper/bin/zkServer.sh start-foreground "$work/zoo.cfg" \
  >"$work/server.log" 2>&1 &
zk_pid=$!
up=""
for _ in $(seq 1 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && { up=1; break; }
  sleep 0.2
done
if [ -z "$up" ]; then
  echo "record.sh: ZooKeeper did not listen on 127.0.0.1:$port within 20 s; its log:" >&2
  cat "$work/server.log" >&2
  exit 1
fi
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check kazoo==2.10.0
"$work/venv/bin/python" "$here/record.py" "127.0.0.1:$port" 500 "$out"
