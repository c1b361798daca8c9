//! splitbrain check (filled by later work).
