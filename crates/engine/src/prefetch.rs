//! A cache prefetch hint: the one place the engine uses `unsafe`.
//!
//! The event loop knows a few events ahead which deliveries it will process (bucket 0 of the
//! queue is in order), and so which receivers' states and FIFO entries they will read, each a
//! random place among thousands of nodes and millions of links. Asking for the cache lines
//! early lets the memory fetch overlap the events in between (the message itself travels in
//! its queue entry).
//!
//! A prefetch changes no value the program computes: results, traces and hashes are the same
//! with or without it, on every target.

/// Asks the CPU to bring the cache line holding the start of `value` into its caches. A hint:
/// it reads nothing the program sees, cannot fault, and is a no-op on targets other than
/// x86-64.
#[inline(always)]
#[allow(unsafe_code)]
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` (PREFETCHT0) is an architectural hint that loads nothing into a
    // register and never faults, whatever the address; here the address is a live reference.
    // SSE is part of the x86-64 baseline, so the instruction always exists.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
            (value as *const T).cast::<i8>(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
