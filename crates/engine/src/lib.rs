//! splitbrain engine (filled by later work).
