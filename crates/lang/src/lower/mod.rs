//! Lowering: statements to the core's definitions, checking every name against the ruleset.

pub mod common;
pub mod cond;
pub mod content;
pub(crate) mod cursor;
pub(crate) mod defs;
pub mod effect;
pub mod events;
pub mod ruleset;
pub mod scenario;
pub mod values;

pub use cursor::MAX_NESTING;

use crate::diagnostics::{Diagnostic, Span};
use crate::syntax::Stmt;
use cursor::Res;
use rulecraft_core::model::condition::Cond;
use rulecraft_core::model::effect::SymList;
use rulecraft_core::model::ids::TypeId;
use rulecraft_core::model::ruleset::Ruleset;
use rulecraft_core::model::value::{Ability, Symbol, SymbolSet, Value};
use std::collections::HashMap;

/// A loaded ruleset with its terms, the names conditions may use ("creature", "permanent"), and
/// the terms content files add.
#[derive(Clone, Debug, Default)]
pub struct Env {
    /// The ruleset as lowered: characteristics, properties, zones, counters, layers, events and
    /// timing.
    pub ruleset: Ruleset,
    /// Each term (`term NAME: COND`) by name, as the condition it stands for.
    pub terms: HashMap<String, Cond>,
    /// Symbols written as bare words after `has` / `lacks`, noted as they are read: the loader warns
    /// about those nothing could produce (`Loader::warnings`).
    pub notes: Notes,
    /// A state-based check's condition is being read (`legally attached` is allowed there).
    pub checking: bool,
    /// The symbols read so far for this ruleset and what is loaded against it (`Env::symbol`).
    pub symbols: Symbols,
    /// Object classes named by `create` deeds, with where: checked once every class of the
    /// content is known (a class may be defined after the card that creates it).
    pub class_refs: ClassRefs,
    /// A spell with `choose X` is being read: `X` names the number announced (CR 601.2b).
    pub chosen: ChosenX,
}

/// Whether `X` may be read now: only inside a spell that declares `choose X`.
#[derive(Debug, Default)]
pub struct ChosenX(std::sync::atomic::AtomicBool);

impl ChosenX {
    /// Whether `X` may be read.
    pub fn get(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// `X` may be read (or no longer).
    pub fn set(&self, on: bool) {
        self.0.store(on, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Clone for ChosenX {
    fn clone(&self) -> Self {
        ChosenX(std::sync::atomic::AtomicBool::new(self.get()))
    }
}

/// Object classes named before they may be defined, each with its span and, for an event's
/// class argument, the type its parameter asks for (`None` for `create`).
#[derive(Debug, Default)]
pub struct ClassRefs(std::sync::Mutex<Vec<ClassRef>>);

/// A class named at a span; for an event's class argument, `Some` with the parameter's type
/// (and that type's name).
type ClassRef = (String, Span, Option<Option<(TypeId, String)>>);

impl Clone for ClassRefs {
    fn clone(&self) -> Self {
        ClassRefs(std::sync::Mutex::new(self.lock().clone()))
    }
}

impl ClassRefs {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<ClassRef>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
    /// Notes a class named at `at` by `create`.
    pub fn note(&self, name: &str, at: Span) {
        self.lock().push((name.to_string(), at, None));
    }
    /// Notes a class named at `at` as an event's argument whose parameter asks for a class of
    /// this type (`tech: class of tech`), or of any type.
    pub fn note_of_type(&self, name: &str, at: Span, ty: Option<(TypeId, String)>) {
        self.lock().push((name.to_string(), at, Some(ty)));
    }
    /// Checks every class noted against the content, and forgets them: the first that names no
    /// class, or a class of another type than its parameter asks for, is an error at its span.
    pub fn check(&self, content: &rulecraft_core::Content) -> Result<(), Diagnostic> {
        let refs = std::mem::take(&mut *self.lock());
        for (name, at, arg) in refs {
            let Some(id) = content.class_id(&name) else {
                let Some(ty) = arg else {
                    return Err(Diagnostic::new(
                        at,
                        format!("no object class is named `{name}`: `create` names a class of the content"),
                    ));
                };
                // The classes the parameter takes.
                let t = ty.as_ref().map(|t| t.0);
                return Err(cursor::unknown(
                    at,
                    "object class",
                    &name,
                    content
                        .classes
                        .iter()
                        .filter(|c| t.is_none_or(|t| c.object_type == Some(t)))
                        .map(|c| c.name.as_str()),
                ));
            };
            if let Some(Some((ty, tname))) = arg {
                if content.classes[id.index()].object_type != Some(ty) {
                    return Err(Diagnostic::new(
                        at,
                        format!("`{name}` is not of type `{tname}`: the event's parameter takes a class of type `{tname}` (`type: {tname}`)"),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// One table of symbols per loaded ruleset, shared by the environments made from it (content,
/// scenarios): every symbol read with the same text shares one allocation, so symbols compare by
/// one pointer test in play. Used only while loading (behind a lock, as `Notes`); play makes or
/// compares symbols without it.
#[derive(Clone, Debug, Default)]
pub struct Symbols(std::sync::Arc<std::sync::Mutex<std::collections::HashSet<Symbol>>>);

impl Symbols {
    /// The symbol with this text: the one read before, or a new one kept for later.
    pub fn get(&self, w: &str) -> Symbol {
        let mut table = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = table.get(w) {
            return s.clone();
        }
        let s = Symbol::new(w);
        table.insert(s.clone());
        s
    }
    /// A set read without the table, its symbols from the table.
    pub fn set(&self, set: &SymbolSet) -> SymbolSet {
        let get = |s: &Symbol| self.get(s.as_str());
        if set.is_every() {
            SymbolSet::every_but(&set.lacks().map(get).collect())
        } else {
            set.iter().map(get).collect()
        }
    }
    /// An operation's symbols read without the table, from the table.
    pub fn list(&self, l: SymList) -> SymList {
        SymList {
            set: self.set(&l.set),
            chosen: l.chosen,
        }
    }
    /// Abilities read without the table, their names from the table.
    pub fn abilities(&self, list: &[Ability]) -> Vec<Ability> {
        list.iter()
            .map(|a| match a {
                Ability::Keyword(k) => Ability::Keyword(self.get(k.as_str())),
                Ability::Kinded { kind, name } => Ability::Kinded {
                    kind: *kind,
                    name: self.get(name.as_str()),
                },
                other => other.clone(),
            })
            .collect()
    }
    /// A value read without the table (a printed value), its symbols and abilities from the table.
    pub fn value(&self, v: Value) -> Value {
        match v {
            Value::Symbols(set) => Value::Symbols(self.set(&set)),
            Value::Abilities(list) => Value::Abilities(self.abilities(&list).into()),
            other => other,
        }
    }
}

/// A symbol written after `has` or `lacks` in a condition, with where and of which characteristic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymbolNote {
    /// Where the symbol is written.
    pub span: Span,
    /// The characteristic the condition tests.
    pub ch: rulecraft_core::CharId,
    /// The symbol as written.
    pub symbol: String,
    /// Written after `lacks` rather than `has`.
    pub lacks: bool,
}

/// Notes taken while lowering (behind a lock: the environment is shared once loaded).
#[derive(Debug, Default)]
pub struct Notes(std::sync::Mutex<Vec<SymbolNote>>);

impl Clone for Notes {
    fn clone(&self) -> Self {
        Notes(std::sync::Mutex::new(self.lock().clone()))
    }
}

impl Notes {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<SymbolNote>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
    /// Takes the notes taken so far.
    pub fn take(&self) -> Vec<SymbolNote> {
        std::mem::take(&mut *self.lock())
    }
    /// Adds notes taken elsewhere.
    pub fn extend(&self, more: Vec<SymbolNote>) {
        self.lock().extend(more);
    }
}

impl Env {
    /// A symbol as written, shared with every symbol of the same text read for this ruleset.
    pub fn symbol(&self, w: &str) -> Symbol {
        self.symbols.get(w)
    }

    /// A term by name; a plural `s` is accepted (`creatures`).
    pub fn term(&self, w: &str) -> Option<&Cond> {
        self.terms
            .get(w)
            .or_else(|| w.strip_suffix('s').and_then(|s| self.terms.get(s)))
    }

    /// Notes a symbol written as a bare word after `has` / `lacks`.
    pub fn note_symbol(&self, span: Span, ch: rulecraft_core::CharId, symbol: &str, lacks: bool) {
        self.notes.lock().push(SymbolNote {
            span,
            ch,
            symbol: symbol.to_string(),
            lacks,
        });
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
