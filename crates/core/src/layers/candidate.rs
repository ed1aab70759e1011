//! The effects that may apply in a layer: static abilities, created effects, counters and
//! face-down values (CR 613.1), each with its timestamp (CR 613.7), its source and its "you".

use crate::condition::eval::Ctx;
use crate::condition::{Reads, Subject};
use crate::effect::{EffectDef, Locked};
use crate::ids::{ClassId, CounterId, ObjectId, PlayerId, Timestamp};
use crate::state::sheet::Sheet;
use crate::state::GameState;
use crate::value::Value;
use std::sync::Arc;

/// The subjects of an effect, in id order, shared by the places that keep them.
pub(super) type Subjects = Arc<[Subject]>;

/// Identifies an effect across layers within one derivation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) enum EffectKey {
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
pub(super) enum Body {
    Effect(Arc<EffectDef>),
    Counter {
        kind: CounterId,
        count: i64,
    },
    /// The ruleset's face-down values (layer 1b, CR 613.2b).
    FaceDown,
}

#[derive(Clone)]
pub(super) struct Created {
    pub(super) you: PlayerId,
    pub(super) locked: Locked,
    pub(super) targets: Arc<[Subject]>,
}

/// An effect that may apply in the current layer.
#[derive(Clone)]
pub(super) struct Candidate {
    pub(super) key: EffectKey,
    pub(super) body: Body,
    pub(super) timestamp: Timestamp,
    pub(super) defining: bool,
    pub(super) source: Option<ObjectId>,
    pub(super) source_name: Arc<str>,
    /// For created effects: their fixed "you", locked subjects and targets.
    pub(super) created: Option<Created>,
}

impl Candidate {
    /// The effect of an object's `i`-th counter placement (in the layer that applies counters).
    pub(super) fn counter(
        o: &crate::object::GameObject,
        i: usize,
        p: &crate::object::CounterPlacement,
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

    /// An effect created by a resolved spell or a response, with its fixed "you", locked subjects
    /// and targets.
    pub(super) fn created(e: &crate::effect::CreatedEffect) -> Self {
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
