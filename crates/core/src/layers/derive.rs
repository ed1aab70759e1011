//! The full derivation: base values, then each layer in order (CR 613.1-613.8); within a layer,
//! characteristic-defining effects first, then by kind of change where the layer says so, then
//! dependency, then timestamp; the trail each derivation keeps for the next one (`trail`).

use super::candidate::{gather, you_of, Started};
use super::change::KeepBefore;
use super::change::{
    apply_keeping, apply_run, cells_of, changes, does_the_same, footprint_of, slot_mut, slot_ref,
    subject_of,
};
use super::dependency::{sink_loop, Analysis, DepKind, Instruction};
use super::footprint::{may_read, objects_of};
use super::start::{condition_aggregates, start};
use super::trail::LayerLog;
use crate::model::trail::{AggregateValues, Applied, LayerTrail, PartnerThen};
use crate::model::trail::{Body, Candidate, Subjects};

use crate::model::condition::{Cell, Footprint, Subject};
use crate::model::derived::Derived;
use crate::model::effect::Change;
use crate::model::explain::{DependsOn, Explanation, Reason, Step};
use crate::model::ids::SlotTarget;
use crate::model::ids::{LayerId, ObjectId, PlayerId, Timestamp};
use crate::model::sheet::Sheet;
use crate::model::value::{Ability, Value};
use crate::state::GameState;
use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

/// Whether an effect's amounts in a layer read more than the subject: aggregates, other objects,
/// player properties.
pub(super) fn amounts_read_others(cand: &Candidate, lid: LayerId) -> bool {
    match &cand.body {
        Body::Effect(def) => def
            .ops
            .iter()
            .filter(|o| o.layer == lid)
            .any(|op| match &op.change {
                Change::SetNumber(e) | Change::Modify(e) => {
                    op.facts().reads_others && !e.is_constant()
                }
                _ => false,
            }),
        _ => false,
    }
}

pub(super) struct Deriver<'a> {
    pub(super) state: &'a GameState,
    pub(super) sheet: Sheet,
    pub(super) expl: Option<Explanation>,
    pub(super) started: Started,
    /// When a static ability was granted to an object, for its effect's timestamp (CR 613.7a: "the
    /// timestamp of the effect that created the ability, whichever is later").
    pub(super) grants: HashMap<(ObjectId, Ability), Timestamp>,
    /// For tests: visit objects in this order (rank by object index) instead of id order.
    pub(super) visit: Option<Vec<u32>>,
    /// Subjects found by scanning for a condition, shared by effects with the same condition,
    /// source (where the condition names it) and "you"; dropped when a characteristic the
    /// condition reads is written.
    pub(super) scans: HashMap<ScanKey, (Footprint, Subjects)>,
    /// Counts shared by the analyses of effects that count the same thing (`Counts`), dropped
    /// like scans; not used while an effect is tried and undone (`counting` false).
    pub(super) counts: crate::condition::eval::Counts,
    pub(super) counting: bool,
    /// All that the kept scans read (`Footprint::absorb_coarse`), and the same for the kept
    /// counts with how many there were when it was made: an effect that writes none of it
    /// drops none of them.
    pub(super) scans_read: Footprint,
    pub(super) counts_read: (usize, Footprint),
    /// What the layers so far did, and the current layer's log; `None` when not kept (explaining).
    pub(super) trail: Option<(Vec<Arc<LayerTrail>>, LayerLog)>,
    /// The subjects of the effects with a stacking number that start in this layer, decided
    /// before any applies (`stack`).
    pub(super) stacked: HashMap<crate::model::trail::EffectKey, Option<Subjects>>,
    /// Each stacking number with the subjects an effect of it applies to, so far.
    pub(super) taken: rustc_hash::FxHashSet<(u32, Subject)>,
}

/// A condition (as written), its source where it names it, and its "you".
pub(super) type ScanKey = (Arc<str>, Option<ObjectId>, Option<PlayerId>);

/// Derives every characteristic and player property. With `explain`, records each step.
pub fn derive(state: &GameState, explain: bool) -> Derived {
    derive_layers(state, state.ruleset.layers.len(), explain)
}

/// Applies the first `upto` layers.
pub(super) fn derive_layers(state: &GameState, upto: usize, explain: bool) -> Derived {
    derive_inner(state, upto, explain, None)
}

/// Derives layers `from` onward, from the values at the start of `from` and what the layers
/// before it did.
pub(super) fn continue_from(
    state: &GameState,
    before: Vec<Arc<LayerTrail>>,
    sheet: Sheet,
    from: usize,
) -> Derived {
    let mut started = HashMap::default();
    let mut grants = HashMap::default();
    for lt in &before {
        for a in lt.steps.iter().filter(|a| a.started_here) {
            let subs = a.exists.then(|| a.subjects.clone());
            started.insert(a.cand.key, (a.cand.clone(), subs));
        }
        for (g, t) in lt.grants.iter() {
            grants.insert(g.clone(), *t);
        }
    }
    let n = state.ruleset.layers.len();
    let mut d = Deriver::new(state, sheet, None, None, Some(before));
    d.started = started;
    d.grants = grants;
    for li in from..n {
        d.layer(LayerId(li as u16));
    }
    d.finish()
}

pub(super) fn cell_mut<'a>(sheet: &'a mut Sheet, c: &Cell) -> &'a mut Value {
    match c {
        Cell::Object(o, ch) => &mut sheet.objects[o.index()][ch.index()],
        Cell::Player(p, q) => &mut sheet.players[p.index()][q.index()],
    }
}

pub(super) fn derive_inner(
    state: &GameState,
    upto: usize,
    explain: bool,
    visit: Option<Vec<u32>>,
) -> Derived {
    let rs = &state.ruleset;
    let sheet = state.base_sheet();
    let expl = explain.then(|| Explanation {
        base: sheet.clone(),
        objects: vec![vec![Vec::new(); rs.characteristics.len()]; state.objects.len()],
        players: vec![vec![Vec::new(); rs.props.len()]; state.players.len()],
    });
    // A trail is kept for a full derivation only: a partial one cannot be continued.
    let trail = (!explain && upto >= rs.layers.len()).then(Vec::new);
    let mut d = Deriver::new(state, sheet, expl, visit, trail);
    for li in 0..upto.min(rs.layers.len()) {
        d.layer(LayerId(li as u16));
    }
    d.finish()
}

impl<'a> Deriver<'a> {
    /// A deriver starting from `sheet`, with no effect started yet; `trail`: what the layers
    /// before did, if a trail is kept.
    pub(super) fn new(
        state: &'a GameState,
        sheet: Sheet,
        expl: Option<Explanation>,
        visit: Option<Vec<u32>>,
        trail: Option<Vec<Arc<LayerTrail>>>,
    ) -> Self {
        Deriver {
            state,
            sheet,
            expl,
            started: HashMap::default(),
            grants: HashMap::default(),
            // The permuted derivation (for tests) counts every time: it checks the shared counts.
            counting: visit.is_none(),
            visit,
            scans: HashMap::default(),
            counts: Default::default(),
            scans_read: Footprint::default(),
            counts_read: Default::default(),
            trail: trail.map(|t| (t, LayerLog::new(state))),
            stacked: HashMap::default(),
            taken: Default::default(),
        }
    }
}

impl Deriver<'_> {
    pub(super) fn finish(self) -> Derived {
        let mut sheet = self.sheet;
        sheet.objects.share();
        Derived {
            sheet,
            explanation: self.expl,
            reused_layers: 0,
            replayed_layers: 0,
            changed: None,
            trail: Some(Arc::new(self.trail.map(|(t, _)| t).unwrap_or_default())),
            stacked: (!self.taken.is_empty()).then(|| Arc::new(self.taken)),
        }
    }

    pub(super) fn layer(&mut self, lid: LayerId) {
        let layer = &self.state.ruleset.layers[lid.index()];
        let cands = gather(
            self.state,
            &self.sheet,
            lid,
            &self.started,
            &self.grants,
            self.visit.as_deref(),
        );
        // Each effect starting here is kept once: room for all of them at once.
        self.started.reserve(cands.len());
        self.stack(&cands);
        // CR 613.3: characteristic-defining effects first; a layer may also order by kind of
        // change (CR 601.2f: additions, then subtractions, then effects on the total cost).
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
        self.follow_types(lid);
        if let Some((done, log)) = &mut self.trail {
            log.written.iter_mut().for_each(|w| *w = 0);
            let mut lt = std::mem::take(&mut log.trail);
            lt.before.seal();
            lt.grants.seal();
            done.push(Arc::new(lt));
        }
    }

    /// Stacking numbers (FreeOrion's effects system, Stacking Number): an effect with a nonzero
    /// number applies to an object only where no effect with the same number applied to it
    /// before. Before the layer applies anything, its effects with a number that start here are
    /// taken in a declared order — higher `priority:` first, then the layers' order (timestamp,
    /// then source and place) — and each keeps the subjects no earlier one with its number took.
    /// (Their scopes cannot read what the layers write: a group that alters meters reads no
    /// meter.)
    fn stack(&mut self, cands: &[Candidate]) {
        let number = |c: &Candidate| match &c.body {
            Body::Effect(d) => (d.stacking, d.priority),
            _ => (0, 0),
        };
        let mut stacking: Vec<&Candidate> = cands
            .iter()
            .filter(|c| number(c).0 != 0 && !self.started.contains_key(&c.key))
            .collect();
        if stacking.is_empty() {
            return;
        }
        stacking.sort_by_key(|c| (std::cmp::Reverse(number(c).1), c.order_key()));
        for c in stacking {
            let n = number(c).0;
            let s = self.decide_subjects(c, None).map(|s| {
                let kept: Vec<Subject> = s
                    .iter()
                    .copied()
                    .filter(|x| self.taken.insert((n, *x)))
                    .collect();
                Subjects::from(kept)
            });
            self.stacked.insert(c.key, s);
        }
    }

    /// Applies one group of effects of a layer: each effect waits for those it depends on; the
    /// rest go in timestamp order; a dependency loop falls back to timestamp order for its members
    /// only. Dependencies are re-evaluated after each application.
    pub(super) fn group(
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
            let touches: Vec<_> = cands.iter().map(|c| c.touches(state, lid)).collect();
            // What any effect of the layer writes: an effect that reads none of it depends on
            // none (most effects, on a board of many; this keeps the filter linear there).
            let mut written = Footprint::default();
            for w in &writes {
                written.union(w);
            }
            for (a, ra) in reads
                .iter()
                .enumerate()
                .filter(|(_, r)| !r.is_empty() && written.intersects(r))
            {
                for (b, wb) in writes.iter().enumerate() {
                    if a != b && wb.intersects(ra) && may_read(ra, &touches[b]) {
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
        // Where no partner writes what an effect's subject tests read, its analysis need not record
        // those reads one by one.
        let coarse: Vec<Option<Footprint>> = if pairs.is_empty() {
            vec![None; n]
        } else {
            let writes: Vec<Footprint> = cands.iter().map(|c| c.writes(state, lid)).collect();
            (0..n)
                .map(|i| {
                    let scan = cands[i].scan_reads(state, controller);
                    let partner_writes =
                        partners[i].iter().fold(Footprint::default(), |mut f, b| {
                            f.union(&writes[*b]);
                            f
                        });
                    (!scan.intersects(&partner_writes)).then_some(scan)
                })
                .collect()
        };
        let mut alive = vec![true; n];
        let mut left = n;
        // Each involved effect's instruction with the cells it read and will write, kept up to date.
        let mut analyses: Vec<Option<Analysis>> = vec![None; n];
        let mut edges: HashMap<(usize, usize), Option<DepKind>> = HashMap::default();
        // What each effect waited for, for its explanation.
        let mut waited: Vec<Vec<(String, u64, DepKind)>> = vec![Vec::new(); n];
        // The dependency loop each effect was found in, named, for its explanation.
        let mut in_loop: Vec<Option<Vec<String>>> = vec![None; n];
        while left > 0 {
            // The earliest effects left, while each waits for nothing (what it reads no effect
            // left writes) and does the same to every subject, go next one after another: applied
            // in one pass over their subjects, with the same result.
            if self.expl.is_none() && analyses.iter().all(Option::is_none) {
                let mut run = Vec::new();
                for i in (0..n).filter(|i| alive[*i]) {
                    let free = partners[i].iter().all(|b| !alive[*b]);
                    if !free || !does_the_same(&cands[i], lid) {
                        break;
                    }
                    run.push(i);
                }
                if run.len() > 1 {
                    self.apply_run_of(lid, &cands, &run, previous);
                    for i in run {
                        alive[i] = false;
                        left -= 1;
                    }
                    continue;
                }
            }
            // The earliest effect that waits for no other goes next; an effect stops being examined
            // at the first effect it waits for.
            let mut pick = None;
            for i in (0..n).filter(|i| alive[*i]) {
                let mut blocked = false;
                for &b in &partners[i] {
                    if !alive[b] {
                        continue;
                    }
                    if let Some(k) =
                        self.edge(lid, &cands, &mut analyses, &mut edges, &coarse, i, b)
                    {
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
            let pick = match pick {
                Some(i) => i,
                None => {
                    // Every effect waits for another: find a loop that waits for nothing outside it.
                    let mut deps: Vec<Vec<(usize, DepKind)>> = vec![Vec::new(); n];
                    for &(a, b) in &pairs {
                        if alive[a] && alive[b] {
                            if let Some(k) =
                                self.edge(lid, &cands, &mut analyses, &mut edges, &coarse, a, b)
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
                    // Every member is explained as one of the loop, however the order goes on.
                    let names: Vec<String> = members
                        .iter()
                        .map(|m| {
                            format!(
                                "{} (timestamp {})",
                                cands[*m].label(state),
                                cands[*m].timestamp.0
                            )
                        })
                        .collect();
                    for m in &members {
                        in_loop[*m] = Some(names.clone());
                    }
                    members[0]
                }
            };
            alive[pick] = false;
            left -= 1;
            let cand = &cands[pick];
            let reason = if let Some(members) = in_loop[pick].take() {
                Reason::Loop {
                    timestamp: cand.timestamp.0,
                    members,
                    previous: None,
                }
            } else if !waited[pick].is_empty() {
                Reason::Dependency {
                    timestamp: cand.timestamp.0,
                    others: Vec::new(),
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
            let mut picked = analyses[pick].take();
            // What the later effects it was tried against, whose amounts read other objects, would
            // have done at this point: a later derivation that starts from this one tries them again.
            let partners_then: Vec<PartnerThen> = if self.trail.is_some() {
                partners[pick]
                    .iter()
                    .filter(|b| alive[**b] && amounts_read_others(&cands[**b], lid))
                    .filter_map(|b| {
                        let an = analyses[*b].as_ref()?;
                        Some((
                            cands[*b].key,
                            Arc::new((
                                an.instruction.subjects.clone(),
                                an.instruction.params.clone(),
                            )),
                        ))
                    })
                    .collect()
            } else {
                Vec::new()
            };
            // Before the effect applies: probes of what its writes can change in the analyses of
            // other effects, so that bringing them up to date after it can skip what did not change.
            let mut probes: HashMap<usize, Vec<Option<super::dependency::Probe>>> =
                HashMap::default();
            let mut probed_objects: Option<Vec<ObjectId>> = None;
            if let (true, Some(p)) = (involved[pick], &picked) {
                if let Some(xs) = objects_of(&p.writes) {
                    let chars = footprint_of(&p.writes);
                    let subjects: Vec<Subject> = xs.iter().map(|o| Subject::Object(*o)).collect();
                    for i in (0..n).filter(|i| alive[*i]) {
                        let Some(an) = &analyses[i] else { continue };
                        if let Some(subs) = an.affected_by(&p.writes, &chars, &subjects) {
                            let list = subs
                                .iter()
                                .map(|s| self.probe(lid, &cands[i], *s, &xs, None))
                                .collect();
                            probes.insert(i, list);
                        }
                    }
                    probed_objects = Some(xs);
                }
            }
            let known = picked.as_ref().map(|a| &a.instruction);
            if self.apply_effect(lid, cand, &reason, known) && !cand.defining {
                *previous = Some((cand.label(state), cand.timestamp.0));
            }
            // The step keeps the parameters its analysis worked out, and whether it waited, for a
            // later derivation that starts from this one.
            if let Some((_, log)) = self.trail.as_mut() {
                if let Some(step) = Arc::make_mut(&mut log.trail.steps).last_mut() {
                    let step = Arc::make_mut(step);
                    if step.cand.key == cand.key {
                        step.waited = !waited[pick].is_empty();
                        if !partners_then.is_empty() {
                            step.partners = Some(partners_then.into());
                        }
                        if let Some(p) = picked.as_mut() {
                            if step.subjects[..] == p.instruction.subjects[..] {
                                step.params =
                                    Some(Arc::new(std::mem::take(&mut p.instruction.params)));
                            }
                        }
                    }
                }
            }
            self.forget_reads_of(cand, lid);
            // CR 613.8c: applying an effect can create or remove dependencies. Bring up to date
            // what read a cell the effect wrote, and forget its tested pairs.
            if involved[pick] && analyses.iter().any(|a| a.is_some()) {
                let written = match picked {
                    Some(p) => p.writes,
                    None => {
                        let touches = cand.touches(state, lid);
                        let subs = self.started.get(&cand.key).and_then(|(_, s)| s.clone());
                        subs.iter()
                            .flat_map(|l| l.iter())
                            .flat_map(|s| cells_of(*s, &touches).collect::<Vec<_>>())
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
                                Some(subs) => self.refresh(
                                    lid,
                                    &cands[i],
                                    an,
                                    &subs,
                                    probes.get(&i).zip(probed_objects.as_deref()),
                                ),
                                None => self.analyse(lid, &cands[i], coarse[i].clone()),
                            });
                            edges.retain(|(a, b), _| *a != i && *b != i);
                        }
                    }
                }
            }
        }
    }

    /// Starts (if new) and applies an effect's parts for this layer; true if any part applied.
    /// `known`: the effect's up-to-date instruction, if analysed.
    pub(super) fn apply_effect(
        &mut self,
        lid: LayerId,
        cand: &Candidate,
        reason: &Reason,
        known: Option<&Instruction>,
    ) -> bool {
        let subjects = self.subjects_of(cand, known, matches!(reason, Reason::Loop { .. }));
        let Some(subjects) = subjects else {
            return false;
        };
        self.apply_to(lid, cand, reason, known, &subjects)
    }

    /// Applies effects one after another in one pass (see `apply_run`).
    pub(super) fn apply_run_of(
        &mut self,
        lid: LayerId,
        cands: &[Candidate],
        run: &[usize],
        previous: &mut Option<(String, u64)>,
    ) {
        let subjects: Vec<Option<Subjects>> = run
            .iter()
            .map(|&i| self.subjects_of(&cands[i], None, false))
            .collect();
        let members: Vec<(&Candidate, &[Subject])> = run
            .iter()
            .zip(&subjects)
            .filter_map(|(&i, s)| s.as_deref().map(|s| (&cands[i], s)))
            .collect();
        let applied = apply_run(
            self.state,
            &mut self.sheet,
            lid,
            &members,
            self.trail
                .as_mut()
                .map(|(_, log)| log as &mut (dyn KeepBefore + 'static)),
        );
        for ((cand, _), applied) in members.iter().zip(applied) {
            if applied && !cand.defining {
                *previous = Some((cand.label(self.state), cand.timestamp.0));
            }
            self.forget_reads_of(cand, lid);
        }
    }

    /// Drops the scans and counts that read what an effect just wrote (a `has X` read sees only X).
    pub(super) fn forget_reads_of(&mut self, cand: &Candidate, lid: LayerId) {
        if self.scans.is_empty()
            && self.counts.counts.borrow().is_empty()
            && self.counts.maps.get().is_none_or(|m| m.borrow().is_empty())
        {
            return;
        }
        let touches = cand.touches(self.state, lid);
        if may_read(&self.scans_read, &touches) {
            self.scans.retain(|_, (f, _)| !may_read(f, &touches));
        }
        if let Some(maps) = self.counts.maps.get() {
            let mut maps = maps.borrow_mut();
            if !maps.is_empty() {
                maps.forget(|f| may_read(f, &touches));
            }
        }
        let counts = self.counts.counts.get_mut();
        let read = &mut self.counts_read;
        if read.0 != counts.len() {
            // Counts were kept since: all they read, again.
            let mut all = Footprint::default();
            counts.values().for_each(|(f, _)| all.absorb_coarse(f));
            *read = (counts.len(), all);
        }
        if may_read(&read.1, &touches) {
            counts.retain(|_, (f, _)| !may_read(f, &touches));
            read.0 = counts.len();
        }
    }

    /// The values of the aggregates of an effect's conditions where it starts (see
    /// `condition_aggregates`), on the values as they stand then. (Its amounts' aggregates are
    /// not kept: a later derivation moves its kept parameters by what the aggregates moved.)
    pub(super) fn aggregate_values(
        &self,
        cand: &Candidate,
        fresh: bool,
    ) -> Option<AggregateValues> {
        let Body::Effect(def) = &cand.body else {
            return None;
        };
        if !fresh {
            return None;
        }
        let aggs = condition_aggregates(def, cand.created.is_none());
        if aggs.is_empty() {
            return None;
        }
        let ctx = cand
            .ctx(self.state, &self.sheet, None)
            .counting(self.counting.then_some(&self.counts));
        let this = match cand.source {
            Some(o) => Subject::Object(o),
            None => Subject::Player(PlayerId(0)),
        };
        Some(
            aggs.into_iter()
                .map(|a| (a.key(), ctx.aggregate_now(a, this)))
                .collect(),
        )
    }

    /// Whom an effect applies to: decided when it starts, kept after (CR 613.6).
    /// Notes the effect as the layer's next step.
    pub(super) fn subjects_of(
        &mut self,
        cand: &Candidate,
        known: Option<&Instruction>,
        looped: bool,
    ) -> Option<Subjects> {
        let fresh = !self.started.contains_key(&cand.key);
        let subjects = match self.started.get(&cand.key) {
            Some((_, s)) => s.clone(),
            None => {
                let s = self.decide_subjects(cand, known);
                self.started.insert(cand.key, (cand.clone(), s.clone()));
                s
            }
        };
        if self.trail.is_some() {
            let you = match &cand.body {
                Body::Effect(_) => you_of(self.state, &self.sheet, cand, None),
                _ => None,
            };
            let aggs = self.aggregate_values(cand, fresh);
            if let Some((_, log)) = &mut self.trail {
                Arc::make_mut(&mut log.trail.steps).push(Arc::new(Applied {
                    cand: cand.clone(),
                    subjects: subjects.clone().unwrap_or_else(|| Arc::from(Vec::new())),
                    started_here: fresh,
                    exists: subjects.is_some(),
                    looped,
                    known: Arc::default(),
                    params: None,
                    you,
                    waited: false,
                    aggs,
                    partners: None,
                }));
            }
        }
        subjects
    }

    /// Whom an effect starting now applies to, `None` if it does not exist. Decided once per
    /// derivation: an effect that does not exist when its first part would apply applies none of
    /// its parts (Cranial Insertion, "Order of Operations", 2020, "Smash It Up").
    fn decide_subjects(
        &mut self,
        cand: &Candidate,
        known: Option<&Instruction>,
    ) -> Option<Subjects> {
        if let Some(s) = self.stacked.remove(&cand.key) {
            return s;
        }
        match (known, &cand.body, &cand.created) {
            (Some(i), _, _) => i.exists.then(|| i.subjects.as_slice().into()),
            (None, Body::Effect(def), None) if self.visit.is_none() => self
                .static_exists(cand, None)
                .map(|you| self.scan(def, cand.source, you)),
            _ => start(self.state, &self.sheet, cand, None).map(|mut v| {
                v.sort();
                v.into()
            }),
        }
    }

    /// Applies an effect's parts for this layer to its subjects; true if any part applied.
    pub(super) fn apply_to(
        &mut self,
        lid: LayerId,
        cand: &Candidate,
        reason: &Reason,
        known: Option<&Instruction>,
        subjects: &Subjects,
    ) -> bool {
        if self.expl.is_none() {
            let grants = &mut self.grants;
            let mut granted = Vec::new();
            // The analysis's parameters are up to date when its subjects are these.
            let params = known
                .filter(|i| i.subjects[..] == subjects[..])
                .map(|i| i.params.as_slice());
            let mut kept = Vec::new();
            let keeping = self.trail.is_some() && params.is_none();
            let applied = apply_keeping(
                self.state,
                &mut self.sheet,
                cand,
                lid,
                subjects,
                params,
                self.trail
                    .as_mut()
                    .map(|(_, log)| log as &mut (dyn KeepBefore + 'static)),
                &mut |sheet, s, t, v| {
                    note_grants(grants, sheet, s, t, v, cand.timestamp, &mut granted)
                },
                keeping.then_some(&mut kept),
            );
            if let Some((_, log)) = &mut self.trail {
                granted.into_iter().for_each(|g| log.trail.grants.push(g));
                if !kept.is_empty() {
                    if let Some(step) = Arc::make_mut(&mut log.trail.steps).last_mut() {
                        let step = Arc::make_mut(step);
                        if step.cand.key == cand.key {
                            step.params = Some(Arc::new(kept));
                        }
                    }
                }
            }
            return applied;
        }
        let layer_def = &self.state.ruleset.layers[lid.index()];
        let text = self.expl.as_ref().map(|_| cand.text(self.state));
        let mut applied = false;
        // CR 613.5: the effect applies to all its subjects at once (see `apply_in_place`).
        let all: Vec<_> = subjects
            .iter()
            .map(|s| (*s, changes(self.state, &self.sheet, cand, lid, *s)))
            .collect();
        for (subject, ch) in all {
            applied |= !ch.is_empty();
            for (t, v) in ch {
                note_grants(
                    &mut self.grants,
                    &self.sheet,
                    subject,
                    t,
                    &v,
                    cand.timestamp,
                    &mut Vec::new(),
                );
                let before = std::mem::replace(slot_mut(&mut self.sheet, subject, t), v.clone());
                if let (Some(e), Some(text)) = (self.expl.as_mut(), &text) {
                    let list = match (subject, t) {
                        (Subject::Object(o), SlotTarget::Char(c)) => {
                            &mut e.objects[o.index()][c.index()]
                        }
                        (Subject::Player(p), SlotTarget::Prop(q)) => {
                            &mut e.players[p.index()][q.index()]
                        }
                        _ => continue,
                    };
                    let step = Step {
                        layer: layer_def.label.clone(),
                        layer_name: layer_def.name.clone(),
                        source: cand.source_name.to_string(),
                        label: cand.label(self.state),
                        text: text.clone(),
                        timestamp: cand.timestamp.0,
                        reason: reason.for_value(list, &layer_def.label),
                        before,
                        after: v,
                    };
                    list.push(step);
                }
            }
        }
        applied
    }
}

/// Keeps when a static ability was granted to an object by an effect writing its abilities, unless
/// the object already had it (CR 613.7a: an effect from a granted ability takes the later
/// timestamp).
pub(super) fn note_grants(
    grants: &mut HashMap<(ObjectId, Ability), Timestamp>,
    sheet: &Sheet,
    subject: Subject,
    t: SlotTarget,
    v: &Value,
    timestamp: Timestamp,
    granted: &mut Vec<((ObjectId, Ability), Timestamp)>,
) {
    let (Value::Abilities(list), Subject::Object(o)) = (v, subject) else {
        return;
    };
    for a in list.iter() {
        if matches!(a, Ability::Static { .. }) && !grants.contains_key(&(o, a.clone())) {
            let printed =
                matches!(slot_ref(sheet, subject, t), Value::Abilities(l) if l.contains(a));
            if !printed {
                grants.insert((o, a.clone()), timestamp);
                granted.push(((o, a.clone()), timestamp));
            }
        }
    }
}

/// The rank of an effect in a layer that orders by kind of change (`increase`, `decrease`, `set`).
pub(super) fn kind_rank(
    c: &Candidate,
    lid: LayerId,
    order: &[crate::model::ruleset::ChangeClass],
) -> usize {
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
        .map(|o| crate::model::ruleset::ChangeClass::of(&o.change))
        .next();
    class
        .and_then(|k| order.iter().position(|x| *x == k))
        .unwrap_or(order.len())
}
