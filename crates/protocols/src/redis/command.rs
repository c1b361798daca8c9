//! Redis commands over a [`Keyspace`]: argument parsing, rules and exact reply texts of
//! Redis 7.0 for the commands the lock protocols use.
//!
//! One entry point, [`execute`], takes the argument list a client would send (the command
//! name first, matched case-insensitively) and the instance's wall clock in **ns**, and returns
//! the [`Reply`] Redis would give. Supported: `GET`, `SET` (all Redis 7.0 options), `DEL`,
//! `PTTL`, `PEXPIRE` (with `NX|XX|GT|LT`), and `EVAL`, `EVALSHA` and `SCRIPT LOAD` of the
//! recognised lock scripts ([`KNOWN_SCRIPTS`]: [`RELEASE_SCRIPT`], [`EXTEND_SCRIPT`] and the
//! real client libraries' scripts) with a server's script cache ([`ScriptCache`]). Every
//! other command gets Redis's "unknown command" error.
//!
//! One command sees one clock reading: the wall clock is converted to ms once
//! ([`wall_ns_to_ms`]) and used for every expiry check and deadline of that command, including
//! the `redis.call`s inside a script (Redis likewise freezes time for a script's duration).
//!
//! The typed helpers for lock clients ([`Keyspace::set_nx_px`], [`Keyspace::get`],
//! [`Keyspace::release_if_value`], [`Keyspace::extend_if_value`]) build the argument list
//! with the `*_args` functions, run it through [`execute`] and decode the reply with the
//! `decode_*` functions, so each rule has exactly one implementation. A lock client actor
//! that talks to a remote instance uses the same builders and decoders around its messages.
//!
//! Sources, all in the Redis repository (`src/`): `server.c` (command lookup, arity and
//! unknown-command errors), `t_string.c` (`SET`/`GET`), `db.c` (`DEL`, lazy expiry),
//! `expire.c` (`PEXPIRE`, `PTTL`), `eval.c` and `script_lua.c` (`EVAL`), `util.c`
//! (`string2ll`, the integer syntax), and the command pages of the Redis documentation
//! (redis.io/commands/set, /pexpire, /pttl, /eval). Exact texts are pinned by the vectors
//! recorded from a live redis-server 7.0 (`conformance/redis/vectors.json`, replayed by
//! [`super::conformance`]) where they cover them.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::store::{wall_ns_to_ms, Entry, Keyspace};

/// The compare-and-delete lock release script, byte for byte as the lock clients send it
/// (and as recorded in the conformance vectors). `KEYS[1]` = lock key, `ARGV[1]` = the
/// holder's unique value. Replies 1 if it deleted the key, else 0.
pub const RELEASE_SCRIPT: &str = "if redis.call('get',KEYS[1]) == ARGV[1] then return redis.call('del',KEYS[1]) else return 0 end";

/// The compare-and-pexpire lock extend script, byte for byte. `KEYS[1]` = lock key,
/// `ARGV[1]` = the holder's value, `ARGV[2]` = new TTL in **ms** counted from now (it replaces
/// the remaining TTL, it is not added to it). Replies `PEXPIRE`'s reply (1) if the value
/// matched, else 0.
pub const EXTEND_SCRIPT: &str = "if redis.call('get',KEYS[1]) == ARGV[1] then return redis.call('pexpire',KEYS[1],ARGV[2]) else return 0 end";

/// Error reply for an `EVAL` (or `EVALSHA`) of a script that is not one of
/// [`KNOWN_SCRIPTS`]. This model has no Lua interpreter: it recognises the lock scripts by the
/// SHA1 of their exact text. This text is the model's own (real Redis would run the script);
/// it starts with `ERR` like every Redis error.
pub const UNSUPPORTED_SCRIPT_ERROR: &str =
    "ERR splitbrain model: unsupported script (only the lock release and extend scripts are modelled)";

/// `NOSCRIPT No matching script. Please use EVAL.` (`shared.noscripterr`, Redis
/// `src/server.c`): `EVALSHA` of a SHA1 the server's script cache does not hold.
pub const NOSCRIPT_ERROR: &str = "NOSCRIPT No matching script. Please use EVAL.";

/// What a recognised lock script does (`KEYS[1]` = lock key, `ARGV[1]` = the holder's value;
/// every variant first runs `redis.call('get', KEYS[1])` and does nothing but reply 0 unless
/// the key is live and holds exactly `ARGV[1]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScriptKind {
    /// Compare-and-delete: replies `DEL`'s reply (1).
    CompareDel,
    /// Compare-and-pexpire: replies `PEXPIRE KEYS[1] ARGV[2]`'s reply; an error of that
    /// `PEXPIRE` is the script's error.
    ComparePexpire,
    /// redis-py's extend: 0 unless the key has a deadline (`PTTL >= 0`); then the new TTL is
    /// `ARGV[2]` if `ARGV[3] ~= "0"`, else `ARGV[2] + PTTL` (the time is added to what is
    /// left); `PEXPIRE` with it (an error is the script's error) and reply 1.
    AddOrReplaceTtl,
    /// pottery's "acquired": the key's `PTTL` if it is positive, else 0.
    RemainingTtl,
}

/// A Lua script the model recognises, named by the SHA1 of its text as Redis names a cached
/// script (`sha1hex` of the body in `luaCreateFunction`, Redis `src/eval.c`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KnownScript {
    /// Who sends it.
    pub name: &'static str,
    /// SHA1 of the exact text, 40 lower-case hex digits.
    pub sha1: &'static str,
    /// What it does.
    pub kind: ScriptKind,
}

/// The scripts the model runs (it has no Lua interpreter): the simulated clients' two, and
/// those the real client libraries of the recorded client cases send, pinned by the SHA1 of
/// their text (`conformance/redis/` records their `SCRIPT LOAD` replies from a real server):
/// redis-py's `Lock.LUA_RELEASE_SCRIPT`, `LUA_EXTEND_SCRIPT` and `LUA_REACQUIRE_SCRIPT`
/// (`redis/lock.py`), and pottery's `Redlock` acquired / extend / release scripts (the
/// `Scripts` mixin of `pottery/redlock.py`). redis-py's release and reacquire reply 1 where
/// [`ScriptKind::CompareDel`] / [`ScriptKind::ComparePexpire`] reply `DEL`'s / `PEXPIRE`'s
/// reply, which is 1 whenever they run (the key was just read live, and no option is given).
pub const KNOWN_SCRIPTS: [KnownScript; 8] = [
    KnownScript {
        name: "splitbrain release",
        sha1: "ae3671744a5dbb24ea37ef607b8b10ac7856d43e",
        kind: ScriptKind::CompareDel,
    },
    KnownScript {
        name: "splitbrain extend",
        sha1: "0be193f9697b4b30826e1bc553c0064e0e04668c",
        kind: ScriptKind::ComparePexpire,
    },
    KnownScript {
        name: "redis-py Lock release",
        sha1: "c3f8721cbb97f72bc19e972846bd7aaf91901658",
        kind: ScriptKind::CompareDel,
    },
    KnownScript {
        name: "redis-py Lock extend",
        sha1: "a4e8783852e6b949f9ef3a97212805108459a890",
        kind: ScriptKind::AddOrReplaceTtl,
    },
    KnownScript {
        name: "redis-py Lock reacquire",
        sha1: "1cac51482acf5858da00f6d685d68f886cd6b6b2",
        kind: ScriptKind::ComparePexpire,
    },
    KnownScript {
        name: "pottery Redlock acquired",
        sha1: "f5f7bd3a3aa4a63c507c1155c5ea1219b350d992",
        kind: ScriptKind::RemainingTtl,
    },
    KnownScript {
        name: "pottery Redlock extend",
        sha1: "ba015a80261b616e7a62d35df0b8e3edbe6c9414",
        kind: ScriptKind::ComparePexpire,
    },
    KnownScript {
        name: "pottery Redlock release",
        sha1: "a4aada0b36710970eedaaaeec4a6b7d8c78c4f80",
        kind: ScriptKind::CompareDel,
    },
];

/// The SHA1 of a script text as 40 lower-case hex digits (what `SCRIPT LOAD` replies).
pub fn script_sha1(text: &str) -> String {
    sha1_smol::Sha1::from(text).digest().to_string()
}

/// The recognised script with this SHA1 (lower-case hex), if any.
pub fn known_script(sha1: &str) -> Option<&'static KnownScript> {
    KNOWN_SCRIPTS.iter().find(|s| s.sha1 == sha1)
}

/// A server's script cache: the SHA1s (lower-case hex) of the scripts it has compiled, by
/// `EVAL` or `SCRIPT LOAD` (`luaCreateFunction`, Redis `src/eval.c`). It lives in the
/// server's memory only: not in the AOF, so a restart empties it (then `EVALSHA` replies
/// [`NOSCRIPT_ERROR`] until the script is loaded again).
///
/// Boxed and allocated at the first script, so that an instance that runs none (and every
/// simulated instance, by its size) pays one pointer for it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScriptCache {
    // One pointer in the instance instead of the set's three words (see above).
    #[allow(clippy::box_collection)]
    loaded: Option<Box<std::collections::BTreeSet<String>>>,
}

impl ScriptCache {
    /// Whether the script with this SHA1 (lower-case hex) is cached.
    pub fn contains(&self, sha1: &str) -> bool {
        self.loaded.as_ref().is_some_and(|s| s.contains(sha1))
    }

    /// Caches the script with this SHA1 (lower-case hex).
    pub fn insert(&mut self, sha1: &str) {
        if !self.contains(sha1) {
            self.loaded
                .get_or_insert_with(Default::default)
                .insert(sha1.to_string());
        }
    }

    /// Forgets every script (a restart).
    pub fn clear(&mut self) {
        self.loaded = None;
    }
}

/// `ERR syntax error` (`shared.syntaxerr`, Redis `src/server.c`), e.g. `SET k v NX XX`.
pub const ERR_SYNTAX: &str = "ERR syntax error";

/// `ERR value is not an integer or out of range` (`getLongLongFromObjectOrReply`, Redis
/// `src/object.c`): the argument is not a canonical signed 64-bit decimal
/// (see [`parse_redis_integer`]).
pub const ERR_NOT_INTEGER: &str = "ERR value is not an integer or out of range";

/// The error `redis.call` raises when an argument is neither a string nor a number (here:
/// `KEYS[1]` or `ARGV[2]` missing, i.e. Lua `nil`). Source: `luaRedisGenericCommand` in Redis
/// `src/script_lua.c`. Not covered by the recorded vectors; real Redis appends a
/// ` script: <sha1>, on @user_script:1.` suffix that this model omits.
pub const ERR_LUA_ARGS: &str = "ERR Lua redis lib command arguments must be strings or integers";

/// `EVAL` with `numkeys` larger than the number of arguments after it (`evalGenericCommand`,
/// Redis `src/eval.c`).
pub const ERR_NUMKEYS_TOO_BIG: &str = "ERR Number of keys can't be greater than number of args";

/// `EVAL` with a negative `numkeys` (`evalGenericCommand`, Redis `src/eval.c`).
pub const ERR_NUMKEYS_NEGATIVE: &str = "ERR Number of keys can't be negative";

/// A Redis reply (RESP2 types used by these commands).
///
/// Two JSON forms: the normalised one the conformance vectors use ([`Reply::to_json`]:
/// status and bulk -> JSON string, nil -> `null`, integer -> JSON number, error ->
/// `{"error": "<full text>"}`), which cannot tell a status from a bulk string; and the
/// lossless serde form that traces carry in Redis reply messages (`{"status": "OK"}`,
/// `{"bulk": "v"}`, `"nil"`, `{"integer": 1}`, `{"error": "..."}`), which round-trips.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reply {
    /// Simple string reply, e.g. `OK`.
    Status(String),
    /// Bulk string reply (a value).
    Bulk(String),
    /// Null bulk reply (absent key, or a `SET NX`/`XX` that did not set).
    Nil,
    /// Integer reply.
    Integer(i64),
    /// Error reply, full text including the code prefix, e.g. `ERR syntax error`.
    Error(String),
}

impl Reply {
    /// The `OK` status reply.
    pub fn ok() -> Self {
        Reply::Status("OK".to_string())
    }

    /// The normalised JSON form used by the conformance vectors (see the type docs).
    pub fn to_json(&self) -> Value {
        match self {
            Reply::Status(s) | Reply::Bulk(s) => Value::String(s.clone()),
            Reply::Nil => Value::Null,
            Reply::Integer(n) => json!(n),
            Reply::Error(e) => json!({ "error": e }),
        }
    }

    /// The vectors' `reply_type` name of this reply: `status`, `bulk`, `nil`, `integer` or
    /// `error`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Reply::Status(_) => "status",
            Reply::Bulk(_) => "bulk",
            Reply::Nil => "nil",
            Reply::Integer(_) => "integer",
            Reply::Error(_) => "error",
        }
    }
}

/// Errors of the typed lock helpers: the reply was a Redis error, or not of the shape the
/// command can produce.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    /// Redis replied with an error (full text, e.g. `ERR invalid expire time in 'set'
    /// command` for a non-positive TTL).
    #[error("redis error reply: {0}")]
    Redis(String),
    /// The reply has a type or value the command cannot produce.
    #[error("unexpected reply to {command}: {reply:?}")]
    Unexpected {
        /// The command whose reply was being decoded.
        command: &'static str,
        /// The reply received.
        reply: Reply,
    },
}

/// Parses a Redis integer argument with the rules of `string2ll` (Redis `src/util.c`):
/// optional `-`, then either exactly `0` or a non-zero digit followed by digits, at most 20
/// bytes in total, within `i64`. Rejected (returns `None`): empty, `+5`, ` 5`, `05`, `-0`,
/// `1.5`, `1e3`, `5abc`, `9223372036854775808`.
pub fn parse_redis_integer(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    // string2ll: zero length or length >= LONG_STR_SIZE (21) is not a number.
    if b.is_empty() || b.len() >= 21 {
        return None;
    }
    if b == b"0" {
        return Some(0);
    }
    let (negative, digits) = match b.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, b),
    };
    match digits.first() {
        Some(d) if (b'1'..=b'9').contains(d) => {}
        _ => return None,
    }
    if !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    // At most 20 digits: fits an i128 without overflow.
    let magnitude = digits
        .iter()
        .fold(0i128, |acc, d| acc * 10 + i128::from(d - b'0'));
    i64::try_from(if negative { -magnitude } else { magnitude }).ok()
}

/// Executes one Redis command on `keyspace` at wall-clock `now_wall_ns` (**ns**) and returns
/// Redis 7.0's reply. Never panics: bad input gives the error reply Redis gives.
///
/// `args[0]` is the command name (case-insensitive); an empty `args` is answered like an
/// unknown command with an empty name (real Redis ignores an empty request; a reply is needed
/// here).
///
/// The server's script cache is not part of a [`Keyspace`]: here it starts empty and is
/// dropped after the command (`EVALSHA` replies [`NOSCRIPT_ERROR`]); a server that keeps it
/// runs commands through [`execute_with_scripts`].
pub fn execute(keyspace: &mut Keyspace, args: &[String], now_wall_ns: i64) -> Reply {
    execute_at_ms(
        keyspace,
        &mut ScriptCache::default(),
        args,
        wall_ns_to_ms(now_wall_ns),
    )
}

/// [`execute`] on a server whose script cache is `scripts`: `EVAL` and `SCRIPT LOAD` add to
/// it, `EVALSHA` runs from it.
pub fn execute_with_scripts(
    keyspace: &mut Keyspace,
    scripts: &mut ScriptCache,
    args: &[String],
    now_wall_ns: i64,
) -> Reply {
    execute_at_ms(keyspace, scripts, args, wall_ns_to_ms(now_wall_ns))
}

impl Keyspace {
    /// Method form of [`execute`]: runs `args` at wall-clock `now_wall_ns` (ns).
    pub fn execute(&mut self, args: &[String], now_wall_ns: i64) -> Reply {
        execute(self, args, now_wall_ns)
    }

    /// Lock acquire: `SET key value NX PX ttl_ms` at wall-clock `now_wall_ns` (ns).
    /// `Ok(true)` = the key was absent (or expired) and is now set with deadline
    /// `now_ms + ttl_ms`; `Ok(false)` = someone holds it. A `ttl_ms <= 0` gives
    /// `Err(CommandError::Redis("ERR invalid expire time in 'set' command"))`, as Redis does.
    pub fn set_nx_px(
        &mut self,
        key: &str,
        value: &str,
        ttl_ms: i64,
        now_wall_ns: i64,
    ) -> Result<bool, CommandError> {
        decode_set_nx_px(&execute(
            self,
            &set_nx_px_args(key, value, ttl_ms),
            now_wall_ns,
        ))
    }

    /// `GET key` at wall-clock `now_wall_ns` (ns): the live value, or `None` if absent or
    /// expired (an expired key is deleted, like Redis's lazy expiry).
    pub fn get(&mut self, key: &str, now_wall_ns: i64) -> Result<Option<String>, CommandError> {
        decode_get(&execute(self, &get_args(key), now_wall_ns))
    }

    /// Lock release by compare-and-delete: `EVAL` of [`RELEASE_SCRIPT`] at wall-clock
    /// `now_wall_ns` (ns). `Ok(true)` iff the key held `value` and was deleted.
    pub fn release_if_value(
        &mut self,
        key: &str,
        value: &str,
        now_wall_ns: i64,
    ) -> Result<bool, CommandError> {
        decode_flag(
            "release",
            &execute(self, &release_args(key, value), now_wall_ns),
        )
    }

    /// Lock extend by compare-and-pexpire: `EVAL` of [`EXTEND_SCRIPT`] at wall-clock
    /// `now_wall_ns` (ns). `Ok(true)` iff the key held `value`; its deadline is then
    /// `now_ms + ttl_ms` (a `ttl_ms <= 0` deletes the key and still gives `Ok(true)`, per
    /// `PEXPIRE`).
    pub fn extend_if_value(
        &mut self,
        key: &str,
        value: &str,
        ttl_ms: i64,
        now_wall_ns: i64,
    ) -> Result<bool, CommandError> {
        decode_flag(
            "extend",
            &execute(self, &extend_args(key, value, ttl_ms), now_wall_ns),
        )
    }
}

/// Arguments of the lock acquire command: `SET key value NX PX ttl_ms` (`ttl_ms` in **ms**).
pub fn set_nx_px_args(key: &str, value: &str, ttl_ms: i64) -> Vec<String> {
    vec![
        "SET".into(),
        key.into(),
        value.into(),
        "NX".into(),
        "PX".into(),
        ttl_ms.to_string(),
    ]
}

/// Arguments of `GET key`.
pub fn get_args(key: &str) -> Vec<String> {
    vec!["GET".into(), key.into()]
}

/// Arguments of a plain `DEL key` (the unsafe release variant `release: "delete"`).
pub fn del_args(key: &str) -> Vec<String> {
    vec!["DEL".into(), key.into()]
}

/// Arguments of the compare-and-delete release: `EVAL <RELEASE_SCRIPT> 1 key value`.
pub fn release_args(key: &str, value: &str) -> Vec<String> {
    vec![
        "EVAL".into(),
        RELEASE_SCRIPT.into(),
        "1".into(),
        key.into(),
        value.into(),
    ]
}

/// Arguments of the compare-and-pexpire extend: `EVAL <EXTEND_SCRIPT> 1 key value ttl_ms`
/// (`ttl_ms` in **ms**).
pub fn extend_args(key: &str, value: &str, ttl_ms: i64) -> Vec<String> {
    vec![
        "EVAL".into(),
        EXTEND_SCRIPT.into(),
        "1".into(),
        key.into(),
        value.into(),
        ttl_ms.to_string(),
    ]
}

fn redis_error(reply: &Reply) -> Option<CommandError> {
    match reply {
        Reply::Error(e) => Some(CommandError::Redis(e.clone())),
        _ => None,
    }
}

/// Decodes the reply to [`set_nx_px_args`]: `OK` -> `true` (acquired), nil -> `false`.
pub fn decode_set_nx_px(reply: &Reply) -> Result<bool, CommandError> {
    match reply {
        Reply::Status(s) if s == "OK" => Ok(true),
        Reply::Nil => Ok(false),
        other => Err(
            redis_error(other).unwrap_or_else(|| CommandError::Unexpected {
                command: "set_nx_px",
                reply: other.clone(),
            }),
        ),
    }
}

/// Decodes the reply to [`get_args`]: bulk -> `Some(value)`, nil -> `None`.
pub fn decode_get(reply: &Reply) -> Result<Option<String>, CommandError> {
    match reply {
        Reply::Bulk(v) => Ok(Some(v.clone())),
        Reply::Nil => Ok(None),
        other => Err(
            redis_error(other).unwrap_or_else(|| CommandError::Unexpected {
                command: "get",
                reply: other.clone(),
            }),
        ),
    }
}

/// Decodes an integer reply (e.g. `DEL`'s count of deleted keys).
pub fn decode_integer(command: &'static str, reply: &Reply) -> Result<i64, CommandError> {
    match reply {
        Reply::Integer(n) => Ok(*n),
        other => Err(
            redis_error(other).unwrap_or_else(|| CommandError::Unexpected {
                command,
                reply: other.clone(),
            }),
        ),
    }
}

/// Decodes a 0/1 integer reply (release and extend scripts): 1 -> `true`, 0 -> `false`.
pub fn decode_flag(command: &'static str, reply: &Reply) -> Result<bool, CommandError> {
    match decode_integer(command, reply)? {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(CommandError::Unexpected {
            command,
            reply: reply.clone(),
        }),
    }
}

// ---------------------------------------------------------------------------------------
// Dispatch
// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy)]
enum Cmd {
    Get,
    Set,
    Del,
    Pttl,
    Pexpire,
    Eval,
    Evalsha,
    Script,
}

/// (lower-case name, Redis arity, command). Arity as in Redis's command table: positive =
/// exact argument count including the name, negative = at least `-arity`.
const COMMANDS: [(&str, i32, Cmd); 8] = [
    ("get", 2, Cmd::Get),
    ("set", -3, Cmd::Set),
    ("del", -2, Cmd::Del),
    ("pttl", 2, Cmd::Pttl),
    ("pexpire", -3, Cmd::Pexpire),
    ("eval", -3, Cmd::Eval),
    ("evalsha", -3, Cmd::Evalsha),
    ("script", -2, Cmd::Script),
];

/// Replaces CR and LF by spaces, as Redis does before emitting an error text that contains
/// user input (`rejectCommandFormat` / `addReplyErrorFormat`, `src/networking.c`).
fn sanitize(s: String) -> String {
    s.replace(['\r', '\n'], " ")
}

/// The longest prefix of `s` of at most `max` bytes that ends on a char boundary (C's
/// `%.*s` counts bytes; a char is never split here).
fn truncate_bytes(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// `ERR unknown command '<name>', with args beginning with: '<a1>' '<a2>' ` with Redis's
/// truncation: the name to 128 bytes, the quoted arguments while their text is shorter than
/// 128 bytes (`processCommand`, `src/server.c`).
fn unknown_command<S: AsRef<str>>(name: &str, rest: &[S]) -> Reply {
    let mut listed = String::new();
    for arg in rest {
        if listed.len() >= 128 {
            break;
        }
        let room = 128 - listed.len();
        listed.push('\'');
        listed.push_str(truncate_bytes(arg.as_ref(), room));
        listed.push_str("' ");
    }
    Reply::Error(sanitize(format!(
        "ERR unknown command '{}', with args beginning with: {}",
        truncate_bytes(name, 128),
        listed
    )))
}

fn err_invalid_expire(command: &str) -> Reply {
    Reply::Error(format!("ERR invalid expire time in '{command}' command"))
}

fn err_not_integer() -> Reply {
    Reply::Error(ERR_NOT_INTEGER.to_string())
}

/// Parses an integer argument or gives Redis's "not an integer" error reply.
fn integer_arg(s: &str) -> Result<i64, Reply> {
    parse_redis_integer(s).ok_or_else(err_not_integer)
}

/// [`execute`] with the wall clock already in ms (one reading per command). Generic over the
/// argument type so that clients' `String`s and a script's borrowed `&str`s run through the
/// same code without copying.
fn execute_at_ms<S: AsRef<str>>(
    ks: &mut Keyspace,
    scripts: &mut ScriptCache,
    args: &[S],
    now_ms: i64,
) -> Reply {
    let Some(name) = args.first().map(AsRef::as_ref) else {
        return unknown_command::<&str>("", &[]);
    };
    let Some(&(canonical, arity, cmd)) = COMMANDS
        .iter()
        .find(|(n, _, _)| n.eq_ignore_ascii_case(name))
    else {
        return unknown_command(name, &args[1..]);
    };
    let argc = i64::try_from(args.len()).unwrap_or(i64::MAX);
    let arity = i64::from(arity);
    if (arity > 0 && argc != arity) || (arity < 0 && argc < -arity) {
        return Reply::Error(format!(
            "ERR wrong number of arguments for '{canonical}' command"
        ));
    }
    let result = match cmd {
        Cmd::Get => Ok(cmd_get(ks, args[1].as_ref(), now_ms)),
        Cmd::Set => cmd_set(ks, args, now_ms),
        Cmd::Del => Ok(cmd_del(ks, &args[1..], now_ms)),
        Cmd::Pttl => Ok(cmd_pttl(ks, args[1].as_ref(), now_ms)),
        Cmd::Pexpire => cmd_pexpire(ks, args, now_ms),
        Cmd::Eval => cmd_eval(ks, scripts, args, now_ms),
        Cmd::Evalsha => cmd_evalsha(ks, scripts, args, now_ms),
        Cmd::Script => cmd_script(scripts, args),
    };
    result.unwrap_or_else(|error_reply| error_reply)
}

// ---------------------------------------------------------------------------------------
// GET, DEL, PTTL
// ---------------------------------------------------------------------------------------

/// `GET key`: bulk value or nil (`getGenericCommand`, `src/t_string.c`).
fn cmd_get(ks: &mut Keyspace, key: &str, now_ms: i64) -> Reply {
    match ks.lookup_at_ms(key, now_ms) {
        Some(e) => Reply::Bulk(e.value.clone()),
        None => Reply::Nil,
    }
}

/// `DEL key [key ...]`: number of keys removed; an expired key is expired first and so does
/// not count; a key named twice counts once (`delGenericCommand`, `src/db.c`).
fn cmd_del<S: AsRef<str>>(ks: &mut Keyspace, keys: &[S], now_ms: i64) -> Reply {
    let mut deleted = 0i64;
    for key in keys {
        let key = key.as_ref();
        ks.expire_if_needed_at_ms(key, now_ms);
        if ks.remove(key).is_some() {
            deleted += 1;
        }
    }
    Reply::Integer(deleted)
}

/// `PTTL key`: -2 if absent or expired, -1 if no TTL, else `deadline - now` in ms, never
/// below 0 (at `now == deadline` the key is alive and the reply is 0) (`ttlGenericCommand`,
/// `src/expire.c`; redis.io/commands/pttl).
fn cmd_pttl(ks: &mut Keyspace, key: &str, now_ms: i64) -> Reply {
    match ks.lookup_at_ms(key, now_ms) {
        None => Reply::Integer(-2),
        Some(Entry {
            expires_at_ms: None,
            ..
        }) => Reply::Integer(-1),
        Some(Entry {
            expires_at_ms: Some(when),
            ..
        }) => Reply::Integer(when.saturating_sub(now_ms).max(0)),
    }
}

// ---------------------------------------------------------------------------------------
// SET
// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq)]
enum ExpireOpt {
    Ex,
    Px,
    ExAt,
    PxAt,
}

#[derive(Default)]
struct SetOptions<'a> {
    nx: bool,
    xx: bool,
    get: bool,
    keep_ttl: bool,
    expire: Option<(ExpireOpt, &'a str)>,
}

/// Parses `SET`'s options (`args[3..]`) with the rules of `parseExtendedStringArgumentsOrReply`
/// (`src/t_string.c`, Redis 7.0), scanning left to right:
/// - `NX` unless `XX` was seen; `XX` unless `NX` was seen; `GET` always;
/// - `KEEPTTL` unless an `EX`/`PX`/`EXAT`/`PXAT` was seen;
/// - each of `EX`/`PX`/`EXAT`/`PXAT` unless `KEEPTTL` or a *different* one of the four was
///   seen, and only if an argument follows (it is taken as the time, whatever it is);
///   repeating the same one is allowed and the last wins;
/// - anything else is `ERR syntax error`.
///
/// Option names are ASCII case-insensitive. The time argument is validated later, so a
/// syntax error anywhere wins over a bad time.
fn parse_set_options<S: AsRef<str>>(args: &[S]) -> Result<SetOptions<'_>, Reply> {
    let mut o = SetOptions::default();
    let mut j = 3;
    while j < args.len() {
        let opt = args[j].as_ref();
        let next = args.get(j + 1).map(AsRef::as_ref);
        let is = |name: &str| opt.eq_ignore_ascii_case(name);
        let expire_kind = if is("EX") {
            Some(ExpireOpt::Ex)
        } else if is("PX") {
            Some(ExpireOpt::Px)
        } else if is("EXAT") {
            Some(ExpireOpt::ExAt)
        } else if is("PXAT") {
            Some(ExpireOpt::PxAt)
        } else {
            None
        };
        if is("NX") && !o.xx {
            o.nx = true;
        } else if is("XX") && !o.nx {
            o.xx = true;
        } else if is("GET") {
            o.get = true;
        } else if is("KEEPTTL") && o.expire.is_none() {
            o.keep_ttl = true;
        } else if let (Some(kind), Some(time)) = (expire_kind, next) {
            let compatible = !o.keep_ttl && o.expire.map_or(true, |(k, _)| k == kind);
            if !compatible {
                return Err(Reply::Error(ERR_SYNTAX.to_string()));
            }
            o.expire = Some((kind, time));
            j += 1;
        } else {
            return Err(Reply::Error(ERR_SYNTAX.to_string()));
        }
        j += 1;
    }
    Ok(o)
}

/// The absolute deadline (wall **ms**) of a `SET` expire option, or the error reply
/// (`getExpireMillisecondsOrReply`, `src/t_string.c`): the time must be an integer
/// ([`ERR_NOT_INTEGER`]) and > 0, seconds must not overflow when multiplied by 1000, and
/// `now_ms + time` (for `EX`/`PX`) must neither overflow nor be <= 0 — otherwise
/// `ERR invalid expire time in 'set' command`. With `EXAT`/`PXAT` the time is already
/// absolute (it may lie in the past: the key is then expired at its next access).
///
/// Consequence of Redis's `<= 0` check: while the wall clock reads at or before its epoch
/// (`now_ms <= -ttl`), every `SET .. PX ttl` fails with `invalid expire time`, as it would on a
/// real server whose clock is set before 1970. Scenarios and the conformance replayer start
/// wall clocks at a realistic Unix time (2026-01-01T00:00:00Z by default), as real servers
/// read, so only a step of decades back reaches this.
fn set_deadline_ms(kind: ExpireOpt, time: &str, now_ms: i64) -> Result<i64, Reply> {
    let value = integer_arg(time)?;
    let seconds = matches!(kind, ExpireOpt::Ex | ExpireOpt::ExAt);
    if value <= 0 || (seconds && value > i64::MAX / 1000) {
        return Err(err_invalid_expire("set"));
    }
    let ms = if seconds { value * 1000 } else { value };
    let when = match kind {
        ExpireOpt::Ex | ExpireOpt::Px => ms.checked_add(now_ms),
        ExpireOpt::ExAt | ExpireOpt::PxAt => Some(ms),
    };
    match when {
        Some(w) if w > 0 => Ok(w),
        _ => Err(err_invalid_expire("set")),
    }
}

/// `SET key value [NX|XX] [GET] [EX s|PX ms|EXAT unix-s|PXAT unix-ms|KEEPTTL]`
/// (`setCommand` / `setGenericCommand`, `src/t_string.c`; redis.io/commands/set), in Redis's
/// order: parse options (syntax error), validate the expire time (error even if `NX` would
/// fail), `GET`'s read of the old value, then the `NX`/`XX` condition on the live key (an
/// expired key is absent), then store. Storing replaces the value and, without `KEEPTTL`,
/// the TTL (a plain `SET` makes the key persistent). Reply: `OK`, or nil if `NX`/`XX`
/// prevented the set; with `GET`, the old value (bulk or nil) in both cases.
fn cmd_set<S: AsRef<str>>(ks: &mut Keyspace, args: &[S], now_ms: i64) -> Result<Reply, Reply> {
    let opts = parse_set_options(args)?;
    let deadline = match opts.expire {
        Some((kind, time)) => Some(set_deadline_ms(kind, time, now_ms)?),
        None => None,
    };
    let key = args[1].as_ref();
    // Only what the reply and KEEPTTL need of the current entry (no copy of its value
    // unless GET asks for it).
    let (found, old_value_reply, old_expiry) = match ks.lookup_at_ms(key, now_ms) {
        Some(e) => (
            true,
            if opts.get {
                Reply::Bulk(e.value.clone())
            } else {
                Reply::Nil
            },
            e.expires_at_ms,
        ),
        None => (false, Reply::Nil, None),
    };
    if (opts.nx && found) || (opts.xx && !found) {
        return Ok(if opts.get {
            old_value_reply
        } else {
            Reply::Nil
        });
    }
    let expires_at_ms = if opts.keep_ttl { old_expiry } else { deadline };
    ks.insert(
        key.to_string(),
        Entry {
            value: args[2].as_ref().to_string(),
            expires_at_ms,
        },
    );
    Ok(if opts.get {
        old_value_reply
    } else {
        Reply::ok()
    })
}

// ---------------------------------------------------------------------------------------
// PEXPIRE
// ---------------------------------------------------------------------------------------

/// `PEXPIRE key ms [NX|XX|GT|LT]` (`expireGenericCommand`, `src/expire.c`;
/// redis.io/commands/pexpire), in Redis's order:
/// 1. options (`args[3..]`, case-insensitive): unknown -> `ERR Unsupported option <opt>`;
///    `NX` with any of `XX`/`GT`/`LT` -> `ERR NX and XX, GT or LT options at the same time
///    are not compatible`; `GT` with `LT` -> `ERR GT and LT options at the same time are not
///    compatible`;
/// 2. `ms` must be an integer ([`ERR_NOT_INTEGER`]); negative values are allowed;
///    `now_ms + ms` overflowing `i64` -> `ERR invalid expire time in 'pexpire' command`;
/// 3. absent (or expired) key -> 0;
/// 4. `NX`: only if the key has no TTL; `XX`: only if it has one; `GT`: only if the new
///    deadline is later than the current one (no TTL counts as infinite, so `GT` fails);
///    `LT`: only if earlier (no TTL counts as infinite, so `LT` succeeds) -> else 0;
/// 5. deadline `<= now_ms` (a non-positive `ms`): the key is **deleted** and the reply is 1
///    (Redis documentation `commands/expire.md`, redis.io/commands/expire: "calling
///    `EXPIRE`/`PEXPIRE` with a non-positive timeout ... will result in the key being deleted
///    rather than expired"; `checkAlreadyExpired` in `src/expire.c`). Note the asymmetry with
///    lazy expiry: a deadline equal to now keeps a key alive ([`super::store`]), but
///    `PEXPIRE key 0` deletes it at once;
/// 6. else the deadline becomes `now_ms + ms` (replacing any previous one) -> 1.
fn cmd_pexpire<S: AsRef<str>>(ks: &mut Keyspace, args: &[S], now_ms: i64) -> Result<Reply, Reply> {
    let (mut nx, mut xx, mut gt, mut lt) = (false, false, false, false);
    for opt in &args[3..] {
        let opt = opt.as_ref();
        let is = |name: &str| opt.eq_ignore_ascii_case(name);
        if is("NX") {
            nx = true;
        } else if is("XX") {
            xx = true;
        } else if is("GT") {
            gt = true;
        } else if is("LT") {
            lt = true;
        } else {
            return Err(Reply::Error(sanitize(format!(
                "ERR Unsupported option {opt}"
            ))));
        }
    }
    if nx && (xx || gt || lt) {
        return Err(Reply::Error(
            "ERR NX and XX, GT or LT options at the same time are not compatible".to_string(),
        ));
    }
    if gt && lt {
        return Err(Reply::Error(
            "ERR GT and LT options at the same time are not compatible".to_string(),
        ));
    }
    let ms = integer_arg(args[2].as_ref())?;
    let when = match ms.checked_add(now_ms) {
        Some(w) => w,
        // Redis rejects `ms > LLONG_MAX - basetime`.
        None if ms > 0 => return Err(err_invalid_expire("pexpire")),
        // Underflow: a deadline far in the past, which deletes the key below.
        None => i64::MIN,
    };
    let key = args[1].as_ref();
    let Some(entry) = ks.lookup_at_ms(key, now_ms) else {
        return Ok(Reply::Integer(0));
    };
    let current = entry.expires_at_ms;
    let refused = (nx && current.is_some())
        || (xx && current.is_none())
        || (gt && current.map_or(true, |c| when <= c))
        || (lt && current.is_some_and(|c| when >= c));
    if refused {
        return Ok(Reply::Integer(0));
    }
    if when <= now_ms {
        ks.remove(key);
    } else {
        ks.set_expire_at_ms(key, Some(when));
    }
    Ok(Reply::Integer(1))
}

// ---------------------------------------------------------------------------------------
// EVAL, EVALSHA, SCRIPT LOAD (the recognised lock scripts)
// ---------------------------------------------------------------------------------------

/// `EVAL script numkeys key... arg...` (`evalGenericCommand`, `src/eval.c`;
/// redis.io/commands/eval). `numkeys` must be an integer ([`ERR_NOT_INTEGER`]), not larger
/// than the number of remaining arguments ([`ERR_NUMKEYS_TOO_BIG`]) and not negative
/// ([`ERR_NUMKEYS_NEGATIVE`]). Then the script is named by the SHA1 of its text: a
/// [`KNOWN_SCRIPTS`] entry is run and cached (Redis compiles and caches every `EVAL`ed script,
/// so a later `EVALSHA` finds it); anything else gets [`UNSUPPORTED_SCRIPT_ERROR`].
fn cmd_eval<S: AsRef<str>>(
    ks: &mut Keyspace,
    scripts: &mut ScriptCache,
    args: &[S],
    now_ms: i64,
) -> Result<Reply, Reply> {
    let (keys, argv) = split_keys(args)?;
    let text = args[1].as_ref();
    // The simulated clients' own scripts are matched by text, sparing them the hash.
    let script = if text == RELEASE_SCRIPT {
        Some(&KNOWN_SCRIPTS[0])
    } else if text == EXTEND_SCRIPT {
        Some(&KNOWN_SCRIPTS[1])
    } else {
        known_script(&script_sha1(text))
    };
    let Some(script) = script else {
        return Err(Reply::Error(UNSUPPORTED_SCRIPT_ERROR.to_string()));
    };
    scripts.insert(script.sha1);
    Ok(run_script(ks, script.kind, keys, argv, now_ms))
}

/// `EVALSHA sha1 numkeys key... arg...` (`evalShaCommand` and `evalGenericCommand`,
/// `src/eval.c`): a `sha1` that is not 40 bytes long is [`NOSCRIPT_ERROR`] at once; then
/// `numkeys` is checked as for `EVAL`; the SHA1 is matched case-insensitively (Redis lowers
/// it) against the script cache: [`NOSCRIPT_ERROR`] if absent, else the script runs.
fn cmd_evalsha<S: AsRef<str>>(
    ks: &mut Keyspace,
    scripts: &mut ScriptCache,
    args: &[S],
    now_ms: i64,
) -> Result<Reply, Reply> {
    if args[1].as_ref().len() != 40 {
        return Err(Reply::Error(NOSCRIPT_ERROR.to_string()));
    }
    let (keys, argv) = split_keys(args)?;
    let sha = args[1].as_ref().to_ascii_lowercase();
    if !scripts.contains(&sha) {
        return Err(Reply::Error(NOSCRIPT_ERROR.to_string()));
    }
    match known_script(&sha) {
        Some(script) => Ok(run_script(ks, script.kind, keys, argv, now_ms)),
        None => Err(Reply::Error(UNSUPPORTED_SCRIPT_ERROR.to_string())),
    }
}

/// `SCRIPT LOAD script` (`scriptCommand`, `src/eval.c`): caches the script and replies its
/// SHA1 as a bulk string. Real Redis compiles the text first and replies a compile error for
/// invalid Lua; this model has no Lua compiler and caches any text (running an unrecognised
/// one later gives [`UNSUPPORTED_SCRIPT_ERROR`]). Other subcommands are not modelled and get
/// Redis's unknown-subcommand error; `LOAD` with another argument count gets the
/// container command's arity error (`script|load`).
fn cmd_script<S: AsRef<str>>(scripts: &mut ScriptCache, args: &[S]) -> Result<Reply, Reply> {
    let sub = args[1].as_ref();
    if !sub.eq_ignore_ascii_case("load") {
        return Err(Reply::Error(sanitize(format!(
            "ERR unknown subcommand '{}'. Try SCRIPT HELP.",
            truncate_bytes(sub, 128)
        ))));
    }
    if args.len() != 3 {
        return Err(Reply::Error(
            "ERR wrong number of arguments for 'script|load' command".to_string(),
        ));
    }
    let sha = script_sha1(args[2].as_ref());
    scripts.insert(&sha);
    Ok(Reply::Bulk(sha))
}

/// Splits `script numkeys key... arg...` (from `args[2]` on) into keys and args, with
/// `evalGenericCommand`'s checks of `numkeys`.
fn split_keys<S: AsRef<str>>(args: &[S]) -> Result<(&[S], &[S]), Reply> {
    let numkeys = integer_arg(args[2].as_ref())?;
    let rest = &args[3..];
    let available = i64::try_from(rest.len()).unwrap_or(i64::MAX);
    if numkeys > available {
        return Err(Reply::Error(ERR_NUMKEYS_TOO_BIG.to_string()));
    }
    let Ok(numkeys) = usize::try_from(numkeys) else {
        return Err(Reply::Error(ERR_NUMKEYS_NEGATIVE.to_string()));
    };
    Ok(rest.split_at(numkeys))
}

/// `redis.call(...)`: every argument must be a Lua string or number (a missing `KEYS[i]` or
/// `ARGV[i]` is `nil` -> [`ERR_LUA_ARGS`]); the command runs through the same dispatcher as a
/// client's command, at the script's frozen time (`scriptTimeSnapshot`, `src/script.c`: a
/// script sees one wall-clock reading); an error reply is raised as the script's error
/// (`luaRedisGenericCommand`, `src/script_lua.c`). Real Redis appends
/// ` script: <sha1>, on @user_script:<line>.` to such errors; this model gives the command's
/// own error text (the conformance replayer compares up to that suffix).
fn redis_call<const N: usize>(
    ks: &mut Keyspace,
    call: [Option<&str>; N],
    now_ms: i64,
) -> Result<Reply, Reply> {
    let mut args = [""; N];
    for (arg, a) in args.iter_mut().zip(call) {
        match a {
            Some(s) => *arg = s,
            None => return Err(Reply::Error(ERR_LUA_ARGS.to_string())),
        }
    }
    match execute_at_ms(ks, &mut ScriptCache::default(), &args, now_ms) {
        e @ Reply::Error(_) => Err(e),
        ok => Ok(ok),
    }
}

/// Runs a recognised lock script (see [`ScriptKind`]).
///
/// Lua semantics used: `GET` of an absent key returns `false`, which never equals a string nor
/// `nil`, so an absent key (or a missing `ARGV[1]`) gives 0, also for an empty value; a
/// present value equals `ARGV[1]` iff the bytes are equal. An integer reply of `redis.call`
/// is returned unchanged (integer -> Lua number -> integer).
fn run_script<S: AsRef<str>>(
    ks: &mut Keyspace,
    kind: ScriptKind,
    keys: &[S],
    argv: &[S],
    now_ms: i64,
) -> Reply {
    let key = keys.first().map(AsRef::as_ref);
    let arg = |i: usize| argv.get(i).map(AsRef::as_ref);
    // `redis.call('get',KEYS[1])`: a missing KEYS[1] is Lua nil (the redis_call error);
    // otherwise it is exactly `GET key` (arity 2, lazy expiry), compared in place instead of
    // copying the value into a bulk reply.
    let Some(k) = key else {
        return Reply::Error(ERR_LUA_ARGS.to_string());
    };
    let matches = match (ks.lookup_at_ms(k, now_ms), arg(0)) {
        (Some(e), Some(a)) => e.value == a,
        _ => false,
    };
    if !matches {
        return Reply::Integer(0);
    }
    let result = match kind {
        ScriptKind::CompareDel => redis_call(ks, [Some("del"), key], now_ms),
        ScriptKind::ComparePexpire => redis_call(ks, [Some("pexpire"), key, arg(1)], now_ms),
        ScriptKind::RemainingTtl => match cmd_pttl(ks, k, now_ms) {
            Reply::Integer(ms) if ms > 0 => Ok(Reply::Integer(ms)),
            _ => Ok(Reply::Integer(0)),
        },
        ScriptKind::AddOrReplaceTtl => add_or_replace_ttl(ks, k, arg(1), arg(2), now_ms),
    };
    result.unwrap_or_else(|e| e)
}

/// The tail of redis-py's extend script, once the value matched:
/// `expiration = PTTL; if expiration < 0 then return 0 end; newttl = ARGV[2];
/// if ARGV[3] == "0" then newttl = ARGV[2] + expiration end; PEXPIRE key newttl; return 1`.
/// Lua's `ARGV[2] + expiration` converts the string to a number; the model takes a Redis
/// integer there (redis-py sends `int(seconds * 1000)`), and replies an `ERR` error of its
/// own otherwise (real Redis: a Lua arithmetic error) or on overflow.
fn add_or_replace_ttl(
    ks: &mut Keyspace,
    key: &str,
    ttl: Option<&str>,
    mode: Option<&str>,
    now_ms: i64,
) -> Result<Reply, Reply> {
    let Reply::Integer(expiration) = cmd_pttl(ks, key, now_ms) else {
        return Ok(Reply::Integer(0));
    };
    if expiration < 0 {
        return Ok(Reply::Integer(0));
    }
    let new_ttl = if mode == Some("0") {
        let added = ttl
            .and_then(parse_redis_integer)
            .and_then(|t| t.checked_add(expiration));
        let Some(added) = added else {
            return Err(Reply::Error(
                "ERR splitbrain model: ARGV[2] of the redis-py extend script is not an integer"
                    .to_string(),
            ));
        };
        Some(added.to_string())
    } else {
        ttl.map(str::to_string)
    };
    redis_call(ks, [Some("pexpire"), Some(key), new_ttl.as_deref()], now_ms)?;
    Ok(Reply::Integer(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redis::store::NS_PER_MS;

    const MS: i64 = NS_PER_MS;

    fn a(parts: &[&str]) -> Vec<String> {
        parts.iter().map(|s| s.to_string()).collect()
    }

    fn run(ks: &mut Keyspace, parts: &[&str], now_ms: i64) -> Reply {
        execute(ks, &a(parts), now_ms * MS)
    }

    fn err(s: &str) -> Reply {
        Reply::Error(s.to_string())
    }

    #[test]
    fn integer_syntax_is_string2ll() {
        for ok in [
            ("0", 0),
            ("1", 1),
            ("-1", -1),
            ("500", 500),
            ("9223372036854775807", i64::MAX),
            ("-9223372036854775808", i64::MIN),
        ] {
            assert_eq!(parse_redis_integer(ok.0), Some(ok.1), "{}", ok.0);
        }
        for bad in [
            "",
            "-",
            "-0",
            "+1",
            " 1",
            "1 ",
            "01",
            "1.5",
            "1e3",
            "abc",
            "100abc",
            "9223372036854775808",
            "-9223372036854775809",
            "000000000000000000001",
        ] {
            assert_eq!(parse_redis_integer(bad), None, "{bad:?}");
        }
    }

    /// Pins the ms-granularity expiry boundary of a key set with PX 30000 at wall 0.
    #[test]
    fn px_30000_boundary() {
        let mut ks = Keyspace::new();
        assert_eq!(ks.set_nx_px("k", "a", 30_000, 0), Ok(true));
        // Deadline is 30_000 ms. One ns before it: ms 29_999, alive, PTTL 1.
        let deadline_ns = 30_000 * MS;
        assert_eq!(ks.set_nx_px("k", "b", 10, deadline_ns - 1), Ok(false));
        assert_eq!(
            execute(&mut ks, &a(&["PTTL", "k"]), deadline_ns - 1),
            Reply::Integer(1)
        );
        // At the deadline: now == when, NOT expired (Redis: now > when), PTTL 0.
        assert_eq!(ks.set_nx_px("k", "b", 10, deadline_ns), Ok(false));
        assert_eq!(
            execute(&mut ks, &a(&["PTTL", "k"]), deadline_ns),
            Reply::Integer(0)
        );
        // Still ms 30_000 at deadline + 999_999 ns: alive.
        assert_eq!(ks.get("k", deadline_ns + MS - 1), Ok(Some("a".into())));
        // deadline + 1 ms: expired; SET NX succeeds.
        assert_eq!(ks.set_nx_px("k", "b", 10, deadline_ns + MS), Ok(true));
        assert_eq!(ks.get("k", deadline_ns + MS), Ok(Some("b".into())));
    }

    #[test]
    fn set_nx_xx_and_syntax() {
        let mut ks = Keyspace::new();
        assert_eq!(
            run(&mut ks, &["SET", "k", "v", "NX", "XX"], 0),
            err(ERR_SYNTAX)
        );
        assert_eq!(
            run(&mut ks, &["SET", "k", "v", "XX", "NX"], 0),
            err(ERR_SYNTAX)
        );
        assert_eq!(run(&mut ks, &["SET", "k", "v", "PX"], 0), err(ERR_SYNTAX));
        assert_eq!(
            run(&mut ks, &["SET", "k", "v", "PX", "5", "EX", "5"], 0),
            err(ERR_SYNTAX)
        );
        assert_eq!(
            run(&mut ks, &["SET", "k", "v", "KEEPTTL", "PX", "5"], 0),
            err(ERR_SYNTAX)
        );
        assert_eq!(
            run(&mut ks, &["SET", "k", "v", "PX", "5", "KEEPTTL"], 0),
            err(ERR_SYNTAX)
        );
        assert_eq!(run(&mut ks, &["SET", "k", "v", "FOO"], 0), err(ERR_SYNTAX));
        // Syntax is checked before the time value.
        assert_eq!(
            run(&mut ks, &["SET", "k", "v", "PX", "abc", "BAR"], 0),
            err(ERR_SYNTAX)
        );
        // "PX PX 5": the second PX is PX's time argument, then "5" is a syntax error.
        assert_eq!(
            run(&mut ks, &["SET", "k", "v", "PX", "PX", "5"], 0),
            err(ERR_SYNTAX)
        );
        // Repeated NX, repeated PX (last wins) are accepted; options are case-insensitive.
        assert_eq!(
            run(
                &mut ks,
                &["set", "k", "v", "nx", "Nx", "px", "5", "pX", "100"],
                0
            ),
            Reply::ok()
        );
        assert_eq!(run(&mut ks, &["PTTL", "k"], 0), Reply::Integer(100));
        // XX on a present key overwrites and (without TTL option) clears the TTL.
        assert_eq!(run(&mut ks, &["SET", "k", "w", "XX"], 1), Reply::ok());
        assert_eq!(run(&mut ks, &["PTTL", "k"], 1), Reply::Integer(-1));
        // XX on an absent key: nil.
        assert_eq!(run(&mut ks, &["SET", "z", "w", "XX"], 1), Reply::Nil);
        assert_eq!(run(&mut ks, &["GET", "z"], 1), Reply::Nil);
        assert_eq!(
            run(&mut ks, &["SET", "k"], 1),
            err("ERR wrong number of arguments for 'set' command")
        );
    }

    #[test]
    fn set_expire_validation_order_and_texts() {
        let mut ks = Keyspace::new();
        let invalid = err("ERR invalid expire time in 'set' command");
        assert_eq!(
            run(&mut ks, &["SET", "k", "v", "NX", "PX", "0"], 5),
            invalid
        );
        assert_eq!(
            run(&mut ks, &["SET", "k", "v", "NX", "PX", "-1"], 5),
            invalid
        );
        assert_eq!(
            run(&mut ks, &["SET", "k", "v", "EX", "9223372036854776"], 5),
            invalid
        );
        assert_eq!(
            run(&mut ks, &["SET", "k", "v", "PX", "9223372036854775807"], 5),
            invalid
        );
        assert_eq!(
            run(&mut ks, &["SET", "k", "v", "PX", "1.5"], 5),
            err(ERR_NOT_INTEGER)
        );
        // Present key: the invalid time still wins over NX.
        assert_eq!(
            run(&mut ks, &["SET", "k", "v", "NX", "PX", "500"], 5),
            Reply::ok()
        );
        assert_eq!(
            run(&mut ks, &["SET", "k", "x", "NX", "PX", "0"], 6),
            invalid
        );
        assert_eq!(
            run(&mut ks, &["SET", "k", "x", "NX", "PX", "500"], 6),
            Reply::Nil
        );
        assert_eq!(run(&mut ks, &["GET", "k"], 6), Reply::Bulk("v".into()));
        // EX is seconds.
        assert_eq!(run(&mut ks, &["SET", "s", "v", "EX", "2"], 10), Reply::ok());
        assert_eq!(run(&mut ks, &["PTTL", "s"], 10), Reply::Integer(2000));
    }

    #[test]
    fn set_get_keepttl_and_absolute_times() {
        let mut ks = Keyspace::new();
        assert_eq!(run(&mut ks, &["SET", "k", "a", "GET"], 0), Reply::Nil);
        assert_eq!(
            run(&mut ks, &["SET", "k", "b", "GET", "PX", "100"], 0),
            Reply::Bulk("a".into())
        );
        assert_eq!(run(&mut ks, &["SET", "k", "c", "KEEPTTL"], 10), Reply::ok());
        assert_eq!(run(&mut ks, &["PTTL", "k"], 10), Reply::Integer(90));
        // NX + GET on a present key: the old value, nothing set.
        assert_eq!(
            run(&mut ks, &["SET", "k", "d", "NX", "GET"], 10),
            Reply::Bulk("c".into())
        );
        assert_eq!(run(&mut ks, &["GET", "k"], 10), Reply::Bulk("c".into()));
        // PXAT is absolute; a past PXAT gives OK and a key expired at the next access.
        assert_eq!(
            run(&mut ks, &["SET", "p", "v", "PXAT", "500"], 10),
            Reply::ok()
        );
        assert_eq!(run(&mut ks, &["PTTL", "p"], 10), Reply::Integer(490));
        assert_eq!(
            run(&mut ks, &["SET", "q", "v", "PXAT", "5"], 10),
            Reply::ok()
        );
        assert_eq!(run(&mut ks, &["GET", "q"], 10), Reply::Nil);
        assert_eq!(
            run(&mut ks, &["SET", "e", "v", "EXAT", "3"], 10),
            Reply::ok()
        );
        assert_eq!(run(&mut ks, &["PTTL", "e"], 10), Reply::Integer(2990));
    }

    #[test]
    fn pexpire_non_positive_deletes() {
        let mut ks = Keyspace::new();
        for ms in ["0", "-1", "-9223372036854775808"] {
            assert_eq!(run(&mut ks, &["SET", "k", "v"], 100), Reply::ok());
            assert_eq!(run(&mut ks, &["PEXPIRE", "k", ms], 100), Reply::Integer(1));
            assert_eq!(run(&mut ks, &["PTTL", "k"], 100), Reply::Integer(-2));
            assert_eq!(
                ks.stored_len(),
                0,
                "PEXPIRE {ms} must delete, not just expire"
            );
        }
        // Absent key: 0.
        assert_eq!(
            run(&mut ks, &["PEXPIRE", "k", "100"], 100),
            Reply::Integer(0)
        );
        // Overflow and syntax.
        assert_eq!(run(&mut ks, &["SET", "k", "v"], 100), Reply::ok());
        assert_eq!(
            run(&mut ks, &["PEXPIRE", "k", "9223372036854775807"], 100),
            err("ERR invalid expire time in 'pexpire' command")
        );
        assert_eq!(
            run(&mut ks, &["PEXPIRE", "k", "x"], 100),
            err(ERR_NOT_INTEGER)
        );
        assert_eq!(
            run(&mut ks, &["PEXPIRE", "k", "x", "FOO"], 100),
            err("ERR Unsupported option FOO")
        );
        assert_eq!(
            run(&mut ks, &["PEXPIRE", "k", "5", "NX", "GT"], 100),
            err("ERR NX and XX, GT or LT options at the same time are not compatible")
        );
        assert_eq!(
            run(&mut ks, &["PEXPIRE", "k", "5", "gt", "lt"], 100),
            err("ERR GT and LT options at the same time are not compatible")
        );
        assert_eq!(
            run(&mut ks, &["PEXPIRE", "k"], 100),
            err("ERR wrong number of arguments for 'pexpire' command")
        );
    }

    #[test]
    fn pexpire_conditions() {
        let mut ks = Keyspace::new();
        assert_eq!(run(&mut ks, &["SET", "k", "v"], 0), Reply::ok());
        // No TTL: XX and GT refuse, LT and NX accept.
        assert_eq!(
            run(&mut ks, &["PEXPIRE", "k", "100", "XX"], 0),
            Reply::Integer(0)
        );
        assert_eq!(
            run(&mut ks, &["PEXPIRE", "k", "100", "GT"], 0),
            Reply::Integer(0)
        );
        assert_eq!(
            run(&mut ks, &["PEXPIRE", "k", "100", "LT"], 0),
            Reply::Integer(1)
        );
        assert_eq!(
            run(&mut ks, &["PEXPIRE", "k", "100", "NX"], 0),
            Reply::Integer(0)
        );
        assert_eq!(
            run(&mut ks, &["PEXPIRE", "k", "200", "GT"], 0),
            Reply::Integer(1)
        );
        assert_eq!(
            run(&mut ks, &["PEXPIRE", "k", "150", "GT"], 0),
            Reply::Integer(0)
        );
        assert_eq!(
            run(&mut ks, &["PEXPIRE", "k", "50", "LT", "XX"], 0),
            Reply::Integer(1)
        );
        assert_eq!(run(&mut ks, &["PTTL", "k"], 0), Reply::Integer(50));
    }

    #[test]
    fn del_variadic_and_expired() {
        let mut ks = Keyspace::new();
        run(&mut ks, &["SET", "a", "1"], 0);
        run(&mut ks, &["SET", "b", "2", "PX", "10"], 0);
        run(&mut ks, &["SET", "c", "3"], 0);
        assert_eq!(
            run(&mut ks, &["DEL", "a", "a", "b", "c", "zz"], 11),
            Reply::Integer(2)
        );
        assert!(ks.is_empty());
        assert_eq!(
            run(&mut ks, &["DEL"], 0),
            err("ERR wrong number of arguments for 'del' command")
        );
    }

    #[test]
    fn get_pttl_arity() {
        let mut ks = Keyspace::new();
        assert_eq!(
            run(&mut ks, &["GET", "a", "b"], 0),
            err("ERR wrong number of arguments for 'get' command")
        );
        assert_eq!(
            run(&mut ks, &["pttl"], 0),
            err("ERR wrong number of arguments for 'pttl' command")
        );
    }

    #[test]
    fn unknown_command_text() {
        let mut ks = Keyspace::new();
        assert_eq!(
            run(&mut ks, &["FOO", "a", "b c"], 0),
            err("ERR unknown command 'FOO', with args beginning with: 'a' 'b c' ")
        );
        assert_eq!(
            run(&mut ks, &["fcall"], 0),
            err("ERR unknown command 'fcall', with args beginning with: ")
        );
        assert_eq!(
            run(&mut ks, &["evalsha"], 0),
            err("ERR wrong number of arguments for 'evalsha' command")
        );
        assert_eq!(
            execute(&mut ks, &[], 0),
            err("ERR unknown command '', with args beginning with: ")
        );
        assert_eq!(
            run(&mut ks, &["X\r\nY", "a\nb"], 0),
            err("ERR unknown command 'X  Y', with args beginning with: 'a b' ")
        );
        // Arguments are listed while the list is shorter than 128 bytes.
        let long = "x".repeat(200);
        let Reply::Error(text) = run(&mut ks, &["FOO", &long, "next"], 0) else {
            panic!("error expected");
        };
        assert_eq!(
            text,
            format!(
                "ERR unknown command 'FOO', with args beginning with: '{}' ",
                "x".repeat(128)
            )
        );
    }

    #[test]
    fn release_script() {
        let mut ks = Keyspace::new();
        assert_eq!(ks.release_if_value("k", "a", 0), Ok(false));
        assert_eq!(ks.set_nx_px("k", "a", 1000, 0), Ok(true));
        assert_eq!(ks.release_if_value("k", "b", 0), Ok(false));
        assert_eq!(ks.get("k", 0), Ok(Some("a".into())));
        assert_eq!(ks.release_if_value("k", "a", 0), Ok(true));
        assert_eq!(ks.get("k", 0), Ok(None));
        // Empty token on an absent key: Lua false != "".
        assert_eq!(ks.release_if_value("k", "", 0), Ok(false));
        // Empty value stored, empty token: equal strings.
        assert_eq!(run(&mut ks, &["SET", "e", ""], 0), Reply::ok());
        assert_eq!(ks.release_if_value("e", "", 0), Ok(true));
        // Expired key with the right token: 0.
        assert_eq!(ks.set_nx_px("k", "a", 10, 0), Ok(true));
        assert_eq!(ks.release_if_value("k", "a", 11 * MS), Ok(false));
    }

    #[test]
    fn extend_script() {
        let mut ks = Keyspace::new();
        assert_eq!(ks.set_nx_px("k", "a", 300, 0), Ok(true));
        assert_eq!(ks.extend_if_value("k", "b", 5000, 10 * MS), Ok(false));
        assert_eq!(run(&mut ks, &["PTTL", "k"], 10), Reply::Integer(290));
        assert_eq!(ks.extend_if_value("k", "a", 500, 100 * MS), Ok(true));
        assert_eq!(run(&mut ks, &["PTTL", "k"], 100), Reply::Integer(500));
        // Non-positive TTL through the script: pexpire deletes, reply 1.
        assert_eq!(ks.extend_if_value("k", "a", 0, 100 * MS), Ok(true));
        assert_eq!(ks.get("k", 100 * MS), Ok(None));
        // Expired: 0, and no resurrection.
        assert_eq!(ks.set_nx_px("k", "a", 10, 0), Ok(true));
        assert_eq!(ks.extend_if_value("k", "a", 500, 11 * MS), Ok(false));
        assert_eq!(ks.get("k", 11 * MS), Ok(None));
    }

    #[test]
    fn script_errors() {
        let mut ks = Keyspace::new();
        assert_eq!(run(&mut ks, &["SET", "k", "a"], 0), Reply::ok());
        // Error raised by redis.call inside the extend script.
        assert_eq!(
            run(&mut ks, &["EVAL", EXTEND_SCRIPT, "1", "k", "a", "abc"], 0),
            err(ERR_NOT_INTEGER)
        );
        assert_eq!(
            run(
                &mut ks,
                &["EVAL", EXTEND_SCRIPT, "1", "k", "a", "9223372036854775807"],
                5
            ),
            err("ERR invalid expire time in 'pexpire' command")
        );
        // Missing ARGV[2] with a matching value: nil argument.
        assert_eq!(
            run(&mut ks, &["EVAL", EXTEND_SCRIPT, "1", "k", "a"], 0),
            err(ERR_LUA_ARGS)
        );
        // Missing ARGV[1]: never equal, 0.
        assert_eq!(
            run(&mut ks, &["EVAL", RELEASE_SCRIPT, "1", "k"], 0),
            Reply::Integer(0)
        );
        // numkeys 0: KEYS[1] is nil.
        assert_eq!(
            run(&mut ks, &["EVAL", RELEASE_SCRIPT, "0", "k"], 0),
            err(ERR_LUA_ARGS)
        );
        assert_eq!(
            run(&mut ks, &["EVAL", RELEASE_SCRIPT, "x", "k"], 0),
            err(ERR_NOT_INTEGER)
        );
        assert_eq!(
            run(&mut ks, &["EVAL", RELEASE_SCRIPT, "3", "k", "a"], 0),
            err(ERR_NUMKEYS_TOO_BIG)
        );
        assert_eq!(
            run(&mut ks, &["EVAL", RELEASE_SCRIPT, "-1", "k", "a"], 0),
            err(ERR_NUMKEYS_NEGATIVE)
        );
        assert_eq!(
            run(&mut ks, &["EVAL", "return 1", "0"], 0),
            err(UNSUPPORTED_SCRIPT_ERROR)
        );
        assert_eq!(
            run(&mut ks, &["EVAL", RELEASE_SCRIPT], 0),
            err("ERR wrong number of arguments for 'eval' command")
        );
        // Nothing was changed by the failing calls.
        assert_eq!(ks.get("k", 0), Ok(Some("a".into())));
        assert_eq!(run(&mut ks, &["PTTL", "k"], 0), Reply::Integer(-1));
    }

    #[test]
    fn typed_helpers_surface_errors() {
        let mut ks = Keyspace::new();
        assert_eq!(
            ks.set_nx_px("k", "a", 0, 0),
            Err(CommandError::Redis(
                "ERR invalid expire time in 'set' command".into()
            ))
        );
        assert!(matches!(
            decode_get(&Reply::Integer(3)),
            Err(CommandError::Unexpected { command: "get", .. })
        ));
        assert!(decode_flag("release", &Reply::Integer(2)).is_err());
        assert_eq!(decode_integer("del", &Reply::Integer(2)), Ok(2));
        assert_eq!(ks.execute(&del_args("k"), 0), Reply::Integer(0));
    }

    #[test]
    fn reply_json_form() {
        assert_eq!(Reply::ok().to_json(), json!("OK"));
        assert_eq!(Reply::Bulk("x".into()).to_json(), json!("x"));
        assert_eq!(Reply::Nil.to_json(), Value::Null);
        assert_eq!(Reply::Integer(-2).to_json(), json!(-2));
        assert_eq!(
            err("ERR syntax error").to_json(),
            json!({"error": "ERR syntax error"})
        );
        assert_eq!(
            serde_json::to_string(&Reply::Integer(5)).ok(),
            Some(r#"{"integer":5}"#.to_string())
        );
        for r in [
            Reply::ok(),
            Reply::Bulk("OK".into()),
            Reply::Nil,
            err("ERR x"),
        ] {
            let back: Reply = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
            assert_eq!(back, r);
        }
        assert_eq!(Reply::Nil.type_name(), "nil");
    }

    fn scripted(ks: &mut Keyspace, cache: &mut ScriptCache, parts: &[&str], now_ms: i64) -> Reply {
        execute_with_scripts(ks, cache, &a(parts), now_ms * MS)
    }

    /// The known scripts' SHA1s are those of their texts (the model's own two here; the
    /// client libraries' are pinned by the recorded `SCRIPT LOAD` replies).
    #[test]
    fn known_script_shas_are_the_texts_sha1() {
        assert_eq!(KNOWN_SCRIPTS[0].sha1, script_sha1(RELEASE_SCRIPT));
        assert_eq!(KNOWN_SCRIPTS[1].sha1, script_sha1(EXTEND_SCRIPT));
        assert_eq!(
            known_script(&script_sha1(RELEASE_SCRIPT)).map(|s| s.kind),
            Some(ScriptKind::CompareDel)
        );
        assert_eq!(
            known_script(&script_sha1(EXTEND_SCRIPT)).map(|s| s.kind),
            Some(ScriptKind::ComparePexpire)
        );
        assert_eq!(
            script_sha1("return 1"),
            "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"
        );
        for (i, s) in KNOWN_SCRIPTS.iter().enumerate() {
            assert_eq!(s.sha1.len(), 40);
            assert!(KNOWN_SCRIPTS[i + 1..].iter().all(|o| o.sha1 != s.sha1));
        }
    }

    /// EVALSHA runs only what EVAL or SCRIPT LOAD cached (NOSCRIPT before, and for a SHA of
    /// another length); the SHA is case-insensitive; SCRIPT's other subcommands and arities.
    #[test]
    fn evalsha_runs_from_the_script_cache() {
        let mut ks = Keyspace::new();
        let mut cache = ScriptCache::default();
        let rel = script_sha1(RELEASE_SCRIPT);
        let ext = script_sha1(EXTEND_SCRIPT);
        assert_eq!(
            run(&mut ks, &["SET", "k", "a", "PX", "1000"], 0),
            Reply::ok()
        );
        assert_eq!(
            scripted(&mut ks, &mut cache, &["EVALSHA", &rel, "1", "k", "a"], 1),
            err(NOSCRIPT_ERROR)
        );
        assert_eq!(
            scripted(&mut ks, &mut cache, &["EVALSHA", "abc", "1", "k", "a"], 1),
            err(NOSCRIPT_ERROR)
        );
        assert_eq!(
            scripted(&mut ks, &mut cache, &["SCRIPT", "LOAD", RELEASE_SCRIPT], 1),
            Reply::Bulk(rel.clone())
        );
        assert_eq!(
            scripted(&mut ks, &mut cache, &["EVALSHA", &rel, "x", "k"], 1),
            err(ERR_NOT_INTEGER)
        );
        assert_eq!(
            scripted(&mut ks, &mut cache, &["EVALSHA", &rel, "1", "k", "b"], 1),
            Reply::Integer(0)
        );
        assert_eq!(
            scripted(
                &mut ks,
                &mut cache,
                &["EVAL", EXTEND_SCRIPT, "1", "k", "a", "5000"],
                2
            ),
            Reply::Integer(1)
        );
        let upper = ext.to_ascii_uppercase();
        assert_eq!(
            scripted(
                &mut ks,
                &mut cache,
                &["evalsha", &upper, "1", "k", "a", "3000"],
                3
            ),
            Reply::Integer(1)
        );
        assert_eq!(run(&mut ks, &["PTTL", "k"], 3), Reply::Integer(3000));
        assert_eq!(
            scripted(&mut ks, &mut cache, &["EVALSHA", &rel, "1", "k", "a"], 4),
            Reply::Integer(1)
        );
        // An unrecognised text is cached by SCRIPT LOAD but cannot run.
        let other = script_sha1("return 1");
        assert_eq!(
            scripted(&mut ks, &mut cache, &["SCRIPT", "LOAD", "return 1"], 5),
            Reply::Bulk(other.clone())
        );
        assert_eq!(
            scripted(&mut ks, &mut cache, &["EVALSHA", &other, "0"], 5),
            err(UNSUPPORTED_SCRIPT_ERROR)
        );
        assert_eq!(
            scripted(&mut ks, &mut cache, &["SCRIPT", "FLUSH"], 5),
            err("ERR unknown subcommand 'FLUSH'. Try SCRIPT HELP.")
        );
        assert_eq!(
            scripted(&mut ks, &mut cache, &["SCRIPT", "LOAD"], 5),
            err("ERR wrong number of arguments for 'script|load' command")
        );
        // Without a cache (a bare keyspace) nothing stays loaded.
        assert_eq!(
            run(&mut ks, &["SCRIPT", "LOAD", RELEASE_SCRIPT], 6),
            Reply::Bulk(rel.clone())
        );
        assert_eq!(
            run(&mut ks, &["EVALSHA", &rel, "1", "k", "a"], 6),
            err(NOSCRIPT_ERROR)
        );
    }

    /// redis-py's extend adds to the remaining TTL when ARGV[3] is "0" and replaces it
    /// otherwise; it refuses a key without a deadline; pottery's "acquired" replies the
    /// remaining TTL.
    #[test]
    fn client_library_scripts() {
        let sha = |name: &str| KNOWN_SCRIPTS.iter().find(|s| s.name == name).unwrap().sha1;
        let mut ks = Keyspace::new();
        let mut cache = ScriptCache::default();
        for s in KNOWN_SCRIPTS {
            cache.insert(s.sha1);
        }
        let py_ext = sha("redis-py Lock extend");
        let acquired = sha("pottery Redlock acquired");
        assert_eq!(
            run(&mut ks, &["SET", "k", "t", "PX", "1000"], 0),
            Reply::ok()
        );
        assert_eq!(
            scripted(
                &mut ks,
                &mut cache,
                &["EVALSHA", py_ext, "1", "k", "t", "500", "0"],
                100
            ),
            Reply::Integer(1)
        );
        assert_eq!(run(&mut ks, &["PTTL", "k"], 100), Reply::Integer(1400));
        assert_eq!(
            scripted(
                &mut ks,
                &mut cache,
                &["EVALSHA", py_ext, "1", "k", "t", "2000", "1"],
                200
            ),
            Reply::Integer(1)
        );
        assert_eq!(run(&mut ks, &["PTTL", "k"], 200), Reply::Integer(2000));
        assert_eq!(
            scripted(
                &mut ks,
                &mut cache,
                &["EVALSHA", py_ext, "1", "k", "u", "2000", "1"],
                200
            ),
            Reply::Integer(0)
        );
        assert_eq!(
            scripted(
                &mut ks,
                &mut cache,
                &["EVALSHA", acquired, "1", "k", "t"],
                300
            ),
            Reply::Integer(1900)
        );
        assert_eq!(
            scripted(
                &mut ks,
                &mut cache,
                &["EVALSHA", acquired, "1", "k", "u"],
                300
            ),
            Reply::Integer(0)
        );
        assert_eq!(run(&mut ks, &["SET", "k", "t"], 400), Reply::ok());
        assert_eq!(
            scripted(
                &mut ks,
                &mut cache,
                &["EVALSHA", py_ext, "1", "k", "t", "500", "0"],
                400
            ),
            Reply::Integer(0)
        );
        assert_eq!(
            scripted(
                &mut ks,
                &mut cache,
                &["EVALSHA", acquired, "1", "k", "t"],
                400
            ),
            Reply::Integer(0)
        );
        assert_eq!(run(&mut ks, &["PTTL", "k"], 400), Reply::Integer(-1));
        assert_eq!(
            run(&mut ks, &["PEXPIRE", "k", "100"], 400),
            Reply::Integer(1)
        );
        let Reply::Error(e) = scripted(
            &mut ks,
            &mut cache,
            &["EVALSHA", py_ext, "1", "k", "t", "x", "0"],
            400,
        ) else {
            panic!("error expected");
        };
        assert!(e.starts_with("ERR "), "{e}");
    }
}
