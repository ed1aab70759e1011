//! What an effect reads and writes (its footprint): the characteristics its existence, subjects
//! and values read, and how it changes each it writes in a layer. The dependency test (CR 613.8)
//! and the order trials of a replay compare them.

use super::change::{counter_numbers, counter_ops};
use super::dependency::sees_target;
use crate::model::condition::{Cell, Footprint};
use crate::model::effect::{Affects, Change, EffectDef};
use crate::model::ids::{CharId, LayerId, ObjectId, SlotTarget};
use crate::model::trail::Touch;
use crate::model::trail::{Body, Candidate};
use crate::state::GameState;

impl Candidate {
    /// Every characteristic this effect's existence, subjects and values read.
    pub(super) fn reads(&self, state: &GameState, controller: Option<CharId>) -> Footprint {
        let mut f = self.scan_reads(state, controller);
        if let Body::Effect(def) = &self.body {
            if let Some(w) = &def.while_cond {
                w.reads(controller, &mut f);
            }
            if self.created.is_none() {
                // A static ability exists while its source has it; "you" is its controller.
                if let Some(a) = state.abilities_char {
                    f.add_name(a, def.ability_name().clone());
                }
                if let Some(c) = controller {
                    f.add_char(c);
                }
            }
        }
        f
    }

    /// What the tests of whom this effect applies to, and its values, read.
    pub(super) fn scan_reads(&self, state: &GameState, controller: Option<CharId>) -> Footprint {
        let mut f = Footprint::default();
        if let Body::Effect(def) = &self.body {
            def_scan_reads(def, state, controller, &mut f);
        }
        f
    }

    /// How this effect changes each characteristic or property it writes in `layer`.
    pub(super) fn touches(&self, state: &GameState, layer: LayerId) -> Vec<(SlotTarget, Touch)> {
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
                        // The abilities its symbols give or take away (CR 305.7).
                        Change::WithIntrinsic { change, .. } => {
                            if let Some(t) = intrinsic_touch(state, op.target, change) {
                                if let Some(a) = state.abilities_char {
                                    add(SlotTarget::Char(a), t);
                                }
                            }
                        }
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
                for (c, _) in counter_numbers(state, *kind, layer) {
                    add(SlotTarget::Char(*c), Touch::Any);
                }
                for op in counter_ops(state, *kind, layer) {
                    add(op.target, Touch::of(&op.change));
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
    pub(super) fn writes(&self, state: &GameState, layer: LayerId) -> Footprint {
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
                        Change::WithIntrinsic { change, .. }
                            if intrinsic_touch(state, op.target, change).is_some() =>
                        {
                            if let Some(a) = state.abilities_char {
                                add(SlotTarget::Char(a));
                            }
                        }
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
                for (c, _) in counter_numbers(state, *kind, layer) {
                    add(SlotTarget::Char(*c));
                }
                for op in counter_ops(state, *kind, layer) {
                    add(op.target);
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
    pub(super) fn label(&self, state: &GameState) -> String {
        match &self.body {
            Body::Effect(_) => self.source_name.to_string(),
            Body::Counter { .. } => format!("{}'s {}", self.source_name, self.text(state)),
            Body::FaceDown => format!("{} being face down", self.source_name),
        }
    }

    pub(super) fn text(&self, state: &GameState) -> String {
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

/// How a change to `target` changes abilities through the symbols that give them (CR 305.6-305.7),
/// if it does (`Touch::of_intrinsic`).
fn intrinsic_touch(state: &GameState, target: SlotTarget, change: &Change) -> Option<Touch> {
    let SlotTarget::Char(ch) = target else {
        return None;
    };
    let intrinsic = state.ruleset.intrinsic_of(ch)?;
    Touch::of_intrinsic(intrinsic, change)
}

/// The objects whose cells these are; `None` if a player's property is among them.
pub(super) fn objects_of(cells: &[(Cell, Touch)]) -> Option<Vec<ObjectId>> {
    let mut v = cells
        .iter()
        .map(|(c, _)| match c {
            Cell::Object(o, _) => Some(*o),
            Cell::Player(..) => None,
        })
        .collect::<Option<Vec<_>>>()?;
    v.sort();
    v.dedup();
    Some(v)
}

/// Whether an effect reading `reads` may see a change made as `touches` describes: a read of
/// whether a characteristic holds some symbols sees only changes to those symbols (a Goblin lord
/// does not wait for an effect that makes Goblins Zombies too).
pub(super) fn may_read(reads: &Footprint, touches: &[(SlotTarget, Touch)]) -> bool {
    touches
        .iter()
        .any(|(t, touch)| sees_target(reads, *t, touch))
}

/// What the tests of whom an effect applies to, and its values, read.
pub(crate) fn def_scan_reads(
    def: &EffectDef,
    state: &GameState,
    controller: Option<CharId>,
    f: &mut Footprint,
) {
    match &def.affects {
        Affects::Objects(c) | Affects::Players(c) => c.reads(controller, f),
    }
    for op in &def.ops {
        match &op.change {
            Change::SetNumber(e) | Change::Modify(e) => e.reads(controller, f),
            Change::TextOf(_) => state.ruleset.copiable.iter().for_each(|c| f.add_char(*c)),
            Change::AbilitiesPer { of, among, .. } => {
                f.add_char(*of);
                among.reads(controller, f);
            }
            // The abilities of the objects it reads them from.
            Change::AbilitiesOf { among, .. } => {
                if let SlotTarget::Char(c) = op.target {
                    f.add_char(c);
                }
                among.reads(controller, f);
            }
            // Whether the subject is a land (CR 305.6).
            Change::WithIntrinsic { makes: None, .. } => {
                if let Some(i) = match op.target {
                    SlotTarget::Char(ch) => state.ruleset.intrinsic_of(ch),
                    SlotTarget::Prop(_) => None,
                } {
                    f.add_name(i.when.0, i.when.1.clone());
                }
            }
            _ => {}
        }
    }
}
