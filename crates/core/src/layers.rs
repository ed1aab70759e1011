//! The layer system (seed 003, "Layers"; seed 004): characteristics are derived from base values by
//! applying continuous effects layer by layer, characteristic-defining effects first, then in
//! timestamp order. An effect that began applying in one layer keeps applying its later parts to
//! the same objects (seed 003, "Timestamp", first paragraph; seed 004, "Smash It Up").

use crate::condition::{Cell, Cond, Ctx, Footprint, Reads, Sheet, Subject};
use crate::effect::{Affects, Change, EffectDef, Locked, Op};
use crate::explain::{DependsOn, Explanation, Reason, Step};
use crate::ids::{CharId, ClassId, CounterId, LayerId, ObjectId, PlayerId, Timestamp};
use crate::ruleset::SlotTarget;
use crate::state::GameState;
use crate::value::{Ability, Symbol, Value};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use serde::Serialize;
use std::sync::Arc;

/// The result of applying every layer.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Derived {
    pub sheet: Sheet,
    pub explanation: Option<Explanation>,
}

/// Identifies an effect across layers within one derivation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum EffectKey {
    Static {
        object: ObjectId,
        class: ClassId,
        index: u16,
    },
    Created(u32),
    Counter {
        object: ObjectId,
        placement: u32,
    },
    FaceDown(ObjectId),
}

#[derive(Clone)]
enum Body {
    Effect(Arc<EffectDef>),
    Counter {
        kind: CounterId,
        count: i64,
    },
    /// The ruleset's face-down values (seed 004, layer 1b).
    FaceDown,
}

#[derive(Clone)]
struct Created {
    you: PlayerId,
    locked: Locked,
    targets: Arc<[ObjectId]>,
}

/// An effect that may apply in the current layer.
#[derive(Clone)]
struct Candidate {
    key: EffectKey,
    body: Body,
    timestamp: Timestamp,
    defining: bool,
    source: Option<ObjectId>,
    source_name: Arc<str>,
    /// For created effects: their fixed "you", locked subjects and targets.
    created: Option<Created>,
}

impl Candidate {
    /// Seed 003: characteristic-defining first, then timestamp; the key breaks ties between
    /// abilities of one object so the order never depends on storage order.
    fn order_key(&self) -> (bool, Timestamp, EffectKey) {
        (!self.defining, self.timestamp, self.key)
    }

    /// The evaluation context of this effect: its source, "you" and targets.
    fn ctx<'a>(
        &'a self,
        state: &'a GameState,
        sheet: &'a Sheet,
        reads: Option<&'a Reads>,
    ) -> Ctx<'a> {
        Ctx {
            state,
            sheet,
            source: self.source,
            you: you_of(state, sheet, self, reads),
            targets: match &self.created {
                Some(c) => &c.targets,
                None => &[],
            },
            reads,
        }
    }

    /// Every characteristic this effect's existence, subjects and values read.
    fn reads(&self, state: &GameState, controller: Option<CharId>) -> Footprint {
        let mut f = Footprint::default();
        if let Body::Effect(def) = &self.body {
            match &def.affects {
                Affects::Objects(c) | Affects::Players(c) => c.reads(controller, &mut f),
            }
            if let Some(w) = &def.while_cond {
                w.reads(controller, &mut f);
            }
            for op in &def.ops {
                match &op.change {
                    Change::SetNumber(e) | Change::Modify(e) => e.reads(controller, &mut f),
                    Change::TextOf(_) => state.ruleset.copiable.iter().for_each(|c| f.add_char(*c)),
                    Change::AbilitiesPer { of, among, .. } => {
                        f.add_char(*of);
                        among.reads(controller, &mut f);
                    }
                    _ => {}
                }
            }
            if self.created.is_none() {
                // A static ability exists while its source has it; "you" is its controller.
                if let Some(a) = state.abilities_char {
                    f.add_char(a);
                }
                if let Some(c) = controller {
                    f.add_char(c);
                }
            }
        }
        f
    }

    /// How this effect changes each characteristic or property it writes in `layer`.
    fn touches(&self, state: &GameState, layer: LayerId) -> Vec<(SlotTarget, Touch)> {
        let mut out: Vec<(SlotTarget, Touch)> = Vec::new();
        let mut add = |t: SlotTarget, touch: Touch| match out.iter_mut().find(|(x, _)| *x == t) {
            Some((_, old)) => *old = std::mem::replace(old, Touch::Any).join(touch),
            None => out.push((t, touch)),
        };
        match &self.body {
            Body::Effect(def) => {
                for op in def.ops.iter().filter(|o| o.layer == layer) {
                    add(op.target, Touch::of(&op.change));
                    match &op.change {
                        Change::SwitchWith(other) => add(SlotTarget::Char(*other), Touch::Any),
                        Change::SetValues(vals) => vals
                            .iter()
                            .for_each(|(c, _)| add(SlotTarget::Char(*c), Touch::Any)),
                        Change::TextOf(_) | Change::CopyOf(_) => state
                            .ruleset
                            .copiable
                            .iter()
                            .for_each(|c| add(SlotTarget::Char(*c), Touch::Any)),
                        _ => {}
                    }
                }
            }
            Body::Counter { kind, .. } => {
                for (c, _) in &state.ruleset.counters[kind.index()].changes {
                    add(SlotTarget::Char(*c), Touch::Any);
                }
            }
            Body::FaceDown => {
                for (c, _) in &state.ruleset.face_down {
                    add(SlotTarget::Char(*c), Touch::Any);
                }
            }
        }
        out
    }

    /// Every characteristic this effect changes in `layer`.
    fn writes(&self, state: &GameState, layer: LayerId) -> Footprint {
        let mut f = Footprint::default();
        let mut add = |t: SlotTarget| match t {
            SlotTarget::Char(c) => f.add_char(c),
            SlotTarget::Prop(p) => f.add_prop(p),
        };
        match &self.body {
            Body::Effect(def) => {
                for op in def.ops.iter().filter(|o| o.layer == layer) {
                    add(op.target);
                    match &op.change {
                        Change::SwitchWith(other) => add(SlotTarget::Char(*other)),
                        Change::SetValues(vals) => {
                            vals.iter().for_each(|(c, _)| add(SlotTarget::Char(*c)))
                        }
                        Change::TextOf(_) | Change::CopyOf(_) => state
                            .ruleset
                            .copiable
                            .iter()
                            .for_each(|c| add(SlotTarget::Char(*c))),
                        _ => {}
                    }
                }
            }
            Body::Counter { kind, .. } => {
                for (c, _) in &state.ruleset.counters[kind.index()].changes {
                    add(SlotTarget::Char(*c));
                }
            }
            Body::FaceDown => {
                for (c, _) in &state.ruleset.face_down {
                    add(SlotTarget::Char(*c));
                }
            }
        }
        f
    }

    /// How a later step names this one: the source, or the source's counters.
    fn label(&self, state: &GameState) -> String {
        match &self.body {
            Body::Effect(_) => self.source_name.to_string(),
            Body::Counter { .. } => format!("{}'s {}", self.source_name, self.text(state)),
            Body::FaceDown => format!("{} being face down", self.source_name),
        }
    }

    fn text(&self, state: &GameState) -> String {
        match &self.body {
            Body::Effect(d) => d.text.to_string(),
            Body::Counter { kind, count } => {
                let name = &state.ruleset.counters[kind.index()].name;
                let s = if count.abs() == 1 { "" } else { "s" };
                format!("{count} {name} counter{s}")
            }
            Body::FaceDown => "face down: the ruleset's face-down values".to_string(),
        }
    }
}

/// An effect's instruction with the cells it read and the cells it would write. Reads are kept
/// per subject, so a dependency test re-evaluates only the subjects a change can affect.
#[derive(Clone)]
struct Analysis {
    instruction: Instruction,
    /// Cells read to decide existence and "you": a change here means testing everything again.
    global: HashSet<Cell>,
    /// For each cell, the subjects whose membership or parameters read it, and the one symbol
    /// looked at where only `has X` was asked.
    by_cell: HashMap<Cell, Vec<(Subject, Option<Symbol>)>>,
    /// Whether membership is decided by testing each subject (a static ability not yet started).
    scanned: bool,
    writes: Vec<(Cell, Touch)>,
    /// The characteristics of every cell read (in `global`, in `by_cell`) and written: quick
    /// tests before the cells.
    read_chars: Footprint,
    by_cell_chars: Footprint,
    write_chars: Footprint,
}

/// How an effect changes a cell: any way, or only whether some symbols are in it (adding or
/// removing them). A `has X` read is untouched by a change to other symbols: a Goblin lord does
/// not wait for an effect that makes Goblins Zombies too.
#[derive(Clone, Debug, PartialEq)]
enum Touch {
    Any,
    Names(Vec<Symbol>),
}

impl Touch {
    fn meets(&self, obs: &Option<Symbol>) -> bool {
        match (self, obs) {
            (Touch::Names(list), Some(s)) => list.contains(s),
            _ => true,
        }
    }
    fn join(self, other: Touch) -> Touch {
        match (self, other) {
            (Touch::Names(mut a), Touch::Names(b)) => {
                a.extend(b);
                Touch::Names(a)
            }
            _ => Touch::Any,
        }
    }
    fn of(change: &Change) -> Touch {
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
                        Ability::Keyword(k) => k.clone(),
                        Ability::Static { text, .. } => Symbol::new(text),
                    })
                    .collect(),
            )
        };
        match change {
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
    fn meets(&self, b: &Analysis) -> bool {
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
            || (self.by_cell_chars.intersects(&b.write_chars)
                && b.writes.iter().any(|(c, t)| self.reads(c, t)))
    }

    /// The subjects whose answers may change when these cells (of the given characteristics)
    /// change: `Some(empty)` when none can, `None` for all of them.
    fn affected_by(
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
        if global {
            return None;
        }
        if !self.by_cell_chars.intersects(chars) {
            return Some(Vec::new());
        }
        self.affected(cells)
    }

    fn reads(&self, c: &Cell, t: &Touch) -> bool {
        self.global.contains(c)
            || self
                .by_cell
                .get(c)
                .is_some_and(|v| v.iter().any(|(_, obs)| t.meets(obs)))
    }
    /// The subjects whose answers may change when these cells change; `None` for all of them.
    fn affected(&self, cells: &[(Cell, Touch)]) -> Option<Vec<Subject>> {
        if cells.iter().any(|(c, _)| self.global.contains(c)) {
            return None;
        }
        let mut out: Vec<Subject> = Vec::new();
        for (c, t) in cells {
            if let Some(v) = self.by_cell.get(c) {
                out.extend(v.iter().filter(|(_, obs)| t.meets(obs)).map(|(s, _)| *s));
            }
        }
        out.sort();
        out.dedup();
        Some(out)
    }
}

/// What an effect would do now: whether it exists, whom it affects and the values its operations
/// would use. Seed 003: A depends on B when applying B would change A's existence, what it applies
/// to, or what it does to those things — but not merely how much (the second Mind Bend example).
#[derive(Clone, PartialEq)]
struct Instruction {
    exists: bool,
    /// In id order.
    subjects: Vec<Subject>,
    /// The parameters for each subject, in the same order.
    params: Vec<Vec<Value>>,
}

/// Why one effect waits for another (seed 003, "Dependency", (b)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DepKind {
    Existence,
    AppliesTo,
    WhatItDoes,
}

impl DepKind {
    fn text(self) -> &'static str {
        match self {
            DepKind::Existence => "changes whether it exists",
            DepKind::AppliesTo => "changes what it applies to",
            DepKind::WhatItDoes => "changes what it does",
        }
    }
}

/// An effect that began applying, with the subjects it applies to in every later layer; `None` if
/// it did not exist when its first part would have applied.
type Started = HashMap<EffectKey, (Candidate, Option<Vec<Subject>>)>;

struct Deriver<'a> {
    state: &'a GameState,
    sheet: Sheet,
    expl: Option<Explanation>,
    started: Started,
    /// When a static ability was granted to an object, for its effect's timestamp (seed 003: "the
    /// timestamp of the effect that created the ability, whichever is later").
    grants: HashMap<(ObjectId, Ability), Timestamp>,
    /// For tests: visit objects in this order (rank by object index) instead of id order.
    visit: Option<Vec<u32>>,
    /// Subjects found by scanning for a condition, shared by effects with the same condition,
    /// source (where the condition names it) and "you"; dropped when a characteristic the
    /// condition reads is written.
    scans: HashMap<ScanKey, (Footprint, Vec<Subject>)>,
}

/// A condition (by address), its source where it names it, and its "you".
type ScanKey = (usize, Option<ObjectId>, Option<PlayerId>);

/// Derives every characteristic and player property. With `explain`, records each step.
pub fn derive(state: &GameState, explain: bool) -> Derived {
    derive_layers(state, state.ruleset.layers.len(), explain)
}

/// The copiable values of an object now: its values after the copy and face-down layers (seed
/// 004, layer 1b: "The copiable values of an object are the end result of applying layers 1a and
/// 1b").
pub fn copiable_values(state: &GameState, o: ObjectId) -> Vec<(CharId, Value)> {
    let d = derive_layers(state, state.ruleset.copiable_layers(), false);
    state
        .ruleset
        .copiable
        .iter()
        .map(|c| (*c, d.sheet.objects[o.index()][c.index()].clone()))
        .collect()
}

/// Derives with objects visited, and created effects stored, in an order given by `seed` (for the
/// property test that only timestamps, dependency and the rules decide, never storage order).
#[doc(hidden)]
pub fn derive_permuted(state: &GameState, seed: u64) -> Derived {
    let mut rng = seed | 1;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut st = state.clone();
    for i in (1..st.effects.len()).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        st.effects.swap(i, j);
    }
    let mut ranks: Vec<u32> = (0..st.objects.len() as u32).collect();
    for i in (1..ranks.len()).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        ranks.swap(i, j);
    }
    derive_inner(&st, st.ruleset.layers.len(), false, Some(ranks))
}

/// Applies the first `upto` layers.
fn derive_layers(state: &GameState, upto: usize, explain: bool) -> Derived {
    derive_inner(state, upto, explain, None)
}

fn derive_inner(state: &GameState, upto: usize, explain: bool, visit: Option<Vec<u32>>) -> Derived {
    let rs = &state.ruleset;
    let sheet = state.base_sheet();
    let expl = explain.then(|| Explanation {
        base: sheet.clone(),
        objects: vec![vec![Vec::new(); rs.characteristics.len()]; state.objects.len()],
        players: vec![vec![Vec::new(); rs.props.len()]; state.players.len()],
    });
    let mut d = Deriver {
        state,
        sheet,
        expl,
        started: HashMap::default(),
        grants: HashMap::default(),
        visit,
        scans: HashMap::default(),
    };
    for li in 0..upto.min(rs.layers.len()) {
        d.layer(LayerId(li as u16));
    }
    Derived {
        sheet: d.sheet,
        explanation: d.expl,
    }
}

impl Deriver<'_> {
    fn layer(&mut self, lid: LayerId) {
        let layer = &self.state.ruleset.layers[lid.index()];
        let cands = gather(
            self.state,
            &self.sheet,
            lid,
            &self.started,
            &self.grants,
            self.visit.as_deref(),
        );
        // Seed 003: characteristic-defining effects first; a layer may also order by kind of
        // change (seed 004, layer 8: additions, then subtractions, then setting effects).
        let mut groups: Vec<((bool, usize), Vec<Candidate>)> = Vec::new();
        for c in cands {
            let key = (!c.defining, kind_rank(&c, lid, &layer.kind_order));
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, g)) => g.push(c),
                None => groups.push((key, vec![c])),
            }
        }
        groups.sort_by_key(|(k, _)| *k);
        let mut previous: Option<(String, u64)> = None;
        for (_, group) in groups {
            self.group(lid, group, &mut previous);
        }
    }

    /// Applies one group of effects of a layer: each effect waits for those it depends on; the
    /// rest go in timestamp order; a dependency loop falls back to timestamp order for its members
    /// only. Dependencies are re-evaluated after each application.
    fn group(
        &mut self,
        lid: LayerId,
        mut cands: Vec<Candidate>,
        previous: &mut Option<(String, u64)>,
    ) {
        let state = self.state;
        let layer = &state.ruleset.layers[lid.index()];
        cands.sort_by_key(|c| c.order_key());
        let n = cands.len();
        let controller = state.controller_char;
        // Pairs (a, b) where `a` may read what `b` writes: only these can depend (a cheap filter by
        // characteristic before the exact test by cell).
        let mut pairs: Vec<(usize, usize)> = Vec::new();
        if layer.dependency && n > 1 {
            let reads: Vec<Footprint> = cands.iter().map(|c| c.reads(state, controller)).collect();
            let writes: Vec<Footprint> = cands.iter().map(|c| c.writes(state, lid)).collect();
            for (a, ra) in reads.iter().enumerate().filter(|(_, r)| !r.is_empty()) {
                for (b, wb) in writes.iter().enumerate() {
                    if a != b && wb.intersects(ra) {
                        pairs.push((a, b));
                    }
                }
            }
        }
        let mut involved = vec![false; n];
        let mut partners: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (a, b) in &pairs {
            involved[*a] = true;
            involved[*b] = true;
            partners[*a].push(*b);
        }
        let mut alive = vec![true; n];
        let mut left = n;
        // Each involved effect's instruction with the cells it read and will write, kept up to date.
        let mut analyses: Vec<Option<Analysis>> = vec![None; n];
        let mut edges: HashMap<(usize, usize), Option<DepKind>> = HashMap::default();
        // What each effect waited for, for its explanation.
        let mut waited: Vec<Vec<(String, u64, DepKind)>> = vec![Vec::new(); n];
        while left > 0 {
            // The earliest effect that waits for no other goes next; an effect stops being examined
            // at the first effect it waits for.
            let mut pick = None;
            for i in (0..n).filter(|i| alive[*i]) {
                let mut blocked = false;
                for &b in &partners[i] {
                    if !alive[b] {
                        continue;
                    }
                    if let Some(k) = self.edge(lid, &cands, &mut analyses, &mut edges, i, b) {
                        let entry = (cands[b].label(state), cands[b].timestamp.0, k);
                        if !waited[i].contains(&entry) {
                            waited[i].push(entry);
                        }
                        blocked = true;
                        break;
                    }
                }
                if !blocked {
                    pick = Some(i);
                    break;
                }
            }
            let (pick, loop_members) = match pick {
                Some(i) => (i, None),
                None => {
                    // Every effect waits for another: find a loop that waits for nothing outside it.
                    let mut deps: Vec<Vec<(usize, DepKind)>> = vec![Vec::new(); n];
                    for &(a, b) in &pairs {
                        if alive[a] && alive[b] {
                            if let Some(k) = self.edge(lid, &cands, &mut analyses, &mut edges, a, b)
                            {
                                deps[a].push((b, k));
                                let entry = (cands[b].label(state), cands[b].timestamp.0, k);
                                if !waited[a].contains(&entry) {
                                    waited[a].push(entry);
                                }
                            }
                        }
                    }
                    let members = sink_loop(&deps, &alive);
                    (members[0], Some(members))
                }
            };
            alive[pick] = false;
            left -= 1;
            let cand = &cands[pick];
            let reason = if let Some(members) = loop_members {
                Reason::Loop {
                    timestamp: cand.timestamp.0,
                    members: members
                        .iter()
                        .map(|m| {
                            format!(
                                "{} (timestamp {})",
                                cands[*m].label(state),
                                cands[*m].timestamp.0
                            )
                        })
                        .collect(),
                }
            } else if !waited[pick].is_empty() {
                Reason::Dependency {
                    timestamp: cand.timestamp.0,
                    on: waited[pick]
                        .iter()
                        .map(|(n, t, k)| DependsOn {
                            effect: n.clone(),
                            timestamp: *t,
                            why: k.text().to_string(),
                        })
                        .collect(),
                }
            } else if cand.defining {
                Reason::CharacteristicDefining
            } else {
                match previous.as_ref() {
                    None => Reason::FirstByTimestamp {
                        timestamp: cand.timestamp.0,
                    },
                    Some((p, t)) => Reason::AfterByTimestamp {
                        timestamp: cand.timestamp.0,
                        previous: p.clone(),
                        previous_timestamp: *t,
                    },
                }
            };
            let picked = analyses[pick].take();
            let known = picked.as_ref().map(|a| &a.instruction);
            if self.apply_effect(lid, cand, &reason, known) && !cand.defining {
                *previous = Some((cand.label(state), cand.timestamp.0));
            }
            if !self.scans.is_empty() {
                let w = cand.writes(state, lid);
                self.scans.retain(|_, (f, _)| !f.intersects(&w));
            }
            // Seed 003: applying an effect can create or remove dependencies. Bring up to date what
            // read a cell the effect wrote, and forget its tested pairs.
            if involved[pick] {
                let written = match picked {
                    Some(p) => p.writes,
                    None => {
                        let touches = cand.touches(state, lid);
                        let subs = self.started.get(&cand.key).and_then(|(_, s)| s.clone());
                        subs.unwrap_or_default()
                            .into_iter()
                            .flat_map(|s| cells_of(s, &touches).collect::<Vec<_>>())
                            .collect()
                    }
                };
                let written_chars = footprint_of(&written);
                let mut written_subjects: Vec<Subject> =
                    written.iter().map(|(c, _)| subject_of(c)).collect();
                written_subjects.sort();
                written_subjects.dedup();
                for i in 0..n {
                    if !alive[i] {
                        continue;
                    }
                    let Some(an) = analyses[i].take() else {
                        continue;
                    };
                    match an.affected_by(&written, &written_chars, &written_subjects) {
                        Some(subs) if subs.is_empty() => analyses[i] = Some(an),
                        affected => {
                            analyses[i] = Some(match affected {
                                Some(subs) => self.refresh(lid, &cands[i], an, &subs),
                                None => self.analyse(lid, &cands[i]),
                            });
                            edges.retain(|(a, b), _| *a != i && *b != i);
                        }
                    }
                }
            }
        }
    }

    /// Whether `a` depends on `b`, tested once and kept until either's analysis changes.
    fn edge(
        &mut self,
        lid: LayerId,
        cands: &[Candidate],
        analyses: &mut [Option<Analysis>],
        edges: &mut HashMap<(usize, usize), Option<DepKind>>,
        a: usize,
        b: usize,
    ) -> Option<DepKind> {
        if let Some(k) = edges.get(&(a, b)) {
            return *k;
        }
        for i in [a, b] {
            if analyses[i].is_none() {
                analyses[i] = Some(self.analyse(lid, &cands[i]));
            }
        }
        let (Some(aa), Some(ab)) = (&analyses[a], &analyses[b]) else {
            return None;
        };
        let k = if aa.meets(ab) {
            self.depends(lid, &cands[a], aa, &cands[b], ab)
        } else {
            None
        };
        edges.insert((a, b), k);
        k
    }

    /// An effect's instruction, the cells it read to get it (per subject), and the cells it would
    /// write.
    fn analyse(&self, lid: LayerId, cand: &Candidate) -> Analysis {
        let state = self.state;
        let global = Reads::default();
        let mut by_cell: HashMap<Cell, Vec<(Subject, Option<Symbol>)>> = HashMap::default();
        let mut note = |r: Reads, s: Subject| {
            for (c, obs) in r.into_inner() {
                let v = by_cell.entry(c).or_default();
                if !v.iter().any(|(x, o)| *x == s && *o == obs) {
                    v.push((s, obs));
                }
            }
        };
        let mut scanned = false;
        let (exists, subjects) = match (
            self.started.get(&cand.key),
            &cand.body,
            cand.created.is_none(),
        ) {
            (Some((_, s)), _, _) => (s.is_some(), s.clone().unwrap_or_default()),
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
                        for s in all {
                            let r = Reads::default();
                            if self.member(cand, def, you, s, Some(&r)) {
                                subs.push(s);
                            }
                            note(r, s);
                        }
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
            params.push(self.params(lid, cand, *s, Some(&r)));
            note(r, *s);
        }
        let touches = cand.touches(state, lid);
        let mut writes = Vec::new();
        for s in &subjects {
            writes.extend(cells_of(*s, &touches));
        }
        let global: HashSet<Cell> = global.into_inner().into_iter().map(|(c, _)| c).collect();
        let mut by_cell_chars = Footprint::default();
        for c in by_cell.keys() {
            add_cell(&mut by_cell_chars, c);
        }
        let mut read_chars = by_cell_chars.clone();
        for c in &global {
            add_cell(&mut read_chars, c);
        }
        let write_chars = footprint_of(&writes);
        Analysis {
            instruction: Instruction {
                exists,
                subjects,
                params,
            },
            global,
            by_cell,
            scanned,
            writes,
            read_chars,
            by_cell_chars,
            write_chars,
        }
    }

    /// Brings an analysis up to date after the cells its `subjects` read have changed: only those
    /// subjects are evaluated again.
    fn refresh(
        &self,
        lid: LayerId,
        cand: &Candidate,
        mut an: Analysis,
        subjects: &[Subject],
    ) -> Analysis {
        let you = if an.scanned {
            you_of(self.state, &self.sheet, cand, None)
        } else {
            None
        };
        let touches = cand.touches(self.state, lid);
        for s in subjects {
            let r = Reads::default();
            let member = match (&cand.body, an.scanned) {
                (Body::Effect(def), true) => self.member(cand, def, you, *s, Some(&r)),
                _ => an.instruction.subjects.binary_search(s).is_ok(),
            };
            let at = an.instruction.subjects.binary_search(s);
            match (member, at) {
                (true, Ok(i)) => an.instruction.params[i] = self.params(lid, cand, *s, Some(&r)),
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
            for (c, obs) in r.into_inner() {
                add_cell(&mut an.read_chars, &c);
                add_cell(&mut an.by_cell_chars, &c);
                let v = an.by_cell.entry(c).or_default();
                if !v.iter().any(|(x, o)| x == s && *o == obs) {
                    v.push((*s, obs));
                }
            }
        }
        an
    }

    /// The subjects of a static ability's condition, shared with every effect that has the same
    /// condition, "you" and (where the condition names it) source.
    fn scan(
        &mut self,
        def: &EffectDef,
        source: Option<ObjectId>,
        you: Option<PlayerId>,
    ) -> Vec<Subject> {
        let cond = match &def.affects {
            Affects::Objects(c) | Affects::Players(c) => c,
        };
        let key = (
            cond as *const Cond as usize,
            if cond.names_source() { source } else { None },
            you,
        );
        if let Some((_, subs)) = self.scans.get(&key) {
            return subs.clone();
        }
        let ctx = Ctx::new(self.state, &self.sheet, source, you, &[]);
        let subs = subjects(&ctx, &def.affects);
        let mut f = Footprint::default();
        cond.reads(self.state.controller_char, &mut f);
        self.scans.insert(key, (f, subs.clone()));
        subs
    }

    fn static_exists(&self, cand: &Candidate, reads: Option<&Reads>) -> Option<Option<PlayerId>> {
        static_exists(self.state, &self.sheet, cand, reads)
    }

    /// Whether a subject is among those a static ability's effect applies to.
    fn member(
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
    fn params(
        &self,
        lid: LayerId,
        cand: &Candidate,
        s: Subject,
        reads: Option<&Reads>,
    ) -> Vec<Value> {
        let Body::Effect(def) = &cand.body else {
            return Vec::new();
        };
        let ctx = cand.ctx(self.state, &self.sheet, None).recording(reads);
        def.ops
            .iter()
            .filter(|o| o.layer == lid)
            .flat_map(|op| op_params(&ctx, s, op))
            .collect()
    }

    /// Seed 003, "Dependency" (b): would applying `b` change `a`'s existence, what it applies to,
    /// or what it does? `b` is applied to the values as they stand and undone; only the subjects of
    /// `a` whose answers read a cell `b` writes are evaluated again.
    fn depends(
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
        let mut undo = Vec::new();
        for subject in &ab.instruction.subjects {
            for (t, v) in changes(self.state, &self.sheet, b, lid, *subject) {
                let old = std::mem::replace(slot_mut(&mut self.sheet, *subject, t), v);
                undo.push((*subject, t, old));
            }
        }
        let before = &aa.instruction;
        let verdict = match affected {
            None => {
                let after = self.analyse(lid, a).instruction;
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
                for s in subs {
                    let was = before.subjects.binary_search(&s);
                    if let (true, Body::Effect(def)) = (aa.scanned, &a.body) {
                        if self.member(a, def, you, s, None) != was.is_ok() {
                            verdict = Some(DepKind::AppliesTo);
                            break;
                        }
                    }
                    if let Ok(i) = was {
                        if self.params(lid, a, s, None) != before.params[i] {
                            verdict = Some(DepKind::WhatItDoes);
                        }
                    }
                }
                verdict
            }
        };
        for (subject, target, old) in undo.into_iter().rev() {
            *slot_mut(&mut self.sheet, subject, target) = old;
        }
        verdict
    }

    /// Starts (if new) and applies an effect's parts for this layer; true if any part applied.
    /// `known`: the effect's up-to-date instruction, if analysed.
    fn apply_effect(
        &mut self,
        lid: LayerId,
        cand: &Candidate,
        reason: &Reason,
        known: Option<&Instruction>,
    ) -> bool {
        let subjects = match self.started.get(&cand.key) {
            Some((_, s)) => s.clone(),
            None => {
                // Decided once per derivation: an effect that does not exist when its first part
                // would apply applies none of its parts (seed 004, "Smash It Up").
                let s = match (known, &cand.body, &cand.created) {
                    (Some(i), _, _) => i.exists.then(|| i.subjects.clone()),
                    (None, Body::Effect(def), None) if self.visit.is_none() => self
                        .static_exists(cand, None)
                        .map(|you| self.scan(def, cand.source, you)),
                    _ => start(self.state, &self.sheet, cand, None),
                };
                self.started.insert(cand.key, (cand.clone(), s.clone()));
                s
            }
        };
        let layer_def = &self.state.ruleset.layers[lid.index()];
        let text = self.expl.as_ref().map(|_| cand.text(self.state));
        let mut applied = false;
        for subject in subjects.unwrap_or_default() {
            let ch = changes(self.state, &self.sheet, cand, lid, subject);
            applied |= !ch.is_empty();
            for (t, v) in ch {
                if let (Value::Abilities(list), Subject::Object(o)) = (&v, subject) {
                    for a in list {
                        if matches!(a, Ability::Static { .. })
                            && !self.grants.contains_key(&(o, a.clone()))
                        {
                            let printed = matches!(slot_ref(&self.sheet, subject, t), Value::Abilities(l) if l.contains(a));
                            if !printed {
                                self.grants.insert((o, a.clone()), cand.timestamp);
                            }
                        }
                    }
                }
                let before = std::mem::replace(slot_mut(&mut self.sheet, subject, t), v.clone());
                if let (Some(e), Some(text)) = (self.expl.as_mut(), &text) {
                    let step = Step {
                        layer: layer_def.label.clone(),
                        layer_name: layer_def.name.clone(),
                        source: cand.source_name.to_string(),
                        text: text.clone(),
                        timestamp: cand.timestamp.0,
                        reason: reason.clone(),
                        before,
                        after: v,
                    };
                    match (subject, t) {
                        (Subject::Object(o), SlotTarget::Char(c)) => {
                            e.objects[o.index()][c.index()].push(step)
                        }
                        (Subject::Player(p), SlotTarget::Prop(q)) => {
                            e.players[p.index()][q.index()].push(step)
                        }
                        _ => {}
                    }
                }
            }
        }
        applied
    }
}

/// The members of a dependency loop that depends on nothing outside itself, earliest timestamp
/// first (seed 003: "the effects in the dependency loop are applied in timestamp order"). Called
/// only when every pending effect waits for another, so such a loop exists.
fn sink_loop(deps: &[Vec<(usize, DepKind)>], alive: &[bool]) -> Vec<usize> {
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

/// The rank of an effect in a layer that orders by kind of change (`increase`, `decrease`, `set`).
fn kind_rank(c: &Candidate, lid: LayerId, order: &[crate::ruleset::ChangeClass]) -> usize {
    if order.is_empty() {
        return 0;
    }
    let Body::Effect(def) = &c.body else {
        return 0;
    };
    let class = def
        .ops
        .iter()
        .filter(|o| o.layer == lid)
        .map(|o| crate::ruleset::ChangeClass::of(&o.change))
        .next();
    class
        .and_then(|k| order.iter().position(|x| *x == k))
        .unwrap_or(order.len())
}

/// Effects with a part in `layer`: static abilities of objects in play (as their abilities stand
/// now), created effects, counters if this layer applies them, and every effect already started.
fn gather(
    state: &GameState,
    sheet: &Sheet,
    layer: LayerId,
    started: &Started,
    grants: &HashMap<(ObjectId, Ability), Timestamp>,
    visit: Option<&[u32]>,
) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = started
        .values()
        .filter(|(c, s)| s.is_some() && matches!(&c.body, Body::Effect(d) if d.has_layer(layer)))
        .map(|(c, _)| c.clone())
        .collect();
    let layer_def = &state.ruleset.layers[layer.index()];
    let counters_here = layer_def.counters;
    let mut objects: Vec<&crate::object::GameObject> = state.objects().collect();
    if let Some(rank) = visit {
        objects.sort_by_key(|o| rank[o.id.index()]);
    }
    for o in objects {
        let in_play = state.in_play(o.id);
        if layer_def.face_down && o.face_down && !state.ruleset.face_down.is_empty() {
            out.push(Candidate {
                key: EffectKey::FaceDown(o.id),
                body: Body::FaceDown,
                timestamp: o.timestamp,
                defining: false,
                source: Some(o.id),
                source_name: o.name.clone(),
                created: None,
            });
        }
        if let Some(ac) = state.abilities_char {
            if let Value::Abilities(list) = &sheet.objects[o.id.index()][ac.index()] {
                for a in list {
                    let Ability::Static { class, index, .. } = a else {
                        continue;
                    };
                    let def = &state.content.class(*class).statics[*index as usize];
                    // A static ability works in play, or in the other zones it names.
                    if !in_play && !def.zones.contains(&o.zone) {
                        continue;
                    }
                    let key = EffectKey::Static {
                        object: o.id,
                        class: *class,
                        index: *index,
                    };
                    if def.has_layer(layer) && !started.contains_key(&key) {
                        let granted = grants.get(&(o.id, a.clone())).copied();
                        out.push(Candidate {
                            key,
                            body: Body::Effect(def.clone()),
                            timestamp: granted.map_or(o.timestamp, |g| g.max(o.timestamp)),
                            defining: def.defining,
                            source: Some(o.id),
                            source_name: o.name.clone(),
                            created: None,
                        });
                    }
                }
            }
        }
        if counters_here {
            for (i, p) in o.counters.iter().enumerate() {
                out.push(Candidate {
                    key: EffectKey::Counter {
                        object: o.id,
                        placement: i as u32,
                    },
                    body: Body::Counter {
                        kind: p.kind,
                        count: p.count,
                    },
                    timestamp: p.timestamp,
                    defining: false,
                    source: Some(o.id),
                    source_name: o.name.clone(),
                    created: None,
                });
            }
        }
    }
    for e in state.effects() {
        let key = EffectKey::Created(e.id);
        if e.def.has_layer(layer) && !started.contains_key(&key) {
            out.push(Candidate {
                key,
                body: Body::Effect(e.def.clone()),
                timestamp: e.timestamp,
                defining: e.def.defining,
                source: Some(e.source),
                source_name: e.source_name.clone(),
                created: Some(Created {
                    you: e.controller,
                    locked: e.locked.clone(),
                    targets: e.targets.clone(),
                }),
            });
        }
    }
    out
}

fn you_of(
    state: &GameState,
    sheet: &Sheet,
    cand: &Candidate,
    reads: Option<&Reads>,
) -> Option<PlayerId> {
    if let Some(c) = &cand.created {
        return Some(c.you);
    }
    let src = cand.source?;
    match state.controller_char {
        Some(c) => match Ctx::new(state, sheet, None, None, &[])
            .recording(reads)
            .value(src, c)
        {
            Value::Player(p) => *p,
            _ => None,
        },
        None => Some(state.object(src).controller),
    }
}

/// Whether a static ability that has not started exists now: its source still has it and its
/// "as long as" holds. Returns its "you".
fn static_exists(
    state: &GameState,
    sheet: &Sheet,
    cand: &Candidate,
    reads: Option<&Reads>,
) -> Option<Option<PlayerId>> {
    let EffectKey::Static {
        object,
        class,
        index,
    } = cand.key
    else {
        return None;
    };
    let Body::Effect(def) = &cand.body else {
        return None;
    };
    let ac = state.abilities_char?;
    let probe = Ctx::new(state, sheet, None, None, &[]).recording(reads);
    let still_has = match probe.value(object, ac) {
        Value::Abilities(list) => list.iter().any(|a| {
            matches!(a, Ability::Static { class: c, index: i, .. } if *c == class && *i == index)
        }),
        _ => false,
    };
    if !still_has {
        return None;
    }
    let you = you_of(state, sheet, cand, reads);
    if let Some(w) = &def.while_cond {
        let ctx = Ctx::new(state, sheet, Some(object), you, &[]).recording(reads);
        if !ctx.test(w, Subject::Object(object)) {
            return None;
        }
    }
    Some(you)
}

/// Decides whether an effect that has not applied yet exists now and whom it applies to. A static
/// ability must still be on its source (an earlier effect in this layer may have removed it) and its
/// "as long as" condition must hold; a created effect applies to what it locked when created.
fn start(
    state: &GameState,
    sheet: &Sheet,
    cand: &Candidate,
    reads: Option<&Reads>,
) -> Option<Vec<Subject>> {
    match (&cand.body, &cand.created, cand.key) {
        (Body::Counter { .. }, _, EffectKey::Counter { object, .. })
        | (Body::FaceDown, _, EffectKey::FaceDown(object)) => Some(vec![Subject::Object(object)]),
        (Body::Effect(def), Some(created), _) => {
            // "As long as" on a created effect is tested on its source, as for a static ability.
            if let (Some(w), Some(src)) = (&def.while_cond, cand.source) {
                let ctx = Ctx {
                    state,
                    sheet,
                    source: Some(src),
                    you: Some(created.you),
                    targets: &created.targets,
                    reads,
                };
                if !ctx.test(w, Subject::Object(src)) {
                    return None;
                }
            }
            Some(match &created.locked {
                Locked::Objects(list) => list
                    .iter()
                    .filter(|(o, inc)| state.object(*o).incarnation == *inc)
                    .map(|(o, _)| Subject::Object(*o))
                    .collect(),
                Locked::Players(list) => list.iter().map(|p| Subject::Player(*p)).collect(),
            })
        }
        (Body::Effect(def), None, EffectKey::Static { object, .. }) => {
            let you = static_exists(state, sheet, cand, reads)?;
            let ctx = Ctx::new(state, sheet, Some(object), you, &[]).recording(reads);
            Some(subjects(&ctx, &def.affects))
        }
        _ => None,
    }
}

/// The cells a subject has for each written characteristic or property.
fn cells_of(
    s: Subject,
    touches: &[(SlotTarget, Touch)],
) -> impl Iterator<Item = (Cell, Touch)> + '_ {
    touches.iter().filter_map(move |(t, touch)| match (s, t) {
        (Subject::Object(o), SlotTarget::Char(c)) => Some((Cell::Object(o, *c), touch.clone())),
        (Subject::Player(p), SlotTarget::Prop(q)) => Some((Cell::Player(p, *q), touch.clone())),
        _ => None,
    })
}

fn add_cell(f: &mut Footprint, c: &Cell) {
    match c {
        Cell::Object(_, ch) => f.add_char(*ch),
        Cell::Player(_, p) => f.add_prop(*p),
    }
}

fn footprint_of(cells: &[(Cell, Touch)]) -> Footprint {
    let mut f = Footprint::default();
    for (c, _) in cells {
        add_cell(&mut f, c);
    }
    f
}

fn subject_of(c: &Cell) -> Subject {
    match c {
        Cell::Object(o, _) => Subject::Object(*o),
        Cell::Player(p, _) => Subject::Player(*p),
    }
}

/// Every object or player an effect might apply to, in id order.
fn all_subjects(ctx: &Ctx, affects: &Affects) -> Vec<Subject> {
    let state = ctx.state;
    match affects {
        Affects::Objects(c) => match c.narrow(ctx) {
            Some(list) => list.into_iter().map(Subject::Object).collect(),
            None => state.object_ids().map(Subject::Object).collect(),
        },
        Affects::Players(_) => (0..state.players.len() as u8)
            .map(|p| Subject::Player(PlayerId(p)))
            .collect(),
    }
}

/// Every object or player the condition picks, in id order.
pub fn subjects(ctx: &Ctx, affects: &Affects) -> Vec<Subject> {
    match affects {
        Affects::Objects(c) => match c.narrow(ctx) {
            Some(list) => list
                .into_iter()
                .map(Subject::Object)
                .filter(|s| ctx.test(c, *s))
                .collect(),
            None => ctx
                .state
                .object_ids()
                .map(Subject::Object)
                .filter(|s| ctx.test(c, *s))
                .collect(),
        },
        Affects::Players(c) => (0..ctx.state.players.len() as u8)
            .map(|p| Subject::Player(PlayerId(p)))
            .filter(|s| ctx.test(c, *s))
            .collect(),
    }
}

/// What an operation does to one subject, as far as other values decide it: the numbers its
/// expressions give, the values a text effect takes, the symbols an ability template uses. Seed
/// 003: a change here is a change to "what it does"; how much it changes is not.
fn op_params(ctx: &Ctx, subject: Subject, op: &Op) -> Vec<Value> {
    match &op.change {
        Change::SetNumber(e) | Change::Modify(e) => vec![Value::Number(ctx.eval(e, subject))],
        Change::TextOf(src) => {
            let from = match src {
                crate::effect::CopySource::Top(z) => {
                    ctx.object_ref(crate::condition::ObjRef::Top(*z), subject)
                }
                crate::effect::CopySource::Target => ctx.targets.first().copied(),
            };
            match from {
                Some(f) => ctx
                    .state
                    .ruleset
                    .copiable
                    .iter()
                    .map(|c| ctx.value(f, *c).clone())
                    .collect(),
                None => Vec::new(),
            }
        }
        Change::AbilitiesPer { of, among, .. } => {
            let mut syms = crate::value::SymbolSet::default();
            for o in ctx.state.object_ids() {
                if ctx.test(among, Subject::Object(o)) {
                    if let Value::Symbols(s) = ctx.value(o, *of) {
                        syms.extend(s);
                    }
                }
            }
            vec![Value::Symbols(syms)]
        }
        _ => Vec::new(),
    }
}

/// The new values `cand`'s parts for `layer` give one subject.
fn changes(
    state: &GameState,
    sheet: &Sheet,
    cand: &Candidate,
    layer: LayerId,
    subject: Subject,
) -> Vec<(SlotTarget, Value)> {
    let mut out = Vec::new();
    match &cand.body {
        Body::Counter { kind, count } => {
            for (c, d) in &state.ruleset.counters[kind.index()].changes {
                let t = SlotTarget::Char(*c);
                if !fits(subject, t) {
                    continue;
                }
                let cur = current(sheet, subject, t);
                let v = Value::Number(
                    cur.number()
                        .and_then(|n| n.checked_add(d.checked_mul(*count)?)),
                );
                out.push((t, v));
            }
        }
        Body::FaceDown => {
            for (c, v) in &state.ruleset.face_down {
                out.push((SlotTarget::Char(*c), v.clone()));
            }
        }
        Body::Effect(def) => {
            let ctx = cand.ctx(state, sheet, None);
            for op in def.ops.iter().filter(|o| o.layer == layer) {
                if fits(subject, op.target) {
                    out.extend(change(&ctx, sheet, subject, op));
                }
            }
        }
    }
    out
}

/// The symbols an operation names, with the source's choice if it names "chosen".
fn resolve_syms(ctx: &Ctx, l: &crate::effect::SymList) -> crate::value::SymbolSet {
    let mut set = l.set.clone();
    if l.chosen {
        if let Some(c) = ctx
            .source
            .and_then(|s| ctx.state.object(s).choices.first().cloned())
        {
            set.insert(c);
        }
    }
    set
}

fn fits(subject: Subject, t: SlotTarget) -> bool {
    matches!(
        (subject, t),
        (Subject::Object(_), SlotTarget::Char(_)) | (Subject::Player(_), SlotTarget::Prop(_))
    )
}

fn current(sheet: &Sheet, subject: Subject, t: SlotTarget) -> &Value {
    match (subject, t) {
        (Subject::Object(o), SlotTarget::Char(c)) => &sheet.objects[o.index()][c.index()],
        (Subject::Player(p), SlotTarget::Prop(q)) => &sheet.players[p.index()][q.index()],
        _ => unreachable!("subject and target kinds are checked by `fits`"),
    }
}

fn slot_ref(sheet: &Sheet, subject: Subject, t: SlotTarget) -> &Value {
    current(sheet, subject, t)
}

fn slot_mut(sheet: &mut Sheet, subject: Subject, t: SlotTarget) -> &mut Value {
    match (subject, t) {
        (Subject::Object(o), SlotTarget::Char(c)) => &mut sheet.objects[o.index()][c.index()],
        (Subject::Player(p), SlotTarget::Prop(q)) => &mut sheet.players[p.index()][q.index()],
        _ => unreachable!("subject and target kinds are checked by `fits`"),
    }
}

/// The new value(s) one operation gives; a switch changes two characteristics.
fn change(ctx: &Ctx, sheet: &Sheet, subject: Subject, op: &Op) -> Vec<(SlotTarget, Value)> {
    let cur = current(sheet, subject, op.target);
    let v = match &op.change {
        Change::SetNumber(e) => Value::Number(ctx.eval(e, subject)),
        Change::Modify(e) => Value::Number(match (cur.number(), ctx.eval(e, subject)) {
            (Some(a), Some(b)) => a.checked_add(b),
            (a, _) => a,
        }),
        Change::SwitchWith(other) => {
            let t2 = SlotTarget::Char(*other);
            let v2 = current(sheet, subject, t2).clone();
            return vec![(op.target, v2), (t2, cur.clone())];
        }
        Change::SetSymbols(l) => Value::Symbols(resolve_syms(ctx, l)),
        Change::AddSymbols(l) | Change::RemoveSymbols(l) => {
            let mut set = match cur {
                Value::Symbols(x) => x.clone(),
                _ => Default::default(),
            };
            let named = resolve_syms(ctx, l);
            if matches!(op.change, Change::AddSymbols(_)) {
                set.extend(&named);
            } else {
                for sym in named.iter() {
                    set.remove(sym);
                }
            }
            Value::Symbols(set)
        }
        Change::SetAbilities(list) => Value::Abilities(list.clone()),
        Change::AddAbilities(list) | Change::MergeAbilities(list) => {
            let mut have = match cur {
                Value::Abilities(x) => x.clone(),
                _ => Vec::new(),
            };
            for a in list {
                if !have.contains(a) {
                    have.push(a.clone());
                }
            }
            Value::Abilities(have)
        }
        Change::RemoveAbilities(list) => {
            let have = match cur {
                Value::Abilities(x) => x.clone(),
                _ => Vec::new(),
            };
            Value::Abilities(have.into_iter().filter(|a| !list.contains(a)).collect())
        }
        Change::SetPlayer(r) => Value::Player(ctx.player(*r, subject)),
        Change::SetText(t) => Value::Text(t.clone()),
        Change::SetValues(vals) => {
            return vals
                .iter()
                .map(|(c, v)| (SlotTarget::Char(*c), v.clone()))
                .collect();
        }
        // Content writes "copy of target"; the copy is taken when the effect is created, so an
        // unresolved copy here copies nothing.
        Change::CopyOf(_) => return Vec::new(),
        Change::TextOf(src) => {
            let from = match src {
                crate::effect::CopySource::Top(z) => {
                    ctx.object_ref(crate::condition::ObjRef::Top(*z), subject)
                }
                crate::effect::CopySource::Target => ctx.targets.first().copied(),
            };
            let Some(from) = from else {
                return Vec::new();
            };
            return ctx
                .state
                .ruleset
                .copiable
                .iter()
                .map(|c| {
                    (
                        SlotTarget::Char(*c),
                        sheet.objects[from.index()][c.index()].clone(),
                    )
                })
                .collect();
        }
        Change::ReplaceWord(from, to) => {
            let word = |r: &crate::effect::SymRef| -> Option<String> {
                match r {
                    crate::effect::SymRef::Lit(s) => Some(s.to_string()),
                    crate::effect::SymRef::Chosen(i) => ctx.source.and_then(|s| {
                        ctx.state
                            .object(s)
                            .choices
                            .get(*i as usize)
                            .map(|x| x.to_string())
                    }),
                }
            };
            let (Some(from), Some(to)) = (word(from), word(to)) else {
                return Vec::new();
            };
            let swap = |s: &str| crate::value::Symbol::new(&s.replace(&from, &to));
            match cur {
                Value::Abilities(list) => Value::Abilities(
                    list.iter()
                        .map(|a| match a {
                            Ability::Keyword(k) => Ability::Keyword(swap(k.as_str())),
                            other => other.clone(),
                        })
                        .collect(),
                ),
                Value::Symbols(set) => {
                    Value::Symbols(set.iter().map(|s| swap(s.as_str())).collect())
                }
                other => other.clone(),
            }
        }
        Change::AbilitiesPer {
            template,
            of,
            among,
        } => {
            let mut have = match cur {
                Value::Abilities(x) => x.clone(),
                _ => Vec::new(),
            };
            let mut syms = crate::value::SymbolSet::default();
            for o in ctx.state.object_ids() {
                if ctx.test(among, Subject::Object(o)) {
                    if let Value::Symbols(s) = &sheet.objects[o.index()][of.index()] {
                        syms.extend(s);
                    }
                }
            }
            for s in syms.iter() {
                let a = Ability::Keyword(crate::value::Symbol::new(
                    &template.replace("{}", s.as_str()),
                ));
                if !have.contains(&a) {
                    have.push(a);
                }
            }
            Value::Abilities(have)
        }
    };
    vec![(op.target, v)]
}
