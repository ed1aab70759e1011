//! Dependency (CR 613.8): within a layer, effect A depends on B when applying B would
//! change A's existence, what it applies to, or what it does — never merely how much. Each effect's
//! *analysis* records its instruction and the exact cells it read (per subject) and will write;
//! only where B writes a cell A read is B tried on the sheet and A evaluated again.

use super::change::{
    add_cell, apply_in_place, cells_of, footprint_of, op_params, op_probe, subject_of,
};
use super::{
    all_subjects, objects_of, start, static_exists, subjects, you_of, Body, Candidate, Deriver,
};
use crate::condition::eval::Ctx;
use crate::condition::{Cell, Footprint, Reads, Subject};
use crate::effect::{Affects, Change, EffectDef};
use crate::ids::SlotTarget;
use crate::ids::{LayerId, ObjectId, PlayerId};
use crate::value::{Ability, Symbol, Value};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

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
    local: Option<Footprint>,
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

/// How an effect changes a cell: any way, or only whether some symbols are in it (adding or
/// removing them). A `has X` read is untouched by a change to other symbols: a Goblin lord does
/// not wait for an effect that makes Goblins Zombies too.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Touch {
    Any,
    Names(std::sync::Arc<[Symbol]>),
}

impl Touch {
    pub(super) fn meets(&self, obs: &Option<Symbol>) -> bool {
        match (self, obs) {
            (Touch::Names(list), Some(s)) => list.contains(s),
            _ => true,
        }
    }
    pub(super) fn join(self, other: Touch) -> Touch {
        match (self, other) {
            (Touch::Names(a), Touch::Names(b)) => {
                Touch::Names(a.iter().chain(b.iter()).cloned().collect())
            }
            _ => Touch::Any,
        }
    }
    /// How a change to a characteristic whose symbols give abilities (CR 305.6-305.7) changes the
    /// abilities of the object concerned: the abilities of the symbols it may add or take away;
    /// any ability where it sets basic land types (the rules-text abilities go, CR 305.7) or
    /// names a symbol only when it applies (a choice); `None` where it gives and takes none.
    pub(super) fn of_intrinsic(
        intrinsic: &crate::ruleset::Intrinsic,
        change: &Change,
    ) -> Option<Touch> {
        let name = |a: &Ability| match a {
            Ability::Keyword(k) | Ability::Kinded { name: k, .. } => k.clone(),
            Ability::Static { text, .. } => Symbol::new(text),
        };
        let all = || Touch::Names(intrinsic.abilities.iter().map(|(_, a)| name(a)).collect());
        let of = |l: &crate::effect::SymList| -> Vec<Symbol> {
            intrinsic
                .abilities
                .iter()
                .filter(|(s, _)| l.set.contains(s))
                .map(|(_, a)| name(a))
                .collect()
        };
        match change {
            Change::SetSymbols(l) | Change::SetInCategories { set: l, .. } => {
                if l.chosen || l.set.is_every() || !of(l).is_empty() {
                    Some(Touch::Any)
                } else if matches!(change, Change::SetSymbols(_)) {
                    // Every symbol goes: so do the abilities of those that held some.
                    Some(all())
                } else {
                    // The sets of its symbols are replaced: none gives abilities.
                    None
                }
            }
            Change::AddSymbols(l) | Change::RemoveSymbols(l) => {
                if l.chosen || l.set.is_every() {
                    Some(all())
                } else {
                    let names = of(l);
                    (!names.is_empty()).then(|| Touch::Names(names.into()))
                }
            }
            _ => Some(Touch::Any),
        }
    }

    pub(super) fn of(change: &Change) -> Touch {
        let names = |l: &crate::effect::SymList| {
            if l.chosen || l.set.is_every() {
                Touch::Any
            } else {
                Touch::Names(l.set.iter().cloned().collect())
            }
        };
        let abilities = |l: &[Ability]| {
            Touch::Names(
                l.iter()
                    .map(|a| match a {
                        Ability::Keyword(k) | Ability::Kinded { name: k, .. } => k.clone(),
                        Ability::Static { text, .. } => Symbol::new(text),
                    })
                    .collect(),
            )
        };
        match change {
            Change::WithIntrinsic { change, .. } => Touch::of(change),
            Change::AddSymbols(l) | Change::RemoveSymbols(l) => names(l),
            Change::AddAbilities(l) | Change::RemoveAbilities(l) | Change::MergeAbilities(l) => {
                abilities(l)
            }
            _ => Touch::Any,
        }
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

impl Deriver<'_> {
    /// Whether `a` depends on `b`, tested once and kept until either's analysis changes. Takes the
    /// group's tables one by one: the caller keeps using them between calls.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn edge(
        &mut self,
        lid: LayerId,
        cands: &[Candidate],
        analyses: &mut [Option<Analysis>],
        edges: &mut HashMap<(usize, usize), Option<DepKind>>,
        coarse: &[Option<Footprint>],
        a: usize,
        b: usize,
    ) -> Option<DepKind> {
        if let Some(k) = edges.get(&(a, b)) {
            return *k;
        }
        for i in [a, b] {
            if analyses[i].is_none() {
                analyses[i] = Some(self.analyse(lid, &cands[i], coarse[i].clone()));
            }
        }
        let (Some(aa), Some(ab)) = (&analyses[a], &analyses[b]) else {
            return None;
        };
        let k = if aa.meets(ab) {
            // Counts are not shared while `b` is tried: they would see values that are undone.
            let counting = std::mem::replace(&mut self.counting, false);
            let k = self.depends(lid, &cands[a], aa, &cands[b], ab);
            self.counting = counting;
            k
        } else {
            None
        };
        edges.insert((a, b), k);
        k
    }

    /// An effect's instruction, the cells it read to get it (per subject), and the cells it would
    /// write.
    /// With `coarse` (what the subjects' tests read, by characteristic), per-subject reads are not
    /// recorded.
    pub(super) fn analyse(
        &self,
        lid: LayerId,
        cand: &Candidate,
        coarse: Option<Footprint>,
    ) -> Analysis {
        let state = self.state;
        let record = coarse.is_none();
        let global = Reads::default();
        let mut by_cell = CellReads::new(Dims::of(state));
        let mut by_cell_chars = coarse.clone().unwrap_or_default();
        let mut note = |r: Reads, s: Subject| {
            let log = r.into_inner();
            for (c, obs) in log.cells {
                add_cell(&mut by_cell_chars, &c);
                by_cell.add(&c, s, obs);
            }
            by_cell_chars.union(&log.every);
            by_cell.add_every(s, log.every);
        };
        let mut scanned = false;
        let mut local_reads: Option<Footprint> = None;
        let (exists, subjects) = match (
            self.started.get(&cand.key),
            &cand.body,
            cand.created.is_none(),
        ) {
            (Some((_, s)), _, _) => (s.is_some(), s.as_deref().unwrap_or_default().to_vec()),
            (None, Body::Effect(def), true) => {
                scanned = true;
                match self.static_exists(cand, Some(&global)) {
                    None => (false, Vec::new()),
                    Some(you) => {
                        let mut subs = Vec::new();
                        let ctx = Ctx::new(state, &self.sheet, cand.source, you, &[]);
                        let mut all = all_subjects(&ctx, &def.affects);
                        if let Some(rank) = &self.visit {
                            all.sort_by_key(|s| match s {
                                Subject::Object(o) => rank[o.index()],
                                Subject::Player(p) => p.0 as u32,
                            });
                        }
                        // A condition that reads only the tested object's values: what it reads is
                        // known without recording each test.
                        let local = match &def.affects {
                            Affects::Objects(c) if record && c.is_local() => {
                                let mut f = Footprint::default();
                                c.reads(state.controller_char, &mut f);
                                Some(f)
                            }
                            _ => None,
                        };
                        for s in all {
                            let r = Reads::default();
                            let rec = (record && local.is_none()).then_some(&r);
                            if self.member(cand, def, you, s, rec) {
                                subs.push(s);
                            }
                            note(r, s);
                        }
                        local_reads = local;
                        subs.sort();
                        (true, subs)
                    }
                }
            }
            (None, _, _) => {
                let s = start(state, &self.sheet, cand, Some(&global));
                (s.is_some(), s.unwrap_or_default())
            }
        };
        let mut params = Vec::new();
        for s in &subjects {
            let r = Reads::default();
            params.push(self.params(lid, cand, *s, record.then_some(&r)));
            note(r, *s);
        }
        let touches = cand.touches(state, lid);
        let mut writes = Vec::new();
        for s in &subjects {
            writes.extend(cells_of(*s, &touches));
        }
        let global = global.into_inner();
        let global_every = global.every;
        let global: HashSet<Cell> = global.cells.into_iter().map(|(c, _)| c).collect();
        if let Some(f) = local_reads {
            by_cell_chars.union(&f);
            by_cell.local = Some(f);
        }
        by_cell.finish();
        let mut read_chars = by_cell_chars.clone();
        for c in &global {
            add_cell(&mut read_chars, c);
        }
        read_chars.union(&global_every);
        let write_chars = footprint_of(&writes);
        Analysis {
            instruction: Instruction {
                exists,
                subjects,
                params,
            },
            global,
            global_every,
            by_cell,
            scanned,
            coarse: coarse.is_some(),
            writes,
            read_chars,
            by_cell_chars,
            write_chars,
        }
    }

    /// Brings an analysis up to date after the cells its `subjects` read have changed: only those
    /// subjects are evaluated again.
    pub(super) fn refresh(
        &self,
        lid: LayerId,
        cand: &Candidate,
        mut an: Analysis,
        subjects: &[Subject],
        probed: Option<(&Vec<Option<Probe>>, &[ObjectId])>,
    ) -> Analysis {
        let you = if an.scanned {
            you_of(self.state, &self.sheet, cand, None)
        } else {
            None
        };
        let touches = cand.touches(self.state, lid);
        for (k, s) in subjects.iter().enumerate() {
            let r = Reads::default();
            let member = match (&cand.body, an.scanned) {
                (Body::Effect(def), true) => {
                    let rec = an.by_cell.local.is_none().then_some(&r);
                    self.member(cand, def, you, *s, rec)
                }
                _ => an.instruction.subjects.binary_search(s).is_ok(),
            };
            let at = an.instruction.subjects.binary_search(s);
            match (member, at) {
                (true, Ok(i)) => {
                    // Where a probe taken before the change is unchanged, so are the parameters.
                    let same = match probed {
                        Some((before, xs)) => before.get(k).is_some_and(|b| {
                            b.is_some() && self.probe(lid, cand, *s, xs, Some(&r)) == *b
                        }),
                        None => false,
                    };
                    if !same {
                        an.instruction.params[i] = self.params(lid, cand, *s, Some(&r));
                    }
                }
                (true, Err(i)) => {
                    an.instruction.subjects.insert(i, *s);
                    an.instruction
                        .params
                        .insert(i, self.params(lid, cand, *s, Some(&r)));
                    an.writes.extend(cells_of(*s, &touches));
                    an.write_chars = footprint_of(&an.writes);
                }
                (false, Ok(i)) => {
                    an.instruction.subjects.remove(i);
                    an.instruction.params.remove(i);
                    an.writes.retain(|(c, _)| subject_of(c) != *s);
                }
                (false, Err(_)) => {}
            }
            let log = r.into_inner();
            for (c, obs) in log.cells {
                add_cell(&mut an.read_chars, &c);
                add_cell(&mut an.by_cell_chars, &c);
                an.by_cell.add(&c, *s, obs);
            }
            an.read_chars.union(&log.every);
            an.by_cell_chars.union(&log.every);
            an.by_cell.add_every(*s, log.every);
        }
        an.by_cell.finish();
        an
    }

    /// The subjects of a static ability's condition, shared with every effect that has the same
    /// condition, "you" and (where the condition names it) source.
    pub(super) fn scan(
        &mut self,
        def: &EffectDef,
        source: Option<ObjectId>,
        you: Option<PlayerId>,
    ) -> super::Subjects {
        let cond = match &def.affects {
            Affects::Objects(c) | Affects::Players(c) => c,
        };
        let key = (
            def.affects_key().clone(),
            if cond.names_source() { source } else { None },
            you,
        );
        if let Some((_, subs)) = self.scans.get(&key) {
            return subs.clone();
        }
        let ctx = Ctx::new(self.state, &self.sheet, source, you, &[]);
        let mut subs = subjects(&ctx, &def.affects);
        subs.sort();
        let subs: super::Subjects = subs.into();
        let mut f = Footprint::default();
        cond.reads(self.state.controller_char, &mut f);
        self.scans.insert(key, (f, subs.clone()));
        subs
    }

    pub(super) fn static_exists(
        &self,
        cand: &Candidate,
        reads: Option<&Reads>,
    ) -> Option<Option<PlayerId>> {
        static_exists(self.state, &self.sheet, cand, reads)
    }

    /// Whether a subject is among those a static ability's effect applies to.
    pub(super) fn member(
        &self,
        cand: &Candidate,
        def: &EffectDef,
        you: Option<PlayerId>,
        s: Subject,
        reads: Option<&Reads>,
    ) -> bool {
        let ctx = Ctx::new(self.state, &self.sheet, cand.source, you, &[]).recording(reads);
        match &def.affects {
            Affects::Objects(c) | Affects::Players(c) => ctx.test(c, s),
        }
    }

    /// What the effect's parts in this layer do to one subject (see `op_params`).
    pub(super) fn params(
        &self,
        lid: LayerId,
        cand: &Candidate,
        s: Subject,
        reads: Option<&Reads>,
    ) -> Vec<Value> {
        let Body::Effect(def) = &cand.body else {
            return Vec::new();
        };
        let ctx = cand
            .ctx(self.state, &self.sheet, None)
            .recording(reads)
            .counting(self.counting.then_some(&self.counts));
        def.ops
            .iter()
            .filter(|o| o.layer == lid)
            .flat_map(|op| op_params(&ctx, s, op))
            .collect()
    }

    /// The probe of the effect's parameters for one subject (see `op_probe`), if every part can
    /// be probed.
    pub(super) fn probe(
        &self,
        lid: LayerId,
        cand: &Candidate,
        s: Subject,
        xs: &[ObjectId],
        reads: Option<&Reads>,
    ) -> Option<Probe> {
        let Body::Effect(def) = &cand.body else {
            return Some(Vec::new());
        };
        let ctx = cand.ctx(self.state, &self.sheet, None).recording(reads);
        let mut out = Vec::new();
        def.ops
            .iter()
            .filter(|o| o.layer == lid)
            .all(|op| op_probe(&ctx, s, op, xs, &mut out))
            .then_some(out)
    }

    /// CR 613.8a (b): would applying `b` change `a`'s existence, what it applies to,
    /// or what it does? `b` is applied to the values as they stand and undone; only the subjects of
    /// `a` whose answers read a cell `b` writes are evaluated again.
    pub(super) fn depends(
        &mut self,
        lid: LayerId,
        a: &Candidate,
        aa: &Analysis,
        b: &Candidate,
        ab: &Analysis,
    ) -> Option<DepKind> {
        let affected = aa.affected(&ab.writes);
        if affected.as_ref().is_some_and(|v| v.is_empty()) {
            return None;
        }
        // Where `b` changes only objects' values, `a`'s parameters are first compared by probe: only
        // those objects are evaluated again (a count of creatures with power 4 or more looks at the
        // creatures `b` changes, not at every creature).
        let xs = objects_of(&ab.writes);
        let probes_before: Vec<Option<Vec<Option<i64>>>> = match (&affected, &xs) {
            (Some(subs), Some(xs)) => subs
                .iter()
                .map(|s| self.probe(lid, a, *s, xs, None))
                .collect(),
            _ => Vec::new(),
        };
        // `b` applied to the values as they stand (with the parameters its analysis worked out),
        // to be undone below.
        let undo: Vec<(Cell, Value)> = ab
            .writes
            .iter()
            .map(|(c, _)| (*c, cell_value(&self.sheet, c).clone()))
            .collect();
        apply_in_place(
            self.state,
            &mut self.sheet,
            b,
            lid,
            &ab.instruction.subjects,
            Some(&ab.instruction.params),
            None,
            |_, _, _, _| {},
        );
        let before = &aa.instruction;
        let verdict = match affected {
            None => {
                let after = self.analyse(lid, a, Some(Footprint::default())).instruction;
                if before.exists != after.exists {
                    Some(DepKind::Existence)
                } else if before.subjects != after.subjects {
                    Some(DepKind::AppliesTo)
                } else if before.params != after.params {
                    Some(DepKind::WhatItDoes)
                } else {
                    None
                }
            }
            Some(subs) => {
                let mut verdict = None;
                let you = if aa.scanned {
                    you_of(self.state, &self.sheet, a, None)
                } else {
                    None
                };
                for (k, s) in subs.into_iter().enumerate() {
                    let was = before.subjects.binary_search(&s);
                    if let (true, Body::Effect(def)) = (aa.scanned, &a.body) {
                        if self.member(a, def, you, s, None) != was.is_ok() {
                            verdict = Some(DepKind::AppliesTo);
                            break;
                        }
                    }
                    if let Ok(i) = was {
                        let probed_same = match (probes_before.get(k), &xs) {
                            (Some(Some(p)), Some(xs)) => {
                                self.probe(lid, a, s, xs, None).as_ref() == Some(p)
                            }
                            _ => false,
                        };
                        if !probed_same && self.params(lid, a, s, None) != before.params[i] {
                            verdict = Some(DepKind::WhatItDoes);
                        }
                    }
                }
                verdict
            }
        };
        for (cell, old) in undo.into_iter().rev() {
            *cell_value_mut(&mut self.sheet, &cell) = old;
        }
        verdict
    }
}

fn cell_value<'a>(sheet: &'a crate::state::sheet::Sheet, c: &Cell) -> &'a Value {
    match c {
        Cell::Object(o, ch) => &sheet.objects[o.index()][ch.index()],
        Cell::Player(p, q) => &sheet.players[p.index()][q.index()],
    }
}

fn cell_value_mut<'a>(sheet: &'a mut crate::state::sheet::Sheet, c: &Cell) -> &'a mut Value {
    match c {
        Cell::Object(o, ch) => &mut sheet.objects[o.index()][ch.index()],
        Cell::Player(p, q) => &mut sheet.players[p.index()][q.index()],
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
