//! A value of a protocol's own type behind a trait object ([`Opaque`]), and the traits such a
//! type implements ([`CustomMessage`], [`CustomTimer`], [`CustomDurable`]): what the
//! composition's `Custom` variants carry for a role written outside this crate
//! ([`crate::custom`] says how such a role is written).
//!
//! A custom value is compared, cloned and written as its own type does; one read back from a
//! trace is its JSON, and downcasts to no type.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::any::Any;
use std::fmt::Debug;

/// A protocol's own message type, carried in `Msg::Custom`. `kind` names it in traces,
/// metrics, per-kind network rules and charts: an upper-case word, as the built-in kinds are
/// (`"LOCK_GET"`).
pub trait CustomMessage: Any + Clone + Debug + PartialEq + Serialize + Send + Sync {
    /// A short stable name of the message's kind.
    fn kind(&self) -> &'static str;
}

/// A protocol's own timer type, carried in `Timer::Custom`.
pub trait CustomTimer: Any + Clone + Debug + PartialEq + Serialize + Send + Sync {}

/// A protocol's own durable state (what survives a crash), carried in `Durable::Custom`.
pub trait CustomDurable: Any + Clone + Debug + PartialEq + Send + Sync {}

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

/// A value of a protocol's own type, type-erased: the payload of the composition's
/// `Msg::Custom`, `Timer::Custom` and `Durable::Custom`.
#[derive(Debug)]
pub struct Opaque(Box<dyn Erased>);

impl Opaque {
    fn new<T: Erased + 'static>(own: T) -> Self {
        Opaque(Box::new(own))
    }

    /// A protocol's own message.
    pub(crate) fn message<T: CustomMessage>(m: T) -> Self {
        Opaque::new(Own::<T, MsgMark>(m, std::marker::PhantomData))
    }

    /// A protocol's own timer.
    pub(crate) fn timer<T: CustomTimer>(t: T) -> Self {
        Opaque::new(Own::<T, TimerMark>(t, std::marker::PhantomData))
    }

    /// A protocol's own durable state.
    pub(crate) fn durable<T: CustomDurable>(d: T) -> Self {
        Opaque::new(Own::<T, DurableMark>(d, std::marker::PhantomData))
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
