//! Characteristic values, typed by the ruleset: numbers, symbol sets, text, ability lists, a player.

use crate::model::ids::{ClassId, PlayerId};
use serde::Serialize;
use std::fmt;
use std::sync::Arc;

/// A name such as a color, a type or a keyword ability. Two symbols are equal when their text is:
/// a symbol is made anywhere without a shared table, so making one takes no lock. A loader gives
/// every symbol of one ruleset and its content the same allocation for the same text, so most
/// comparisons end at one pointer test. Ordered and hashed by the text.
#[derive(Clone, Debug, Serialize)]
pub struct Symbol(Arc<str>);

impl std::hash::Hash for Symbol {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.0.hash(h)
    }
}

impl PartialEq for Symbol {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        if Arc::ptr_eq(&self.0, &other.0) {
            return true;
        }
        // Most symbols that differ, differ in length or first letter: no call compares the rest.
        let (a, b) = (self.0.as_bytes(), other.0.as_bytes());
        a.len() == b.len() && a.first() == b.first() && a == b
    }
}

impl Eq for Symbol {}

impl PartialOrd for Symbol {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Symbol {
    #[inline]
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        if Arc::ptr_eq(&self.0, &other.0) {
            return std::cmp::Ordering::Equal;
        }
        self.0.cmp(&other.0)
    }
}

/// A table of symbols looks one up by its text (hashing and equality are the text's).
impl std::borrow::Borrow<str> for Symbol {
    fn borrow(&self) -> &str {
        &self.0
    }
}

/// A symbol whose text is already shared (a static ability's rules text): no copy is made.
impl From<Arc<str>> for Symbol {
    fn from(text: Arc<str>) -> Self {
        Symbol(text)
    }
}

impl Symbol {
    /// A symbol with its own copy of the text.
    pub fn new(s: &str) -> Self {
        Symbol(Arc::from(s))
    }
    /// Its text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
    /// Whether the two share one allocation (and so are equal without reading the text).
    pub fn shares(&self, other: &Symbol) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl fmt::Display for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A set of symbols kept sorted, so equal sets compare and print the same. A set may hold every
/// symbol but a few ("all creature types", layer 4: changeling, CR 702.73a; CR 205.3m: every
/// creature type and no other). Sets are shared: a copy costs a reference count, and a change
/// builds a new set.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
pub struct SymbolSet {
    /// The members; where `all`, the symbols it lacks.
    syms: Arc<[Symbol]>,
    all: bool,
}

impl Default for SymbolSet {
    fn default() -> Self {
        // One empty list per thread: its count is touched at every copy of an empty set, and
        // one shared by games on several threads would pass its cache line between cores.
        thread_local! {
            static EMPTY: Arc<[Symbol]> = Arc::from(Vec::new());
        }
        SymbolSet {
            syms: EMPTY.with(Arc::clone),
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
    /// The set holding every symbol but these.
    pub fn every_but(lacks: &SymbolSet) -> Self {
        let mut s = SymbolSet::every();
        s.subtract(lacks);
        s
    }
    /// Whether it holds every symbol but finitely many (it has no countable size).
    pub fn is_every(&self) -> bool {
        self.all
    }
    /// For a set that holds every symbol but some (`is_every`): those it lacks.
    pub fn lacks(&self) -> impl Iterator<Item = &Symbol> {
        self.syms.iter().filter(move |_| self.all)
    }
    fn listed(&self, s: &Symbol) -> bool {
        if self.syms.len() <= 8 {
            self.syms.contains(s)
        } else {
            self.syms.binary_search(s).is_ok()
        }
    }
    fn with(v: Vec<Symbol>, all: bool) -> Self {
        let mut s: SymbolSet = v.into_iter().collect();
        s.all = all;
        s
    }
    /// The symbols of `a` that `b` lists (`want`) or does not list.
    fn keep(a: &SymbolSet, b: &SymbolSet, want: bool) -> Vec<Symbol> {
        a.syms
            .iter()
            .filter(|x| b.listed(x) == want)
            .cloned()
            .collect()
    }
    /// The symbols either set lists (`with` sorts them and drops repeats).
    fn both_listed(&self, other: &SymbolSet) -> Vec<Symbol> {
        let mut v = self.syms.to_vec();
        v.extend(other.syms.iter().cloned());
        v
    }
    /// Removes every symbol of `other` (a set that holds every symbol but some included).
    pub fn subtract(&mut self, other: &SymbolSet) {
        *self = match (self.all, other.all) {
            (false, false) if other.syms.iter().any(|x| self.listed(x)) => {
                Self::with(Self::keep(self, other, false), false)
            }
            (false, false) => return,
            // Finite minus all but E: the members in E.
            (false, true) => Self::with(Self::keep(self, other, true), false),
            // All but E minus a finite F: all but E and F.
            (true, false) => Self::with(self.both_listed(other), true),
            // All but E minus all but F: F's symbols not in E.
            (true, true) => Self::with(Self::keep(other, self, false), false),
        };
    }
    /// Keeps only the symbols `other` holds too.
    pub fn intersect(&mut self, other: &SymbolSet) {
        *self = match (self.all, other.all) {
            (false, false) => Self::with(Self::keep(self, other, true), false),
            (false, true) => Self::with(Self::keep(self, other, false), false),
            (true, false) => Self::with(Self::keep(other, self, false), false),
            (true, true) => Self::with(self.both_listed(other), true),
        };
    }
    /// Whether both are the same shared set (a test by identity; false says nothing).
    pub fn same(&self, other: &SymbolSet) -> bool {
        self.all == other.all && Arc::ptr_eq(&self.syms, &other.syms)
    }
    /// Whether the set holds `s`.
    pub fn contains(&self, s: &Symbol) -> bool {
        // Small sets (most are) are searched by identity; large ones by text.
        self.listed(s) != self.all
    }
    /// Adds `s`; a set of every symbol but some stops lacking it.
    pub fn insert(&mut self, s: Symbol) {
        if self.all {
            // Every symbol but some: it no longer lacks this one.
            if let Ok(i) = self.syms.binary_search(&s) {
                let mut v = self.syms.to_vec();
                v.remove(i);
                self.syms = v.into();
            }
            return;
        }
        if let Err(i) = self.syms.binary_search(&s) {
            let mut v = self.syms.to_vec();
            v.insert(i, s);
            self.syms = v.into();
        }
    }
    /// Removing one symbol from every symbol leaves every symbol but that one.
    pub fn remove(&mut self, s: &Symbol) {
        match (self.syms.binary_search(s), self.all) {
            (Ok(i), false) => {
                let mut v = self.syms.to_vec();
                v.remove(i);
                self.syms = v.into();
            }
            (Err(i), true) => {
                let mut v = self.syms.to_vec();
                v.insert(i, s.clone());
                self.syms = v.into();
            }
            _ => {}
        }
    }
    /// Adds every symbol of `other`.
    pub fn extend(&mut self, other: &SymbolSet) {
        match (self.all, other.all) {
            (false, false) => {
                if other.syms.iter().any(|s| !self.listed(s)) {
                    *self = Self::with(self.both_listed(other), false);
                }
            }
            // Finite and all but E: all but E's symbols not held here.
            (false, true) => *self = Self::with(Self::keep(other, self, false), true),
            // All but E and finite F: all but E's symbols not in F.
            (true, false) => {
                if other.syms.iter().any(|s| self.listed(s)) {
                    *self = Self::with(Self::keep(self, other, false), true)
                }
            }
            (true, true) => *self = Self::with(Self::keep(self, other, true), true),
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
    /// Whether it holds no symbol.
    pub fn is_empty(&self) -> bool {
        !self.all && self.syms.is_empty()
    }
    /// The members of a finite set; none for a set that holds every symbol but some (see `lacks`).
    pub fn iter(&self) -> impl Iterator<Item = &Symbol> {
        self.syms.iter().filter(move |_| !self.all)
    }
}

/// An ability an object has: a keyword, one of the static abilities written on an object class,
/// or an ability of another kind named by its text.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize)]
pub enum Ability {
    /// A keyword or other static ability named by its text ("flying").
    Keyword(Symbol),
    /// The `index`-th static ability of `class`; `text` is its rules text, for display.
    Static {
        /// The class that has the ability.
        class: ClassId,
        /// Its position among the class's static abilities
        /// ([`ObjectClass::statics`](crate::model::content::ObjectClass::statics)).
        index: u16,
        /// Its rules text, for display.
        text: Arc<str>,
    },
    /// An activated, mana or triggered ability, named by its text (CR 113.3).
    Kinded {
        /// Its kind: activated, mana or triggered.
        kind: AbilityKind,
        /// Its rules text (`{T}: Add {G}.`).
        name: Symbol,
    },
    /// The `index`-th response (trait, Reaction or replacement) of `class`: an object answers
    /// occurrences with it only while it has this ability (CR 113.2c; an effect that removes it
    /// silences it, one that gives it to another object makes that object answer with it).
    Response {
        /// The class whose response it is.
        class: ClassId,
        /// The response's index among the class's responses.
        index: u16,
        /// Its kind: a trait is triggered, a Reaction activated, a replacement static.
        kind: AbilityKind,
        /// Its rules text.
        text: Arc<str>,
    },
}

/// The kinds of abilities (CR 113.3): static, activated, triggered; mana abilities (CR 605) are
/// activated abilities of their own kind.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
pub enum AbilityKind {
    /// A static ability (CR 113.3d): keywords and the static abilities written on classes.
    Static,
    /// An activated ability (CR 113.3b).
    Activated,
    /// A mana ability (CR 605); [`Ability::is`] counts it as activated too.
    Mana,
    /// A triggered ability (CR 113.3c).
    Triggered,
}

impl AbilityKind {
    /// Every kind, in the order above.
    pub const ALL: [AbilityKind; 4] = [
        AbilityKind::Static,
        AbilityKind::Activated,
        AbilityKind::Mana,
        AbilityKind::Triggered,
    ];
    /// The kind's word in the language (`static`, `activated`, `mana`, `triggered`).
    pub fn name(self) -> &'static str {
        match self {
            AbilityKind::Static => "static",
            AbilityKind::Activated => "activated",
            AbilityKind::Mana => "mana",
            AbilityKind::Triggered => "triggered",
        }
    }
    /// The kind a word names, if any (the inverse of [`AbilityKind::name`]).
    pub fn named(w: &str) -> Option<AbilityKind> {
        AbilityKind::ALL.into_iter().find(|k| k.name() == w)
    }
}

impl Ability {
    /// Its kind: keywords and written static abilities are static.
    pub fn kind(&self) -> AbilityKind {
        match self {
            Ability::Keyword(_) | Ability::Static { .. } => AbilityKind::Static,
            Ability::Kinded { kind, .. } | Ability::Response { kind, .. } => *kind,
        }
    }
    /// Whether it is of kind `k`; a mana ability is an activated ability too (CR 605.1a).
    pub fn is(&self, k: AbilityKind) -> bool {
        let mine = self.kind();
        mine == k || (k == AbilityKind::Activated && mine == AbilityKind::Mana)
    }
    /// The name expectations and `has` compare: a keyword's, the rules text otherwise.
    pub fn name(&self) -> &str {
        match self {
            Ability::Keyword(s) | Ability::Kinded { name: s, .. } => s.as_str(),
            Ability::Static { text, .. } | Ability::Response { text, .. } => text,
        }
    }
}

impl fmt::Display for Ability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ability::Keyword(s) | Ability::Kinded { name: s, .. } => write!(f, "{s}"),
            Ability::Static { text, .. } | Ability::Response { text, .. } => {
                write!(f, "\"{text}\"")
            }
        }
    }
}

/// The value of one characteristic or player property.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
pub enum Value {
    /// A number, or `None` where the game says there is none ("no maximum hand size").
    Number(Option<i64>),
    /// A set of symbols (colors, card types, states), or every symbol but a few.
    Symbols(SymbolSet),
    /// A string: a name or rules text.
    Text(Arc<str>),
    /// Kept in the order gained; duplicates removed. Shared like symbol sets.
    Abilities(Arc<[Ability]>),
    /// A player: the value of a controller characteristic; `None` when no player is given.
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

    /// The same value held in a place of its own (a copy shares nothing with this one): for a
    /// copy of the content that games on another thread count their copies of.
    pub(crate) fn unshared(&self) -> Value {
        match self {
            Value::Symbols(s) => Value::Symbols(SymbolSet {
                syms: s.syms.iter().cloned().collect(),
                all: s.all,
            }),
            Value::Text(t) => Value::Text(Arc::from(&**t)),
            Value::Abilities(a) => Value::Abilities(a.iter().cloned().collect()),
            v => v.clone(),
        }
    }

    /// The number this value holds; `None` for no number or a value of another kind.
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
            Value::Symbols(s) if s.is_every() => {
                let lacks: Vec<&str> = s.lacks().map(|s| s.as_str()).collect();
                match lacks.len() {
                    0 => f.write_str("all"),
                    1..=6 => write!(f, "all except {}", lacks.join(", ")),
                    n => write!(f, "all except {n} symbols"),
                }
            }
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

    /// Every symbol but some: removing, adding and the set operations keep exactly the symbols
    /// the rules say (every creature type and no other, CR 205.3m).
    #[test]
    fn every_symbol_but_some() {
        let sym = |x: &str| Symbol::new(x);
        let set = |xs: &[&str]| -> SymbolSet { xs.iter().map(|x| sym(x)).collect() };
        let lands = set(&["forest", "island"]);
        let mut creatures = SymbolSet::every_but(&lands);
        assert!(creatures.contains(&sym("goblin")) && !creatures.contains(&sym("forest")));
        assert_eq!(
            Value::Symbols(creatures.clone()).to_string(),
            "all except forest, island"
        );
        creatures.remove(&sym("goblin"));
        assert!(!creatures.contains(&sym("goblin")));
        creatures.insert(sym("goblin"));
        assert_eq!(creatures, SymbolSet::every_but(&lands));
        // A Forest Bear that becomes every creature type: still a Forest.
        let mut t = set(&["bear", "forest"]);
        t.extend(&creatures);
        assert!(
            t.contains(&sym("forest")) && t.contains(&sym("elf")) && !t.contains(&sym("island"))
        );
        // Losing every creature type leaves the land types.
        t.subtract(&creatures);
        assert_eq!(t, set(&["forest"]));
        // All but E minus all but F: F's symbols not in E.
        let mut a = SymbolSet::every_but(&set(&["x"]));
        a.subtract(&SymbolSet::every_but(&set(&["x", "y"])));
        assert_eq!(a, set(&["y"]));
        // Intersections.
        let mut i = set(&["bear", "forest", "island"]);
        i.intersect(&creatures);
        assert_eq!(i, set(&["bear"]));
        let mut j = SymbolSet::every_but(&set(&["x"]));
        j.intersect(&SymbolSet::every_but(&set(&["y"])));
        assert_eq!(j, SymbolSet::every_but(&set(&["x", "y"])));
    }

    #[test]
    fn symbols_made_apart_are_equal_by_their_text() {
        use std::hash::{BuildHasher, RandomState};
        let (a, b) = (Symbol::new("goblin"), Symbol::new("goblin"));
        assert!(!a.shares(&b));
        assert_eq!(a, b);
        assert!(a.clone().shares(&a));
        assert_ne!(a, Symbol::new("elf"));
        assert_ne!(a, Symbol::new("goblins"));
        let h = RandomState::new();
        assert_eq!(h.hash_one(&a), h.hash_one(&b));
        assert_eq!(a.cmp(&b), std::cmp::Ordering::Equal);
        assert!(Symbol::new("elf") < a && a < Symbol::new("zombie"));
        // Sets built from either find the other's symbols.
        let set: SymbolSet = [Symbol::new("elf"), a].into_iter().collect();
        assert!(set.contains(&b));
        assert_eq!(set, [b, Symbol::new("elf")].into_iter().collect());
    }
}

/// An argument of an event occurrence: an object, a player, a number, or one of the ruleset's
/// zones, counter kinds and player properties (a built-in event carries its whole change as
/// arguments: where a card moves, which counters are placed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
pub enum Arg {
    /// An object the occurrence is about (`card`).
    Object(crate::model::ids::ObjectId),
    /// A player (who gains, who orders, whose turn ends).
    Player(crate::model::ids::PlayerId),
    /// A number (an amount, a size).
    Number(i64),
    /// A zone (where a card moves from or to).
    Zone(crate::model::ids::ZoneId),
    /// A counter kind.
    Counter(crate::model::ids::CounterId),
    /// A player property.
    Property(crate::model::ids::PropId),
    /// An object class of the content.
    Class(ClassId),
}
