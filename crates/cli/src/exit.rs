//! Exit statuses, and the error type that carries "bad input" (status 2).

/// Everything as expected.
pub const OK: u8 = 0;
/// An outcome differed from its expectation (or a replay diverged, or `shrink`'s seed violates
/// nothing).
pub const MISMATCH: u8 = 1;
/// Bad input or usage.
pub const BAD_INPUT: u8 = 2;
/// A run hit its event or simulated-time bound.
pub const BOUND: u8 = 3;

/// An internal error: a step that cannot fail on valid input did (`shrink`'s result no
/// longer violates, say). A bug in splitbrain, to be reported with the command.
pub const INTERNAL: u8 = 4;

/// Interrupted (Ctrl-C, SIGTERM or SIGHUP), as a SIGINT would end the process (128 + 2);
/// unfinished output files were removed.
pub const INTERRUPTED: u8 = 130;

/// Standard output was closed early (`| head`): as a SIGPIPE would end the process.
pub const BROKEN_PIPE: u8 = 141;

/// Marks an error as the user's input being wrong (exit 2) rather than a failure.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadInput(pub String);

/// Marks an error as an internal one (exit 4): a bug, not the input.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Internal(pub String);

/// The exit status for an error: 2 for bad input (scenario errors, unreadable files), 4 for an
/// internal error, 1 otherwise.
pub fn exit_code_of(e: &anyhow::Error) -> u8 {
    if e.downcast_ref::<Internal>().is_some() {
        return INTERNAL;
    }
    if e.downcast_ref::<BadInput>().is_some()
        || e.downcast_ref::<splitbrain_scenario::ScenarioError>()
            .is_some()
    {
        BAD_INPUT
    } else {
        MISMATCH
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Internal errors have their own code, not exit 1, the code of a mismatch.
    #[test]
    fn each_error_kind_has_its_code() {
        let code = |e: anyhow::Error| exit_code_of(&e);
        assert_eq!(code(Internal("x".into()).into()), INTERNAL);
        assert_eq!(code(BadInput("x".into()).into()), BAD_INPUT);
        assert_eq!(code(anyhow::anyhow!("x")), MISMATCH);
        assert_eq!(
            code(anyhow::Error::from(Internal("x".into())).context("while shrinking")),
            INTERNAL
        );
    }
}
