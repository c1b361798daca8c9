"""The scripted cases: command sequences for the commands the lock clients use.

A step is {at_ms, command, [node], [ttl], [exclusion]}: `at_ms` is when it is sent (ms of
monotonic time from the case start), `ttl` marks a PTTL reply that depends on timing (the
replayer compares it within a tolerance), `exclusion` names an entry of EXCLUSIONS (a
deliberate simplification of the model) and gives the reply the model gives instead.
Pseudo-steps (run by the recorder and the replayer, not sent to Redis): __STOP__ SIGTERM |
SIGKILL, __START__, __WALL_CLOCK_JUMP__ <ms>, __SYNC__ (on a replica: wait until it has
applied everything its primary has written), __AOF__ (read the node's AOF back).
"""

# The lock scripts the simulated lock clients send (byte for byte as in
# crates/protocols/src/redis/command.rs).
RELEASE = ("if redis.call('get',KEYS[1]) == ARGV[1] then return redis.call('del',KEYS[1]) "
           "else return 0 end")
EXTEND = ("if redis.call('get',KEYS[1]) == ARGV[1] then return "
          "redis.call('pexpire',KEYS[1],ARGV[2]) else return 0 end")

EXCLUSIONS = [
    {
        "name": "everysec_crash_is_host_crash",
        "description": (
            "With appendfsync everysec the model's crash stop stands for a host crash (power "
            "loss): it keeps only what the last once-a-second fsync made durable. A SIGKILL of "
            "the redis-server process alone loses nothing, because Redis has already write(2)n "
            "every command to the AOF in the kernel's page cache before replying "
            "(flushAppendOnlyFile in src/aof.c runs in beforeSleep). The model's durable copy "
            "is what was fsynced, so an __AOF__ step within a second of a write, and the steps "
            "that read keys written less than a second before the SIGKILL, carry the model's "
            "reply (for __AOF__: the model's durable keys)."
        ),
    },
]


def s(at, *command, node=None, ttl=False, exclusion=None):
    step = {"at_ms": at, "command": list(command)}
    if node is not None:
        step["node"] = node
    if ttl:
        step["ttl"] = True
    if exclusion is not None:
        step["exclusion"] = exclusion
    return step


def case(name, description, steps, persistence="none", **extra):
    c = {"name": name, "description": description, "source": "scripted",
         "persistence": persistence, "steps": steps}
    c.update(extra)
    return c


def rel(at, key, value):
    return s(at, "EVAL", RELEASE, "1", key, value)


def ext(at, key, value, ms):
    return s(at, "EVAL", EXTEND, "1", key, value, str(ms))


K = "lock:a"

CASES = [
    # ---- SET NX PX / XX, GET, PTTL, DEL ------------------------------------------------
    case("set_nx_px_absent", "SET NX PX on an absent key creates it with the TTL.", [
        s(0, "SET", K, "tokA", "NX", "PX", "500"),
        s(5, "GET", K),
        s(10, "PTTL", K, ttl=True),
    ]),
    case("set_nx_px_present", "SET NX on a live key replies nil and changes neither value nor TTL.", [
        s(0, "SET", K, "tokA", "NX", "PX", "500"),
        s(10, "SET", K, "tokB", "NX", "PX", "5000"),
        s(20, "GET", K),
        s(30, "PTTL", K, ttl=True),
    ]),
    case("set_nx_after_expiry", "SET NX fails while the key lives and succeeds once its TTL has passed.", [
        s(0, "SET", K, "tokA", "NX", "PX", "200"),
        s(100, "SET", K, "tokB", "NX", "PX", "200"),
        s(350, "GET", K),
        s(355, "PTTL", K),
        s(360, "SET", K, "tokB", "NX", "PX", "300"),
        s(370, "GET", K),
        s(380, "PTTL", K, ttl=True),
    ]),
    case("set_nx_without_ttl", "SET NX with no PX gives a key without deadline (PTTL -1).", [
        s(0, "SET", K, "tokA", "NX"),
        s(5, "PTTL", K),
        s(10, "SET", K, "tokB", "NX"),
        s(15, "GET", K),
    ]),
    case("set_xx", "SET XX only replaces a live key; XX PX gives the new TTL; an expired key counts as absent.", [
        s(0, "SET", K, "tokA", "XX", "PX", "500"),
        s(5, "GET", K),
        s(10, "SET", K, "tokA", "NX", "PX", "200"),
        s(20, "SET", K, "tokB", "XX", "PX", "300"),
        s(30, "GET", K),
        s(35, "PTTL", K, ttl=True),
        s(400, "SET", K, "tokC", "XX", "PX", "300"),
        s(405, "GET", K),
        s(410, "SET", K, "tokC", "NX", "XX"),
        s(415, "SET", K, "tokD"),
        s(420, "SET", K, "tokE", "XX"),
        s(425, "GET", K),
        s(430, "PTTL", K),
    ]),
    case("set_px_invalid", "SET PX with zero, negative, non-canonical or out-of-range values is refused and changes nothing.", [
        s(0, "SET", K, "tokA", "NX", "PX", "0"),
        s(2, "SET", K, "tokA", "NX", "PX", "-1"),
        s(4, "SET", K, "tokA", "PX", "-500"),
        s(6, "SET", K, "tokA", "NX", "PX", "abc"),
        s(8, "SET", K, "tokA", "NX", "PX", "1.5"),
        s(10, "SET", K, "tokA", "NX", "PX", "+100"),
        s(12, "SET", K, "tokA", "NX", "PX", "0100"),
        s(14, "SET", K, "tokA", "NX", "PX", " 100"),
        s(16, "SET", K, "tokA", "NX", "PX", ""),
        s(18, "SET", K, "tokA", "NX", "PX", "9223372036854775808"),
        s(20, "SET", K, "tokA", "NX", "PX", "9223372036854775807"),
        s(22, "SET", K, "tokA", "NX", "PX"),
        s(24, "SET", K, "tokA", "PX", "100", "EX", "1"),
        s(26, "GET", K),
        s(28, "SET", K, "tokA", "NX", "PX", "500"),
        s(30, "SET", K, "tokB", "PX", "0"),
        s(32, "GET", K),
    ]),
    case("get_del", "GET and DEL of absent, live and released keys.", [
        s(0, "GET", K),
        s(2, "DEL", K),
        s(4, "SET", K, "tokA", "NX", "PX", "500"),
        s(6, "DEL", K),
        s(8, "GET", K),
        s(10, "DEL", K),
        s(12, "SET", K, "tokA", "NX", "PX", "500"),
        s(14, "SET", "lock:b", "tokB", "NX", "PX", "500"),
        s(16, "DEL", K, "lock:b", "lock:c", K),
        s(18, "GET", "lock:b"),
    ]),
    case("expiry_on_access", "An expired key is absent to every command: GET, PTTL, DEL, SET NX, the scripts.", [
        s(0, "SET", K, "tokA", "NX", "PX", "100"),
        s(50, "GET", K),
        s(200, "DEL", K),
        s(205, "SET", K, "tokA", "NX", "PX", "100"),
        s(400, "PTTL", K),
        s(405, "SET", K, "tokA", "NX", "PX", "100"),
        s(600, "EVAL", RELEASE, "1", K, "tokA"),
        s(605, "SET", K, "tokA", "NX", "PX", "100"),
        s(800, "EVAL", EXTEND, "1", K, "tokA", "1000"),
        s(805, "GET", K),
    ]),
    case("pttl_states", "PTTL: -2 absent, -1 no deadline, the remaining ms, -2 after expiry.", [
        s(0, "PTTL", K),
        s(5, "SET", K, "tokA"),
        s(10, "PTTL", K),
        s(15, "SET", "lock:b", "tokB", "PX", "150"),
        s(100, "PTTL", "lock:b", ttl=True),
        s(300, "PTTL", "lock:b"),
    ]),
    case("set_overwrite_clears_ttl", "A plain SET replaces the value and drops the deadline.", [
        s(0, "SET", K, "tokA", "NX", "PX", "300"),
        s(10, "PTTL", K, ttl=True),
        s(20, "SET", K, "tokB"),
        s(25, "PTTL", K),
        s(450, "GET", K),
    ]),
    # ---- PEXPIRE -----------------------------------------------------------------------
    case("pexpire", "PEXPIRE on absent, live and expired keys; with zero / negative; NX XX GT LT.", [
        s(0, "PEXPIRE", K, "500"),
        s(2, "SET", K, "tokA"),
        s(4, "PEXPIRE", K, "500"),
        s(6, "PTTL", K, ttl=True),
        s(8, "PEXPIRE", K, "1000", "NX"),
        s(10, "PEXPIRE", K, "1000", "XX"),
        s(12, "PEXPIRE", K, "100", "GT"),
        s(14, "PEXPIRE", K, "300", "LT"),
        s(16, "PTTL", K, ttl=True),
        s(18, "PEXPIRE", K, "100", "NX", "XX"),
        s(20, "PEXPIRE", K, "abc"),
        s(22, "PEXPIRE", K, "0"),
        s(24, "GET", K),
        s(26, "SET", K, "tokA", "PX", "100"),
        s(28, "PEXPIRE", K, "-5"),
        s(30, "PTTL", K),
        s(32, "SET", K, "tokA", "PX", "100"),
        s(250, "PEXPIRE", K, "1000"),
        s(255, "GET", K),
    ]),
    # ---- The lock scripts (EVAL, EVALSHA, SCRIPT LOAD) --------------------------------------
    case("release_script", "The compare-and-delete release: matching, not matching, absent, expired.", [
        s(0, "SET", K, "tokA", "NX", "PX", "500"),
        rel(10, K, "tokB"),
        s(15, "PTTL", K, ttl=True),
        rel(20, K, "tokA"),
        s(25, "GET", K),
        rel(30, K, "tokA"),
        rel(32, K, ""),
        s(35, "SET", K, "tokA", "NX", "PX", "100"),
        rel(250, K, "tokA"),
    ]),
    case("extend_script", "The compare-and-pexpire extend: replaces the TTL (longer or shorter); refused for another value, absent or expired keys; gives a deadline to a key without one.", [
        s(0, "SET", K, "tokA", "NX", "PX", "300"),
        ext(100, K, "tokA", 500),
        s(110, "PTTL", K, ttl=True),
        ext(120, K, "tokB", 5000),
        s(125, "PTTL", K, ttl=True),
        ext(130, K, "tokA", 100),
        s(135, "PTTL", K, ttl=True),
        s(400, "GET", K),
        ext(405, K, "tokA", 500),
        s(410, "SET", K, "tokA"),
        ext(415, K, "tokA", 300),
        s(420, "PTTL", K, ttl=True),
        ext(425, K, "tokA", 0),
        s(430, "GET", K),
        ext(435, K, "tokA", "abc"),
        s(440, "EVAL", EXTEND, "1", K, "tokA"),
    ]),
    case("evalsha_and_script_load", "EVALSHA needs the script in the server's cache: NOSCRIPT until SCRIPT LOAD (or an EVAL of the same text) put it there.", [
        s(0, "SET", K, "tokA", "NX", "PX", "500"),
        s(5, "EVALSHA", "SHA:RELEASE", "1", K, "tokA"),
        s(10, "SCRIPT", "LOAD", RELEASE),
        s(15, "EVALSHA", "SHA:RELEASE", "1", K, "tokB"),
        s(20, "EVALSHA", "SHA:EXTEND", "1", K, "tokA", "1000"),
        s(25, "EVAL", EXTEND, "1", K, "tokA", "1000"),
        s(30, "PTTL", K, ttl=True),
        s(35, "EVALSHA", "SHA:EXTEND:UPPER", "1", K, "tokA", "2000"),
        s(40, "PTTL", K, ttl=True),
        s(45, "EVALSHA", "SHA:RELEASE", "1", K, "tokA"),
        s(50, "GET", K),
        s(55, "EVALSHA", "abc", "1", K, "tokA"),
        s(60, "SCRIPT", "LOAD", RELEASE),
    ]),
    # ---- Restarts under each persistence mode ------------------------------------------------
    case("restart_none_sigterm", "Without persistence a graceful restart comes back empty.", [
        s(0, "SET", K, "tokA", "NX", "PX", "5000"),
        s(50, "__STOP__", "SIGTERM"),
        s(400, "__START__"),
        s(750, "GET", K),
        s(755, "SET", K, "tokB", "NX", "PX", "500"),
    ]),
    case("restart_none_sigkill", "Without persistence a crash comes back empty.", [
        s(0, "SET", K, "tokA", "NX", "PX", "5000"),
        s(50, "__STOP__", "SIGKILL"),
        s(400, "__START__"),
        s(750, "GET", K),
        s(755, "PTTL", K),
    ]),
    case("restart_aof_always_sigterm", "appendfsync always: a graceful restart keeps the key with its absolute deadline (the downtime counts against the TTL).", [
        s(0, "SET", K, "tokA", "NX", "PX", "3000"),
        s(10, "__AOF__"),
        s(50, "__STOP__", "SIGTERM"),
        s(900, "__START__"),
        s(1300, "GET", K),
        s(1305, "PTTL", K, ttl=True),
        s(1310, "SET", K, "tokB", "NX", "PX", "500"),
        s(1315, "__AOF__"),
    ], persistence="aof_fsync_always"),
    case("restart_aof_always_sigkill", "appendfsync always: acquire, extend and release all survive a crash; the AOF holds absolute deadlines and the lazy-expiry DEL.", [
        s(0, "SET", K, "tokA", "NX", "PX", "300"),
        ext(20, K, "tokA", 2000),
        s(30, "SET", "lock:b", "tokB", "NX", "PX", "5000"),
        rel(40, "lock:b", "tokB"),
        s(45, "SET", "lock:c", "tokC", "PX", "100"),
        s(50, "__AOF__"),
        s(60, "__STOP__", "SIGKILL"),
        s(700, "__START__"),
        s(1100, "GET", K),
        s(1105, "PTTL", K, ttl=True),
        s(1110, "GET", "lock:b"),
        s(1115, "GET", "lock:c"),
        s(1120, "__AOF__"),
        s(1130, "SET", "lock:d", "tokD"),
        s(1135, "__STOP__", "SIGKILL"),
        s(1500, "__START__"),
        s(1850, "GET", "lock:d"),
        s(1855, "PTTL", "lock:d"),
    ], persistence="aof_fsync_always"),
    case("restart_aof_always_script_cache", "The script cache is not persisted: after a restart EVALSHA is NOSCRIPT again.", [
        s(0, "SCRIPT", "LOAD", RELEASE),
        s(5, "SET", K, "tokA", "NX", "PX", "5000"),
        s(10, "__STOP__", "SIGTERM"),
        s(400, "__START__"),
        s(750, "EVALSHA", "SHA:RELEASE", "1", K, "tokA"),
        s(755, "GET", K),
        s(760, "EVAL", RELEASE, "1", K, "tokA"),
        s(765, "__AOF__"),
    ], persistence="aof_fsync_always"),
    case("restart_aof_everysec_sigterm", "appendfsync everysec: a graceful stop flushes the AOF, everything survives.", [
        s(0, "SET", K, "tokA", "NX", "PX", "5000"),
        ext(10, K, "tokA", 8000),
        s(20, "__STOP__", "SIGTERM"),
        s(600, "__START__"),
        s(1000, "GET", K),
        s(1005, "PTTL", K, ttl=True),
    ], persistence="aof_fsync_everysec"),
    case("restart_aof_everysec_sigkill", "appendfsync everysec: a SIGKILL of the process loses nothing (the writes are in the page cache); the model's crash is a host crash and loses the writes since its last fsync tick (named exclusion).", [
        s(0, "SET", K, "tokA", "NX", "PX", "5000"),
        s(10, "__AOF__", exclusion={"name": "everysec_crash_is_host_crash", "model_reply": {},
                                    "model_reply_type": "aof"}),
        s(20, "__STOP__", "SIGKILL"),
        s(600, "__START__"),
        s(1000, "GET", K, exclusion={"name": "everysec_crash_is_host_crash",
                                    "model_reply": None, "model_reply_type": "nil"}),
        s(1005, "PTTL", K, ttl=True, exclusion={"name": "everysec_crash_is_host_crash",
                                     "model_reply": -2, "model_reply_type": "integer"}),
    ], persistence="aof_fsync_everysec"),
    # ---- Wall-clock steps ----------------------------------------------------------------
    case("clock_jump_forward", "A forward step of the wall clock past the deadline expires the key at once; a new holder can acquire and the old holder's release is refused.", [
        s(0, "SET", K, "tokA", "NX", "PX", "5000"),
        s(100, "PTTL", K, ttl=True),
        s(200, "__WALL_CLOCK_JUMP__", "10000"),
        s(300, "PTTL", K),
        s(305, "GET", K),
        s(310, "SET", K, "tokB", "NX", "PX", "5000"),
        rel(320, K, "tokA"),
        s(325, "PTTL", K, ttl=True),
    ]),
    case("clock_jump_forward_partial", "A forward step shorter than the TTL shortens the remaining TTL by the step.", [
        s(0, "SET", K, "tokA", "NX", "PX", "5000"),
        s(100, "__WALL_CLOCK_JUMP__", "2000"),
        s(200, "PTTL", K, ttl=True),
        s(205, "GET", K),
    ]),
    case("clock_jump_backward", "A backward step lengthens the remaining TTL by the step (deadlines are absolute wall times).", [
        s(0, "SET", K, "tokA", "NX", "PX", "1000"),
        s(100, "__WALL_CLOCK_JUMP__", "-5000"),
        s(200, "PTTL", K, ttl=True),
        s(1500, "GET", K),
        s(1505, "SET", K, "tokB", "NX", "PX", "100"),
    ]),
    case("clock_jump_while_down", "With appendfsync always a key's absolute deadline is reloaded after a restart: a wall-clock step while the server is down expires it.", [
        s(0, "SET", K, "tokA", "NX", "PX", "3000"),
        s(10, "__STOP__", "SIGTERM"),
        s(350, "__WALL_CLOCK_JUMP__", "5000"),
        s(400, "__START__"),
        s(800, "GET", K),
        s(805, "SET", K, "tokB", "NX", "PX", "1000"),
        s(810, "__AOF__"),
    ], persistence="aof_fsync_always"),
    # ---- Replication -----------------------------------------------------------------------
    case("replication_set_to_replica", "A lock SET on the primary reaches the replica with its absolute deadline; the replica refuses writes; extend and release follow.", [
        s(0, "SET", K, "tokA", "NX", "PX", "2000", node="primary"),
        s(10, "__SYNC__", node="replica"),
        s(20, "GET", K, node="replica"),
        s(25, "PTTL", K, node="replica", ttl=True),
        s(30, "SET", K, "tokB", "NX", "PX", "2000", node="replica"),
        ext(40, K, "tokA", 5000),
        s(45, "__SYNC__", node="replica"),
        s(50, "PTTL", K, node="replica", ttl=True),
        rel(60, K, "tokA"),
        s(65, "__SYNC__", node="replica"),
        s(70, "GET", K, node="replica"),
    ], nodes=["primary", "replica"], replica_of={"replica": "primary"}),
    case("replication_replica_clock_ahead", "A replica judges expiry by its own wall clock: stepped 10 s ahead, it reports the replicated key expired while the primary still holds it.", [
        s(0, "SET", K, "tokA", "NX", "PX", "5000", node="primary"),
        s(10, "__SYNC__", node="replica"),
        s(20, "__WALL_CLOCK_JUMP__", "10000", node="replica"),
        s(30, "GET", K, node="replica"),
        s(35, "PTTL", K, node="replica"),
        s(40, "GET", K, node="primary"),
        s(45, "PTTL", K, node="primary", ttl=True),
    ], nodes=["primary", "replica"], replica_of={"replica": "primary"}),
]
