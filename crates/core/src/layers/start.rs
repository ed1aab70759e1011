//! Whether an effect exists where its first part would apply, and whom it applies to: decided when
//! it starts and kept after (CR 613.6); the aggregates of its conditions worked out there.

use super::candidate::you_of;
use crate::condition::eval::{Counts, Ctx, Overrides};
use crate::model::condition::{Aggregate, Reads, Subject};
use crate::model::effect::{Affects, Change, EffectDef, Locked};
use crate::model::ids::{LayerId, PlayerId};
use crate::model::sheet::Sheet;
use crate::model::trail::{Body, Candidate, EffectKey};
use crate::model::value::{Ability, Value};
use crate::state::GameState;

/// The aggregates of an effect's conditions that are worked out where it starts: in its
/// "affects" (where it tests whom it applies to) and its "as long as"; inner ones first. Those
/// that say `outer` (a value per subject) are left out.
pub(super) fn condition_aggregates(def: &EffectDef, scans: bool) -> Vec<Aggregate<'_>> {
    let mut out = Vec::new();
    if scans {
        match &def.affects {
            Affects::Objects(c) | Affects::Players(c) => c.aggregates(&mut out),
        }
    }
    if let Some(w) = &def.while_cond {
        w.aggregates(&mut out);
    }
    out.retain(|a| a.is_closed());
    out
}

/// Whether an effect reads, in a layer, an aggregate whose value differs by subject (`outer`).
pub(super) fn has_open_aggregates(def: &EffectDef, lid: LayerId, fresh: bool, scans: bool) -> bool {
    let mut out = Vec::new();
    if fresh {
        if scans {
            match &def.affects {
                Affects::Objects(c) | Affects::Players(c) => c.aggregates(&mut out),
            }
        }
        if let Some(w) = &def.while_cond {
            w.aggregates(&mut out);
        }
    }
    for op in def.ops.iter().filter(|o| o.layer == lid) {
        if let Change::SetNumber(e) | Change::Modify(e) = &op.change {
            e.aggregates(&mut out);
        }
    }
    out.iter().any(|a| !a.is_closed())
}

/// Whether a static ability that has not started exists now: its source still has it and its
/// "as long as" holds. Returns its "you".
pub(super) fn static_exists(
    state: &GameState,
    sheet: &Sheet,
    cand: &Candidate,
    reads: Option<&Reads>,
) -> Option<Option<PlayerId>> {
    static_exists_with(state, sheet, cand, reads, None)
}

/// `static_exists`, with the aggregates of its "as long as" taken from `overrides` where given.
pub(super) fn static_exists_with(
    state: &GameState,
    sheet: &Sheet,
    cand: &Candidate,
    reads: Option<&Reads>,
    overrides: Option<&Overrides>,
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
    let still_has = match probe.value_for(object, ac, def.ability_name()) {
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
        let ctx = Ctx::new(state, sheet, Some(object), you, &[])
            .recording(reads)
            .overriding(overrides);
        if !ctx.test(w, Subject::Object(object)) {
            return None;
        }
    }
    Some(you)
}

/// Decides whether an effect that has not applied yet exists now and whom it applies to. A static
/// ability must still be on its source (an earlier effect in this layer may have removed it) and its
/// "as long as" condition must hold; a created effect applies to what it locked when created.
pub(super) fn start(
    state: &GameState,
    sheet: &Sheet,
    cand: &Candidate,
    reads: Option<&Reads>,
) -> Option<Vec<Subject>> {
    start_with(state, sheet, cand, reads, None)
}

/// `start`, with the aggregates of its conditions taken from `overrides` where given.
pub(super) fn start_with(
    state: &GameState,
    sheet: &Sheet,
    cand: &Candidate,
    reads: Option<&Reads>,
    overrides: Option<&Overrides>,
) -> Option<Vec<Subject>> {
    match (&cand.body, &cand.created, cand.key) {
        (Body::Counter { .. }, _, EffectKey::Counter { object, .. })
        | (Body::FaceDown, _, EffectKey::FaceDown(object)) => Some(vec![Subject::Object(object)]),
        (Body::Effect(def), Some(created), _) => {
            // "As long as" on a created effect is tested on its source, as for a static ability.
            if let (Some(w), Some(src)) = (&def.while_cond, cand.source) {
                let ctx = Ctx::new(state, sheet, Some(src), Some(created.you), &created.targets)
                    .recording(reads)
                    .overriding(overrides);
                if !ctx.test(w, Subject::Object(src)) {
                    return None;
                }
            }
            Some(match &created.locked {
                Locked::Objects(list) => list
                    .iter()
                    .filter(|(o, inc)| state.obj(*o).incarnation == *inc)
                    .map(|(o, _)| Subject::Object(*o))
                    .collect(),
                Locked::Players(list) => list.iter().map(|p| Subject::Player(*p)).collect(),
            })
        }
        (Body::Effect(def), None, EffectKey::Static { object, .. }) => {
            let you = static_exists_with(state, sheet, cand, reads, overrides)?;
            let ctx = Ctx::new(state, sheet, Some(object), you, &[])
                .recording(reads)
                .overriding(overrides);
            Some(subjects(&ctx, &def.affects))
        }
        _ => None,
    }
}

/// Whether a static ability that has not started exists now, and then its "you" and whom it
/// applies to, in id order; the scan shares the map's indexes and counts through `counts`
/// where given.
pub(super) fn static_scope(
    state: &GameState,
    sheet: &Sheet,
    cand: &Candidate,
    counts: Option<&Counts>,
) -> Option<(Option<PlayerId>, Vec<Subject>)> {
    let Body::Effect(def) = &cand.body else {
        return None;
    };
    let you = static_exists(state, sheet, cand, None)?;
    let ctx = Ctx::new(state, sheet, cand.source, you, &[]).counting(counts);
    Some((you, subjects(&ctx, &def.affects)))
}

/// Every object or player an effect might apply to, in id order.
pub(super) fn all_subjects(ctx: &Ctx, affects: &Affects) -> Vec<Subject> {
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
        Affects::Objects(c) => match ctx.meeting(c) {
            Some(list) => list.into_iter().map(Subject::Object).collect(),
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
