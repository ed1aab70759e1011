//! The effects that may apply in a layer: static abilities, created effects, counters and
//! face-down values (CR 613.1), each with its timestamp (CR 613.7), its source and its "you";
//! gathered for each layer (`gather`).

use crate::condition::eval::Ctx;
use crate::model::condition::{Reads, Subject};
use crate::model::effect::EffectDef;
use crate::model::ids::{LayerId, ObjectId, PlayerId, Timestamp};
use crate::model::object::GameObject;
use crate::model::sheet::Sheet;
use crate::model::trail::{Body, Candidate, Created, EffectKey, Subjects};
use crate::model::value::{Ability, Value};
use crate::state::GameState;
use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

impl Candidate {
    /// The effect of an object's `i`-th counter placement (in the layer that applies counters).
    pub(super) fn counter(
        o: &crate::model::object::GameObject,
        i: usize,
        p: &crate::model::object::CounterPlacement,
    ) -> Self {
        Candidate {
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
        }
    }

    /// The effect of static ability `key` of object `o` (`def`), with this timestamp (the
    /// object's, or a later one where an effect gave it the ability).
    pub(super) fn of_static(
        o: &GameObject,
        key: EffectKey,
        def: &Arc<EffectDef>,
        timestamp: Timestamp,
    ) -> Self {
        Candidate {
            key,
            body: Body::Effect(def.clone()),
            timestamp,
            defining: def.defining,
            source: Some(o.id),
            source_name: o.name.clone(),
            created: None,
        }
    }

    /// An effect created by a resolved spell or a response, with its fixed "you", locked subjects
    /// and targets.
    pub(super) fn created(e: &crate::model::effect::CreatedEffect) -> Self {
        Candidate {
            key: EffectKey::Created(e.id),
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
        }
    }

    /// CR 613.3: characteristic-defining first, then timestamp; the key breaks ties between
    /// abilities of one object so the order never depends on storage order.
    pub(super) fn order_key(&self) -> (bool, Timestamp, EffectKey) {
        (!self.defining, self.timestamp, self.key)
    }

    /// The evaluation context of this effect: its source, "you" and targets.
    pub(super) fn ctx<'a>(
        &'a self,
        state: &'a GameState,
        sheet: &'a Sheet,
        reads: Option<&'a Reads>,
    ) -> Ctx<'a> {
        let targets: &[Subject] = match &self.created {
            Some(c) => &c.targets,
            None => &[],
        };
        Ctx::new(
            state,
            sheet,
            self.source,
            you_of(state, sheet, self, reads),
            targets,
        )
        .recording(reads)
    }
}

pub(super) fn you_of(
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
        None => Some(state.obj(src).controller),
    }
}

/// An effect that began applying, with the subjects it applies to in every later layer; `None` if
/// it did not exist when its first part would have applied.
pub(super) type Started = HashMap<EffectKey, (Candidate, Option<Subjects>)>;

/// Effects with a part in `layer`: static abilities of objects in play (as their abilities stand
/// now), created effects, counters if this layer applies them, and every effect already started.
pub(super) fn gather(
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
    let face_down = layer_def.face_down && !state.ruleset.face_down.is_empty();
    let counters = state
        .ruleset
        .counters
        .iter()
        .any(|c| c.applies_in(&state.ruleset, layer));
    let mut ids: Vec<usize> = (0..state.objects.len()).collect();
    if let Some(rank) = visit {
        ids.sort_by_key(|i| rank[*i]);
    }
    for i in ids {
        // An object with no static ability, where this layer takes no face-down value and no
        // counter, has nothing here: its own block is not read.
        let statics = state.abilities_char.is_some_and(|ac| {
            matches!(&sheet.objects[i][ac.index()], Value::Abilities(list)
                if list.iter().any(|a| matches!(a, Ability::Static { .. })))
        });
        if !statics && !face_down && !counters {
            continue;
        }
        let o: &GameObject = &state.objects[i];
        let in_play = state.in_play(o.id);
        if face_down && o.face_down {
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
                for a in list.iter() {
                    let Ability::Static { class, index, .. } = a else {
                        continue;
                    };
                    let def = &state.content.class_def(*class).statics[*index as usize];
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
                        let ts = granted.map_or(o.timestamp, |g| g.max(o.timestamp));
                        out.push(Candidate::of_static(o, key, def, ts));
                    }
                }
            }
        }
        // Counters where their kind changes something: numbers in the layer that applies
        // counters, a keyword counter's ability where its operation applies (CR 613.1f).
        for (i, p) in o.counters.iter().enumerate() {
            if state.ruleset.counters[p.kind.index()].applies_in(&state.ruleset, layer) {
                out.push(Candidate::counter(o, i, p));
            }
        }
    }
    for e in state.effects() {
        let key = EffectKey::Created(e.id);
        if e.def.has_layer(layer) && !started.contains_key(&key) {
            out.push(Candidate::created(e));
        }
    }
    out
}
