//! Lowering: statements to the core's definitions, checking every name against the ruleset.

pub mod cond;
pub mod content;
pub mod cursor;
pub mod ruleset;
pub mod scenario;

use crate::diagnostics::{Diagnostic, Span};
use crate::syntax::Stmt;
use cursor::Res;
use rulecraft_core::condition::Cond;
use rulecraft_core::ruleset::Ruleset;
use std::collections::HashMap;

/// A loaded ruleset with its terms, the names conditions may use ("creature", "permanent").
#[derive(Clone, Debug, Default)]
pub struct Env {
    pub ruleset: Ruleset,
    pub terms: HashMap<String, Cond>,
    /// A state-based check's condition is being read (`legally attached` is allowed there).
    pub checking: bool,
}

impl Env {
    /// A term by name; a plural `s` is accepted (`creatures`).
    pub fn term(&self, w: &str) -> Option<&Cond> {
        self.terms
            .get(w)
            .or_else(|| w.strip_suffix('s').and_then(|s| self.terms.get(s)))
    }
}

/// The block of a statement, or an error saying one was expected.
pub fn block<'a>(s: &'a Stmt, what: &str) -> Res<&'a [Stmt]> {
    match &s.block {
        Some(b) => Ok(&b.stmts),
        None => {
            let last = s.head[s.head.len() - 1].span;
            Err(Diagnostic::new(
                Span::new(last.file, last.end, last.end),
                format!("expected `{{` to open {what}"),
            ))
        }
    }
}

/// An error if a statement has a block where none belongs.
pub fn no_block(s: &Stmt) -> Res<()> {
    match &s.block {
        Some(b) => Err(Diagnostic::new(
            b.open,
            "unexpected `{`: this statement takes no block",
        )),
        None => Ok(()),
    }
}
