//! The roles a node can play. Each role is one module: its file spec (serde + schemars), its
//! validation and its mapping onto the protocol's actor, behind the [`Role`] trait.
//!
//! This file lists the roles once, in `roles!` below: one entry per role gives its name in
//! files, its [`NodeSpec`] variant (whose doc comment is the schema's description) and its
//! spec type; the enum and every per-role `match` are written from that list. Adding a role:
//! write `roles/<role>.rs` with its spec and `impl Role`, declare the module, add its entry,
//! and regenerate `splitbrain.schema.json` (`splitbrain schema > splitbrain.schema.json`).

pub mod bully;
pub mod lease_candidate;
pub mod lease_leader;
pub mod lease_record;
pub mod lease_service;
pub mod raft;
pub mod redis;
pub mod storage;
pub mod worker;

use crate::role::Role;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Writes [`NodeSpec`] (tagged by `role`, one variant per entry, in entry order: the order of
/// the schema and of serde's "expected one of") and the per-role dispatch over it.
macro_rules! roles {
    ($( $(#[$doc:meta])* $name:literal => $Variant:ident($Spec:ty), )*) => {
        /// One node (or a group of like nodes) and its role.
        #[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
        #[serde(tag = "role")]
        pub enum NodeSpec {
            $( $(#[$doc])* #[serde(rename = $name)] $Variant($Spec), )*
        }

        impl NodeSpec {
            /// The role's name, as files write it (`"role": "bully"`).
            pub fn role_name(&self) -> &'static str {
                match self {
                    $( NodeSpec::$Variant(_) => $name, )*
                }
            }

            /// The spec as its role.
            pub fn role(&self) -> &dyn Role {
                match self {
                    $( NodeSpec::$Variant(s) => s, )*
                }
            }

            /// The spec as its role, to change it.
            pub fn role_mut(&mut self) -> &mut dyn Role {
                match self {
                    $( NodeSpec::$Variant(s) => s, )*
                }
            }

            /// Deserialises a node object without its `role` tag as role `role`'s own struct,
            /// recording the field path of an error (`None`: no role has that name).
            pub fn parse_as(
                role: &str,
                node: serde_json::Value,
            ) -> Option<Result<NodeSpec, serde_path_to_error::Error<serde_json::Error>>> {
                match role {
                    $( $name => Some(serde_path_to_error::deserialize(node).map(NodeSpec::$Variant)), )*
                    _ => None,
                }
            }
        }
    };
}

roles! {
    /// A bully election participant.
    "bully" => Bully(bully::BullySpec),
    /// The lease service (a single authoritative lock service).
    "lease_service" => LeaseService(lease_service::LeaseServiceSpec),
    /// A lease-based leader.
    "lease_leader" => LeaseLeader(lease_leader::LeaseLeaderSpec),
    /// A Redis instance.
    "redis" => Redis(redis::RedisSpec),
    /// Fenced (or unfenced) storage.
    "storage" => Storage(storage::StorageSpec),
    /// A worker: acquire, work, check validity, write, release.
    "worker" => Worker(worker::WorkerSpec),
    /// A Kubernetes-style lease record: read and compare-and-swap on its version only.
    "lease_record" => LeaseRecord(lease_record::LeaseRecordSpec),
    /// A client-go-style leader-election candidate over a lease record.
    "lease_candidate" => LeaseCandidate(lease_candidate::LeaseCandidateSpec),
    /// A replica of the Raft-replicated lock service (every raft node forms one group).
    "raft" => Raft(raft::RaftSpec),
}
