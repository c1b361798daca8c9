//! Leases: the lease service, the lease client, and the lease-based leader (stub).

mod client;
mod leader;
mod service;

pub use client::{LeaseClient, LeaseClientTimer};
pub use leader::{LeaderTimer, LeaseLeader};
pub use service::{LeaseMsg, LeaseService, ServiceDurable, ServiceTimer};
