//! Recomputation after counters change without deriving the layer again (issue 3: "the engine must not
//! redo what the change cannot affect"). A derivation keeps, for each layer, the order in which
//! its effects applied and the subjects of each (`LayerTrail::steps`).
//!
//! A new counter placement is an effect that reads nothing. By seed 003's order (the earliest
//! effect that waits for no other goes next) it applies at the first turn whose effect comes
//! after it by timestamp, or that was taken from a dependency loop; nothing else moves unless an
//! effect that reads what the counters change would now wait for them. That is tested exactly
//! where it can happen: at the turn of each such reader, on the objects with new counters
//! (`Ctx::probe`, membership tests). A placement that went (or whose count changed) leaves the
//! order alone as long as every reader came before it: those did not wait for it. When nothing
//! changes, only those objects' values are worked out again, step by step, and every other value
//! is the previous result. Later layers are treated the same way while no effect in them reads the
//! changed values. Whatever this cannot show unchanged is derived in full.

use super::change::{apply_in_place, op_probe, uniform_op};
use super::dependency::Touch;
use super::{
    continue_from, may_read, Applied, Body, Candidate, Derived, EffectKey, LayerTrail, Trail,
};
use crate::condition::{Cell, Ctx, Footprint, Sheet, Subject};
use crate::effect::{Affects, Change};
use crate::ids::{CharId, LayerId, ObjectId};
use crate::ruleset::SlotTarget;
use crate::state::GameState;
use crate::value::Value;
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;

/// The previous derivation with the counter placements that came and went worked in from layer
/// `from` (the layer that applies counters); `None` where that cannot be shown to give the full
/// result.
pub(super) fn replay(state: &GameState, prev: &Derived, from: usize) -> Option<Derived> {
    let layers = &prev.trail.0;
    let n = layers.len();
    let lid = LayerId(from as u16);
    let def = &state.ruleset.layers[from];
    if !def.counters || !def.kind_order.is_empty() {
        return None;
    }
    // A layer that brings symbols in line with card types (CR 205.1a) is not replayed.
    if (from..n).any(|l| !state.ruleset.tied_in_layer(LayerId(l as u16)).is_empty()) {
        return None;
    }
    let old = &layers[from];
    if old.steps.iter().any(|a| reads_counters(&a.cand)) {
        return None;
    }
    let (added, removed) = placement_changes(state, old, lid);
    let mut xs: Vec<ObjectId> = added
        .iter()
        .chain(removed.iter().map(|r| &old.steps[*r].cand))
        .filter_map(|k| k.source)
        .collect();
    xs.sort();
    xs.dedup();
    // "You" of an effect is read from the values as finally derived; that holds only if no layer
    // from here on changes control. Counters that change control or abilities take the full way.
    let mut touches: Vec<(SlotTarget, Touch)> = Vec::new();
    for k in added
        .iter()
        .chain(removed.iter().map(|r| &old.steps[*r].cand))
    {
        touches.extend(k.touches(state, lid));
    }
    let special = [state.controller_char, state.abilities_char];
    if touches
        .iter()
        .any(|(t, _)| special.iter().flatten().any(|c| *t == SlotTarget::Char(*c)))
    {
        return None;
    }
    if let Some(c) = state.controller_char {
        let writes_control = (from..n).any(|li| {
            layers[li]
                .steps
                .iter()
                .any(|a| a.cand.writes(state, LayerId(li as u16)).has_char(c))
        });
        if writes_control {
            return None;
        }
    }
    // Each object's row at the end of every layer from `from - 1` on, as previously derived.
    let old_rows: Vec<Vec<Vec<Value>>> = xs.iter().map(|x| rows_by_layer(prev, *x, from)).collect();
    let mut result = prev.sheet.clone();
    for (i, x) in xs.iter().enumerate() {
        result.objects[x.index()].clone_from_slice(&old_rows[i][0]);
    }

    // This layer: where each placement goes, and whether a reader would now wait for it.
    let steps = &old.steps;
    let mut inserts: Vec<(usize, Candidate)> = added
        .iter()
        .map(|k| {
            let at = steps
                .iter()
                .position(|a| a.looped || a.cand.order_key() > k.order_key())
                .unwrap_or(steps.len());
            (at, k.clone())
        })
        .collect();
    inserts.sort_by_key(|(at, k)| (*at, k.order_key()));
    // The first step from which values differ: a placement's, or one that went. A placement that
    // went was waited for by no reader that came before it; one after it may have waited.
    let first_insert = inserts
        .first()
        .map_or(steps.len(), |(at, _)| *at)
        .min(removed.first().copied().unwrap_or(steps.len()));
    let started_before: FxHashSet<EffectKey> = layers[..from]
        .iter()
        .flat_map(|lt| lt.started.iter().map(|(k, _, _)| *k))
        .collect();
    let mut new_steps: Vec<Applied> = Vec::with_capacity(steps.len() + added.len());
    let mut pending = inserts.into_iter().peekable();
    for (r, step) in steps.iter().enumerate() {
        while let Some((_, k)) = pending.next_if(|(at, _)| *at == r) {
            new_steps.push(apply_placement(state, &mut result, k, lid)?);
        }
        if removed.binary_search(&r).is_ok() {
            continue;
        }
        if may_read(step_reads(state, step), &touches) {
            // A reader after the placements would see changed values.
            if r >= first_insert {
                return None;
            }
            let fresh = !started_before.contains(&step.cand.key);
            if !unchanged_by(state, &mut result, step, fresh, &added, &touches, lid, &xs)? {
                return None;
            }
        }
        apply_step(state, &mut result, step, lid, &xs)?;
        new_steps.push(step.clone());
    }
    for (_, k) in pending {
        new_steps.push(apply_placement(state, &mut result, k, lid)?);
    }
    // This layer's new trail: the placements started, and the cells they write kept too.
    let mut lt = LayerTrail::clone(old);
    lt.steps = Arc::new(new_steps);
    for k in &added {
        let object = k.source?;
        lt.started.push((
            k.key,
            k.clone(),
            Some(Arc::from(vec![Subject::Object(object)])),
        ));
        for (t, _) in k.touches(state, lid) {
            let SlotTarget::Char(c) = t else { continue };
            let cell = Cell::Object(object, c);
            if !lt.before.iter().any(|(x, _)| *x == cell) {
                let start = &old_rows[position(&xs, object)][0];
                lt.before.push((cell, start[c.index()].clone()));
            }
        }
    }
    let mut trail: Vec<Arc<LayerTrail>> = layers.to_vec();
    trail[from] = Arc::new(lt);

    // Later layers: while the objects' values are unchanged, so is everything; where they changed
    // and no effect of the layer reads them, only their own steps are worked out again.
    for li in from + 1..n {
        let dirty = dirty_chars(&result, &xs, &old_rows, li - from);
        if dirty.is_empty() {
            for (i, x) in xs.iter().enumerate() {
                result.objects[x.index()].clone_from_slice(&old_rows[i][n - from]);
            }
            break;
        }
        let lt = &trail[li];
        let dirty_touches: Vec<(SlotTarget, Touch)> = dirty
            .iter()
            .map(|c| (SlotTarget::Char(*c), Touch::Any))
            .collect();
        let ld = &state.ruleset.layers[li];
        let lid = LayerId(li as u16);
        let readable = !ld.counters
            && !state.abilities_char.is_some_and(|a| dirty.contains(&a))
            && !lt.steps.iter().any(|a| reads_counters(&a.cand))
            && !lt
                .steps
                .iter()
                .any(|a| may_read(step_reads(state, a), &dirty_touches));
        let replayed = readable.then(|| -> Option<LayerTrail> {
            let mut lt2 = LayerTrail::clone(lt);
            let patch: Vec<(Cell, Value)> = lt
                .before
                .iter()
                .filter_map(|(cell, _)| match cell {
                    Cell::Object(o, c) if xs.contains(o) => {
                        Some((*cell, result.objects[o.index()][c.index()].clone()))
                    }
                    _ => None,
                })
                .collect();
            patch.into_iter().for_each(|p| lt2.before.push(p));
            for step in lt.steps.iter() {
                apply_step(state, &mut result, step, lid, &xs)?;
            }
            Some(lt2)
        });
        match replayed.flatten() {
            Some(lt2) => trail[li] = Arc::new(lt2),
            None => {
                // Derive from this layer in full: the values at its start are the previous ones,
                // with the objects' new rows.
                let mut start = prev.sheet_at(li);
                for x in &xs {
                    start.objects[x.index()].clone_from_slice(&result.objects[x.index()]);
                }
                let mut d = continue_from(state, trail[..li].to_vec(), start, li);
                d.reused_layers = from;
                d.replayed_layers = li - from;
                return Some(d);
            }
        }
    }
    Some(Derived {
        sheet: result,
        explanation: None,
        reused_layers: from,
        replayed_layers: n - from,
        changed: Some(xs),
        trail: Trail(trail),
    })
}

/// What a step's effect reads, worked out once and kept with the step.
fn step_reads<'a>(state: &GameState, a: &'a Applied) -> &'a Footprint {
    a.reads
        .get_or_init(|| a.cand.reads(state, state.controller_char))
}

fn position(xs: &[ObjectId], x: ObjectId) -> usize {
    xs.iter().position(|o| *o == x).unwrap_or(0)
}

fn reads_counters(c: &Candidate) -> bool {
    matches!(&c.body, Body::Effect(d) if d.reads_counters())
}

/// The counter placements that are new since the previous derivation, and the steps of those
/// that went (a placement whose count changed is one that went and one that came).
fn placement_changes(
    state: &GameState,
    old: &LayerTrail,
    lid: LayerId,
) -> (Vec<Candidate>, Vec<usize>) {
    let mut gone: FxHashMap<(EffectKey, crate::ids::Timestamp), usize> = old
        .steps
        .iter()
        .enumerate()
        .filter(|(_, a)| matches!(a.cand.body, Body::Counter { .. }))
        .map(|(r, a)| ((a.cand.key, a.cand.timestamp), r))
        .collect();
    let mut added = Vec::new();
    for o in state.objects() {
        for (i, p) in o.counters.iter().enumerate() {
            // Placements whose kind changes nothing in this layer (a keyword counter) are not here.
            if !state.ruleset.counters[p.kind.index()].applies_in(&state.ruleset, lid) {
                continue;
            }
            let k = Candidate::counter(o, i, p);
            let same = gone.get(&(k.key, k.timestamp)).is_some_and(|r| {
                matches!(old.steps[*r].cand.body, Body::Counter { kind, count }
                    if kind == p.kind && count == p.count)
            });
            if same {
                gone.remove(&(k.key, k.timestamp));
            } else {
                added.push(k);
            }
        }
    }
    let mut removed: Vec<usize> = gone.into_values().collect();
    removed.sort();
    (added, removed)
}

/// An object's row at the end of each layer from `from - 1` to the last, as previously derived:
/// the final row with each later layer's writes undone.
fn rows_by_layer(prev: &Derived, x: ObjectId, from: usize) -> Vec<Vec<Value>> {
    let layers = &prev.trail.0;
    let mut row = prev.sheet.objects[x.index()].to_vec();
    let mut out = vec![row.clone()];
    for lt in layers[from..].iter().rev() {
        for (cell, v) in lt.before.iter() {
            if let Cell::Object(o, c) = cell {
                if *o == x {
                    row[c.index()] = v.clone();
                }
            }
        }
        out.push(row.clone());
    }
    out.reverse();
    out
}

/// The characteristics in which the objects' values now differ from the previous derivation's,
/// at the end of the layer `at` places after `from - 1`.
fn dirty_chars(
    sheet: &Sheet,
    xs: &[ObjectId],
    old_rows: &[Vec<Vec<Value>>],
    at: usize,
) -> Vec<CharId> {
    let mut out = Vec::new();
    for (i, x) in xs.iter().enumerate() {
        let now = &sheet.objects[x.index()];
        for (c, (a, b)) in now.iter().zip(&old_rows[i][at]).enumerate() {
            let c = CharId(c as u16);
            if a != b && !out.contains(&c) {
                out.push(c);
            }
        }
    }
    out
}

/// Applies a new placement to its object.
fn apply_placement(
    state: &GameState,
    sheet: &mut Sheet,
    k: Candidate,
    lid: LayerId,
) -> Option<Applied> {
    let subjects: Arc<[Subject]> = Arc::from(vec![Subject::Object(k.source?)]);
    apply_in_place(
        state,
        sheet,
        &k,
        lid,
        &subjects,
        None,
        None,
        |_, _, _, _| {},
    );
    Some(Applied {
        cand: k,
        subjects,
        looped: false,
        reads: Arc::default(),
        params: None,
    })
}

/// Applies a step to those of the objects among its subjects. `None` where what it does to them
/// depends on other values (those are not worked out again here).
fn apply_step(
    state: &GameState,
    sheet: &mut Sheet,
    step: &Applied,
    lid: LayerId,
    xs: &[ObjectId],
) -> Option<()> {
    // Subjects are kept in id order.
    let mine: Vec<Subject> = xs
        .iter()
        .map(|x| Subject::Object(*x))
        .filter(|s| step.subjects.binary_search(s).is_ok())
        .collect();
    if mine.is_empty() {
        return Some(());
    }
    // Its parameters for these objects are what they were: everything it reads is as it was
    // (only these objects' values differ, and a step that reads what the new counters change comes
    // before them). They are taken from the step where an analysis kept them.
    let mut known: Option<Vec<Vec<Value>>> = None;
    if let Body::Effect(def) = &step.cand.body {
        let fixed = def
            .ops
            .iter()
            .filter(|o| o.layer == lid)
            .all(|o| uniform_op(o) && !matches!(o.change, Change::SetPlayer(_)));
        if !fixed {
            let params = step.params.as_ref()?;
            let numbers_only = def.ops.iter().filter(|o| o.layer == lid).all(|o| {
                !matches!(
                    o.change,
                    Change::TextOf(_)
                        | Change::AbilitiesPer { .. }
                        | Change::AbilitiesOf { .. }
                        | Change::SetPlayer(_)
                        | Change::WithIntrinsic { .. }
                )
            });
            if !numbers_only {
                return None;
            }
            known = Some(
                mine.iter()
                    .map(|s| {
                        let i = step.subjects.binary_search(s).ok()?;
                        params.get(i).cloned()
                    })
                    .collect::<Option<Vec<_>>>()?,
            );
        }
    }
    apply_in_place(
        state,
        sheet,
        &step.cand,
        lid,
        &mine,
        known.as_deref(),
        None,
        |_, _, _, _| {},
    );
    Some(())
}

/// At a reader's turn, with the objects' values as they then stood: would the new placements
/// change whether it exists, what it applies to, or what it does (seed 003)? `Some(true)` when
/// they would not; `None` when this cannot tell.
#[allow(clippy::too_many_arguments)]
fn unchanged_by(
    state: &GameState,
    sheet: &mut Sheet,
    step: &Applied,
    fresh: bool,
    added: &[Candidate],
    touches: &[(SlotTarget, Touch)],
    lid: LayerId,
    xs: &[ObjectId],
) -> Option<bool> {
    let cand = &step.cand;
    let Body::Effect(def) = &cand.body else {
        return Some(true);
    };
    let controller = state.controller_char;
    if fresh {
        // Whether it exists is decided now: from its source's abilities and control, and its
        // "as long as".
        let mut f = Footprint::default();
        if let Some(w) = &def.while_cond {
            w.reads(controller, &mut f);
        }
        if let Some(a) = state.abilities_char {
            f.add_char(a);
        }
        if let Some(c) = controller {
            f.add_char(c);
        }
        if may_read(&f, touches) {
            return None;
        }
    }
    // What it applies to, where decided now by testing each object.
    let affects = match &def.affects {
        Affects::Objects(c) | Affects::Players(c) => c,
    };
    let tests_members = fresh && cand.created.is_none();
    if tests_members {
        let mut f = Footprint::default();
        affects.reads(controller, &mut f);
        if may_read(&f, touches) && !affects.is_local() {
            return None;
        }
    }
    let xs_subjects: Vec<Subject> = xs.iter().map(|x| Subject::Object(*x)).collect();
    // Membership of each object, and each subject's probe.
    type Look = (Vec<bool>, Vec<Vec<Option<i64>>>);
    let look = |sheet: &Sheet| -> Option<Look> {
        let ctx: Ctx = cand.ctx(state, sheet, None);
        let members = if tests_members {
            xs_subjects.iter().map(|s| ctx.test(affects, *s)).collect()
        } else {
            Vec::new()
        };
        let mut probes = Vec::with_capacity(step.subjects.len());
        for s in step.subjects.iter() {
            let mut out = Vec::new();
            for op in def.ops.iter().filter(|o| o.layer == lid) {
                if !op_probe(&ctx, *s, op, xs, &mut out) {
                    return None;
                }
            }
            probes.push(out);
        }
        Some((members, probes))
    };
    let before = look(sheet)?;
    let saved: Vec<Vec<Value>> = xs
        .iter()
        .map(|x| sheet.objects[x.index()].to_vec())
        .collect();
    for k in added {
        let subjects = [Subject::Object(k.source?)];
        apply_in_place(state, sheet, k, lid, &subjects, None, None, |_, _, _, _| {});
    }
    let after = look(sheet);
    for (x, row) in xs.iter().zip(saved) {
        sheet.objects[x.index()].clone_from_slice(&row);
    }
    Some(before == after?)
}
