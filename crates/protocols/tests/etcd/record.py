#!/usr/bin/env python3
"""Records what a real etcd answers to the operations splitbrain's etcd model implements.

Starts `etcd` (3.4, Debian's `etcd-server`) with a fresh data directory on loopback ports,
drives it through its gRPC JSON gateway (`/v3/...`, etcd 3.4's HTTP API; stdlib only), and
writes one JSON document: every step's request and the fields of the answer the model must
reproduce (header revision, txn success, keys with create/mod revisions and lease, deleted
counts, errors, watch events). Lease ids are replaced by names ("A", "B", ...) and keys by
`m/{A}` patterns, so the recording does not depend on the ids etcd draws.

Usage: record.py OUT.json [--etcd PATH]. Exit 0 on success; the server is stopped either way.
"""

import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request


def b64(s):
    return base64.b64encode(s.encode()).decode()


def unb64(s):
    return base64.b64decode(s).decode()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Etcd:
    def __init__(self, binary):
        self.dir = tempfile.mkdtemp(prefix="splitbrain-etcd-")
        self.port = free_port()
        peer = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [
                binary,
                "--name", "s1",
                "--data-dir", os.path.join(self.dir, "data"),
                "--listen-client-urls", self.url,
                "--advertise-client-urls", self.url,
                "--listen-peer-urls", f"http://127.0.0.1:{peer}",
                "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
                "--initial-cluster", f"s1=http://127.0.0.1:{peer}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(self.dir, "etcd.log"), "w"),
        )
        for _ in range(100):
            try:
                self.call("/v3/maintenance/status", {})
                return
            except Exception:
                time.sleep(0.1)
        self.stop()
        raise SystemExit("etcd did not start")

    def call(self, path, body, timeout=5):
        req = urllib.request.Request(
            self.url + path, data=json.dumps(body).encode(), method="POST",
            headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return json.loads(r.read().decode().splitlines()[0])
        except urllib.error.HTTPError as e:
            return json.loads(e.read().decode())

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


class Recorder:
    def __init__(self, etcd):
        self.etcd = etcd
        self.names = {}  # lease id (str) -> name
        self.steps = []

    def lease_name(self, lease_id):
        if lease_id in (None, "0", 0):
            return None
        return self.names.get(str(lease_id), "?")

    def key(self, k):
        """`m/<hex id>` -> `m/{A}`."""
        for lid, name in self.names.items():
            h = format(int(lid), "x")
            if k.endswith("/" + h):
                return k[: -len(h)] + "{" + name + "}"
        return k

    def real_key(self, pattern):
        for lid, name in self.names.items():
            pattern = pattern.replace("{" + name + "}", format(int(lid), "x"))
        return pattern

    def kvs(self, kvs):
        return [
            {
                "key": self.key(unb64(kv["key"])),
                "create_revision": int(kv["create_revision"]),
                "mod_revision": int(kv["mod_revision"]),
                "lease": self.lease_name(kv.get("lease")),
            }
            for kv in kvs or []
        ]

    def rev(self, resp):
        return int(resp["header"]["revision"])

    def add(self, op, args, answer):
        self.steps.append({"op": op, **args, "answer": answer})

    # ---- operations ----
    def grant(self, name, ttl):
        r = self.etcd.call("/v3/lease/grant", {"TTL": ttl})
        self.names[r["ID"]] = name
        self.add("lease_grant", {"lease": name, "ttl_s": ttl},
                 {"revision": self.rev(r), "ttl_s": int(r["TTL"])})

    def mutex_txn(self, lease, prefix):
        """Mutex.tryAcquire's txn (client/v3/concurrency/mutex.go)."""
        key = self.real_key(prefix + "{" + lease + "}")
        lid = next((i for i, n in self.names.items() if n == lease), "999999")
        owner = {"request_range": {"key": b64(prefix), "range_end": b64(prefix[:-1] + chr(ord(prefix[-1]) + 1)),
                                   "sort_order": "ASCEND", "sort_target": "CREATE", "limit": 1}}
        r = self.etcd.call("/v3/kv/txn", {
            "compare": [{"key": b64(key), "target": "CREATE", "result": "EQUAL", "create_revision": 0}],
            "success": [{"request_put": {"key": b64(key), "value": "", "lease": lid}}, owner],
            "failure": [{"request_range": {"key": b64(key)}}, owner],
        })
        args = {"lease": lease, "prefix": prefix}
        if "error" in r or "header" not in r:
            self.add("mutex_txn", args, {"error": r.get("error") or r.get("message")})
            return
        resps = r.get("responses", [])
        succeeded = bool(r.get("succeeded", False))
        mine = self.kvs(resps[0].get("response_range", {}).get("kvs")) if not succeeded else []
        owner_kvs = self.kvs(resps[1].get("response_range", {}).get("kvs"))
        self.add("mutex_txn", args, {
            "revision": self.rev(r), "succeeded": succeeded,
            "existing": mine[0] if mine else None,
            "owner": owner_kvs[0] if owner_kvs else None,
        })

    def range_last_below(self, prefix, max_create):
        """waitDeletes' Get(pfx, WithLastCreate(), WithMaxCreateRev(rev))."""
        r = self.etcd.call("/v3/kv/range", {
            "key": b64(prefix), "range_end": b64(prefix[:-1] + chr(ord(prefix[-1]) + 1)),
            "sort_order": "DESCEND", "sort_target": "CREATE", "limit": 1,
            "max_create_revision": max_create})
        self.add("range_last_below", {"prefix": prefix, "max_create_revision": max_create},
                 {"revision": self.rev(r), "kvs": self.kvs(r.get("kvs"))})

    def get(self, pattern):
        r = self.etcd.call("/v3/kv/range", {"key": b64(self.real_key(pattern))})
        self.add("get", {"key": pattern}, {"revision": self.rev(r), "kvs": self.kvs(r.get("kvs"))})

    def delete(self, pattern):
        r = self.etcd.call("/v3/kv/deleterange", {"key": b64(self.real_key(pattern))})
        self.add("delete", {"key": pattern},
                 {"revision": self.rev(r), "deleted": int(r.get("deleted", 0))})

    def keepalive(self, lease):
        lid = next(i for i, n in self.names.items() if n == lease)
        r = self.etcd.call("/v3/lease/keepalive", {"ID": lid})
        res = r.get("result", r)
        self.add("keepalive", {"lease": lease}, {"ttl_s": int(res.get("TTL", 0))})

    def revoke(self, lease):
        lid = next(i for i, n in self.names.items() if n == lease)
        r = self.etcd.call("/v3/lease/revoke", {"ID": lid})
        if "header" in r:
            self.add("lease_revoke", {"lease": lease}, {"revision": self.rev(r)})
        else:
            self.add("lease_revoke", {"lease": lease}, {"error": r.get("error") or r.get("message")})

    def wait_expiry(self, lease, pattern, ttl):
        """Waits past `lease`'s TTL until the server's expiry has deleted the key `pattern`,
        then records the revision."""
        key = b64(self.real_key(pattern))
        deadline = time.time() + ttl + 10
        while time.time() < deadline:
            r = self.etcd.call("/v3/kv/range", {"key": key})
            if not r.get("kvs"):
                break
            time.sleep(0.2)
        else:
            raise SystemExit(f"lease {lease} did not expire")
        self.add("expire", {"lease": lease}, {"revision": self.rev(r)})

    def watch_delete_then(self, pattern, from_rev, action, wait=15):
        """waitDelete: Watch(key, WithRev(rev)); runs `action`, records the first event."""
        key = self.real_key(pattern)
        events = []

        def run():
            req = urllib.request.Request(
                self.etcd.url + "/v3/watch",
                data=json.dumps({"create_request": {"key": b64(key), "start_revision": from_rev}}).encode(),
                method="POST", headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=30) as r:
                for line in r:
                    msg = json.loads(line.decode())
                    for ev in msg.get("result", {}).get("events") or []:
                        events.append(ev)
                        if ev.get("type") == "DELETE":
                            return

        t = threading.Thread(target=run, daemon=True)
        t.start()
        time.sleep(0.5)
        action()
        t.join(wait)
        events = list(events)
        # waitDelete skips every event before the DELETE (key.go); all of them are recorded.
        self.add("watch_delete", {"key": pattern, "start_revision": from_rev}, {
            "events": [{
                "type": ev.get("type", "PUT"),
                "key": self.key(unb64(ev["kv"]["key"])),
                "mod_revision": int(ev["kv"]["mod_revision"]),
            } for ev in events]})


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    out = sys.argv[1]
    binary = sys.argv[sys.argv.index("--etcd") + 1] if "--etcd" in sys.argv else "etcd"
    version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    etcd = Etcd(binary)
    try:
        rec = Recorder(etcd)
        p = "m/"
        rec.grant("A", 60)
        rec.grant("B", 3)
        rec.grant("C", 60)
        rec.mutex_txn("A", p)           # A's key: the first, so A holds
        rec.mutex_txn("B", p)           # B waits
        rec.mutex_txn("C", p)           # C waits
        rec.mutex_txn("A", p)           # a retry: the Else branch, same create revision
        rec.mutex_txn("Z", p)           # a lease that does not exist: the txn fails whole
        rec.range_last_below(p, 3)      # C's waitDeletes read: B's key
        rec.range_last_below(p, 1)      # nothing created before revision 2
        rec.keepalive("A")
        rec.wait_expiry("B", "m/{B}", 3)  # B's lease expires: its key goes
        rec.range_last_below(p, 3)      # C now waits on A's key
        rec.keepalive("B")              # TTL 0: lease not found
        rec.mutex_txn("B", p)           # a txn under the expired lease
        rec.watch_delete_then("m/{A}", 2, lambda: None, wait=1)  # from A's creation: the PUT only
        rec.watch_delete_then("m/{A}", 4, lambda: rec.delete("m/{A}"))  # A unlocks: DELETE
        rec.range_last_below(p, 3)      # nothing left below C
        rec.get("m/{C}")                # the fixed Lock's recheck: C's key is there
        rec.get("m/{B}")                # B's is not (v3.5 would return ErrSessionExpired)
        rec.delete("m/{A}")             # deleting an absent key: no new revision
        rec.revoke("A")                 # A's lease has no key left: no new revision
        rec.revoke("C")                 # C's lease takes C's key: one new revision
        rec.revoke("C")                 # revoking again: lease not found
        doc = {"server": version, "recorded_with": "crates/protocols/tests/etcd/record.py",
               "steps": rec.steps}
        with open(out, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    finally:
        etcd.stop()


if __name__ == "__main__":
    main()
