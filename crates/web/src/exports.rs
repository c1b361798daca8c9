//! The module's exported functions: `sb_input`, `sb_call`, `sb_output` (the crate docs say how
//! the page calls them). `#[no_mangle]` is what the workspace's `unsafe_code` lint flags (two
//! exports of one name would clash at link time); nothing here dereferences a pointer: the
//! page writes the request into the buffer whose address [`sb_input`] returns, between calls,
//! while no Rust reference to it is live.
use crate::{answer, INPUT, OUTPUT};

/// Makes the input buffer `len` bytes (zeroed) and returns its address in linear memory.
#[no_mangle]
pub extern "C" fn sb_input(len: usize) -> *mut u8 {
    INPUT.with(|b| {
        let mut b = b.borrow_mut();
        *b = vec![0; len];
        b.as_mut_ptr()
    })
}

/// Answers the request in the input buffer; returns the answer's length in bytes.
#[no_mangle]
pub extern "C" fn sb_call() -> usize {
    let request = INPUT.with(|b| std::mem::take(&mut *b.borrow_mut()));
    let text = match String::from_utf8(request) {
        Ok(t) => answer(&t),
        Err(_) => crate::error_answer(2, "the request is not UTF-8 text".into()),
    };
    OUTPUT.with(|o| {
        let mut o = o.borrow_mut();
        *o = text.into_bytes();
        o.len()
    })
}

/// The address of the last answer in linear memory.
#[no_mangle]
pub extern "C" fn sb_output() -> *const u8 {
    OUTPUT.with(|o| o.borrow().as_ptr())
}
