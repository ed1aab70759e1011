//! What changed since a derivation was made: the next derivation works out only what those
//! changes reach.

use crate::model::effect::CreatedEffect;
use crate::model::ids::{ObjectId, PlayerId, PropId};
use crate::model::object::GameObject;
use std::sync::Arc;

/// What changed since a derivation was made.
#[derive(Clone, Debug, Default)]
pub struct Changes {
    /// Objects that existed then and changed since, in id order.
    pub(crate) objects: Vec<ObjectId>,
    /// How many objects there were: those with a higher id are new.
    pub(crate) known: usize,
    /// Those objects as they were, in id order.
    pub(crate) old_objects: Vec<(ObjectId, Arc<GameObject>)>,
    /// The created effects as they were, if they changed.
    pub(crate) old_effects: Option<Vec<Arc<CreatedEffect>>>,
    /// Players' properties that changed, where the layers read them but write none
    /// (`layers::prop_derived`): their derived values are their new base values.
    pub(crate) props: Vec<(PlayerId, PropId)>,
}

impl Changes {
    pub(crate) fn new(known: usize) -> Self {
        Changes {
            known,
            ..Changes::default()
        }
    }

    /// Notes that an object changes; true the first time for an object that existed then (the
    /// caller then keeps it as it was with `keep_old`).
    pub(crate) fn note_object(&mut self, id: ObjectId) -> bool {
        if id.index() >= self.known {
            return false;
        }
        match self.objects.binary_search(&id) {
            Ok(_) => false,
            Err(i) => {
                self.objects.insert(i, id);
                true
            }
        }
    }

    /// Notes that a player's property changed.
    pub(crate) fn note_prop(&mut self, player: PlayerId, prop: PropId) {
        if !self.props.contains(&(player, prop)) {
            self.props.push((player, prop));
        }
    }

    pub(crate) fn keep_old(&mut self, id: ObjectId, o: Arc<GameObject>) {
        if let Err(i) = self.old_objects.binary_search_by_key(&id, |(x, _)| *x) {
            self.old_objects.insert(i, (id, o));
        }
    }

    /// Whether the created effects as they were still need keeping.
    pub(crate) fn wants_old_effects(&self) -> bool {
        self.old_effects.is_none()
    }

    pub(crate) fn keep_old_effects(&mut self, old: Vec<Arc<CreatedEffect>>) {
        if self.old_effects.is_none() {
            self.old_effects = Some(old);
        }
    }

    pub(crate) fn known(&self) -> usize {
        self.known
    }

    pub(crate) fn old_objects(&self) -> &[(ObjectId, Arc<GameObject>)] {
        &self.old_objects
    }

    pub(crate) fn old_effects(&self) -> Option<&[Arc<CreatedEffect>]> {
        self.old_effects.as_deref()
    }

    pub(crate) fn old_object(&self, id: ObjectId) -> Option<&GameObject> {
        self.old_objects
            .binary_search_by_key(&id, |(x, _)| *x)
            .ok()
            .map(|i| &*self.old_objects[i].1)
    }
}
