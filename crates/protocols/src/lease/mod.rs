//! Leases: the lease service (a single authoritative lock service with fencing tokens), the
//! lease client (a [`crate::lock::LockClient`] variant), and the lease-based leader.

mod client;
mod leader;
mod service;

pub use client::{LeaseClient, LeaseClientConfig, LeaseClientTimer};
pub use leader::{LeaderTimer, LeaseLeader, LeaseLeaderConfig};
pub use service::{Grant, LeaseMsg, LeaseService, ServiceConfig, ServiceDurable, ServiceTimer};
