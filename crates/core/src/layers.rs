//! The layer system (seed 003, "Layers"; seed 004): characteristics are derived from base values by
//! applying continuous effects layer by layer, characteristic-defining effects first, then in
//! timestamp order. An effect that began applying in one layer keeps applying its later parts to
//! the same objects (seed 003, "Timestamp", first paragraph; seed 004, "Smash It Up").

use crate::condition::{Ctx, Sheet, Subject};
use crate::effect::{Affects, Change, EffectDef, Locked, Op};
use crate::explain::{Explanation, Reason, Step};
use crate::ids::{ClassId, CounterId, LayerId, ObjectId, PlayerId, Timestamp};
use crate::ruleset::SlotTarget;
use crate::state::GameState;
use crate::value::{Ability, Value};
use serde::Serialize;
use std::collections::HashMap;
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
}

#[derive(Clone)]
enum Body {
    Effect(Arc<EffectDef>),
    Counter { kind: CounterId, count: i64 },
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

    /// How a later step names this one: the source, or the source's counters.
    fn label(&self, state: &GameState) -> String {
        match &self.body {
            Body::Effect(_) => self.source_name.to_string(),
            Body::Counter { .. } => format!("{}'s {}", self.source_name, self.text(state)),
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
        }
    }
}

/// Derives every characteristic and player property. With `explain`, records each step.
pub fn derive(state: &GameState, explain: bool) -> Derived {
    let rs = &state.ruleset;
    let mut sheet = state.base_sheet();
    let mut expl = explain.then(|| Explanation {
        base: sheet.clone(),
        objects: vec![vec![Vec::new(); rs.characteristics.len()]; state.objects.len()],
        players: vec![vec![Vec::new(); rs.props.len()]; state.players.len()],
    });
    // Effects that began applying, with the subjects they apply to in every later layer.
    let mut started: HashMap<EffectKey, (Candidate, Vec<Subject>)> = HashMap::new();

    for (li, layer) in rs.layers.iter().enumerate() {
        let lid = LayerId(li as u16);
        let mut cands = gather(state, &sheet, lid, &started);
        cands.sort_by_key(|c| c.order_key());
        let mut previous: Option<(String, u64)> = None;
        for cand in cands {
            let subjects = match started.get(&cand.key) {
                Some((_, s)) => s.clone(),
                None => {
                    // Decided once per derivation: an effect that does not exist when its first
                    // part would apply applies none of its parts (seed 004, "Smash It Up").
                    let s = start(state, &sheet, &cand).unwrap_or_default();
                    started.insert(cand.key, (cand.clone(), s.clone()));
                    s
                }
            };
            let reason = if cand.defining {
                Reason::CharacteristicDefining
            } else {
                match &previous {
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
            let mut applied = false;
            for subject in subjects {
                applied |= apply(
                    state, &mut sheet, &cand, lid, subject, &reason, &mut expl, layer,
                );
            }
            if applied && !cand.defining {
                previous = Some((cand.label(state), cand.timestamp.0));
            }
        }
    }
    Derived {
        sheet,
        explanation: expl,
    }
}

/// Effects with a part in `layer`: static abilities of objects in play (as their abilities stand
/// now), created effects, counters if this layer applies them, and every effect already started.
fn gather(
    state: &GameState,
    sheet: &Sheet,
    layer: LayerId,
    started: &HashMap<EffectKey, (Candidate, Vec<Subject>)>,
) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = started
        .values()
        .filter(|(c, _)| matches!(&c.body, Body::Effect(d) if d.has_layer(layer)))
        .map(|(c, _)| c.clone())
        .collect();
    let counters_here = state.ruleset.layers[layer.index()].counters;
    for o in state.objects() {
        if !state.in_play(o.id) {
            continue;
        }
        if let Some(ac) = state.abilities_char {
            if let Value::Abilities(list) = &sheet.objects[o.id.index()][ac.index()] {
                for a in list {
                    let Ability::Static { class, index, .. } = a else {
                        continue;
                    };
                    let def = &state.content.class(*class).statics[*index as usize];
                    let key = EffectKey::Static {
                        object: o.id,
                        class: *class,
                        index: *index,
                    };
                    if def.has_layer(layer) && !started.contains_key(&key) {
                        out.push(Candidate {
                            key,
                            body: Body::Effect(def.clone()),
                            timestamp: o.timestamp,
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

fn you_of(state: &GameState, sheet: &Sheet, cand: &Candidate) -> Option<PlayerId> {
    if let Some(c) = &cand.created {
        return Some(c.you);
    }
    let src = cand.source?;
    match state.controller_char {
        Some(c) => match &sheet.objects[src.index()][c.index()] {
            Value::Player(p) => *p,
            _ => None,
        },
        None => Some(state.object(src).controller),
    }
}

/// Decides whether an effect that has not applied yet exists now and whom it applies to. A static
/// ability must still be on its source (an earlier effect in this layer may have removed it) and its
/// "as long as" condition must hold; a created effect applies to what it locked when created.
fn start(state: &GameState, sheet: &Sheet, cand: &Candidate) -> Option<Vec<Subject>> {
    match (&cand.body, &cand.created, cand.key) {
        (Body::Counter { .. }, _, EffectKey::Counter { object, .. }) => {
            Some(vec![Subject::Object(object)])
        }
        (Body::Effect(def), Some(created), _) => {
            // "As long as" on a created effect is tested on its source, as for a static ability.
            if let (Some(w), Some(src)) = (&def.while_cond, cand.source) {
                let ctx = Ctx {
                    state,
                    sheet,
                    source: Some(src),
                    you: Some(created.you),
                    targets: &created.targets,
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
        (
            Body::Effect(def),
            None,
            EffectKey::Static {
                object,
                class,
                index,
            },
        ) => {
            let ac = state.abilities_char?;
            let still_has = match &sheet.objects[object.index()][ac.index()] {
                Value::Abilities(list) => list.iter().any(|a| {
                    matches!(a, Ability::Static { class: c, index: i, .. } if *c == class && *i == index)
                }),
                _ => false,
            };
            if !still_has {
                return None;
            }
            let ctx = Ctx {
                state,
                sheet,
                source: Some(object),
                you: you_of(state, sheet, cand),
                targets: &[],
            };
            if let Some(w) = &def.while_cond {
                if !ctx.test(w, Subject::Object(object)) {
                    return None;
                }
            }
            Some(subjects(&ctx, &def.affects))
        }
        _ => None,
    }
}

/// Every object or player the condition picks, in id order.
pub fn subjects(ctx: &Ctx, affects: &Affects) -> Vec<Subject> {
    match affects {
        Affects::Objects(c) => ctx
            .state
            .object_ids()
            .map(Subject::Object)
            .filter(|s| ctx.test(c, *s))
            .collect(),
        Affects::Players(c) => (0..ctx.state.players.len() as u8)
            .map(|p| Subject::Player(PlayerId(p)))
            .filter(|s| ctx.test(c, *s))
            .collect(),
    }
}

/// Applies the candidate's parts for `layer` to one subject; true if any part applied.
#[allow(clippy::too_many_arguments)]
fn apply(
    state: &GameState,
    sheet: &mut Sheet,
    cand: &Candidate,
    layer: LayerId,
    subject: Subject,
    reason: &Reason,
    expl: &mut Option<Explanation>,
    layer_def: &crate::ruleset::LayerDef,
) -> bool {
    let mut changes: Vec<(SlotTarget, Value)> = Vec::new();
    let mut touched: Vec<SlotTarget> = Vec::new();
    {
        let targets: &[ObjectId] = match &cand.created {
            Some(c) => &c.targets,
            None => &[],
        };
        let ctx = Ctx {
            state,
            sheet,
            source: cand.source,
            you: you_of(state, sheet, cand),
            targets,
        };
        match &cand.body {
            Body::Counter { kind, count } => {
                for (c, d) in &state.ruleset.counters[kind.index()].changes {
                    let t = SlotTarget::Char(*c);
                    let cur = current(sheet, subject, t);
                    let v = Value::Number(
                        cur.number()
                            .and_then(|n| n.checked_add(d.checked_mul(*count)?)),
                    );
                    touched.push(t);
                    changes.push((t, v));
                }
            }
            Body::Effect(def) => {
                for op in def.ops.iter().filter(|o| o.layer == layer) {
                    if !fits(subject, op.target) {
                        continue;
                    }
                    touched.push(op.target);
                    for (t, v) in change(&ctx, sheet, subject, op) {
                        changes.push((t, v));
                    }
                }
            }
        }
    }
    if touched.is_empty() {
        return false;
    }
    let text = expl.as_ref().map(|_| cand.text(state));
    for (t, v) in changes {
        let before = std::mem::replace(slot_mut(sheet, subject, t), v.clone());
        if let (Some(e), Some(text)) = (expl.as_mut(), &text) {
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
    true
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
        Change::SetSymbols(s) => Value::Symbols(s.clone()),
        Change::AddSymbols(s) | Change::RemoveSymbols(s) => {
            let mut set = match cur {
                Value::Symbols(x) => x.clone(),
                _ => Default::default(),
            };
            for sym in s.iter() {
                if matches!(op.change, Change::AddSymbols(_)) {
                    set.insert(sym.clone());
                } else {
                    set.remove(sym);
                }
            }
            Value::Symbols(set)
        }
        Change::SetAbilities(list) => Value::Abilities(list.clone()),
        Change::AddAbilities(list) => {
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
    };
    vec![(op.target, v)]
}
