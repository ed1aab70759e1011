//! rulecraft's text format: one language for rulesets, content and scenarios.
//!
//! Text flows through [`lexer`] (tokens with spans), [`syntax`] (statements and blocks), then the
//! [`lower`] modules, which check names against the ruleset and build the core's definitions. Every
//! error is a [`diagnostics::Diagnostic`] naming file, line and column. [`loader`] finds the files a
//! scenario names; [`scenario`] runs scenarios against the core.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod confine;
pub mod deck;
pub mod diagnostics;
pub mod lexer;
pub mod loader;
pub mod lower;
pub mod scenario;
pub mod syntax;
pub mod warnings;

pub use diagnostics::{Diagnostic, SourceMap, Span};
