//! Roles written outside this crate: a user's protocol runs in the same simulation as the
//! built-in ones, as [`Node::Custom`](crate::Node::Custom).
//!
//! A user writes a protocol exactly as the built-in ones are written: against [`Ctx`] with
//! its own message, timer and durable types, as a [`Role`] (see `examples/dynamo-lock` in the
//! repository). Its own types implement [`CustomMessage`], [`CustomTimer`] and
//! [`CustomDurable`]; the composition's [`Msg`], [`Timer`] and [`Durable`] then wrap them
//! ([`Wraps`]) through their `Custom` variants, type-erased, so a protocol can send its own
//! messages and the built-in ones (a write to `storage`, say) alike. [`CustomNode::node`]
//! puts the actor into a [`Node`]; it reports its claims with [`Ctx::observe`] in the
//! shared [`Obs`](crate::Obs) vocabulary, and [`JudgedAs`] tells the checkers which of them
//! are beliefs and which are truth.
//!
//! Built-in roles pay nothing for this: their dispatch is the enum's, and a custom message
//! sits behind one pointer in [`Msg`] (16 bytes still). A custom message, timer or durable
//! state costs a box and a virtual call. Traces write a custom message as
//! `{"custom": <its serde form>}`; a trace holding one cannot be read back into typed events
//! (only its `end` line is read back, to see that the file is complete).

use crate::composition::{Durable, Msg, Node, Timer};
use crate::context::{Role, Wraps};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use splitbrain_engine::{Context, NodeId};
use std::any::Any;
use std::fmt::Debug;

/// A protocol's own message type, carried in [`Msg::Custom`]. `kind` names it in traces,
/// metrics, per-kind network rules and charts: an upper-case word, as the built-in kinds are
/// (`"LOCK_GET"`).
pub trait CustomMessage: Any + Clone + Debug + PartialEq + Serialize + Send + Sync {
    /// A short stable name of the message's kind.
    fn kind(&self) -> &'static str;
}

/// A protocol's own timer type, carried in [`Timer::Custom`].
pub trait CustomTimer: Any + Clone + Debug + PartialEq + Serialize + Send + Sync {}

/// A protocol's own durable state (what survives a crash), carried in [`Durable::Custom`].
pub trait CustomDurable: Any + Clone + Debug + PartialEq + Send + Sync {}

/// How the checkers read a custom node's observations: as those of the built-in role it
/// stands in for (docs/truth.md). Beliefs come from clients and leaders, truth from lock
/// servers, judged writes from storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JudgedAs {
    /// A lock client, as a `worker`: its `lock_*`, `validity_checked` and `write_sent`
    /// observations are beliefs.
    LockClient,
    /// A lock server, as a `lease_service`: its `lease_granted` / `lease_renewed` /
    /// `lease_freed` observations are the truth of who holds a lock.
    LockServer,
    /// A leader-election participant, as a `lease_leader`: its `leader_claim`s are judged.
    Leader,
    /// Storage, as `storage`: its `write_accepted` / `write_rejected` are judged.
    Storage,
    /// Nothing it observes is judged.
    Other,
}

/// A value of some protocol's own type behind a trait object: compared, cloned and written
/// as its type does.
trait Erased: Debug + Send + Sync {
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
    fn clone_box(&self) -> Box<dyn Erased>;
    fn eq_dyn(&self, other: &dyn Erased) -> bool;
    /// The value's serde form (`Null` for a durable state, which is never written).
    fn to_json(&self) -> serde_json::Value;
    /// [`CustomMessage::kind`] for a message; `"CUSTOM"` otherwise.
    fn kind(&self) -> &'static str;
}

/// Implements [`Erased`] for each protocol's own type of one of the three traits.
macro_rules! erased {
    ($tr:ident, $mark:ident, $json:expr, $kind:expr) => {
        impl<T: $tr> Erased for Own<T, $mark> {
            fn as_any(&self) -> &dyn Any {
                &self.0
            }
            fn as_any_mut(&mut self) -> &mut dyn Any {
                &mut self.0
            }
            fn into_any(self: Box<Self>) -> Box<dyn Any> {
                Box::new(self.0)
            }
            fn clone_box(&self) -> Box<dyn Erased> {
                Box::new(Own::<T, $mark>(self.0.clone(), std::marker::PhantomData))
            }
            fn eq_dyn(&self, other: &dyn Erased) -> bool {
                other.as_any().downcast_ref::<T>() == Some(&self.0)
            }
            fn to_json(&self) -> serde_json::Value {
                #[allow(clippy::redundant_closure_call)]
                ($json)(&self.0)
            }
            fn kind(&self) -> &'static str {
                #[allow(clippy::redundant_closure_call)]
                ($kind)(&self.0)
            }
        }
    };
}

/// A protocol's own value, marked with the trait it is carried for (a type may be both a
/// message and a timer).
#[derive(Debug)]
struct Own<T, K>(T, std::marker::PhantomData<K>);

/// Marks a [`CustomMessage`].
#[derive(Debug)]
struct MsgMark;
/// Marks a [`CustomTimer`].
#[derive(Debug)]
struct TimerMark;
/// Marks a [`CustomDurable`].
#[derive(Debug)]
struct DurableMark;

erased!(
    CustomMessage,
    MsgMark,
    |m: &T| serde_json::to_value(m).expect("a custom message serialises"),
    |m: &T| CustomMessage::kind(m)
);
erased!(
    CustomTimer,
    TimerMark,
    |t: &T| serde_json::to_value(t).expect("a custom timer serialises"),
    |_: &T| "CUSTOM"
);
erased!(
    CustomDurable,
    DurableMark,
    |_: &T| serde_json::Value::Null,
    |_: &T| "CUSTOM"
);

/// A value of a protocol's own type, type-erased: the payload of [`Msg::Custom`],
/// [`Timer::Custom`] and [`Durable::Custom`].
#[derive(Debug)]
pub struct Opaque(Box<dyn Erased>);

impl Opaque {
    fn new<T: Erased + 'static>(own: T) -> Self {
        Opaque(Box::new(own))
    }

    /// The value, if it is a `T`.
    pub fn downcast_ref<T: Any>(&self) -> Option<&T> {
        self.0.as_any().downcast_ref()
    }

    /// The value, to change, if it is a `T`.
    pub fn downcast_mut<T: Any>(&mut self) -> Option<&mut T> {
        self.0.as_any_mut().downcast_mut()
    }

    /// The value, if it is a `T`; else itself back.
    pub fn downcast<T: Any>(self) -> Result<T, Opaque> {
        if self.0.as_any().is::<T>() {
            Ok(*self.0.into_any().downcast().expect("checked"))
        } else {
            Err(self)
        }
    }

    /// The kind of a message ([`CustomMessage::kind`]).
    pub fn kind(&self) -> &'static str {
        self.0.kind()
    }
}

impl Clone for Opaque {
    fn clone(&self) -> Self {
        Opaque(self.0.clone_box())
    }
}

impl PartialEq for Opaque {
    fn eq(&self, other: &Self) -> bool {
        self.0.eq_dyn(&*other.0)
    }
}

impl Eq for Opaque {}

impl Serialize for Opaque {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.to_json().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Opaque {
    /// Reads a custom value back from a trace as its JSON: its type is known only to the
    /// protocol that wrote it, so the value read back is compared and written as that JSON,
    /// and downcasts to no type ([`Opaque::downcast_ref`] gives `None`).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Opaque(Box::new(Raw(serde_json::Value::deserialize(d)?))))
    }
}

/// A custom value read back from a trace: its JSON.
#[derive(Clone, Debug, PartialEq)]
struct Raw(serde_json::Value);

impl Erased for Raw {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
    fn clone_box(&self) -> Box<dyn Erased> {
        Box::new(self.clone())
    }
    fn eq_dyn(&self, other: &dyn Erased) -> bool {
        other.to_json() == self.0
    }
    fn to_json(&self) -> serde_json::Value {
        self.0.clone()
    }
    /// The kind is not in the value (a trace's `send` line names it beside the message).
    fn kind(&self) -> &'static str {
        "CUSTOM"
    }
}

/// Implements `From<T>` and [`Wraps<T>`] for the composition type `$outer` through its
/// `Custom` variant, for every protocol type `T` of trait `$tr`.
macro_rules! wraps_custom {
    ($outer:ident, $tr:ident, $mark:ident, $wrap:expr) => {
        impl<T: $tr> From<T> for $outer {
            #[inline]
            fn from(inner: T) -> Self {
                #[allow(clippy::redundant_closure_call)]
                ($wrap)(Opaque::new(Own::<T, $mark>(
                    inner,
                    std::marker::PhantomData,
                )))
            }
        }
        impl<T: $tr> Wraps<T> for $outer {
            fn into_part(self) -> Option<T> {
                match self {
                    $outer::Custom(o) => o.downcast().ok(),
                    _ => None,
                }
            }
            fn part(&self) -> Option<&T> {
                match self {
                    $outer::Custom(o) => o.downcast_ref(),
                    _ => None,
                }
            }
            fn part_mut(&mut self) -> Option<&mut T> {
                match self {
                    $outer::Custom(o) => o.downcast_mut(),
                    _ => None,
                }
            }
        }
    };
}

wraps_custom!(Msg, CustomMessage, MsgMark, |o| Msg::Custom(Box::new(o)));
wraps_custom!(Timer, CustomTimer, TimerMark, |o| Timer::Custom(Box::new(
    o
)));
wraps_custom!(Durable, CustomDurable, DurableMark, |o| Durable::Custom(
    Box::new(o)
));

/// The engine context a custom actor's handlers get: the one every built-in role gets too.
pub type NodeCtx<'a> = Context<'a, Node>;

/// A custom protocol's actor behind a trait object ([`CustomNode`]); implemented for every
/// `Clone + Debug` type that is a [`Role`] in the composition's context.
pub trait CustomActor: Debug + Send + Sync {
    /// [`Role::on_start`].
    fn on_start(&mut self, ctx: &mut NodeCtx<'_>);
    /// [`Role::on_message`].
    fn on_message(&mut self, ctx: &mut NodeCtx<'_>, from: NodeId, msg: Msg);
    /// [`Role::on_timer`].
    fn on_timer(&mut self, ctx: &mut NodeCtx<'_>, timer: Timer);
    /// [`Role::on_restart`].
    fn on_restart(&mut self, ctx: &mut NodeCtx<'_>, durable: &Durable);
    /// A copy of the actor.
    fn clone_box(&self) -> Box<dyn CustomActor>;
}

impl<R> CustomActor for R
where
    R: for<'a> Role<NodeCtx<'a>> + Clone + Debug + Send + Sync + 'static,
{
    fn on_start(&mut self, ctx: &mut NodeCtx<'_>) {
        Role::on_start(self, ctx);
    }
    fn on_message(&mut self, ctx: &mut NodeCtx<'_>, from: NodeId, msg: Msg) {
        Role::on_message(self, ctx, from, msg);
    }
    fn on_timer(&mut self, ctx: &mut NodeCtx<'_>, timer: Timer) {
        Role::on_timer(self, ctx, timer);
    }
    fn on_restart(&mut self, ctx: &mut NodeCtx<'_>, durable: &Durable) {
        Role::on_restart(self, ctx, durable);
    }
    fn clone_box(&self) -> Box<dyn CustomActor> {
        Box::new(self.clone())
    }
}

/// A node playing a role defined outside this crate: its actor, and how the checkers read
/// what it observes.
#[derive(Debug)]
pub struct CustomNode {
    actor: Box<dyn CustomActor>,
    judged_as: JudgedAs,
}

impl CustomNode {
    /// A [`Node`] playing `actor`, judged as `judged_as`.
    pub fn node(actor: impl CustomActor + 'static, judged_as: JudgedAs) -> Node {
        Node::Custom(CustomNode {
            actor: Box::new(actor),
            judged_as,
        })
    }

    /// How the checkers read the node's observations.
    pub fn judged_as(&self) -> JudgedAs {
        self.judged_as
    }

    /// The actor.
    pub fn actor(&self) -> &dyn CustomActor {
        &*self.actor
    }
}

impl Clone for CustomNode {
    fn clone(&self) -> Self {
        CustomNode {
            actor: self.actor.clone_box(),
            judged_as: self.judged_as,
        }
    }
}

impl<'a> Role<NodeCtx<'a>> for CustomNode {
    fn on_start(&mut self, ctx: &mut NodeCtx<'a>) {
        self.actor.on_start(ctx);
    }
    fn on_message(&mut self, ctx: &mut NodeCtx<'a>, from: NodeId, msg: Msg) {
        self.actor.on_message(ctx, from, msg);
    }
    fn on_timer(&mut self, ctx: &mut NodeCtx<'a>, timer: Timer) {
        self.actor.on_timer(ctx, timer);
    }
    fn on_restart(&mut self, ctx: &mut NodeCtx<'a>, durable: &Durable) {
        self.actor.on_restart(ctx, durable);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bully::BullyMsg;
    use splitbrain_engine::Message;

    #[derive(Clone, Debug, PartialEq, Serialize)]
    enum Ping {
        Ping { n: u32 },
    }
    impl CustomMessage for Ping {
        fn kind(&self) -> &'static str {
            "PING"
        }
    }
    #[derive(Clone, Debug, PartialEq, Serialize)]
    struct Tick;
    impl CustomTimer for Tick {}

    #[test]
    fn a_custom_message_wraps_unwraps_compares_and_is_written_as_its_own_type() {
        let m = Msg::from(Ping::Ping { n: 3 });
        assert_eq!(m.kind(), "PING");
        assert_eq!(
            Wraps::<Ping>::part(&m),
            Some(&Ping::Ping { n: 3 }),
            "its own type"
        );
        assert_eq!(Wraps::<BullyMsg>::part(&m), None, "not a built-in one");
        assert_eq!(m.clone(), m);
        assert_ne!(m, Msg::from(Ping::Ping { n: 4 }));
        assert_eq!(
            serde_json::to_value(&m).unwrap(),
            serde_json::json!({"custom": {"Ping": {"n": 3}}})
        );
        assert_eq!(Wraps::<Ping>::into_part(m), Some(Ping::Ping { n: 3 }));
        assert_eq!(std::mem::size_of::<Msg>(), 16);
    }

    #[test]
    fn a_custom_value_read_back_from_a_trace_is_its_json_and_downcasts_to_nothing() {
        let m: Msg = serde_json::from_str(r#"{"custom": {"Ping": {"n": 3}}}"#).unwrap();
        assert_eq!(Wraps::<Ping>::part(&m), None);
        assert_eq!(m.kind(), "CUSTOM");
        assert_eq!(
            serde_json::to_string(&m).unwrap(),
            r#"{"custom":{"Ping":{"n":3}}}"#
        );
    }

    #[test]
    fn a_custom_timer_is_only_its_own_type() {
        let t = Timer::from(Tick);
        assert_eq!(Wraps::<Tick>::part(&t), Some(&Tick));
        assert_eq!(Wraps::<crate::bully::BullyTimer>::part(&t), None);
    }
}
