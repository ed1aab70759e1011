//! The deriver's analyses of the effects of a layer (CR 613.8): what each reads and would write,
//! kept until a write reaches what it read, and the dependency test between two of them, tried
//! on the sheet and undone.

use super::candidate::you_of;
use super::change::{
    add_cell, apply_in_place, cells_of, footprint_of, op_params, op_probe, subject_of,
};
use super::dependency::{Analysis, CellReads, DepKind, Dims, Instruction, Probe};
use super::derive::Deriver;
use super::footprint::objects_of;
use super::start::{all_subjects, start, static_exists, subjects};
use crate::condition::eval::Ctx;
use crate::model::condition::{Cell, Footprint, Reads, Subject};
use crate::model::effect::{Affects, EffectDef};
use crate::model::ids::{LayerId, ObjectId, PlayerId};
use crate::model::trail::{Body, Candidate};
use crate::model::value::Value;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

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
    ) -> crate::model::trail::Subjects {
        let cond = match &def.affects {
            Affects::Objects(c) | Affects::Players(c) => c,
        };
        // Subjects picked by the source ("itself", "the planet it stands on") are one effect's
        // own: kept, thousands of them would each be tested against every later write.
        if cond.names_source() {
            let ctx = Ctx::new(self.state, &self.sheet, source, you, &[])
                .counting(self.counting.then_some(&self.counts));
            let mut subs = subjects(&ctx, &def.affects);
            subs.sort();
            return subs.into();
        }
        // One scan for every player where the condition cannot read who "you" are.
        let key_you = if cond.may_read_you() { you } else { None };
        let key = (def.affects_key().clone(), None, key_you);
        if let Some((_, subs)) = self.scans.get(&key) {
            return subs.clone();
        }
        let ctx = Ctx::new(self.state, &self.sheet, source, you, &[])
            .counting(self.counting.then_some(&self.counts));
        let mut subs = subjects(&ctx, &def.affects);
        subs.sort();
        let subs: crate::model::trail::Subjects = subs.into();
        let mut f = Footprint::default();
        cond.reads(self.state.controller_char, &mut f);
        self.scans_read.absorb_coarse(&f);
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

fn cell_value<'a>(sheet: &'a crate::model::sheet::Sheet, c: &Cell) -> &'a Value {
    match c {
        Cell::Object(o, ch) => &sheet.objects[o.index()][ch.index()],
        Cell::Player(p, q) => &sheet.players[p.index()][q.index()],
    }
}

fn cell_value_mut<'a>(sheet: &'a mut crate::model::sheet::Sheet, c: &Cell) -> &'a mut Value {
    match c {
        Cell::Object(o, ch) => &mut sheet.objects[o.index()][ch.index()],
        Cell::Player(p, q) => &mut sheet.players[p.index()][q.index()],
    }
}
