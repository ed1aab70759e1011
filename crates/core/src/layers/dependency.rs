//! Dependency (CR 613.8): within a layer, effect A depends on B when applying B would
//! change A's existence, what it applies to, or what it does — never merely how much. Each effect's
//! *analysis* records its instruction and the exact cells it read (per subject) and will write;
//! only where B writes a cell A read is B tried on the sheet and A evaluated again.

use super::change::subject_of;
use crate::model::condition::{Cell, Footprint, Subject};
use crate::model::ids::SlotTarget;
use crate::model::trail::Touch;
use crate::model::value::{Symbol, Value};
use rustc_hash::FxHashSet as HashSet;

/// An effect's instruction with the cells it read and the cells it would write. Reads are kept
/// per subject, so a dependency test re-evaluates only the subjects a change can affect.
#[derive(Clone)]
pub(super) struct Analysis {
    pub(super) instruction: Instruction,
    /// Cells read to decide existence and "you": a change here means testing everything again.
    pub(super) global: HashSet<Cell>,
    /// What aggregates read of every object to decide existence.
    pub(super) global_every: Footprint,
    /// The cells the subjects' membership and parameters read.
    pub(super) by_cell: CellReads,
    /// Whether membership is decided by testing each subject (a static ability not yet started).
    pub(super) scanned: bool,
    /// Per-subject reads were not recorded (no partner writes what the subjects' tests read):
    /// `by_cell_chars` then says what they read, and any change there means testing all again.
    pub(super) coarse: bool,
    pub(super) writes: Vec<(Cell, Touch)>,
    /// The characteristics of every cell read (in `global`, in `by_cell`) and written: quick
    /// tests before the cells.
    pub(super) read_chars: Footprint,
    pub(super) by_cell_chars: Footprint,
    pub(super) write_chars: Footprint,
}

/// The sizes that number the cells of a sheet: objects' characteristics, then players' properties.
#[derive(Clone, Copy)]
pub(super) struct Dims {
    chars: u32,
    objects: u32,
    props: u32,
    players: u32,
}

impl Dims {
    pub(super) fn of(state: &crate::state::GameState) -> Self {
        Dims {
            chars: state.ruleset.characteristics.len() as u32,
            objects: state.objects.len() as u32,
            props: state.ruleset.props.len() as u32,
            players: state.players.len() as u32,
        }
    }
    /// How many cells a sheet has.
    pub(super) fn cells(self) -> usize {
        (self.objects * self.chars + self.players * self.props) as usize
    }
    pub(super) fn index(self, c: &Cell) -> usize {
        match c {
            Cell::Object(o, ch) => (o.0 * self.chars + ch.index() as u32) as usize,
            Cell::Player(p, q) => {
                (self.objects * self.chars + p.0 as u32 * self.props + q.index() as u32) as usize
            }
        }
    }
}

/// The cells an analysis's subjects read: bitsets for quick tests, and each read with its subject
/// and the one symbol looked at where only `has X` was asked, to find whom a change reaches.
#[derive(Clone)]
pub(super) struct CellReads {
    dims: Dims,
    /// Cells read in full.
    any: Vec<u64>,
    /// Cells read only for whether they hold a symbol.
    named: Vec<u64>,
    /// (cell index, subject, symbol), sorted by cell once `finish` has run.
    entries: Vec<(u32, Subject, Option<Symbol>)>,
    /// What aggregates read of every object, by subject, and all of it together.
    every: Vec<(Subject, Footprint)>,
    every_all: Footprint,
    /// Where membership is tested with a condition that reads only the tested object's values:
    /// what it reads. A change to an object's cell there can change only that object's membership,
    /// so the reads need not be kept one by one.
    pub(super) local: Option<Footprint>,
    /// The only subject that read anything, while there is one.
    only: Option<Option<Subject>>,
}

impl CellReads {
    pub(super) fn new(dims: Dims) -> Self {
        CellReads {
            dims,
            any: Vec::new(),
            named: Vec::new(),
            entries: Vec::new(),
            every: Vec::new(),
            every_all: Footprint::default(),
            local: None,
            only: None,
        }
    }
    fn note_subject(&mut self, s: Subject) {
        match self.only {
            None => self.only = Some(Some(s)),
            Some(Some(x)) if x != s => {
                self.spread(x);
                self.only = Some(None);
            }
            _ => {}
        }
    }
    /// What an aggregate evaluated for `s` read of every object.
    pub(super) fn add_every(&mut self, s: Subject, f: Footprint) {
        if f.is_empty() {
            return;
        }
        self.note_subject(s);
        self.every_all.union(&f);
        self.every.push((s, f));
    }
    fn set(bits: &mut Vec<u64>, i: usize) {
        if bits.len() <= i / 64 {
            bits.resize(i / 64 + 1, 0);
        }
        bits[i / 64] |= 1 << (i % 64);
    }
    fn test(bits: &[u64], i: usize) -> bool {
        bits.get(i / 64).is_some_and(|b| b & (1 << (i % 64)) != 0)
    }
    pub(super) fn add(&mut self, c: &Cell, s: Subject, obs: Option<Symbol>) {
        let i = self.dims.index(c);
        self.note_subject(s);
        match &obs {
            None => Self::set(&mut self.any, i),
            Some(_) => Self::set(&mut self.named, i),
        }
        // While one subject reads everything, a full read needs no entry: its bit says it all.
        if obs.is_some() || self.only == Some(None) {
            self.entries.push((i as u32, s, obs));
        }
    }
    /// Gives the full reads so far, all by `x`, their entries: a second subject has read.
    fn spread(&mut self, x: Subject) {
        for (w, bits) in self.any.iter().enumerate() {
            let mut b = *bits;
            while b != 0 {
                let t = b.trailing_zeros() as usize;
                self.entries.push(((w * 64 + t) as u32, x, None));
                b &= b - 1;
            }
        }
    }
    /// Sorts the reads by cell, for looking up whom a cell's change reaches.
    pub(super) fn finish(&mut self) {
        if self.only.is_some_and(|o| o.is_none()) {
            self.entries.sort_unstable();
            self.entries.dedup();
        }
    }
    fn range(&self, i: usize) -> &[(u32, Subject, Option<Symbol>)] {
        let i = i as u32;
        let lo = self.entries.partition_point(|e| e.0 < i);
        let hi = self.entries.partition_point(|e| e.0 <= i);
        &self.entries[lo..hi]
    }
    /// Whether a change to `c` made as `t` says can change an answer.
    pub(super) fn reads(&self, c: &Cell, t: &Touch) -> bool {
        self.local.as_ref().is_some_and(|f| sees(f, c, t)) || self.recorded(c, t)
    }
    /// Whether a read kept one by one sees a change to `c`.
    fn recorded(&self, c: &Cell, t: &Touch) -> bool {
        let i = self.dims.index(c);
        if Self::test(&self.any, i) || sees(&self.every_all, c, t) {
            return true;
        }
        if !Self::test(&self.named, i) {
            return false;
        }
        match t {
            Touch::Any => true,
            Touch::Names(_) => match self.only {
                Some(Some(_)) => self
                    .entries
                    .iter()
                    .any(|e| e.0 as usize == i && t.meets(&e.2)),
                _ => self.range(i).iter().any(|e| t.meets(&e.2)),
            },
        }
    }
    /// Adds the subjects whose answers a change to `c` can change.
    fn reached(&self, c: &Cell, t: &Touch, out: &mut Vec<Subject>) {
        if self.local.as_ref().is_some_and(|f| sees(f, c, t)) {
            out.push(subject_of(c));
        }
        if !self.recorded(c, t) {
            return;
        }
        match self.only {
            Some(Some(s)) => out.push(s),
            _ => {
                out.extend(
                    self.range(self.dims.index(c))
                        .iter()
                        .filter(|e| t.meets(&e.2))
                        .map(|e| e.1),
                );
                out.extend(
                    self.every
                        .iter()
                        .filter(|(_, f)| sees(f, c, t))
                        .map(|(s, _)| *s),
                );
            }
        }
    }
}

/// Whether reads summed up as `f` see a change to `c` made as `t` says (a `has X` read sees only
/// changes to X).
pub(super) fn sees(f: &Footprint, c: &Cell, t: &Touch) -> bool {
    match c {
        Cell::Object(_, ch) => sees_target(f, SlotTarget::Char(*ch), t),
        Cell::Player(_, q) => sees_target(f, SlotTarget::Prop(*q), t),
    }
}

/// Whether reads summed up as `f` see a change to a characteristic or property made as `t` says.
pub(super) fn sees_target(f: &Footprint, target: SlotTarget, t: &Touch) -> bool {
    match target {
        SlotTarget::Char(ch) => {
            f.reads_any(ch)
                || match t {
                    Touch::Any => f.names_of(ch).next().is_some(),
                    Touch::Names(list) => f.names_of(ch).any(|s| list.contains(s)),
                }
        }
        SlotTarget::Prop(q) => f.has_prop(q),
    }
}

impl Analysis {
    /// Whether a cell written by the effect with analysis `b` can change this one's answers.
    pub(super) fn meets(&self, b: &Analysis) -> bool {
        if self.coarse && self.by_cell_chars.intersects(&b.write_chars) {
            return true;
        }
        if !self.read_chars.intersects(&b.write_chars) {
            return false;
        }
        // Cells read for existence: few; look them up among b's subjects.
        let global = self.global.iter().any(|c| {
            let s = subject_of(c);
            b.instruction.subjects.binary_search(&s).is_ok()
                && match c {
                    Cell::Object(_, ch) => b.write_chars.has_char(*ch),
                    Cell::Player(_, p) => b.write_chars.has_prop(*p),
                }
        });
        global
            || (self.global_every.intersects(&b.write_chars)
                && b.writes.iter().any(|(c, t)| sees(&self.global_every, c, t)))
            || (self.by_cell_chars.intersects(&b.write_chars)
                && b.writes.iter().any(|(c, t)| self.reads(c, t)))
    }

    /// The subjects whose answers may change when these cells (of the given characteristics)
    /// change: `Some(empty)` when none can, `None` for all of them.
    pub(super) fn affected_by(
        &self,
        cells: &[(Cell, Touch)],
        chars: &Footprint,
        subjects: &[Subject],
    ) -> Option<Vec<Subject>> {
        if !self.read_chars.intersects(chars) {
            return Some(Vec::new());
        }
        let global = self.global.iter().any(|c| {
            subjects.binary_search(&subject_of(c)).is_ok()
                && match c {
                    Cell::Object(_, ch) => chars.has_char(*ch),
                    Cell::Player(_, p) => chars.has_prop(*p),
                }
        });
        if global
            || (self.global_every.intersects(chars)
                && cells.iter().any(|(c, t)| sees(&self.global_every, c, t)))
        {
            return None;
        }
        if !self.by_cell_chars.intersects(chars) {
            return Some(Vec::new());
        }
        if self.coarse {
            return None;
        }
        self.affected_within(cells, Some(chars))
    }

    pub(super) fn reads(&self, c: &Cell, t: &Touch) -> bool {
        self.global.contains(c) || sees(&self.global_every, c, t) || self.by_cell.reads(c, t)
    }
    /// The subjects whose answers may change when these cells change; `None` for all of them.
    pub(super) fn affected(&self, cells: &[(Cell, Touch)]) -> Option<Vec<Subject>> {
        self.affected_within(cells, None)
    }

    /// `affected`, knowing the characteristics the cells are of (`chars`), where known.
    fn affected_within(
        &self,
        cells: &[(Cell, Touch)],
        chars: Option<&Footprint>,
    ) -> Option<Vec<Subject>> {
        if self.coarse
            || cells
                .iter()
                .any(|(c, t)| self.global.contains(c) || sees(&self.global_every, c, t))
        {
            return None;
        }
        let mut out: Vec<Subject> = Vec::new();
        match self.by_cell.only {
            // One subject reads everything recorded: the first cell it read reaches it. Where
            // membership tests read each tested object's own cells (`local`), each written
            // object those reads see is reached too.
            Some(Some(s)) => {
                let local = self
                    .by_cell
                    .local
                    .as_ref()
                    .filter(|f| chars.is_none_or(|c| f.intersects(c)));
                let mut got = false;
                for (c, t) in cells {
                    if let Some(f) = local {
                        if sees(f, c, t) {
                            out.push(subject_of(c));
                        }
                    }
                    if !got && self.by_cell.recorded(c, t) {
                        out.push(s);
                        got = true;
                        if local.is_none() {
                            break;
                        }
                    }
                }
            }
            _ => {
                for (c, t) in cells {
                    self.by_cell.reached(c, t, &mut out);
                }
            }
        }
        out.sort();
        out.dedup();
        Some(out)
    }
}

/// What an effect would do now: whether it exists, whom it affects and the values its operations
/// would use. CR 613.8a: A depends on B when applying B would change A's existence, what it applies
/// to, or what it does to those things — but not merely how much (the second Mind Bend example).
#[derive(Clone, PartialEq)]
pub(super) struct Instruction {
    pub(super) exists: bool,
    /// In id order.
    pub(super) subjects: Vec<Subject>,
    /// The parameters for each subject, in the same order.
    pub(super) params: Vec<Vec<Value>>,
}

/// What only some objects' values decide of an effect's parameters (see `Ctx::probe`).
pub(super) type Probe = Vec<Option<i64>>;

/// Why one effect waits for another (CR 613.8a, (b)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum DepKind {
    Existence,
    AppliesTo,
    WhatItDoes,
}

impl DepKind {
    pub(super) fn text(self) -> &'static str {
        match self {
            DepKind::Existence => "changes whether it exists",
            DepKind::AppliesTo => "changes what it applies to",
            DepKind::WhatItDoes => "changes what it does",
        }
    }
}

/// The members of a dependency loop that depends on nothing outside itself, earliest timestamp
/// first (CR 613.8b: "the effects in the dependency loop are applied in timestamp order"). Called
/// only when every pending effect waits for another, so such a loop exists.
pub(super) fn sink_loop(deps: &[Vec<(usize, DepKind)>], alive: &[bool]) -> Vec<usize> {
    let n = deps.len();
    // Reachability by depth-first search from each node; n is small (effects of one layer that
    // all wait for each other).
    let reach: Vec<Vec<bool>> = (0..n)
        .map(|s| {
            let mut seen = vec![false; n];
            let mut stack = vec![s];
            while let Some(x) = stack.pop() {
                for (y, _) in &deps[x] {
                    if !seen[*y] {
                        seen[*y] = true;
                        stack.push(*y);
                    }
                }
            }
            seen
        })
        .collect();
    // A node on a cycle whose every reachable node reaches it back lies in a sink loop.
    for (i, ri) in reach.iter().enumerate() {
        if alive[i] && ri[i] && (0..n).all(|j| !ri[j] || reach[j][i]) {
            return (0..n).filter(|j| ri[*j] && reach[*j][i]).collect();
        }
    }
    vec![alive.iter().position(|a| *a).unwrap_or(0)]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CR 613.8b: a loop's members apply in timestamp order; an effect that depends on a loop
    /// member is not part of the loop.
    #[test]
    fn sink_loop_finds_the_loop_that_waits_for_nothing_outside() {
        // 0 depends on 1; 1 and 2 depend on each other; 3 depends on 2.
        let k = DepKind::AppliesTo;
        let deps = vec![vec![(1, k)], vec![(2, k)], vec![(1, k)], vec![(2, k)]];
        assert_eq!(sink_loop(&deps, &[true; 4]), vec![1, 2]);
        // A loop of three beside a dependent effect.
        let deps = vec![vec![(1, k)], vec![(2, k)], vec![(0, k)], vec![(0, k)]];
        assert_eq!(sink_loop(&deps, &[true; 4]), vec![0, 1, 2]);
        // Applied effects take no part.
        let deps = vec![vec![], vec![(2, k)], vec![(1, k)]];
        assert_eq!(sink_loop(&deps, &[false, true, true]), vec![1, 2]);
    }

    /// Adding or removing some symbols touches only reads of those symbols.
    #[test]
    fn touch_meets_only_what_it_changes() {
        let zombie = Touch::Names([Symbol::new("zombie")].into());
        assert!(!zombie.meets(&Some(Symbol::new("goblin"))));
        assert!(zombie.meets(&Some(Symbol::new("zombie"))));
        assert!(zombie.meets(&None));
        assert!(Touch::Any.meets(&Some(Symbol::new("goblin"))));
        let joined = zombie.join(Touch::Names([Symbol::new("goblin")].into()));
        assert!(joined.meets(&Some(Symbol::new("goblin"))));
        assert_eq!(Touch::Names([].into()).join(Touch::Any), Touch::Any);
    }
}
