//! Characteristic values, typed by the ruleset: numbers, symbol sets, text, ability lists, a player.

use crate::ids::{ClassId, PlayerId};
use serde::Serialize;
use std::collections::HashSet;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

/// A name such as a color, a type or a keyword ability. Symbols are interned: every symbol with
/// the same text shares one allocation, so two symbols are equal exactly when they share it.
#[derive(Clone, Debug, PartialOrd, Ord, Serialize)]
pub struct Symbol(Arc<str>);

/// Hashes the text, as equal symbols share it.
impl std::hash::Hash for Symbol {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.0.hash(h)
    }
}

impl PartialEq for Symbol {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Symbol {}

impl Symbol {
    pub fn new(s: &str) -> Self {
        static TABLE: OnceLock<Mutex<HashSet<Arc<str>>>> = OnceLock::new();
        let mut table = TABLE
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(a) = table.get(s) {
            return Symbol(a.clone());
        }
        let a: Arc<str> = Arc::from(s);
        table.insert(a.clone());
        Symbol(a)
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A set of symbols kept sorted, so equal sets compare and print the same. A set may hold every
/// symbol ("all creature types", seed 004 layer 4: changeling). Sets are shared: a copy costs a
/// reference count, and a change builds a new set.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct SymbolSet {
    syms: Arc<[Symbol]>,
    all: bool,
}

impl Default for SymbolSet {
    fn default() -> Self {
        static EMPTY: OnceLock<Arc<[Symbol]>> = OnceLock::new();
        SymbolSet {
            syms: EMPTY.get_or_init(|| Arc::from(Vec::new())).clone(),
            all: false,
        }
    }
}

impl FromIterator<Symbol> for SymbolSet {
    fn from_iter<I: IntoIterator<Item = Symbol>>(it: I) -> Self {
        let mut v: Vec<Symbol> = it.into_iter().collect();
        v.sort();
        v.dedup();
        SymbolSet {
            syms: v.into(),
            all: false,
        }
    }
}

impl SymbolSet {
    /// The set holding every symbol.
    pub fn every() -> Self {
        SymbolSet {
            all: true,
            ..SymbolSet::default()
        }
    }
    pub fn is_every(&self) -> bool {
        self.all
    }
    /// Whether both are the same shared set (a test by identity; false says nothing).
    pub fn same(&self, other: &SymbolSet) -> bool {
        self.all == other.all && Arc::ptr_eq(&self.syms, &other.syms)
    }
    pub fn contains(&self, s: &Symbol) -> bool {
        // Small sets (most are) are searched by identity; large ones by text.
        self.all
            || if self.syms.len() <= 8 {
                self.syms.contains(s)
            } else {
                self.syms.binary_search(s).is_ok()
            }
    }
    pub fn insert(&mut self, s: Symbol) {
        if self.all {
            return;
        }
        if let Err(i) = self.syms.binary_search(&s) {
            let mut v = self.syms.to_vec();
            v.insert(i, s);
            self.syms = v.into();
        }
    }
    /// Removing one symbol from every symbol leaves every symbol: the set has no "all but" form.
    pub fn remove(&mut self, s: &Symbol) {
        if let Ok(i) = self.syms.binary_search(s) {
            let mut v = self.syms.to_vec();
            v.remove(i);
            self.syms = v.into();
        }
    }
    /// Adds every symbol of `other` (all of them, if it holds every symbol).
    pub fn extend(&mut self, other: &SymbolSet) {
        if other.all {
            *self = SymbolSet::every();
        } else if !self.all && other.syms.iter().any(|s| !self.contains(s)) {
            let mut v = self.syms.to_vec();
            v.extend(other.syms.iter().cloned());
            v.sort();
            v.dedup();
            self.syms = v.into();
        }
    }
    /// How many symbols; every symbol counts as one more than any finite set could matter.
    pub fn len(&self) -> usize {
        if self.all {
            usize::MAX
        } else {
            self.syms.len()
        }
    }
    pub fn is_empty(&self) -> bool {
        !self.all && self.syms.is_empty()
    }
    pub fn iter(&self) -> impl Iterator<Item = &Symbol> {
        self.syms.iter()
    }
}

/// An ability an object has: a keyword, or one of the static abilities written on an object class.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Ability {
    Keyword(Symbol),
    /// The `index`-th static ability of `class`; `text` is its rules text, for display.
    Static {
        class: ClassId,
        index: u16,
        text: Arc<str>,
    },
}

impl fmt::Display for Ability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ability::Keyword(s) => write!(f, "{s}"),
            Ability::Static { text, .. } => write!(f, "\"{text}\""),
        }
    }
}

/// The value of one characteristic or player property.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Value {
    /// A number, or `None` where the game says there is none ("no maximum hand size").
    Number(Option<i64>),
    Symbols(SymbolSet),
    Text(Arc<str>),
    /// Kept in the order gained; duplicates removed. Shared like symbol sets.
    Abilities(Arc<[Ability]>),
    Player(Option<PlayerId>),
}

impl Value {
    /// Whether both are the same value held in the same place: a test by identity, cheaper than
    /// comparing (false says nothing).
    pub fn shares(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Symbols(a), Value::Symbols(b)) => a.same(b),
            (Value::Abilities(a), Value::Abilities(b)) => Arc::ptr_eq(a, b),
            (Value::Text(a), Value::Text(b)) => Arc::ptr_eq(a, b),
            (Value::Number(a), Value::Number(b)) => a == b,
            (Value::Player(a), Value::Player(b)) => a == b,
            _ => false,
        }
    }

    pub fn number(&self) -> Option<i64> {
        match self {
            Value::Number(n) => *n,
            _ => None,
        }
    }
}

/// Prints a value as the text format writes it; players print by seat (callers with names use
/// [`Value::display_with`]).
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, &|p: PlayerId| format!("player {}", p.0 + 1))
    }
}

impl Value {
    /// Prints the value, naming players with `name`.
    pub fn display_with(&self, name: &dyn Fn(PlayerId) -> String) -> String {
        struct D<'a>(&'a Value, &'a dyn Fn(PlayerId) -> String);
        impl fmt::Display for D<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.write(f, self.1)
            }
        }
        D(self, name).to_string()
    }

    fn write(&self, f: &mut fmt::Formatter<'_>, name: &dyn Fn(PlayerId) -> String) -> fmt::Result {
        match self {
            Value::Number(Some(n)) => write!(f, "{n}"),
            Value::Number(None) | Value::Player(None) => f.write_str("none"),
            Value::Symbols(s) if s.is_empty() => f.write_str("none"),
            Value::Symbols(s) if s.is_every() => f.write_str("all"),
            Value::Symbols(s) => {
                let names: Vec<&str> = s.iter().map(|s| s.as_str()).collect();
                f.write_str(&names.join(", "))
            }
            Value::Text(t) => write!(f, "\"{t}\""),
            Value::Abilities(a) if a.is_empty() => f.write_str("none"),
            Value::Abilities(a) => {
                let names: Vec<String> = a.iter().map(|a| a.to_string()).collect();
                f.write_str(&names.join(", "))
            }
            Value::Player(Some(p)) => f.write_str(&name(*p)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbol_sets_are_sorted_and_every_holds_all() {
        let s: SymbolSet = [Symbol::new("red"), Symbol::new("blue"), Symbol::new("red")]
            .into_iter()
            .collect();
        assert_eq!(
            s.iter().map(|x| x.as_str()).collect::<Vec<_>>(),
            ["blue", "red"]
        );
        let mut all = SymbolSet::every();
        assert!(all.contains(&Symbol::new("goblin")));
        all.insert(Symbol::new("elf"));
        assert_eq!(all, SymbolSet::every());
        let mut t = s.clone();
        t.extend(&SymbolSet::every());
        assert!(t.is_every());
        assert_eq!(Value::Symbols(SymbolSet::every()).to_string(), "all");
        assert_eq!(Value::Symbols(SymbolSet::default()).to_string(), "none");
    }
}
