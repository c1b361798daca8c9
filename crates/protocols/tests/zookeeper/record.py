#!/usr/bin/env python3
"""Records what a real ZooKeeper server answers to a scripted API sequence, and the calls
kazoo's Lock recipe makes, for the zookeeper_conformance test to replay against the model.

Usage: record.py HOST:PORT TICK_MS OUT.json   (record.sh starts the server and runs this)

Needs kazoo (record.sh installs it into a throwaway virtualenv). The server must be fresh
(no /zk, no /lock) with the tickTime given. What is recorded:
- "negotiation": requested session timeouts and what the server negotiated (ms).
- "steps": each API call of sessions "a", "b", "c" in order, with its result (created path,
  error code, stat fields), the zxid the reply header carried, and the watch events each
  session received after the call ("events": [session, type, path]). Zxids are relative to
  the header zxid of session a's first read, so that the recording does not depend on the
  server's epoch.
- "lock_calls": the client API calls kazoo's Lock made in each phase (acquire with no
  contender, a contended acquire and the release that lets it through, a second acquire with
  the same Lock object), with the contender's GUID written {guid} and sequence numbers {seq}.

Session c is a child process that is frozen with SIGSTOP (a GC pause) until the server has
expired it; on SIGCONT it reports the connection states it went through: kazoo learns of
the expiry only when it reconnects (SUSPENDED, then LOST).
"""

import json
import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException
from kazoo.protocol.states import KazooState

HOSTS, TICK_MS, OUT = sys.argv[1], int(sys.argv[2]), sys.argv[3]
SETTLE = 0.3  # seconds to let watch events arrive after a call


def child():
    """Session c: create an ephemeral sequential node, print it, wait to be frozen, then
    report the states seen after the thaw."""
    states = []
    zk = KazooClient(hosts=HOSTS, timeout=float(sys.argv[5]))
    zk.add_listener(lambda s: states.append(str(s)))
    zk.start()
    path = zk.create("/zk/c-", ephemeral=True, sequence=True)
    print(json.dumps({"path": path}), flush=True)
    sys.stdin.readline()  # the parent freezes us here, then thaws and writes a line
    deadline = time.time() + 15
    while "LOST" not in states and time.time() < deadline:
        time.sleep(0.05)
    print(json.dumps({"states": states}), flush=True)
    try:
        zk.stop()
        zk.close()
    except KazooException:
        pass


if len(sys.argv) > 4 and sys.argv[4] == "--child":
    child()
    sys.exit(0)

base = None
steps = []
events = {"a": [], "b": [], "c": []}


def watcher(session):
    def w(ev):
        events[session].append([session, ev.type, ev.path])

    return w


def stat_of(st):
    if st is None:
        return None
    return {
        "czxid": st.czxid - base,
        "mzxid": st.mzxid - base,
        "pzxid": st.pzxid - base,
        "version": st.version,
        "cversion": st.cversion,
        "ephemeral_owner": st.ephemeralOwner != 0,
        "num_children": st.numChildren,
    }


def step(session, zk, call, path, fn, **args):
    for v in events.values():
        v.clear()
    try:
        result = fn()
    except KazooException as e:
        result = {"error": type(e).__name__}
    time.sleep(SETTLE)
    fired = sorted(e for v in events.values() for e in v)
    steps.append(
        {
            "session": session,
            "call": call,
            "path": path,
            **args,
            "result": result,
            "zxid": zk.last_zxid - base,
            "events": fired,
        }
    )
    return result


class Negotiated(logging.Handler):
    """kazoo logs the ConnectResponse's timeout (connection.py `_connect`)."""

    seen = []

    def emit(self, record):
        if "negotiated session timeout" in str(record.msg):
            Negotiated.seen.append(int(record.args[2]))


log = logging.getLogger("kazoo")
log.setLevel(5)
log.addHandler(Negotiated())


def negotiated(requested_ms):
    Negotiated.seen.clear()
    zk = KazooClient(hosts=HOSTS, timeout=requested_ms / 1000)
    zk.start()
    zk.exists("/")
    zk.stop()
    zk.close()
    return {"requested_ms": requested_ms, "negotiated_ms": Negotiated.seen[0]}


negotiation = [negotiated(ms) for ms in (100, 3000, 60000)]

def txn_counter():
    """The server's last committed zxid's counter, read through session a: a read's reply
    header carries the server's last processed zxid."""
    a.exists("/")
    return a.last_zxid & 0xFFFFFFFF


def await_quiet(seconds):
    """Reads until the server's zxid counter has not moved for `seconds` (at most 60 s)."""
    deadline = time.time() + 60
    last, since = txn_counter(), time.time()
    while time.time() - since < seconds:
        if time.time() > deadline:
            sys.exit("record.py: the server kept committing transactions for 60 s")
        time.sleep(0.1)
        now = txn_counter()
        if now != last:
            last, since = now, time.time()


def await_txns(target, what):
    """Reads until the server's zxid counter reaches `target`, so that a closeSession is
    committed before the next recorded step whatever the machine's load."""
    deadline = time.time() + 30
    while txn_counter() < target:
        if time.time() > deadline:
            sys.exit(f"record.py: the server's zxid counter never reached {target} ({what})")
        time.sleep(0.05)


a = KazooClient(hosts=HOSTS, timeout=4.0)
a.start()
# kazoo's connect attempt times out after a share of the requested session timeout, so under
# load the 100 ms client can connect twice (the server's transaction log showed two
# createSession 1000 for it): the first session is orphaned and the server commits its
# closeSession when it expires, up to 1 s + 2 ticks later, in the middle of the steps. Wait
# until no commit has come for longer than the 3,000 ms session's expiry would take.
await_quiet(3.0 + 2 * TICK_MS / 1000)
base = a.last_zxid

wa, wb = watcher("a"), watcher("b")


def created(r):
    path, st = r
    return {"path": path, "stat": stat_of(st)}


step("a", a, "create", "/zk", lambda: created(a.create("/zk", include_data=True)))
step("a", a, "create", "/zk", lambda: created(a.create("/zk", include_data=True)))
step(
    "a",
    a,
    "create",
    "/zk/n-",
    lambda: created(a.create("/zk/n-", ephemeral=True, sequence=True, include_data=True)),
    ephemeral=True,
    sequence=True,
)
b = KazooClient(hosts=HOSTS, timeout=4.0)
b.start()
steps.append({"session": "b", "call": "connect", "path": "", "result": None, "zxid": None, "events": []})
step("b", b, "get_children", "/zk", lambda: {"children": sorted(b.get_children("/zk", watch=wb))}, watch=True)
step("b", b, "get", "/zk/n-0000000000", lambda: {"stat": stat_of(b.get("/zk/n-0000000000", watch=wb)[1])}, watch=True)
step("b", b, "exists", "/zk/x", lambda: {"stat": stat_of(b.exists("/zk/x", watch=wb))}, watch=True)
step("a", a, "create", "/zk/x", lambda: created(a.create("/zk/x", include_data=True)))
step("a", a, "delete", "/zk/n-0000000000", lambda: a.delete("/zk/n-0000000000") and None)
n2 = step(
    "a",
    a,
    "create",
    "/zk/n-",
    lambda: created(a.create("/zk/n-", ephemeral=True, sequence=True, include_data=True)),
    ephemeral=True,
    sequence=True,
)["path"]
step("a", a, "delete", "/zk/x", lambda: a.delete("/zk/x", version=5) and None, version=5)
step("a", a, "delete", "/zk", lambda: a.delete("/zk") and None)
step("a", a, "create", n2 + "/y", lambda: created(a.create(n2 + "/y", include_data=True)))
step("a", a, "exists", "/zk", lambda: {"stat": stat_of(a.exists("/zk"))})
step("b", b, "get", n2, lambda: {"stat": stat_of(b.get(n2, watch=wb)[1])}, watch=True)
step("a", a, "create", "/zk/b", lambda: created(a.create("/zk/b", include_data=True)))

# Session c (a child process, the smallest timeout: 2 ticks) is frozen until the server has
# expired it; a's watch on c's node fires NodeDeleted, and c's closeSession took a zxid.
c_timeout = 2 * TICK_MS / 1000
proc = subprocess.Popen(
    [sys.executable, __file__, HOSTS, str(TICK_MS), OUT, "--child", str(c_timeout)],
    stdin=subprocess.PIPE,
    stdout=subprocess.PIPE,
    text=True,
)
c_path = json.loads(proc.stdout.readline())["path"]
steps.append({"session": "c", "call": "connect", "path": "", "result": None, "zxid": None, "events": []})
steps.append(
    {
        "session": "c",
        "call": "create",
        "path": "/zk/c-",
        "ephemeral": True,
        "sequence": True,
        "result": {"path": c_path},
        "zxid": None,
        "events": [],
    }
)
step("a", a, "get", c_path, lambda: {"stat": stat_of(a.get(c_path, watch=wa)[1])}, watch=True)
os.kill(proc.pid, signal.SIGSTOP)
for v in events.values():
    v.clear()
t0 = time.time()
while not events["a"] and time.time() - t0 < 10:
    time.sleep(0.05)
time.sleep(SETTLE)
steps.append(
    {
        "session": "c",
        "call": "expire",
        "path": "",
        "result": None,
        "zxid": None,
        "events": sorted(events["a"]),
    }
)
step("a", a, "exists", "/zk", lambda: {"stat": stat_of(a.exists("/zk"))})
os.kill(proc.pid, signal.SIGCONT)
proc.stdin.write("go\n")
proc.stdin.flush()
c_states = json.loads(proc.stdout.readline())["states"]
proc.wait(timeout=20)

# Session b closes: its watch on n2 is gone with it, nothing fires when a deletes n2.
before_close = txn_counter()
b.stop()
b.close()
await_txns(before_close + 1, "session b's closeSession")
steps.append({"session": "b", "call": "close", "path": "", "result": None, "zxid": None, "events": []})
step("a", a, "delete", n2, lambda: a.delete(n2) and None)
step("a", a, "exists", "/zk", lambda: {"stat": stat_of(a.exists("/zk"))})

# kazoo's Lock: the calls it makes on the client.
calls = []
phase = ["none"]
WRAPPED = ("ensure_path", "create", "get_children", "get", "exists", "delete")


def wrap(zk, who):
    for name in WRAPPED:
        real = getattr(zk, name)

        def rec(*args, _real=real, _name=name, **kw):
            calls.append([phase[0], who, _name, args[0]])
            return _real(*args, **kw)

        setattr(zk, name, rec)


la = KazooClient(hosts=HOSTS, timeout=4.0)
lb = KazooClient(hosts=HOSTS, timeout=4.0)
la.start()
lb.start()
wrap(la, "a")
wrap(lb, "b")
lock_a = la.Lock("/lock", "a")
lock_b = lb.Lock("/lock", "b")
phase[0] = "acquire"
lock_a.acquire()
phase[0] = "contended_acquire"
got = threading.Event()
t = threading.Thread(target=lambda: (lock_b.acquire(), got.set()))
t.start()
time.sleep(1.0)
phase[0] = "release"
lock_a.release()
got.wait(10)
t.join()
phase[0] = "release_b"
lock_b.release()
phase[0] = "reacquire"
lock_a.acquire()
lock_a.release()
la.stop()
lb.stop()
guids = {"a": lock_a.prefix[:32], "b": lock_b.prefix[:32]}


def norm(who, path):
    for g in guids.values():
        path = path.replace(g, "{guid}")
    return re.sub(r"\d{10}$", "{seq}", path)


lock_calls = [[p, who, name, norm(who, path)] for p, who, name, path in calls]

a.stop()
a.close()

with open(OUT, "w") as f:
    json.dump(
        {
            "server": "zookeeper 3.8 (Debian zookeeper), kazoo 2.10.0",
            "tick_ms": TICK_MS,
            "negotiation": negotiation,
            "steps": steps,
            "c_states_after_thaw": c_states,
            "lock_calls": lock_calls,
        },
        f,
        indent=1,
        sort_keys=True,
    )
    f.write("\n")
