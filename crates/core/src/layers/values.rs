//! A state's derived values: worked out when first read, shared by its clones, and after a change
//! worked out again from the last derivation for what the change reaches; an object's copiable
//! values.

use super::derive::{derive, derive_layers};
use super::incremental::derive_after;
use crate::model::derived::Derived;
use crate::model::error::ActionError;
use crate::model::ids::{CharId, ObjectId, PlayerId, PropId};
use crate::model::value::Value;
use crate::state::GameState;
use std::sync::Arc;

/// The copiable values of an object now: its values after the copy and face-down layers
/// (CR 613.2c; Cranial Insertion, "Order of Operations", 2020, layer 1b: "The copiable values of
/// an object are the end result of applying layers 1a and 1b").
pub fn copiable_values(state: &GameState, o: ObjectId) -> Vec<(CharId, Value)> {
    let d = derive_layers(state, state.ruleset.copiable_layers(), false);
    state
        .ruleset
        .copiable
        .iter()
        .map(|c| (*c, d.sheet.objects[o.index()][c.index()].clone()))
        .collect()
}

impl GameState {
    /// Characteristics of every object and properties of every player after all layers, computed
    /// once per state and shared by its clones until the state changes.
    pub fn derived(&self) -> &Derived {
        self.derived.get_or_init(|| {
            Arc::new(match &self.since {
                Some(since) => derive_after(self, since.derived.clone(), &since.changes),
                None => derive(self, false),
            })
        })
        // (A state that is only read keeps `since`: its clones may still start from it.)
    }

    /// Derives now if the values are not known, starting from the last derivation where there is
    /// one; a derivation this state alone holds is worked on in place rather than copied.
    pub(crate) fn refresh(&mut self) {
        if self.derived.get().is_some() {
            return;
        }
        let d = match self.since.take() {
            Some(since) => {
                self.settled_before = since.settled;
                derive_after(self, since.derived, &since.changes)
            }
            None => {
                self.settled_before = false;
                derive(self, false)
            }
        };
        let _ = self.derived.set(Arc::new(d));
    }

    /// The derived values with an explanation of every effect that applied.
    pub fn explain(&self) -> Derived {
        derive(self, true)
    }

    /// An object's derived characteristic, or an error naming the bad id.
    pub fn characteristic(&self, o: ObjectId, c: CharId) -> Result<&Value, ActionError> {
        self.object(o)?;
        if c.index() >= self.ruleset.characteristics.len() {
            return Err(ActionError::NoSuchCharacteristic(c.0));
        }
        Ok(&self.derived().sheet.objects[o.index()][c.index()])
    }

    /// A player's derived property, or an error naming the bad id.
    pub fn property(&self, p: PlayerId, prop: PropId) -> Result<&Value, ActionError> {
        if p.index() >= self.players.len() {
            return Err(ActionError::NoSuchPlayer(p.0));
        }
        if prop.index() >= self.ruleset.props.len() {
            return Err(ActionError::NoSuchProperty(prop.0));
        }
        Ok(&self.derived().sheet.players[p.index()][prop.index()])
    }

    /// The objects to test with the state-based checks: those whose values the latest changes may
    /// have reached, where the checks were all clear before them and each tests only its object
    /// (and the one it is attached to); `None` for all.
    pub(crate) fn to_check(&self) -> Option<Vec<ObjectId>> {
        if !self.settled_before {
            return None;
        }
        self.changed_under_local_checks()
    }

    /// The objects whose values the latest changes may have reached, and those attached to them,
    /// where each state-based check tests only its own object and the one it is attached to (an
    /// Aura is checked again when the creature it enchants changes); `None` for all.
    pub(crate) fn changed_under_local_checks(&self) -> Option<Vec<ObjectId>> {
        if !self.content.checks_read_locally(&self.ruleset) {
            return None;
        }
        let changed = self.derived().changed.as_deref()?;
        let attached = self.attached_to_any(changed);
        if attached.is_empty() {
            return Some(changed.to_vec());
        }
        let mut all = changed.to_vec();
        all.extend(attached);
        all.sort_unstable();
        all.dedup();
        Some(all)
    }
}
