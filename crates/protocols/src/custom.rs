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

use crate::composition::{Durable, Msg, Timer};
use crate::context::Wraps;

pub use crate::composition::{CustomActor, CustomNode, NodeCtx};
pub use crate::observation::JudgedAs;
pub use crate::opaque::{CustomDurable, CustomMessage, CustomTimer, Opaque};

/// Implements `From<T>` and [`Wraps<T>`] for the composition type `$outer` through its
/// `Custom` variant, for every protocol type `T` of trait `$tr`.
macro_rules! wraps_custom {
    ($outer:ident, $tr:ident, $ctor:ident, $wrap:expr) => {
        impl<T: $tr> From<T> for $outer {
            #[inline]
            fn from(inner: T) -> Self {
                #[allow(clippy::redundant_closure_call)]
                ($wrap)(Opaque::$ctor(inner))
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

wraps_custom!(Msg, CustomMessage, message, |o| Msg::Custom(Box::new(o)));
wraps_custom!(Timer, CustomTimer, timer, |o| Timer::Custom(Box::new(o)));
wraps_custom!(Durable, CustomDurable, durable, |o| Durable::Custom(
    Box::new(o)
));

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bully::BullyMsg;
    use serde::Serialize;
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
