//! The `splitbrain` binary.

fn main() {}
