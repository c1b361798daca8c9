#!/usr/bin/env python3
"""Compares the time-independent fields of two recordings (e.g. the committed vectors.json
and a fresh one), so that a change of the real server's behaviour (or of a client library's
command sequence) is noticed. Exit 0 if they agree, 1 with the differences if not.

Usage: compare.py COMMITTED FRESH

Compared: the format, the exclusions' names, the case names in order, and per case its
persistence, nodes and replicas, and its steps: node, command, reply type, and the reply
itself except where it depends on timing (a `ttl` step's integer; an AOF's deadlines, of
which only their presence is compared). Not compared: at_ms, sent_at_ms, max_late_ms and the
tolerances. For a captured client case only the set of distinct commands each node received
is compared (what the library sends): how often a blocking acquire retries, and the order in
which pottery's threads reach a master (it returns once a quorum answered, and its next call
may overtake the last one), depend on timing, and so do the replies that follow from that
order; the scripted cases hold the server's replies.
"""

import json
import sys


def step_view(s):
    reply = s["reply"]
    timing = (s.get("timing") or {}).get("kind")
    if timing == "ttl":
        reply = "<ttl>"
    elif timing == "aof":
        reply = {
            "commands": reply["commands"],
            "keys": {k: {"value": v["value"], "deadline": v["deadline_ms"] is not None}
                     for k, v in sorted(reply["keys"].items())},
        }
    return json.dumps([s.get("node"), s["command"], s.get("reply_type"), reply,
                       s.get("exclusion")], sort_keys=True)


def case_view(c):
    head = {k: c.get(k) for k in ("persistence", "nodes", "replica_of", "source")}
    if c.get("source") != "captured":
        return head, [step_view(s) for s in c["steps"]]
    sent = sorted({json.dumps([s.get("node"), s["command"]]) for s in c["steps"]})
    return head, sent


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a, b = (json.load(open(p)) for p in sys.argv[1:])
    diffs = []
    if a["format"] != b["format"]:
        diffs.append("format %s vs %s" % (a["format"], b["format"]))
    ea = [e["name"] for e in a.get("exclusions", [])]
    eb = [e["name"] for e in b.get("exclusions", [])]
    if ea != eb:
        diffs.append("exclusions %s vs %s" % (ea, eb))
    na = [c["name"] for c in a["cases"]]
    nb = [c["name"] for c in b["cases"]]
    if na != nb:
        diffs.append("cases %s vs %s" % (na, nb))
    cb = {c["name"]: c for c in b["cases"]}
    for c in a["cases"]:
        if c["name"] not in cb:
            continue
        ha, sa = case_view(c)
        hb, sb = case_view(cb[c["name"]])
        if ha != hb:
            diffs.append("%s: %s vs %s" % (c["name"], ha, hb))
        for i in range(max(len(sa), len(sb))):
            x = sa[i] if i < len(sa) else "(none)"
            y = sb[i] if i < len(sb) else "(none)"
            if x != y:
                diffs.append("%s step %d:\n    committed %s\n    fresh     %s"
                             % (c["name"], i, x[:400], y[:400]))
                break
    va = a.get("recorded_with", {})
    vb = b.get("recorded_with", {})
    if va != vb:
        print("note: recorded with %s, now %s" % (va, vb))
    if diffs:
        print("the fresh recording differs from the committed one:")
        for d in diffs:
            print("  " + d)
        sys.exit(1)
    print("the fresh recording agrees with the committed one (%d cases, %d steps)"
          % (len(na), sum(len(c["steps"]) for c in a["cases"])))


if __name__ == "__main__":
    main()
