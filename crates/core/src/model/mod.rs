//! The plain data of a game, at the bottom of the crate: ids and values, objects, effect and
//! response definitions, events and occurrences, the ruleset and content, decisions, and the
//! records a derivation keeps. It imports nothing else of the crate; every other folder builds on it.

pub mod action;
pub mod batch;
pub mod changes;
pub mod clock;
pub mod condition;
pub mod content;
pub mod decision;
pub mod derived;
pub mod effect;
pub mod error;
pub mod event;
pub mod explain;
pub mod ids;
pub mod object;
pub mod occurrence;
pub mod random;
pub mod response;
pub mod ruleset;
pub mod sheet;
pub mod timing;
pub mod trail;
pub mod value;
