//! Which roles a scenario file can name: a [`RoleRegistry`] value, the built-in roles plus any
//! a user's crate registers. Loading through a registry (`RoleRegistry::load_file`, in `validate.rs`) reads a
//! node of a registered role as that role's spec, with located errors, and the plan it gives
//! runs, sweeps, shrinks, checks and charts such a node as it does a built-in one.
//!
//! A user's role is a spec type (serde + [`Role`]: its clocks, validation, observations, the
//! invariants it brings and its actor, a [`Node`](splitbrain_protocols::Node) made with
//! [`CustomNode::node`](splitbrain_protocols::custom::CustomNode::node)) registered under a name
//! with [`RoleRegistry::with`]. The built-in roles are entries of the same kind, one per line
//! of the `roles!` list in `roles/mod.rs`. A registry is plain data handed to whatever loads a
//! scenario: no global state, and a run's result depends on the file and seed alone.

pub use crate::custom_spec::{CustomSpec, Fields, RoleSpec};
use crate::error::{with_suggestion, Problem};
use crate::locate::{locate, render, Seg};
use crate::role::Role;
use crate::roles::{register_builtins, RegisterBuiltin};
use crate::schema::{NodeSpec, Scenario};
use serde::de::value::MapDeserializer;
use serde::de::DeserializeOwned;
use std::fmt;
use std::sync::Arc;

/// Why a node's fields do not parse as its role's spec, with the field path.
pub type ParseError = serde_path_to_error::Error<serde_json::Error>;

type Parse = dyn Fn(Fields) -> Result<NodeSpec, ParseError> + Send + Sync;

/// One role a scenario can name.
#[derive(Clone)]
pub struct RoleEntry {
    name: &'static str,
    builtin: bool,
    parse: Arc<Parse>,
}

impl RoleEntry {
    /// The role's name, as files write it.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Whether splitbrain itself defines the role.
    pub fn is_builtin(&self) -> bool {
        self.builtin
    }
}

impl fmt::Debug for RoleEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RoleEntry")
            .field("name", &self.name)
            .field("builtin", &self.builtin)
            .finish()
    }
}

/// The roles a scenario file can name, in registration order (the built-in ones first): the
/// order an error lists them in.
#[derive(Clone, Debug)]
pub struct RoleRegistry {
    entries: Vec<RoleEntry>,
}

impl Default for RoleRegistry {
    /// The built-in roles ([`RoleRegistry::builtin`]).
    fn default() -> Self {
        RoleRegistry::builtin()
    }
}

impl RoleRegistry {
    /// A registry without roles (the built-in ones are added by [`RoleRegistry::builtin`]).
    pub(crate) fn empty() -> Self {
        RoleRegistry {
            entries: Vec::new(),
        }
    }

    /// The built-in roles, each registered as a user's role is ([`RoleRegistry::with`]), in
    /// the order of the `roles!` list.
    pub fn builtin() -> Self {
        register_builtins(Self::empty())
    }

    /// Adds role `name`, whose nodes' fields (all but `role`) deserialize as `S`: a file's
    /// `"role": "<name>"` node is then an `S`, validated by its [`Role::validate`] and built
    /// by its [`Role::node`]. Give `S` `#[serde(deny_unknown_fields)]` so a misspelt field is
    /// refused (with a suggestion) rather than ignored.
    ///
    /// # Panics
    /// If a role is already registered under `name` (a built-in one included): a binary's
    /// roles are fixed when it starts, so this is a mistake in its code, not in a file.
    pub fn with<S>(mut self, name: &'static str) -> Self
    where
        S: DeserializeOwned + Role + Clone + fmt::Debug + Send + Sync + 'static,
    {
        assert!(
            self.get(name).is_none(),
            "role `{name}` is registered twice"
        );
        self.entries.push(RoleEntry {
            name,
            builtin: false,
            parse: Arc::new(move |fields| {
                parse_fields::<S>(fields)
                    .map(|spec| NodeSpec::Custom(CustomSpec::resolved(name, Box::new(spec))))
            }),
        });
        self
    }

    /// The entry of role `name`, if it is registered.
    pub fn get(&self, name: &str) -> Option<&RoleEntry> {
        self.entries.iter().find(|e| e.name == name)
    }

    /// Every role's name, in registration order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.entries.iter().map(|e| e.name)
    }

    /// Reads every node of a role that is not built in as its registered spec; a role no
    /// entry has, or fields its spec refuses, is a located problem (every one found).
    ///
    /// Long because each of its three problems (an unknown role, a field given twice, a field
    /// its spec refuses) is located at its own place in the file.
    pub(crate) fn resolve(&self, scenario: &mut Scenario, src: &str) -> Result<(), Vec<Problem>> {
        let mut problems = Vec::new();
        for (key, spec) in scenario.nodes.iter_mut() {
            let NodeSpec::Custom(custom) = spec else {
                continue;
            };
            let at = |inner: Vec<Seg>| {
                let path = [vec![Seg::Key("nodes".into()), Seg::Key(key.clone())], inner].concat();
                let (line, column) = locate(src, &path);
                (line, column, render(&path))
            };
            let Some(entry) = self.get(&custom.role) else {
                // At the name's closing quote, where serde places an unknown variant.
                let role_path = vec![
                    Seg::Key("nodes".into()),
                    Seg::Key(key.clone()),
                    Seg::Key("role".into()),
                ];
                let (line, column) = match crate::locate::value_span(src, &role_path) {
                    Some((_, end)) => crate::locate::line_col(src, end.saturating_sub(1)),
                    None => locate(src, &role_path),
                };
                let path = render(&role_path);
                let names: Vec<String> = self.names().map(|n| format!("`{n}`")).collect();
                problems.push(Problem {
                    line,
                    column,
                    path,
                    message: with_suggestion(&format!(
                        "unknown name `{}`, expected one of {}",
                        crate::error::cut_chars(&custom.role, crate::error::MAX_QUOTED_CHARS),
                        names.join(", ")
                    )),
                });
                continue;
            };
            match (entry.parse)(custom.fields.clone()) {
                Ok(NodeSpec::Custom(mut parsed)) => {
                    parsed.fields = std::mem::take(&mut custom.fields);
                    *custom = parsed;
                }
                Ok(builtin) => *spec = builtin,
                Err(e) => {
                    let inner: Vec<Seg> = e
                        .path()
                        .iter()
                        .filter_map(|s| match s {
                            serde_path_to_error::Segment::Seq { index } => Some(Seg::Index(*index)),
                            serde_path_to_error::Segment::Map { key } => {
                                Some(Seg::Key(key.clone()))
                            }
                            _ => None,
                        })
                        .collect();
                    let message = e.inner().to_string();
                    // A key given twice: located at its second occurrence, said as the typed
                    // parse says it for a built-in role.
                    let repeated = message
                        .strip_prefix("duplicate field `")
                        .and_then(|rest| rest.split('`').next());
                    if let Some(dup) = repeated {
                        let object = [
                            vec![Seg::Key("nodes".into()), Seg::Key(key.clone())],
                            inner.clone(),
                        ]
                        .concat();
                        if let Some((line, column)) =
                            crate::locate::locate_key(src, &object, dup, 1)
                        {
                            problems.push(Problem {
                                line,
                                column,
                                path: render(&[object, vec![Seg::Key(dup.to_string())]].concat()),
                                message: format!(
                                    "`{dup}` is given twice in this object: give each field once"
                                ),
                            });
                            continue;
                        }
                    }
                    let (line, column, path) = at(inner);
                    problems.push(Problem {
                        line,
                        column,
                        path,
                        message: with_suggestion(&message),
                    });
                }
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            problems.sort_by_key(|p| (p.line, p.column));
            Err(problems)
        }
    }
}

/// The built-in roles are entries as a user's role is, each parsed as its own variant of
/// [`NodeSpec`].
impl RegisterBuiltin for RoleRegistry {
    fn with_builtin<S: DeserializeOwned + 'static>(
        mut self,
        name: &'static str,
        wrap: fn(S) -> NodeSpec,
    ) -> Self {
        self.entries.push(RoleEntry {
            name,
            builtin: true,
            parse: Arc::new(move |fields| parse_fields::<S>(fields).map(wrap)),
        });
        self
    }
}

/// `fields` as an `S`, the error with its field path.
fn parse_fields<S: DeserializeOwned>(fields: Fields) -> Result<S, ParseError> {
    serde_path_to_error::deserialize(MapDeserializer::<_, serde_json::Error>::new(
        fields.into_iter(),
    ))
}

#[cfg(test)]
mod tests {
    use super::RoleRegistry;
    use crate::role::{ClockSpec, Role};
    use crate::roles::BUILTIN_ROLES;
    use crate::roster::Roster;

    /// A registered role of nothing but a clock and a count.
    #[derive(Clone, Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Quiet {
        #[serde(default)]
        clock: ClockSpec,
        #[serde(default)]
        count: Option<u32>,
    }

    impl Role for Quiet {
        fn clock(&self) -> &ClockSpec {
            &self.clock
        }
        fn count(&self) -> Option<u32> {
            self.count
        }
        fn set_count(&mut self, count: u32) {
            self.count = Some(count);
        }
        fn validate(&self, _v: &mut crate::checker::NodeCheck<'_, '_>) {}
        fn observations(&self) -> &'static [&'static str] {
            &[]
        }
        fn node(&self, _roster: &Roster) -> splitbrain_protocols::Node {
            splitbrain_protocols::Node::Storage(splitbrain_protocols::storage::FencedStorage::new(
                splitbrain_protocols::storage::StorageConfig { fencing: true },
            ))
        }
        fn checked_as(&self) -> splitbrain_check::Role {
            splitbrain_check::Role::Storage
        }
    }

    fn file(node: &str) -> String {
        format!(
            r#"{{"splitbrain": 2, "name": "r", "duration": "1s", "check": ["single_leader"],
  "nodes": {{"b": {{"role": "bully"}}, "q": {node}}}}}"#
        )
    }

    #[test]
    fn the_builtin_registry_lists_the_builtin_roles_in_their_order() {
        let names: Vec<&str> = RoleRegistry::builtin().names().collect();
        assert_eq!(names, BUILTIN_ROLES);
    }

    #[test]
    fn a_registered_role_loads_and_groups_as_a_builtin_one() {
        let roles = RoleRegistry::builtin().with::<Quiet>("quiet");
        let plan = roles
            .load_str("r.json", &file(r#"{"role": "quiet", "count": 3}"#))
            .unwrap();
        let names: Vec<&str> = plan.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["b", "q1", "q2", "q3"]);
        assert_eq!(plan.roster.get("q2").unwrap().1, "quiet");
        assert_eq!(plan.roles.names().last(), Some("quiet"));
    }

    #[test]
    fn a_registered_role_serialises_as_written_and_its_count_follows_a_change() {
        let roles = RoleRegistry::builtin().with::<Quiet>("quiet");
        let mut plan = roles
            .load_str("r.json", &file(r#"{"role": "quiet", "count": 3}"#))
            .unwrap();
        let spec = plan.scenario.nodes.get_mut("q").unwrap();
        spec.role_mut().set_count(2);
        assert_eq!(spec.role().count(), Some(2));
        assert_eq!(
            serde_json::to_string(spec).unwrap(),
            r#"{"role":"quiet","count":2}"#
        );
    }

    #[test]
    fn a_role_no_entry_has_is_refused_at_its_name_with_every_registered_name() {
        let roles = RoleRegistry::builtin().with::<Quiet>("quiet");
        let e = roles
            .load_str("r.json", &file(r#"{"role": "quite"}"#))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(
                "r.json:2:57: nodes.q.role: unknown name `quite`, expected one of `bully`"
            ) && e.ends_with("`raft`, `quiet`; did you mean `quiet`?"),
            "{e}"
        );
    }

    #[test]
    fn a_registered_roles_field_errors_are_located_with_their_path() {
        let roles = RoleRegistry::builtin().with::<Quiet>("quiet");
        let e = roles
            .load_str(
                "r.json",
                &file(r#"{"role": "quiet", "clock": {"drift_pm": 5}}"#),
            )
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("nodes.q.clock.drift_pm: unknown field `drift_pm`")
                && e.contains("did you mean `drift_ppm`?"),
            "{e}"
        );
        let e = roles
            .load_str(
                "r.json",
                &file(r#"{"role": "quiet", "count": 1, "count": 2}"#),
            )
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("nodes.q.count: `count` is given twice in this object"),
            "{e}"
        );
    }

    #[test]
    fn a_role_given_twice_in_a_node_is_refused() {
        let e = crate::load_str("r.json", &file(r#"{"role": "bully", "role": "bully"}"#))
            .unwrap_err()
            .to_string();
        assert!(e.contains("`role` is given twice"), "{e}");
    }

    #[test]
    #[should_panic(expected = "role `bully` is registered twice")]
    fn registering_a_taken_name_is_a_mistake_in_the_binary() {
        let _ = RoleRegistry::builtin().with::<Quiet>("bully");
    }
}
