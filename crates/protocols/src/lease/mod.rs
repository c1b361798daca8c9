//! Leases: the lease service (a single authoritative lock service with fencing tokens), the
//! lease client (one of the lock clients a worker drives), and the lease-based leader (which
//! drives a lease client and writes to storage).

mod client;
mod leader;
mod service;

pub use client::{
    Belief, LeaseClient, LeaseClientConfig, LeaseClientCtx, LeaseClientTimer, RenewFailure,
};
pub use leader::{LeaderCtx, LeaderTimer, LeaseLeader, LeaseLeaderConfig};
pub use service::{
    Grant, Grants, LeaseMsg, LeaseService, ServiceConfig, ServiceCtx, ServiceDurable, ServiceTimer,
};
