//! splitbrain scenario (filled by later work).
