#!/usr/bin/env python3
"""Records the Redis conformance vectors from a live redis-server.

Usage: record.py --out FILE [--shim wallshift.so] [--redis-server PATH] [--only NAME,...]

Every case runs on fresh redis-server processes (one per node of the case), each on its own
loopback port and temporary data directory, with the wallshift.so preload shim so the
recorder can step each server's wall clock (CLOCK_REALTIME / gettimeofday) while its
monotonic clock runs on. Redis 7.0 judges expiry by the wall clock: `keyIsExpired` in
src/db.c compares `mstime()` (or the script's / command's cached snapshot of it) with the
key's absolute deadline, and `mstime()` is `ustime() / 1000`, `ustime()` being
`gettimeofday` (src/server.c).

The cases are defined in cases.py (scripted command sequences) and clients.py (command
sequences captured with MONITOR from redis-py's Lock and pottery's Redlock, then replayed
like a scripted case). The output format is described in README.md beside this file.
"""

import argparse
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import cases as case_defs  # noqa: E402
import clients as client_defs  # noqa: E402

# Commands sent later than this after their planned time make the case be recorded again
# (the machine was busy, or a stop / start took long); after MAX_TRIES the case is written
# with its lateness (`max_late_ms`) and a warning: the replay against the model then judges
# whether it mattered (a late step near a deadline shows as a mismatch, a late PTTL as one
# outside the tolerance). Pseudo-steps may run late: the case's times leave room after them.
MAX_LATE_MS = 20
MAX_TRIES = 6


# ------------------------------------------------------------------------------------------
# A minimal RESP2 client: keeps the reply types (status vs bulk) that redis-py folds away.
# ------------------------------------------------------------------------------------------


class RespError(Exception):
    pass


class Resp:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def send(self, args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            b = a.encode() if isinstance(a, str) else a
            out.append(b"$%d\r\n%s\r\n" % (len(b), b))
        self.sock.sendall(b"".join(out))

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise RespError("connection closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise RespError("connection closed")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def read(self):
        """One reply as (type, value): status/bulk -> str, nil -> None, integer -> int,
        error -> {"error": text}, array -> list of (type, value)."""
        line = self._line()
        kind, rest = line[:1], line[1:].decode()
        if kind == b"+":
            return "status", rest
        if kind == b"-":
            return "error", {"error": rest}
        if kind == b":":
            return "integer", int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return "nil", None
            return "bulk", self._exact(n).decode()
        if kind == b"*":
            n = int(rest)
            if n < 0:
                return "nil", None
            return "array", [self.read() for _ in range(n)]
        raise RespError("unexpected reply line %r" % line)

    def call(self, *args):
        self.send([str(a) for a in args])
        return self.read()


# ------------------------------------------------------------------------------------------
# Servers
# ------------------------------------------------------------------------------------------


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


PERSISTENCE_ARGS = {
    "none": ["--appendonly", "no"],
    "aof_fsync_always": ["--appendonly", "yes", "--appendfsync", "always"],
    "aof_fsync_everysec": ["--appendonly", "yes", "--appendfsync", "everysec"],
}


class Server:
    """One redis-server process with its data directory, port and wall-clock offset file."""

    def __init__(self, opts, name, persistence, replica_of=None):
        self.opts = opts
        self.name = name
        self.persistence = persistence
        self.replica_of = replica_of
        self.dir = tempfile.mkdtemp(prefix="splitbrain-redis-%s-" % name)
        self.port = free_port()
        self.offset_file = os.path.join(self.dir, "wall-offset-ms")
        self.offset_ms = 0
        self.write_offset()
        self.proc = None
        self.conn = None

    def args(self):
        a = [
            self.opts.redis_server,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--daemonize", "no",
            "--dir", self.dir,
            "--save", "",
            # The AOF's base file as commands, not an RDB preamble, so it can be read back.
            "--aof-use-rdb-preamble", "no",
            "--logfile", os.path.join(self.dir, "redis.log"),
        ] + PERSISTENCE_ARGS[self.persistence]
        if self.replica_of is not None:
            a += ["--replicaof", "127.0.0.1", str(self.replica_of.port)]
        return a

    def write_offset(self):
        tmp = self.offset_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(str(self.offset_ms))
        os.replace(tmp, self.offset_file)

    def start(self):
        env = dict(os.environ)
        env["LD_PRELOAD"] = self.opts.shim
        env["WALLSHIFT_FILE"] = self.offset_file
        self.proc = subprocess.Popen(self.args(), env=env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while True:
            try:
                c = Resp(self.port)
                t, v = c.call("PING")
                if t == "status" and v == "PONG":
                    self.conn = c
                    break
                c.close()
            except (OSError, RespError):
                pass
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("redis-server %s did not start; log: %s" %
                                   (self.name, self.log_tail()))
            time.sleep(0.01)
        if self.replica_of is not None:
            self.wait_link_up()

    def info(self, section):
        t, v = self.conn.call("INFO", section)
        return dict(line.split(":", 1) for line in v.splitlines() if ":" in line)

    def wait_link_up(self):
        deadline = time.monotonic() + 10
        while self.info("replication").get("master_link_status") != "up":
            if time.monotonic() > deadline:
                raise RuntimeError("replica %s never linked" % self.name)
            time.sleep(0.01)

    def stop(self, sig):
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        self.proc.send_signal(sig)
        code = self.proc.wait(timeout=10)
        self.proc = None
        return code

    def kill(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None
        if self.conn is not None:
            self.conn.close()

    def log_tail(self):
        try:
            with open(os.path.join(self.dir, "redis.log")) as f:
                return "".join(f.readlines()[-5:])
        except OSError:
            return "(no log)"

    def version(self):
        return self.info("server").get("redis_version")

    def cleanup(self):
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


# ------------------------------------------------------------------------------------------
# The AOF, read back
# ------------------------------------------------------------------------------------------


def parse_resp_commands(data):
    """The command arrays of an AOF file (RESP multibulk requests), as lists of str."""
    cmds, i = [], 0
    while i < len(data):
        if data[i:i + 1] != b"*":
            raise ValueError("AOF: expected '*' at byte %d" % i)
        j = data.index(b"\r\n", i)
        n = int(data[i + 1:j])
        i = j + 2
        args = []
        for _ in range(n):
            j = data.index(b"\r\n", i)
            ln = int(data[i + 1:j])
            i = j + 2
            args.append(data[i:i + ln].decode())
            i += ln + 2
        cmds.append(args)
    return cmds


def read_aof(server):
    """The AOF's commands in order (base then incremental files, as the manifest lists them)."""
    d = os.path.join(server.dir, "appendonlydir")
    manifest = [f for f in os.listdir(d) if f.endswith(".manifest")] if os.path.isdir(d) else []
    if not manifest:
        return []
    files = []
    with open(os.path.join(d, manifest[0])) as f:
        for line in f:
            parts = line.split()
            kv = dict(zip(parts[0::2], parts[1::2]))
            files.append((kv.get("type"), int(kv.get("seq", 0)), kv["file"]))
    order = {"b": 0, "h": 1, "i": 2}
    cmds = []
    for t, seq, name in sorted(files, key=lambda x: (order.get(x[0], 3), x[1])):
        if t == "h":
            continue
        with open(os.path.join(d, name), "rb") as f:
            cmds += parse_resp_commands(f.read())
    return cmds


# Arguments that carry an absolute Unix time in ms, by command (position of the value).
ABS_TIME_ARG = {"PXAT": "after", "PEXPIREAT": 2}


def aof_outcome(server, wall_origin_ms):
    """What the AOF holds: its commands (absolute times shown as '@T', `SELECT` dropped) and
    the keyspace it loads to: {key: {value, deadline_ms}} where deadline_ms is the absolute
    deadline minus the case's wall origin (ms; None = no deadline)."""
    cmds = read_aof(server)
    shown, keys = [], {}
    for c in cmds:
        name = c[0].upper()
        if name == "SELECT":
            continue
        s = list(c)
        if name == "SET":
            value, deadline = c[2], None
            for k in range(3, len(c)):
                if c[k].upper() == "PXAT":
                    deadline = int(c[k + 1]) - wall_origin_ms
                    s[k + 1] = "@T"
            keys[c[1]] = {"value": value, "deadline_ms": deadline}
        elif name == "PEXPIREAT":
            if c[1] in keys:
                keys[c[1]]["deadline_ms"] = int(c[2]) - wall_origin_ms
            s[2] = "@T"
        elif name in ("DEL", "UNLINK"):
            for k in c[1:]:
                keys.pop(k, None)
        elif name in ("MULTI", "EXEC"):
            pass
        else:
            raise ValueError("AOF command not understood by the recorder: %r" % c)
        shown.append(s)
    return {"commands": shown, "keys": keys}


# ------------------------------------------------------------------------------------------
# Running a case
# ------------------------------------------------------------------------------------------


def resolve_sha(arg):
    """`SHA:NAME` -> the SHA1 hex of cases.NAME's script text (`SHA:NAME:UPPER`: upper case)."""
    if not arg.startswith("SHA:"):
        return arg
    parts = arg.split(":")
    sha = hashlib.sha1(getattr(case_defs, parts[1]).encode()).hexdigest()
    return sha.upper() if parts[2:] == ["UPPER"] else sha


def run_case_once(opts, case):
    nodes = case.get("nodes", ["main"])
    replica_of = case.get("replica_of", {})
    servers = {}
    try:
        for n in nodes:
            primary = servers.get(replica_of.get(n)) if n in replica_of else None
            servers[n] = Server(opts, n, case["persistence"], replica_of=primary)
            servers[n].start()
        version = servers[nodes[0]].version()
        t0 = time.monotonic()
        wall_origin_ms = int(time.time() * 1000)
        out_steps, late = [], 0.0
        for step in case["steps"]:
            node = step.get("node", nodes[0])
            srv = servers[node]
            at = step["at_ms"]
            while True:
                now_ms = (time.monotonic() - t0) * 1000
                if now_ms >= at:
                    break
                time.sleep(min(0.05, (at - now_ms) / 1000))
            sent = (time.monotonic() - t0) * 1000
            if not step["command"][0].startswith("__"):
                late = max(late, sent - at)
            cmd = [resolve_sha(a) for a in step["command"]]
            rec = {"at_ms": at}
            if len(nodes) > 1:
                rec["node"] = node
            rec["command"] = cmd
            name = cmd[0]
            if name == "__STOP__":
                code = srv.stop(signal.SIGTERM if cmd[1] == "SIGTERM" else signal.SIGKILL)
                rec.update(reply="STOPPED", reply_type="meta", exit_code=code)
            elif name == "__START__":
                srv.start()
                rec.update(reply="READY", reply_type="meta")
            elif name == "__WALL_CLOCK_JUMP__":
                srv.offset_ms += int(cmd[1])
                srv.write_offset()
                rec.update(reply="JUMPED", reply_type="meta")
            elif name == "__SYNC__":
                primary = servers[replica_of[node]]
                target = int(primary.info("replication")["master_repl_offset"])
                deadline = time.monotonic() + 5
                while int(srv.info("replication").get("slave_repl_offset", -1)) < target:
                    if time.monotonic() > deadline:
                        raise RuntimeError("replica %s did not catch up" % node)
                    time.sleep(0.002)
                rec.update(reply="SYNCED", reply_type="meta")
            elif name == "__AOF__":
                rec.update(reply=aof_outcome(srv, wall_origin_ms), reply_type="aof",
                           timing={"kind": "aof", "tolerance_ms": opts.tolerance_ms})
            else:
                t, v = srv.conn.call(*cmd)
                rec.update(reply=v, reply_type=t)
                if step.get("ttl") and t == "integer":
                    rec["timing"] = {"kind": "ttl", "tolerance_ms": opts.tolerance_ms}
            rec["sent_at_ms"] = round(sent, 2)
            if "exclusion" in step:
                rec["exclusion"] = step["exclusion"]
            out_steps.append(rec)
        return version, out_steps, late
    finally:
        for s in servers.values():
            s.cleanup()


def record_case(opts, case):
    for attempt in range(1, MAX_TRIES + 1):
        version, steps, late = run_case_once(opts, case)
        if late <= MAX_LATE_MS:
            break
        print("  %s: a step was %.1f ms late, again (%d)" % (case["name"], late, attempt),
              file=sys.stderr)
    out = {k: case[k] for k in ("name", "description", "source") if k in case}
    out["persistence"] = case["persistence"]
    out["nodes"] = case.get("nodes", ["main"])
    if case.get("replica_of"):
        out["replica_of"] = case["replica_of"]
    for k in ("library", "library_outcome", "dropped"):
        if k in case:
            out[k] = case[k]
    out["steps"] = steps
    out["max_late_ms"] = round(late, 2)
    return version, out, late <= MAX_LATE_MS


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--shim", default=os.path.join(HERE, "wallshift.so"))
    p.add_argument("--redis-server", default=shutil.which("redis-server") or "redis-server")
    p.add_argument("--only", default="")
    p.add_argument("--tolerance-ms", type=int, default=25)
    opts = p.parse_args()
    opts.shim = os.path.abspath(opts.shim)
    if not os.path.exists(opts.shim):
        sys.exit("no wall-clock shim at %s: build it with "
                 "'cc -O2 -shared -fPIC -o wallshift.so wallshift.c'" % opts.shim)

    all_cases = list(case_defs.CASES)
    # The client-library cases: capture what the libraries send, then replay like a case.
    all_cases += client_defs.capture_all(opts, Server, Resp)
    only = set(filter(None, opts.only.split(",")))
    if only:
        all_cases = [c for c in all_cases if c["name"] in only]

    versions, cases, ok = set(), [], True
    for case in all_cases:
        version, out, on_time = record_case(opts, case)
        versions.add(version)
        ok &= on_time
        cases.append(out)
        print("  %-48s %2d steps" % (case["name"], len(out["steps"])), file=sys.stderr)

    from importlib.metadata import version as package_version
    doc = {
        "format": 1,
        "recorded_with": {
            "redis_version": sorted(versions),
            "redis_py": package_version("redis"),
            "pottery": package_version("pottery"),
        },
        "exclusions": case_defs.EXCLUSIONS,
        "cases": cases,
    }
    with open(opts.out, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=False)
        f.write("\n")
    steps = sum(len(c["steps"]) for c in cases)
    print("recorded %d cases, %d steps -> %s" % (len(cases), steps, opts.out), file=sys.stderr)
    if not ok:
        print("warning: some case had a command sent more than %d ms late on every try "
              "(see max_late_ms)" % MAX_LATE_MS, file=sys.stderr)


if __name__ == "__main__":
    main()
