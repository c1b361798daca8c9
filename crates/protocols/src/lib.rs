//! splitbrain protocols (filled by later work).
