//! The `splitbrain` binary: the command line ([`splitbrain_cli::main_with`]) with the
//! built-in roles.

use splitbrain_cli::RoleRegistry;
use std::process::ExitCode;

/// The allocator: mimalloc. A run allocates and frees many small strings, messages and
/// observations; under glibc's malloc about 40% of a lesson-12 sweep's time was spent in
/// malloc and free (perf). Results never depend on it: nothing reads an address.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    splitbrain_cli::main_with(RoleRegistry::builtin())
}
