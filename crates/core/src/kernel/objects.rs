//! Changes to objects: creating, moving, counters, attaching, turning face up or down, merging;
//! and a player's properties.

use crate::model::action::NewObject;
use crate::model::effect::{Change, CreatedEffect, Duration, EffectDef, Locked, Op, OpKind};
use crate::model::ids::SlotTarget;
use crate::model::ids::{CounterId, ObjectId, PlayerId, PropId, ZoneId};
use crate::model::object::{CounterPlacement, GameObject};
use crate::model::value::Value;
use crate::state::GameState;
use std::sync::Arc;

impl GameState {
    /// New objects enter their zones, each with a new timestamp; one entering as a copy takes the
    /// original's copiable values (layer 1a), one entering attached is attached as it enters.
    pub(super) fn create_objects(&mut self, list: Vec<NewObject>) -> Vec<ObjectId> {
        let mut created = Vec::with_capacity(list.len());
        for n in list {
            let id = ObjectId(self.objects.len() as u32);
            let ts = self.new_timestamp();
            let name = n.name.unwrap_or_else(|| self.content.class_name(n.class));
            self.push_object(GameObject {
                id,
                name,
                class: n.class,
                owner: n.owner,
                controller: n.controller.unwrap_or(n.owner),
                zone: n.zone,
                timestamp: ts,
                incarnation: 0,
                counters: Vec::new(),
                attached_to: None,
                choices: n.choices.clone(),
                face_down: n.face_down,
                state: Default::default(),
            });
            created.push(id);
            if let Some(orig) = n.copy_of {
                self.enter_as_copy(id, orig, ts);
            }
            if let Some(to) = n.attached_to {
                self.attach(id, to);
            }
        }
        created
    }

    /// Attaches `object` to `to`. CR 613.7e: a new timestamp when it becomes attached; none if
    /// already attached there. CR 701.3b: an object whose class says what it attaches to does not
    /// move onto an object it could not be attached to.
    pub(super) fn attach(&mut self, object: ObjectId, to: ObjectId) {
        if self.obj(object).attached_to == Some(to) || !self.could_attach(object, to) {
            return;
        }
        let ts = self.new_timestamp();
        self.set_attached(object, Some(to));
        self.object_mut(object).timestamp = ts;
    }

    /// Puts `count` counters of a kind on an object (a negative count takes them off, the latest
    /// placements first).
    pub(super) fn put_counters(&mut self, object: ObjectId, counter: CounterId, count: i64) {
        let def = &self.ruleset.counters[counter.index()];
        let keyword = !def.ops.is_empty();
        let inert = def.ops.is_empty() && def.changes.is_empty();
        if inert && self.content.counters_unseen(&self.ruleset) {
            // Nothing derived reads it: no derivation again (FreeOrion's current meters change
            // thousands of times a turn). Its one placement holds them all.
            match self
                .obj(object)
                .counters
                .iter()
                .position(|p| p.kind == counter)
            {
                Some(i) => {
                    let list = self.counters_unseen_mut(object);
                    let p = &mut list[i];
                    p.count = p.count.saturating_add(count).max(0);
                    if p.count == 0 {
                        list.remove(i);
                    }
                }
                // The first placement: a new timestamp, as below, but no row of base values
                // made again.
                None if count > 0 => {
                    let timestamp = self.new_timestamp();
                    self.counters_unseen_mut(object).push(CounterPlacement {
                        kind: counter,
                        count,
                        timestamp,
                    });
                }
                None => {}
            }
            return;
        }
        if count > 0 {
            let ts = self.new_timestamp();
            let o = self.object_mut(object);
            // Counters of one kind are interchangeable (CR 122.1): a keyword counter's
            // timestamp is the latest time one of its kind was put on the object.
            if keyword {
                for p in o.counters.iter_mut().filter(|p| p.kind == counter) {
                    p.timestamp = ts;
                }
            }
            // A kind no layer applies (a meter's current value, time counters): its
            // placements' timestamps order nothing, so one entry holds them all.
            if inert {
                if let Some(p) = o.counters.iter_mut().find(|p| p.kind == counter) {
                    p.count = p.count.saturating_add(count);
                    return;
                }
            }
            o.counters.push(CounterPlacement {
                kind: counter,
                count,
                timestamp: ts,
            });
        } else {
            // Remove from the latest placements first.
            let mut left = -count;
            let o = self.object_mut(object);
            for p in o.counters.iter_mut().rev().filter(|p| p.kind == counter) {
                let take = left.min(p.count);
                p.count -= take;
                left -= take;
            }
            o.counters.retain(|p| p.count > 0);
        }
    }

    /// Layer 1a (CR 613.2a): an object that enters as a copy takes the copiable values of the
    /// original as they are now; the copy effect has the object's timestamp.
    fn enter_as_copy(&mut self, id: ObjectId, orig: ObjectId, ts: crate::model::ids::Timestamp) {
        let values = crate::layers::copiable_values(self, orig);
        let text = format!("enters as a copy of {}", self.obj(orig).name);
        self.add_copy_effect(id, text, Change::SetValues(Arc::new(values)), ts);
    }

    /// A copy effect (layer 1a) on `id`: copiable values, or merged abilities.
    fn add_copy_effect(
        &mut self,
        id: ObjectId,
        text: String,
        change: Change,
        ts: crate::model::ids::Timestamp,
    ) {
        let target_char = match change {
            Change::MergeAbilities(_) => self.abilities_char,
            _ => self.ruleset.copiable.first().copied(),
        };
        let Some(target_char) = target_char else {
            return;
        };
        let target = SlotTarget::Char(target_char);
        let Some(layer) = self.ruleset.layer_for(target, OpKind::Copy, false) else {
            return;
        };
        let eid = self.next_effect_id;
        self.next_effect_id += 1;
        let inc = self.obj(id).incarnation;
        let name = self.obj(id).name.clone();
        let controller = self.obj(id).controller;
        self.effects_mut().push(Arc::new(CreatedEffect {
            id: eid,
            source: id,
            source_name: name,
            controller,
            timestamp: ts,
            duration: Duration::WhileSourceInPlay,
            def: Arc::new(EffectDef::on_source(
                Arc::from(text.as_str()),
                Op::new(target, change, layer, false),
            )),
            locked: Locked::Objects(vec![(id, inc)]),
            targets: Arc::from(Vec::new()),
            for_good: None,
        }));
    }

    /// Mutate: the merged permanent is `into`; the merged card is attached to it.
    pub(super) fn merge(&mut self, object: ObjectId, into: ObjectId, under: bool) {
        let ts = self.obj(into).timestamp;
        let values = crate::layers::copiable_values(self, object);
        let abilities =
            |vals: &[(crate::model::ids::CharId, Value)]| -> Vec<crate::model::value::Ability> {
                vals.iter()
                    .find_map(|(c, v)| match v {
                        Value::Abilities(a) if Some(*c) == self.abilities_char => Some(a.to_vec()),
                        _ => None,
                    })
                    .unwrap_or_default()
            };
        let name = self.obj(object).name.clone();
        if under {
            let text = format!("merged with {name} under it");
            self.add_copy_effect(into, text, Change::MergeAbilities(abilities(&values)), ts);
        } else {
            let own = abilities(&crate::layers::copiable_values(self, into));
            let text = format!("merged with {name} over it");
            self.add_copy_effect(into, text.clone(), Change::SetValues(Arc::new(values)), ts);
            self.add_copy_effect(into, text, Change::MergeAbilities(own), ts);
        }
        self.set_attached(object, Some(into));
    }

    /// CR 613.7f: a permanent receives a new timestamp when it turns face up or face down.
    pub(super) fn turn_face(&mut self, object: ObjectId, down: bool) {
        if self.obj(object).face_down == down {
            return;
        }
        let ts = self.new_timestamp();
        let o = self.object_mut(object);
        o.face_down = down;
        o.timestamp = ts;
    }

    /// Sets a player's base property value.
    pub(super) fn set_property(&mut self, player: PlayerId, prop: PropId, value: Option<i64>) {
        self.set_property_value(player, prop, Value::Number(value))
    }

    /// Sets a player's base property value, of any kind.
    pub(super) fn set_property_value(&mut self, player: PlayerId, prop: PropId, v: Value) {
        // What the player checks found stays where they read only properties, not this one.
        if !self.content.player_checks_read_props(&self.ruleset)
            || self.content.player_checks_read_prop(&self.ruleset, prop)
        {
            self.players_settled = false;
        }
        if crate::layers::props_written(self) {
            self.touch();
        } else if crate::layers::prop_derived(self, prop) {
            self.prop_read_changes(player, prop);
        } else {
            self.set_derived_property(player, prop, &v);
        }
        Arc::make_mut(&mut self.player_props)[player.index()][prop.index()] = v;
    }

    /// Objects change zones at once: each becomes a new object with a new timestamp, loses its
    /// counters and attachments, returns to its owner's control; what was attached to any of them
    /// falls off, and effects that last while a source is in play end when it leaves (one pass
    /// over the objects and effects, however many move).
    pub(super) fn move_objects(&mut self, moves: &[(ObjectId, ZoneId)]) {
        let mut left_play: Vec<ObjectId> = Vec::new();
        let mut moved: Vec<ObjectId> = Vec::with_capacity(moves.len());
        for &(object, zone) in moves {
            let was_in_play = self.in_play(object);
            let ts = self.new_timestamp();
            let owner = self.obj(object).owner;
            self.set_zone(object, zone);
            self.set_attached(object, None);
            let o = self.object_mut(object);
            o.timestamp = ts;
            o.incarnation += 1;
            o.counters.clear();
            o.controller = owner;
            // A new object: face up, in no state.
            o.face_down = false;
            o.state = Default::default();
            if was_in_play && !self.ruleset.zone_def(zone).in_play {
                left_play.push(object);
            }
            moved.push(object);
        }
        moved.sort_unstable();
        for a in self.attached_to_any(&moved) {
            self.set_attached(a, None);
        }
        left_play.sort_unstable();
        let ends = |e: &Arc<CreatedEffect>| {
            e.duration == Duration::WhileSourceInPlay && left_play.binary_search(&e.source).is_ok()
        };
        if self.effects.iter().any(ends) {
            self.effects_mut().retain(|e| !ends(e));
        }
    }
}
