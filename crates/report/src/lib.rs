//! splitbrain report (filled by later work).
