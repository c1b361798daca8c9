//! splitbrain's deterministic discrete-event engine.
//!
//! It knows nothing about locks or elections: it runs [`Actor`]s on a simulated network
//! with per-node clocks, applies faults, and records a trace. One seed plus one setup always
//! gives the same run, event for event.
//!
//! - [`time`]: `SimTime` / `SimDuration`, integer nanoseconds.
//! - [`rng`]: ChaCha8 streams derived from `(seed, stream name)`, integer-exact uniform draws.
//! - [`clock`]: monotonic clocks with drift (ppm) and wall clocks with steps.
//! - [`network`]: delay models, loss, duplication, FIFO, and the rule chain for partitions.
//! - [`fault`]: the fault vocabulary, protocol-point triggers and the random nemesis.
//! - [`actor`]: the `Message` and `Observation` traits and the `TimerId` handle.
//! - [`obs_log`]: the observations, in chunks that never move.
//! - [`sim`]: the `Actor` trait and the handler `Context`, the queue, node lifecycle (crash,
//!   restart, pause) and the event loop.
//! - [`trace`]: JSON Lines events, content hash, recorders.
//! - [`determinism`]: run twice, name the first diverging event.

pub mod actor;
pub mod clock;
pub mod determinism;
pub mod fault;
pub mod network;
pub mod node;
pub mod obs_log;
mod prefetch;
mod queue;
pub mod rng;
pub mod sim;
mod stats;
pub mod time;
pub mod trace;

pub use actor::{Message, Observation, TimerId};
pub use clock::{
    parse_rfc3339_ns, ClockConfig, LocalClock, LocalTime, WallTime, DEFAULT_WALL_START_NS,
};
pub use determinism::{check_determinism, first_difference, Divergence};
pub use fault::{Fault, FaultEffect, FaultLedger, FaultStart, Nemesis, NemesisKind, Trigger};
pub use network::{DelayDist, DropReason, KindRule, LinkModel, NetRule, Network, Spike};
pub use node::NodeId;
pub use obs_log::{ObsFilter, ObsLog};
pub use rng::RngStream;
pub use sim::{
    Actor, Context, EventOf, KindCounts, Limits, Observed, Processing, Sim, SimError, Stats,
};
pub use time::{SimDuration, SimTime};
pub use trace::{Recorder, TraceEvent, TraceSummary, TRACE_FORMAT};
