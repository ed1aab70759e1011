//! Carrying out an action (`model::action` says what one is): checked in full before anything
//! changes, then lowered to the kernel's changes.

pub mod apply;
pub mod options;
