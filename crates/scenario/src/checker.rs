//! Collecting located problems: `Checker` turns a field path into file:line:column and keeps
//! every problem found; [`NodeCheck`] is its view from one node declaration, the one a role's
//! validation sees (paths relative to `nodes.<name>`).

use crate::duration::{format_ns, Dur};
use crate::error::{did_you_mean, Problem};
use crate::limits::MAX_DURATION;
use crate::locate::{locate, render, Seg};
use crate::roster::Roster;
use splitbrain_engine::SimDuration;

/// The path step of object member `s`.
pub(crate) fn k(s: &str) -> Seg {
    Seg::Key(s.to_string())
}

/// Every problem found in one scenario, each located in its source text.
pub(crate) struct Checker<'a> {
    src: &'a str,
    pub(crate) problems: Vec<Problem>,
}

impl<'a> Checker<'a> {
    /// A checker over the source text `src` (for locations).
    pub(crate) fn new(src: &'a str) -> Self {
        Checker {
            src,
            problems: Vec::new(),
        }
    }

    /// Records a problem at `path`.
    pub(crate) fn err(&mut self, path: Vec<Seg>, message: impl Into<String>) {
        let (line, column) = locate(self.src, &path);
        self.problems.push(Problem {
            line,
            column,
            path: render(&path),
            message: message.into(),
        });
    }

    /// Checks that `name` (at `path`) is a node, of one of `roles` unless that is empty.
    pub(crate) fn node_ref(&mut self, roster: &Roster, path: Vec<Seg>, name: &str, roles: &[&str]) {
        match roster.get(name) {
            None => {
                let hint = did_you_mean(name, roster.names())
                    .map(|s| format!("; did you mean `{s}`?"))
                    .unwrap_or_default();
                self.err(path, format!("unknown node `{name}`{hint}"));
            }
            Some((_, role)) if !roles.is_empty() && !roles.contains(&role) => {
                self.err(
                    path,
                    format!(
                        "node `{name}` is a {role}, expected a {}",
                        roles.join(" or ")
                    ),
                );
            }
            _ => {}
        }
    }

    /// Checks that a probability, if given, is within 0..=1.
    pub(crate) fn probability(&mut self, path: Vec<Seg>, p: Option<f64>) {
        if let Some(p) = p {
            if !(0.0..=1.0).contains(&p) || p.is_nan() {
                self.err(
                    path,
                    format!("probability must be between 0 and 1, found {p}"),
                );
            }
        }
    }

    /// Checks that a duration, if given, is above zero and within 24 h; `what` names it.
    pub(crate) fn positive(&mut self, path: Vec<Seg>, d: Option<Dur>, what: &str) {
        if let Some(d) = d {
            if d.0 == SimDuration::ZERO {
                self.err(path, format!("{what} must be greater than zero"));
            } else if d.0 > MAX_DURATION {
                self.err(
                    path,
                    format!(
                        "{what} of {} is longer than the 24 h limit",
                        format_ns(d.0.as_nanos())
                    ),
                );
            }
        }
    }
}

/// The checker as one node declaration (`nodes.<key>`) sees it: fields are named relative to
/// the declaration, references resolve against the whole roster.
pub struct NodeCheck<'c, 'a> {
    checker: &'c mut Checker<'a>,
    roster: &'c Roster,
    key: &'c str,
}

impl<'c, 'a> NodeCheck<'c, 'a> {
    /// The view of declaration `key`.
    pub(crate) fn new(checker: &'c mut Checker<'a>, roster: &'c Roster, key: &'c str) -> Self {
        NodeCheck {
            checker,
            roster,
            key,
        }
    }

    fn path(&self, rest: &[Seg]) -> Vec<Seg> {
        [&[k("nodes"), k(self.key)][..], rest].concat()
    }

    /// Records a problem with the declaration as a whole (a missing field, say).
    pub fn err_node(&mut self, message: impl Into<String>) {
        let path = self.path(&[]);
        self.checker.err(path, message);
    }

    /// Records a problem at field `field`.
    pub fn err(&mut self, field: &str, message: impl Into<String>) {
        let path = self.path(&[k(field)]);
        self.checker.err(path, message);
    }

    /// Records a problem at element `index` of list field `field`.
    pub fn err_item(&mut self, field: &str, index: usize, message: impl Into<String>) {
        let path = self.path(&[k(field), Seg::Index(index)]);
        self.checker.err(path, message);
    }

    /// Checks that field `field` names a node, of one of `roles` unless that is empty.
    pub fn node_ref(&mut self, field: &str, name: &str, roles: &[&str]) {
        let path = self.path(&[k(field)]);
        self.checker.node_ref(self.roster, path, name, roles);
    }

    /// Checks that element `index` of list field `field` names a node of one of `roles`.
    pub fn node_ref_item(&mut self, field: &str, index: usize, name: &str, roles: &[&str]) {
        let path = self.path(&[k(field), Seg::Index(index)]);
        self.checker.node_ref(self.roster, path, name, roles);
    }

    /// Checks that duration field `field`, if given, is above zero and within 24 h.
    pub fn positive(&mut self, field: &str, d: Option<Dur>) {
        let path = self.path(&[k(field)]);
        self.checker.positive(path, d, field);
    }
}
