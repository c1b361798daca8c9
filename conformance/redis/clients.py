"""The client-library cases: what redis-py's `Lock` and pottery's `Redlock` actually send.

Each capture runs the real library against fresh redis-servers and records, with MONITOR on
a separate connection, every command the servers run, with its server timestamp. The
captured sequence (commands and their times relative to the capture's start) then becomes an
ordinary case: record.py replays it into fresh servers, and the model replays it too.

The lock tokens (random per run) are renamed token-1, token-2, ... in order of first use.
Left out of the replayed sequence, and listed in the case's `dropped`: commands run by
scripts (MONITOR's `lua` lines: the script's own effect is what the model reproduces) and
the connection handshake (`CLIENT ...`, `HELLO`), which is not keyspace behaviour. A
command the server refuses before running it (redis-py's `CLIENT SETINFO`, unknown to
Redis 7.0) never reaches MONITOR.
"""

import re
from importlib.metadata import version
import threading
import time

import redis
from redis.exceptions import LockNotOwnedError
from pottery import Redlock

HANDSHAKE = {"CLIENT", "HELLO"}

_ARG = re.compile(r'"((?:[^"\\]|\\.)*)"')
_ESC = {"n": "\n", "r": "\r", "t": "\t", "a": "\a", "b": "\b", "\\": "\\", '"': '"'}


def _unescape(s):
    """Inverts Redis's sdscatrepr (the quoting of MONITOR lines)."""
    out, i = [], 0
    while i < len(s):
        ch = s[i]
        if ch == "\\" and i + 1 < len(s):
            nxt = s[i + 1]
            if nxt == "x":
                out.append(chr(int(s[i + 2:i + 4], 16)))
                i += 4
                continue
            out.append(_ESC.get(nxt, nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def parse_monitor_line(line):
    """`1796188865.682643 [0 127.0.0.1:49380] "EVAL" "..."` -> (ts, source, args)."""
    head, _, rest = line.partition("] ")
    ts, _, where = head.partition(" [")
    source = where.split(" ", 1)[1] if " " in where else where
    return float(ts), source, [_unescape(m) for m in _ARG.findall(rest)]


class Monitor(threading.Thread):
    def __init__(self, resp_class, port):
        super().__init__(daemon=True)
        self.conn = resp_class(port)
        self.conn.sock.settimeout(None)
        self.conn.send(["MONITOR"])
        assert self.conn.read() == ("status", "OK")
        self.lines = []
        self.start()

    def run(self):
        try:
            while True:
                t, v = self.conn.read()
                if t == "status":
                    self.lines.append(v)
        except Exception:
            pass

    def stop(self):
        time.sleep(0.05)
        self.conn.close()
        self.join(timeout=2)


def capture(opts, server_class, resp_class, name, description, nodes, body, ttl_shas=()):
    servers = {}
    try:
        for n in nodes:
            servers[n] = server_class(opts, n, "none")
            servers[n].start()
        monitors = {n: Monitor(resp_class, servers[n].port) for n in nodes}
        clients = {n: redis.Redis(port=servers[n].port, protocol=2) for n in nodes}
        t0 = time.time()
        outcome = body(clients)
        for c in clients.values():
            c.close()
        for m in monitors.values():
            m.stop()
    finally:
        for s in servers.values():
            s.cleanup()
    steps, dropped = [], []
    for order, n in enumerate(nodes):
        for seq, line in enumerate(monitors[n].lines):
            ts, source, args = parse_monitor_line(line)
            if source == "lua":
                continue
            if args and args[0].upper() in HANDSHAKE:
                if " ".join(args) not in dropped:
                    dropped.append(" ".join(args))
                continue
            at = max(0, int(round((ts - t0) * 1000)))
            step = {"at_ms": at, "command": args}
            if len(nodes) > 1:
                step["node"] = n
            name_u = args[0].upper()
            if name_u == "PTTL" or (name_u in ("EVALSHA", "EVAL") and len(args) > 1
                                    and args[1] in ttl_shas):
                step["ttl"] = True
            steps.append((at, order, seq, step))
    steps.sort(key=lambda x: x[:3])
    # The lock tokens are random per run (uuids): name them token-1, token-2, ... in order of
    # first use, so that two recordings of the same capture compare equal.
    tokens = {}
    for *_, st in steps:
        a = st["command"]
        if a[0].upper() == "SET" and len(a) > 2 and a[2] not in tokens and a[2] != "rival":
            tokens[a[2]] = "token-%d" % (len(tokens) + 1)
    for *_, st in steps:
        st["command"] = [tokens.get(x, x) for x in st["command"]]
    case = {
        "name": name,
        "description": description,
        "source": "captured",
        "persistence": "none",
        "nodes": nodes,
        "library": {"redis-py": version("redis")},
        "library_outcome": outcome,
        "steps": [s for *_, s in steps],
    }
    if dropped:
        case["dropped"] = dropped
    return case


def redis_py_lock(clients):
    r = clients["main"]
    out = []
    lock = r.lock("lock:p", timeout=1.0)
    out.append("acquire: %s" % lock.acquire(blocking=False))
    other = r.lock("lock:p", timeout=1.0)
    out.append("second client acquire: %s" % other.acquire(blocking=False))
    out.append("locked: %s, owned: %s" % (lock.locked(), lock.owned()))
    time.sleep(0.1)
    out.append("extend +0.5 s: %s" % lock.extend(0.5))
    time.sleep(0.1)
    out.append("extend to 2 s: %s" % lock.extend(2, replace_ttl=True))
    time.sleep(0.1)
    out.append("reacquire: %s" % lock.reacquire())
    lock.release()
    out.append("released; locked: %s" % lock.locked())
    return out


def redis_py_lock_expired(clients):
    r = clients["main"]
    out = []
    a = r.lock("lock:q", timeout=0.2)
    out.append("a acquire (0.2 s): %s" % a.acquire(blocking=False))
    b = r.lock("lock:q", timeout=1.0, sleep=0.05)
    out.append("b acquire (waits 0.12 s): %s" % b.acquire(blocking_timeout=0.12))
    time.sleep(0.3)
    out.append("b acquire after a's TTL: %s" % b.acquire(blocking=False))
    try:
        a.extend(1)
        out.append("a extend: ok")
    except LockNotOwnedError:
        out.append("a extend: LockNotOwnedError")
    try:
        a.release()
        out.append("a release: ok")
    except LockNotOwnedError:
        out.append("a release: LockNotOwnedError")
    b.release()
    out.append("b released")
    return out


def pottery_redlock(clients):
    masters = {clients[n] for n in ("a", "b", "c")}
    out = []
    lock = Redlock(key="lock:r", masters=masters, auto_release_time=1.0)
    out.append("acquire: %s" % lock.acquire(blocking=False))
    time.sleep(0.1)
    out.append("locked (ms left > 0): %s" % (lock.locked() > 0))
    lock.extend()
    out.append("extended")
    time.sleep(0.1)
    lock.release()
    out.append("released; locked: %s" % lock.locked())
    return out


def pottery_redlock_minority(clients):
    for n in ("b", "c"):
        clients[n].set("redlock:lock:s", "rival", px=2000, nx=True)
    masters = {clients[n] for n in ("a", "b", "c")}
    lock = Redlock(key="lock:s", masters=masters, auto_release_time=1.0)
    return ["acquire with 2 of 3 masters held by a rival: %s" % lock.acquire(blocking=False),
            "rival still holds b: %s" % clients["b"].get("redlock:lock:s")]


def capture_all(opts, server_class, resp_class):
    """The four client cases, captured on servers made by `server_class` (record.Server),
    monitored through `resp_class` (record.Resp)."""
    import hashlib
    acquired = hashlib.sha1(_pottery_script("_acquired_script").encode()).hexdigest()
    cases = [
        capture(opts, server_class, resp_class, "client_redis_py_lock",
                "redis-py Lock: acquire, a second client refused, locked/owned, extend (added "
                "and replacing), reacquire, release.",
                ["main"], redis_py_lock),
        capture(opts, server_class, resp_class, "client_redis_py_lock_expired",
                "redis-py Lock: a blocking acquire retries while the lock is held; the first "
                "holder's TTL passes, another client takes the lock, and the first holder's "
                "extend and release are refused.",
                ["main"], redis_py_lock_expired),
        capture(opts, server_class, resp_class, "client_pottery_redlock",
                "pottery Redlock over 3 masters: acquire, locked (the remaining-TTL script), "
                "extend, release.",
                ["a", "b", "c"], pottery_redlock, ttl_shas=(acquired,)),
        capture(opts, server_class, resp_class, "client_pottery_redlock_minority",
                "pottery Redlock over 3 masters where a rival holds 2: the acquire fails and "
                "pottery releases what it took.",
                ["a", "b", "c"], pottery_redlock_minority, ttl_shas=(acquired,)),
    ]
    for c in cases:
        c["library"]["pottery"] = version("pottery")
    return cases


def _pottery_script(attr):
    """The text of one of pottery's Redlock scripts, as it sends it."""
    r = redis.Redis(port=1)  # never connected: register_script only hashes the text
    lock = Redlock(key="x", masters={r}, auto_release_time=1.0)
    return getattr(type(lock), attr).script
