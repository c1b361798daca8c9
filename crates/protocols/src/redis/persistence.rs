//! A Redis instance with a persistence mode: the live keyspace plus the durable copy that
//! survives a stop.
//!
//! The durable copy stands for the append-only file (AOF). Redis writes deadlines to the AOF
//! as **absolute** times (a `SET .. PX` is propagated as `SET .. PXAT <unix ms>`, a `PEXPIRE`
//! as `PEXPIREAT`: `setGenericCommand` in `src/t_string.c`, `expireGenericCommand` in
//! `src/expire.c`), so here the durable copy simply holds the entries with their absolute
//! wall-clock deadlines. Time keeps running while the instance is down (Redis documentation,
//! `commands/expire.md`, "Expires and persistence": expiry is "stored as absolute Unix
//! timestamps ... the time is flowing even when the Redis instance is not active"): after a
//! restart a key
//! has lost the downtime from its remaining TTL, and keys whose deadline passed during the
//! downtime are expired (the `restart_aof_always_*` vectors show PTTL reduced by the ~1 s
//! downtime).
//!
//! What survives a stop ([`Instance::stop`] then [`Instance::start`]):
//!
//! | persistence     | graceful stop (SIGTERM)       | crash (SIGKILL / host crash)        |
//! |-----------------|-------------------------------|-------------------------------------|
//! | `None`          | nothing (empty)               | nothing (empty)                     |
//! | `AofEverysec`   | everything (flushed on stop)  | state as of the last `fsync_tick()` |
//! | `AofAlways`     | everything                    | everything (each write is durable)  |
//!
//! `None` is `--save '' --appendonly no` (the `restart_no_persistence_*` vectors: the key is
//! gone after both SIGTERM and SIGKILL). `AofAlways` is `--appendfsync always` (the
//! `restart_aof_always_*` vectors: writes, extends and releases all survive SIGKILL).
//! `AofEverysec` is `--appendfsync everysec`: Redis fsyncs the AOF about once a second, so a
//! crash can lose up to ~1 s of writes (redis.io docs, "Redis persistence"). Here the actor
//! calls [`Instance::fsync_tick`] every second and a [`StopKind::Crash`] loses everything
//! written since the last tick. Note: this models a **host** crash (power loss, kernel panic,
//! VM kill). A real `kill -9` of only the process loses nothing with `everysec`, because
//! Redis has already `write(2)`n the data to the OS page cache; to model that, stop with
//! [`StopKind::Graceful`]. No recorded vector covers `everysec`.
//!
//! "Every write is durable at once" for `AofAlways` is modelled by refreshing the durable
//! copy after every command, whatever it was: a read never changes the keyspace except by
//! lazy expiry, which Redis also propagates to the AOF (as a `DEL`), so this is exact.

use serde::{Deserialize, Serialize};

use super::command::{
    decode_flag, decode_get, decode_set_nx_px, execute_with_scripts, extend_args, get_args,
    release_args, set_nx_px_args, CommandError, Reply, ScriptCache,
};
use super::store::{Entry, Keyspace};

/// What survives a stop of a Redis instance (scenario names `none`, `aof_everysec`,
/// `aof_always`). See the module docs for the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Persistence {
    /// No RDB snapshots, no AOF (`--save '' --appendonly no`): every restart comes back empty.
    None,
    /// AOF with `appendfsync everysec`: durable as of the last [`Instance::fsync_tick`];
    /// a graceful stop flushes everything.
    AofEverysec,
    /// AOF with `appendfsync always`: every write is durable when its reply is sent.
    AofAlways,
}

/// How an instance stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopKind {
    /// SIGTERM / `SHUTDOWN`: with AOF the current state is flushed and fsynced first
    /// (Redis's `prepareForShutdown`).
    Graceful,
    /// SIGKILL or host crash: only what was already durable survives.
    Crash,
}

/// Errors of [`Instance`] lifecycle and command calls.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InstanceError {
    /// A command or stop on an instance that is not running.
    #[error("the redis instance is not running")]
    NotRunning,
    /// A start on an instance that is already running.
    #[error("the redis instance is already running")]
    AlreadyRunning,
    /// A typed helper got a Redis error or an unexpected reply.
    #[error(transparent)]
    Command(#[from] CommandError),
}

/// One Redis server: live keyspace, durable copy, persistence mode, running or stopped.
///
/// The instance never reads a clock: every command takes the instance's wall clock as
/// `now_wall_ns` (**ns**), converted to Redis ms by flooring (see `store`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Instance {
    persistence: Persistence,
    running: bool,
    live: Keyspace,
    durable: Keyspace,
    /// The script cache (`EVAL`, `SCRIPT LOAD`, `EVALSHA`): process memory, not in the AOF,
    /// so every stop empties it.
    #[serde(skip)]
    scripts: ScriptCache,
}

impl Instance {
    /// A running instance with an empty keyspace (a fresh server on a fresh data directory).
    pub fn new(persistence: Persistence) -> Self {
        Self {
            persistence,
            running: true,
            live: Keyspace::new(),
            durable: Keyspace::new(),
            scripts: ScriptCache::default(),
        }
    }

    /// A running instance started on an existing data directory whose AOF holds `aof` (what
    /// [`Instance::durable`] returned when it was last made durable): the live keyspace is
    /// loaded from it, and it stays the durable copy. With [`Persistence::None`] there is no
    /// AOF, so `aof` is ignored and the instance starts empty. This is [`Instance::start`] for
    /// a process that kept nothing but its files (the simulator's crash + restart).
    pub fn load(persistence: Persistence, aof: Keyspace) -> Self {
        let aof = match persistence {
            Persistence::None => Keyspace::new(),
            Persistence::AofEverysec | Persistence::AofAlways => aof,
        };
        Self {
            persistence,
            running: true,
            live: aof.clone(),
            durable: aof,
            scripts: ScriptCache::default(),
        }
    }

    /// The persistence mode.
    pub fn persistence(&self) -> Persistence {
        self.persistence
    }

    /// Whether the instance is running (accepting commands).
    pub fn is_running(&self) -> bool {
        self.running
    }

    /// The live keyspace (empty while stopped).
    pub fn keyspace(&self) -> &Keyspace {
        &self.live
    }

    /// The durable copy: what a restart would load now. Always empty for
    /// [`Persistence::None`].
    pub fn durable(&self) -> &Keyspace {
        &self.durable
    }

    /// Runs one command (see [`super::execute`]; `EVAL`, `SCRIPT LOAD` and `EVALSHA` use this
    /// instance's script cache) at wall-clock `now_wall_ns` (ns). With
    /// [`Persistence::AofAlways`] the result is durable before this returns.
    pub fn execute(&mut self, args: &[String], now_wall_ns: i64) -> Result<Reply, InstanceError> {
        if !self.running {
            return Err(InstanceError::NotRunning);
        }
        let reply = execute_with_scripts(&mut self.live, &mut self.scripts, args, now_wall_ns);
        if self.persistence == Persistence::AofAlways {
            self.durable.clone_from(&self.live);
        }
        Ok(reply)
    }

    /// Applies one replicated write (a replica's side of the replication stream): `key` now
    /// holds `entry` (its absolute deadline as the primary computed it, as Redis 7 propagates
    /// `SET .. PX` as `PXAT`), or is deleted (`None`). Durable at once under
    /// [`Persistence::AofAlways`]. No effect while stopped.
    pub fn apply_replicated(&mut self, key: &str, entry: Option<Entry>) {
        if !self.running {
            return;
        }
        match entry {
            Some(e) => self.live.insert(key.to_string(), e),
            None => {
                self.live.remove(key);
            }
        }
        if self.persistence == Persistence::AofAlways {
            self.durable.clone_from(&self.live);
        }
    }

    /// Replaces the whole dataset (a replica's full resynchronisation from its primary).
    pub fn replace_dataset(&mut self, keys: Keyspace) {
        if !self.running {
            return;
        }
        self.live = keys;
        if self.persistence == Persistence::AofAlways {
            self.durable.clone_from(&self.live);
        }
    }

    /// The once-a-second AOF fsync of `appendfsync everysec`: makes the current state durable.
    /// No effect for the other modes (`AofAlways` is always in sync, `None` has no AOF) or
    /// while stopped.
    pub fn fsync_tick(&mut self) {
        if self.running && self.persistence == Persistence::AofEverysec {
            self.durable.clone_from(&self.live);
        }
    }

    /// Stops the instance. A graceful stop with AOF flushes the current state to the durable
    /// copy; a crash keeps only what was durable. The live state is dropped either way.
    pub fn stop(&mut self, kind: StopKind) -> Result<(), InstanceError> {
        if !self.running {
            return Err(InstanceError::NotRunning);
        }
        if kind == StopKind::Graceful && self.persistence != Persistence::None {
            self.durable.clone_from(&self.live);
        }
        self.live = Keyspace::new();
        self.scripts.clear();
        self.running = false;
        Ok(())
    }

    /// Starts a stopped instance on its data: the live keyspace is loaded from the durable
    /// copy (empty for [`Persistence::None`]). Deadlines are absolute wall times, so keys
    /// whose deadline passed while down are expired at their next access.
    pub fn start(&mut self) -> Result<(), InstanceError> {
        if self.running {
            return Err(InstanceError::AlreadyRunning);
        }
        self.live = match self.persistence {
            Persistence::None => Keyspace::new(),
            Persistence::AofEverysec | Persistence::AofAlways => self.durable.clone(),
        };
        self.running = true;
        Ok(())
    }

    /// Lock acquire (`SET key value NX PX ttl_ms`) through [`Instance::execute`]; see
    /// [`Keyspace::set_nx_px`].
    pub fn set_nx_px(
        &mut self,
        key: &str,
        value: &str,
        ttl_ms: i64,
        now_wall_ns: i64,
    ) -> Result<bool, InstanceError> {
        let reply = self.execute(&set_nx_px_args(key, value, ttl_ms), now_wall_ns)?;
        Ok(decode_set_nx_px(&reply)?)
    }

    /// `GET key` through [`Instance::execute`]; see [`Keyspace::get`].
    pub fn get(&mut self, key: &str, now_wall_ns: i64) -> Result<Option<String>, InstanceError> {
        let reply = self.execute(&get_args(key), now_wall_ns)?;
        Ok(decode_get(&reply)?)
    }

    /// Compare-and-delete release through [`Instance::execute`]; see
    /// [`Keyspace::release_if_value`].
    pub fn release_if_value(
        &mut self,
        key: &str,
        value: &str,
        now_wall_ns: i64,
    ) -> Result<bool, InstanceError> {
        let reply = self.execute(&release_args(key, value), now_wall_ns)?;
        Ok(decode_flag("release", &reply)?)
    }

    /// Compare-and-pexpire extend through [`Instance::execute`]; see
    /// [`Keyspace::extend_if_value`].
    pub fn extend_if_value(
        &mut self,
        key: &str,
        value: &str,
        ttl_ms: i64,
        now_wall_ns: i64,
    ) -> Result<bool, InstanceError> {
        let reply = self.execute(&extend_args(key, value, ttl_ms), now_wall_ns)?;
        Ok(decode_flag("extend", &reply)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redis::store::NS_PER_MS;

    const MS: i64 = NS_PER_MS;

    fn acquired(p: Persistence) -> Instance {
        let mut i = Instance::new(p);
        assert_eq!(i.set_nx_px("k", "a", 5000, 0), Ok(true));
        i
    }

    /// Running from creation, not while stopped, again after a start; the lock extension
    /// through the instance refuses another client's value and leaves the deadline alone.
    #[test]
    fn running_state_and_a_refused_extension() {
        let mut i = acquired(Persistence::None);
        assert!(i.is_running());
        assert_eq!(i.extend_if_value("k", "b", 60_000, 10 * MS), Ok(false));
        assert_eq!(
            i.execute(&["PTTL".into(), "k".into()], 10 * MS),
            Ok(Reply::Integer(4990))
        );
        assert_eq!(i.extend_if_value("k", "a", 60_000, 10 * MS), Ok(true));
        i.stop(StopKind::Graceful).unwrap();
        assert!(!i.is_running());
        i.start().unwrap();
        assert!(i.is_running());
    }

    #[test]
    fn none_comes_back_empty() {
        for kind in [StopKind::Graceful, StopKind::Crash] {
            let mut i = acquired(Persistence::None);
            i.fsync_tick();
            i.stop(kind).unwrap();
            i.start().unwrap();
            assert_eq!(i.get("k", 100 * MS), Ok(None));
            assert!(i.durable().is_empty());
        }
    }

    #[test]
    fn aof_always_survives_crash_with_absolute_deadline() {
        let mut i = acquired(Persistence::AofAlways);
        i.stop(StopKind::Crash).unwrap();
        // 1 s down: the deadline (5000 ms) did not move.
        i.start().unwrap();
        assert_eq!(i.get("k", 1000 * MS), Ok(Some("a".into())));
        assert_eq!(
            i.execute(&["PTTL".into(), "k".into()], 1000 * MS),
            Ok(Reply::Integer(4000))
        );
        // A release is durable too.
        assert_eq!(i.release_if_value("k", "a", 1000 * MS), Ok(true));
        i.stop(StopKind::Crash).unwrap();
        i.start().unwrap();
        assert_eq!(i.get("k", 1000 * MS), Ok(None));
    }

    #[test]
    fn key_expiring_while_down_is_gone() {
        let mut i = acquired(Persistence::AofAlways);
        i.stop(StopKind::Graceful).unwrap();
        i.start().unwrap();
        assert_eq!(i.get("k", 5001 * MS), Ok(None));
    }

    #[test]
    fn everysec_crash_loses_writes_since_last_tick() {
        let mut i = acquired(Persistence::AofEverysec);
        i.fsync_tick();
        assert_eq!(i.extend_if_value("k", "a", 60_000, 10 * MS), Ok(true));
        assert_eq!(i.set_nx_px("other", "b", 60_000, 10 * MS), Ok(true));
        i.stop(StopKind::Crash).unwrap();
        i.start().unwrap();
        // The acquire (ticked) survived with its old deadline; later writes are lost.
        assert_eq!(
            i.execute(&["PTTL".into(), "k".into()], 1000 * MS),
            Ok(Reply::Integer(4000))
        );
        assert_eq!(i.get("other", 1000 * MS), Ok(None));
    }

    #[test]
    fn everysec_graceful_flushes() {
        let mut i = acquired(Persistence::AofEverysec);
        i.stop(StopKind::Graceful).unwrap();
        i.start().unwrap();
        assert_eq!(i.get("k", 0), Ok(Some("a".into())));
    }

    #[test]
    fn lifecycle_errors() {
        let mut i = Instance::new(Persistence::AofAlways);
        assert_eq!(i.start(), Err(InstanceError::AlreadyRunning));
        i.stop(StopKind::Crash).unwrap();
        assert!(!i.is_running());
        assert_eq!(i.stop(StopKind::Crash), Err(InstanceError::NotRunning));
        assert_eq!(i.get("k", 0), Err(InstanceError::NotRunning));
        i.fsync_tick();
        i.start().unwrap();
        assert_eq!(
            i.set_nx_px("k", "a", -5, 0),
            Err(InstanceError::Command(CommandError::Redis(
                "ERR invalid expire time in 'set' command".into()
            )))
        );
    }

    #[test]
    fn persistence_serde_names() {
        assert_eq!(
            serde_json::to_string(&Persistence::AofEverysec).ok(),
            Some("\"aof_everysec\"".to_string())
        );
        let p: Persistence = serde_json::from_str("\"aof_always\"").unwrap();
        assert_eq!(p, Persistence::AofAlways);
    }

    /// The script cache is process memory: a stop (graceful or not) empties it, whatever the
    /// persistence, and EVALSHA is NOSCRIPT again after the restart.
    #[test]
    fn a_restart_empties_the_script_cache() {
        use crate::redis::command::{script_sha1, NOSCRIPT_ERROR, RELEASE_SCRIPT};
        let sha = script_sha1(RELEASE_SCRIPT);
        let cmd = |parts: &[&str]| -> Vec<String> { parts.iter().map(|s| s.to_string()).collect() };
        for kind in [StopKind::Graceful, StopKind::Crash] {
            let mut i = acquired(Persistence::AofAlways);
            assert_eq!(
                i.execute(&cmd(&["SCRIPT", "LOAD", RELEASE_SCRIPT]), 0),
                Ok(Reply::Bulk(sha.clone()))
            );
            assert_eq!(
                i.execute(&cmd(&["EVALSHA", &sha, "1", "k", "b"]), 0),
                Ok(Reply::Integer(0))
            );
            i.stop(kind).unwrap();
            i.start().unwrap();
            assert_eq!(
                i.execute(&cmd(&["EVALSHA", &sha, "1", "k", "a"]), 0),
                Ok(Reply::Error(NOSCRIPT_ERROR.to_string()))
            );
            assert_eq!(i.get("k", 0), Ok(Some("a".into())));
        }
    }
}
