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

use crate::custom_spec::{kind_of, CustomSpec};
use crate::role::Role;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// What the built-in roles are registered into (a role registry, `registry.rs`, above this
/// module): one entry per role, whose nodes parse as the role's own spec type `S` and are
/// `wrap`ped in its [`NodeSpec`] variant.
pub(crate) trait RegisterBuiltin {
    /// Adds built-in role `name`.
    fn with_builtin<S: DeserializeOwned + 'static>(
        self,
        name: &'static str,
        wrap: fn(S) -> NodeSpec,
    ) -> Self;
}

/// Writes [`NodeSpec`] (tagged by `role`, one variant per entry, in entry order: the order of
/// the schema and of serde's "expected one of"), the per-role dispatch over it, and
/// [`register_builtins`], which gives a registry the built-in roles' entries.
macro_rules! roles {
    ($( $(#[$doc:meta])* $name:literal => $Variant:ident($Spec:ty), )*) => {
        /// One node (or a group of like nodes) and its role.
        #[derive(Clone, Debug, Serialize, JsonSchema)]
        #[serde(tag = "role")]
        pub enum NodeSpec {
            $( $(#[$doc])* #[serde(rename = $name)] $Variant($Spec), )*
            /// A node of a role that is not built in: as written until a
            /// role registry (`registry.rs`) resolves it.
            #[serde(untagged)]
            #[schemars(skip)]
            Custom(CustomSpec),
        }

        /// The built-in roles' names, in entry order.
        pub const BUILTIN_ROLES: &[&str] = &[$( $name, )*];

        impl NodeSpec {
            /// The role's name, as files write it (`"role": "bully"`).
            pub fn role_name(&self) -> &'static str {
                match self {
                    $( NodeSpec::$Variant(_) => $name, )*
                    NodeSpec::Custom(c) => c.role_name(),
                }
            }

            /// The spec as its role.
            pub fn role(&self) -> &dyn Role {
                match self {
                    $( NodeSpec::$Variant(s) => s, )*
                    NodeSpec::Custom(c) => c.role(),
                }
            }

            /// The spec as its role, to change it.
            pub fn role_mut(&mut self) -> &mut dyn Role {
                match self {
                    $( NodeSpec::$Variant(s) => s, )*
                    NodeSpec::Custom(c) => c.role_mut(),
                }
            }

            /// Deserialises a node object without its `role` tag as built-in role `role`'s
            /// own struct, recording the field path of an error (`None`: no built-in role has
            /// that name).
            pub fn parse_as(
                role: &str,
                node: serde_json::Value,
            ) -> Option<Result<NodeSpec, serde_path_to_error::Error<serde_json::Error>>> {
                match role {
                    $( $name => Some(serde_path_to_error::deserialize(node).map(NodeSpec::$Variant)), )*
                    _ => None,
                }
            }

            /// Deserialises a node object's fields (without `role`, duplicates kept) as
            /// built-in role `role`'s own struct (`None`: no built-in role has that name).
            fn parse_fields(
                role: &str,
                fields: Vec<(String, serde_json::Value)>,
            ) -> Option<Result<NodeSpec, serde_json::Error>> {
                use serde::de::value::MapDeserializer;
                match role {
                    $( $name => Some(<$Spec>::deserialize(MapDeserializer::<_, serde_json::Error>::new(fields.into_iter())).map(NodeSpec::$Variant)), )*
                    _ => None,
                }
            }
        }

        /// Registers every built-in role, in entry order, each parsed as its own variant.
        pub(crate) fn register_builtins<R: RegisterBuiltin>(registry: R) -> R {
            registry
                $( .with_builtin::<$Spec>($name, NodeSpec::$Variant) )*
        }
    };
}

impl<'de> Deserialize<'de> for NodeSpec {
    /// A built-in role's node as its own struct (unknown and repeated fields refused as its
    /// struct refuses them); any other role's as written, for a
    /// role registry (`registry.rs`) to resolve.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Fields;
        impl<'de> serde::de::Visitor<'de> for Fields {
            type Value = Vec<(String, serde_json::Value)>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("internally tagged enum NodeSpec")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = map.next_entry::<String, serde_json::Value>()? {
                    out.push(entry);
                }
                Ok(out)
            }
        }
        use serde::de::Error;
        let mut fields = d.deserialize_map(Fields)?;
        let Some(at) = fields.iter().position(|(k, _)| k == "role") else {
            return Err(D::Error::missing_field("role"));
        };
        let (_, role) = fields.remove(at);
        if fields.iter().any(|(k, _)| k == "role") {
            return Err(D::Error::duplicate_field("role"));
        }
        let serde_json::Value::String(role) = role else {
            return Err(D::Error::custom(format!(
                "invalid type: {}, expected a role name",
                kind_of(&role)
            )));
        };
        if !BUILTIN_ROLES.contains(&role.as_str()) {
            return Ok(NodeSpec::Custom(CustomSpec::written(role, fields)));
        }
        match NodeSpec::parse_fields(&role, fields) {
            Some(parsed) => parsed.map_err(D::Error::custom),
            None => unreachable!("a built-in role parses as its struct"),
        }
    }
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
