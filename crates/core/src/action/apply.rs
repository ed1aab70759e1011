//! Carrying out an action: checked in full first, then made through the event core, then the
//! state-based checks.

use super::{Action, Outcome};
use crate::condition::eval::Ctx;
use crate::condition::Subject;
use crate::content::OneShot;
use crate::decision::{Choice, DecisionRequest};
use crate::effect::TurnOf;
use crate::effect::{
    Affects, Change, CopySource, CreatedEffect, Duration, EffectDef, Locked, Op, OpKind,
};
use crate::error::ActionError;
use crate::ids::SlotTarget;
use crate::ids::{CounterId, ObjectId, PlayerId, PropId, ZoneId};
use crate::layers::subjects;
use crate::object::{CounterPlacement, GameObject};
use crate::state::GameState;
use crate::value::Value;
use std::sync::Arc;

impl GameState {
    /// An object of this game, and a zone of its ruleset, to move it to.
    pub(crate) fn check_move(&self, o: ObjectId, zone: ZoneId) -> Result<(), ActionError> {
        self.check_object(o)?;
        if zone.index() >= self.ruleset.zones.len() {
            return Err(ActionError::NoSuchObject(o.0));
        }
        Ok(())
    }

    pub(crate) fn check_object(&self, o: ObjectId) -> Result<(), ActionError> {
        if o.index() < self.objects.len() {
            Ok(())
        } else {
            Err(ActionError::NoSuchObject(o.0))
        }
    }

    fn check_player(&self, p: PlayerId) -> Result<(), ActionError> {
        if p.index() < self.players.len() {
            Ok(())
        } else {
            Err(ActionError::NoSuchPlayer(p.0))
        }
    }

    /// Applies an action, then the state-based checks. On error nothing has changed. Entering,
    /// moving, counters and attaching are occurrences of the built-in events (`enters`,
    /// `changes_zone`, `leaves_play`, `counters_placed`, `attached`): they go through their timing
    /// points, so that they can be answered, prevented and logged.
    pub fn apply(&mut self, action: Action) -> Result<Outcome, ActionError> {
        if self.pending.is_some() {
            return Err(ActionError::DecisionPending);
        }
        if !self.timing.is_idle() {
            return Err(ActionError::BadOccurrence(
                "an occurrence is under way: answer its decisions first".into(),
            ));
        }
        self.apply_through_events(action)
    }

    /// Checks an action in full against the state as it stands: every id it names, and what the
    /// action itself requires (an object is not attached to itself; a spell's targets are legal,
    /// CR 608.2b). Nothing changes.
    pub(crate) fn check_action(&self, action: &Action) -> Result<(), ActionError> {
        match action {
            Action::Create(list) => {
                for n in list {
                    if let Some(o) = n.copy_of {
                        self.check_object(o)?;
                    }
                    if let Some(o) = n.attached_to {
                        self.check_object(o)?;
                    }
                    self.check_player(n.owner)?;
                    if let Some(c) = n.controller {
                        self.check_player(c)?;
                    }
                    if n.class.index() >= self.content.classes.len()
                        || n.zone.index() >= self.ruleset.zones.len()
                    {
                        return Err(ActionError::NoSuchObject(n.class.0));
                    }
                }
            }
            Action::Move { object, zone } => self.check_move(*object, *zone)?,
            Action::MoveTogether(moves) => {
                for (o, z) in moves {
                    self.check_move(*o, *z)?;
                }
            }
            Action::Attach { object: a, to: b }
            | Action::Merge {
                object: a, into: b, ..
            } => {
                self.check_object(*a)?;
                self.check_object(*b)?;
                if a == b {
                    return Err(ActionError::AttachToSelf(self.obj(*a).name.to_string()));
                }
            }
            Action::AddCounters {
                object, counter, ..
            } => {
                self.check_object(*object)?;
                if counter.index() >= self.ruleset.counters.len() {
                    return Err(ActionError::NoSuchObject(object.0));
                }
            }
            Action::Resolve { .. } => return self.check_action(&action.clone().targeting()),
            Action::ResolveTargeting {
                spell,
                controller,
                targets,
                ..
            } => self.check_resolve(*spell, *controller, targets)?,
            Action::TurnFaceDown { object }
            | Action::TurnFaceUp { object }
            | Action::EndEffectsOf { source: object } => self.check_object(*object)?,
            Action::SetProperty { player, prop, .. } => {
                self.check_player(*player)?;
                if prop.index() >= self.ruleset.props.len() {
                    return Err(ActionError::NoSuchProperty(prop.0));
                }
            }
            Action::EndTurn => {}
        }
        Ok(())
    }

    /// The action's own change (checked in full first), then the state-based checks.
    pub(crate) fn apply_now(&mut self, action: Action) -> Result<Outcome, ActionError> {
        let illegal = match &action {
            // As it resolves, a target may have become illegal (CR 608.2b): checked in full when
            // the action began.
            Action::ResolveTargeting {
                spell,
                controller,
                targets,
                ..
            } => self.illegal_targets(*spell, *controller, targets)?,
            a => {
                self.check_action(a)?;
                Vec::new()
            }
        };
        let mut out = Outcome::default();
        match action {
            Action::Create(list) => {
                let into_play = list
                    .iter()
                    .filter(|n| self.ruleset.zone(n.zone).in_play)
                    .count();
                for n in list {
                    let id = ObjectId(self.objects.len() as u32);
                    let ts = self.new_timestamp();
                    let name = n
                        .name
                        .unwrap_or_else(|| Arc::from(self.content.class(n.class).name.as_str()));
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
                    out.created.push(id);
                    if let Some(orig) = n.copy_of {
                        self.enter_as_copy(id, orig, ts);
                    }
                    if let Some(to) = n.attached_to {
                        self.attach(id, to);
                    }
                }
                if into_play > 1 {
                    self.pending = Some(Arc::new(DecisionRequest::OrderTimestamps {
                        player: self.active,
                        objects: out
                            .created
                            .iter()
                            .copied()
                            .filter(|o| self.in_play(*o))
                            .collect(),
                    }));
                    return Ok(out);
                }
            }
            Action::Move { object, zone } => self.move_object(object, zone),
            Action::MoveTogether(moves) => self.move_objects(&moves),
            Action::Attach { object, to } => self.attach(object, to),
            Action::AddCounters {
                object,
                counter,
                count,
            } => self.put_counters(object, counter, count),
            a @ Action::Resolve { .. } => return self.apply_now(a.targeting()),
            Action::ResolveTargeting {
                spell,
                controller,
                targets,
                choices,
            } => {
                if !choices.is_empty() {
                    self.object_mut(spell).choices = choices;
                }
                out.then = self.resolve(spell, controller, &targets, &illegal);
                if !out.then.is_empty() && self.ruleset.builtin.is_some() {
                    // State-based checks wait for the one-shot changes (CR 704.3: not while a
                    // spell resolves); each runs them after its own change.
                    return Ok(out);
                }
                for next in std::mem::take(&mut out.then) {
                    let more = self.apply_now(next)?;
                    out.absorb(more);
                }
            }
            Action::TurnFaceDown { object } => self.turn_face(object, true),
            Action::TurnFaceUp { object } => self.turn_face(object, false),
            Action::Merge {
                object,
                into,
                under,
            } => self.merge(object, into, under),
            Action::EndEffectsOf { source } => {
                if self.effects.iter().any(|e| e.source == source) {
                    self.effects_mut().retain(|e| e.source != source);
                }
            }
            Action::SetProperty {
                player,
                prop,
                value,
            } => self.set_property(player, prop, value),
            Action::EndTurn => {
                self.touch();
                self.end_of_turn();
                self.active = PlayerId(((self.active.0 as usize + 1) % self.players.len()) as u8);
                self.turn += 1;
                // "Until your next turn", "until its controller's next untap step": that player's
                // turn, whose first step is the untap step, begins.
                let active = self.active;
                self.effects
                    .retain(|e| e.duration != Duration::UntilTurnOfPlayer(active));
            }
        }
        self.run_state_checks(&mut out)?;
        Ok(out)
    }

    /// Answers the pending decision.
    pub fn decide(&mut self, choice: Choice) -> Result<Outcome, ActionError> {
        let Some(req) = self.pending.clone() else {
            return Err(ActionError::NoDecisionPending);
        };
        if !matches!(&*req, DecisionRequest::OrderTimestamps { .. }) {
            // A decision of the timing procedure: checked, then the occurrence goes on. On an
            // error nothing has changed.
            let mut next = self.clone();
            next.decide_timing(choice)?;
            *self = next;
            return Ok(Outcome::default());
        }
        match (&*req, choice) {
            (DecisionRequest::OrderTimestamps { objects, .. }, Choice::Order(order)) => {
                let mut a = objects.clone();
                let mut b = order.clone();
                a.sort();
                b.sort();
                if a != b {
                    return Err(ActionError::BadChoice(
                        "the order must list each object of the request exactly once".into(),
                    ));
                }
                for o in order {
                    let ts = self.new_timestamp();
                    self.object_mut(o).timestamp = ts;
                }
            }
            (_, c) => {
                return Err(ActionError::BadChoice(format!(
                    "{c:?} does not answer this request: expected an order of the objects"
                )));
            }
        }
        self.pending = None;
        let mut out = Outcome::default();
        self.run_state_checks(&mut out)?;
        // The objects that entered together now go through "after they enter".
        self.run_timing()?;
        Ok(out)
    }

    /// Attaches `object` to `to`. CR 613.7e: a new timestamp when it becomes attached; none if
    /// already attached there. CR 701.3b: an object whose class says what it attaches to does not
    /// move onto an object it could not be attached to.
    fn attach(&mut self, object: ObjectId, to: ObjectId) {
        if self.obj(object).attached_to == Some(to) || !self.could_attach(object, to) {
            return;
        }
        let ts = self.new_timestamp();
        self.set_attached(object, Some(to));
        self.object_mut(object).timestamp = ts;
    }

    /// Whether `object` could be attached to `to`: its class's `attaches to:` condition holds for
    /// `to`, tested with `object` as the source and its controller as "you" (CR 303.4, 301.5).
    /// False for an id that names no object.
    pub fn could_attach(&self, object: ObjectId, to: ObjectId) -> bool {
        if self.get_object(object).is_none() || self.get_object(to).is_none() {
            return false;
        }
        let free = self
            .content
            .class(self.obj(object).class)
            .attaches_to
            .is_none();
        if free {
            return object != to;
        }
        Ctx::new(self, &self.derived().sheet, None, None, &[]).could_attach(object, to)
    }

    /// Puts `count` counters of a kind on an object (a negative count takes them off, the latest
    /// placements first).
    pub(crate) fn put_counters(&mut self, object: ObjectId, counter: CounterId, count: i64) {
        let keyword = !self.ruleset.counters[counter.index()].ops.is_empty();
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
    fn enter_as_copy(&mut self, id: ObjectId, orig: ObjectId, ts: crate::ids::Timestamp) {
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
        ts: crate::ids::Timestamp,
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
            def: Arc::new(EffectDef {
                text: Arc::from(text.as_str()),
                affects: Affects::Objects(crate::condition::Cond::IsSource),
                while_cond: None,
                defining: false,
                ops: vec![Op {
                    target,
                    change,
                    layer,
                    continuous: false,
                }],
                zones: Vec::new(),
                affects_text: Default::default(),
                text_symbol: Default::default(),
                counts_counters: Default::default(),
            }),
            locked: Locked::Objects(vec![(id, inc)]),
            targets: Arc::from(Vec::new()),
        }));
    }

    /// Mutate: the merged permanent is `into`; the merged card is attached to it.
    fn merge(&mut self, object: ObjectId, into: ObjectId, under: bool) {
        let ts = self.obj(into).timestamp;
        let values = crate::layers::copiable_values(self, object);
        let abilities = |vals: &[(crate::ids::CharId, Value)]| -> Vec<crate::value::Ability> {
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
    fn turn_face(&mut self, object: ObjectId, down: bool) {
        if self.obj(object).face_down == down {
            return;
        }
        let ts = self.new_timestamp();
        let o = self.object_mut(object);
        o.face_down = down;
        o.timestamp = ts;
    }

    /// Sets a player's base property value.
    pub(crate) fn set_property(&mut self, player: PlayerId, prop: PropId, value: Option<i64>) {
        self.touch();
        Arc::make_mut(&mut self.player_props)[player.index()][prop.index()] = Value::Number(value);
    }

    pub(crate) fn move_object(&mut self, object: ObjectId, zone: ZoneId) {
        self.move_objects(&[(object, zone)]);
    }

    /// Objects change zones at once: each becomes a new object with a new timestamp, loses its
    /// counters and attachments, returns to its owner's control; what was attached to any of them
    /// falls off, and effects that last while a source is in play end when it leaves (one pass
    /// over the objects and effects, however many move).
    fn move_objects(&mut self, moves: &[(ObjectId, ZoneId)]) {
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
            if was_in_play && !self.ruleset.zone(zone).in_play {
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

    /// A copy effect written "copy of target" takes the target's copiable values now.
    fn snapshot_copies(&self, def: &Arc<EffectDef>, targets: &[Subject]) -> Arc<EffectDef> {
        if !def
            .ops
            .iter()
            .any(|o| matches!(o.change, Change::CopyOf(_)))
        {
            return def.clone();
        }
        let mut d = (**def).clone();
        d.counts_counters = Default::default();
        for op in &mut d.ops {
            let from = match op.change {
                Change::CopyOf(CopySource::Target) => first_object(targets),
                Change::CopyOf(CopySource::TargetAt(i)) => match targets.get(i as usize) {
                    Some(Subject::Object(o)) => Some(*o),
                    _ => None,
                },
                _ => continue,
            };
            let values = from
                .map(|t| crate::layers::copiable_values(self, t))
                .unwrap_or_default();
            op.change = Change::SetValues(Arc::new(values));
        }
        Arc::new(d)
    }

    /// Checks that a spell can be cast or resolve with these targets: it has a spell ability, it
    /// takes as many targets, and each is legal for its own `target` line (CR 601.2c: the same
    /// object or player may be the target of different instances of the word "target").
    pub(crate) fn check_resolve(
        &self,
        spell: ObjectId,
        controller: PlayerId,
        targets: &[Subject],
    ) -> Result<(), ActionError> {
        match self.illegal_targets(spell, controller, targets)?.first() {
            Some(&i) => Err(self.illegal_target(spell, targets[i])),
            None => Ok(()),
        }
    }

    pub(crate) fn illegal_target(&self, spell: ObjectId, t: Subject) -> ActionError {
        ActionError::IllegalTarget {
            spell: self.obj(spell).name.to_string(),
            target: match t {
                Subject::Object(o) => self.obj(o).name.to_string(),
                Subject::Player(p) => self.player_name(p).to_string(),
            },
        }
    }

    /// The indexes of the spell's targets that are not legal now (CR 608.2b), after checking the
    /// spell and the ids it names: an error if it has no spell ability or takes another number of
    /// targets.
    pub(crate) fn illegal_targets(
        &self,
        spell: ObjectId,
        controller: PlayerId,
        targets: &[Subject],
    ) -> Result<Vec<usize>, ActionError> {
        self.check_object(spell)?;
        self.check_player(controller)?;
        for t in targets {
            match t {
                Subject::Object(o) => self.check_object(*o)?,
                Subject::Player(p) => self.check_player(*p)?,
            }
        }
        let name = &self.obj(spell).name;
        let Some(sp) = &self.content.class(self.obj(spell).class).spell else {
            return Err(ActionError::NotASpell(name.to_string()));
        };
        let expected = sp.targets.len();
        if targets.len() != expected {
            return Err(ActionError::WrongTargetCount {
                spell: name.to_string(),
                expected,
                got: targets.len(),
            });
        }
        let ctx = Ctx::new(
            self,
            &self.derived().sheet,
            Some(spell),
            Some(controller),
            targets,
        );
        Ok(sp
            .targets
            .iter()
            .zip(targets)
            .enumerate()
            .filter(|(_, (spec, t))| !ctx.test(&spec.cond, **t))
            .map(|(i, _)| i)
            .collect())
    }

    /// A spell resolves: its effects start, locked against the state as it stands; returns its
    /// one-shot changes and its move to the zone for resolved spells, in order, as the actions
    /// that come next. CR 608.2b: it does nothing to a target that is no longer legal (`illegal`,
    /// by index; its other targets are still affected; with every target illegal it does not
    /// resolve at all, which the caller checks first).
    fn resolve(
        &mut self,
        spell: ObjectId,
        controller: PlayerId,
        targets: &[Subject],
        illegal: &[usize],
    ) -> Vec<Action> {
        let name = self.obj(spell).name.clone();
        let class = self.obj(spell).class;
        let content = self.content.clone();
        let Some(sp) = &content.class(class).spell else {
            return Vec::new();
        };
        // CR 608.2b: the targets no longer legal (`illegal`, by index), unless also legal as
        // another of its targets.
        let legal = |t: &Subject| {
            targets
                .iter()
                .enumerate()
                .any(|(i, x)| x == t && !illegal.contains(&i))
        };
        let gone: Vec<Subject> = illegal
            .iter()
            .map(|i| targets[*i])
            .filter(|t| !legal(t))
            .collect();
        let mut created = Vec::new();
        {
            let ctx = Ctx::new(
                self,
                &self.derived().sheet,
                Some(spell),
                Some(controller),
                targets,
            );
            for (duration, def) in &sp.effects {
                let mut subs = subjects(&ctx, &def.affects);
                let (Affects::Objects(c) | Affects::Players(c)) = &def.affects;
                if c.uses_targets() {
                    subs.retain(|s| !gone.contains(s));
                }
                let locked = self.locked(&def.affects, &subs);
                let duration = duration_for(duration, controller, || {
                    first_object(targets).and_then(|o| ctx.controller_of(o))
                });
                let def = self.snapshot_copies(def, targets);
                created.push((duration, fix_numbers(&ctx, &def, &subs), locked));
            }
        }
        // CR 613.7b: an effect from a resolving spell receives a timestamp when it is created.
        for (duration, def, locked) in created {
            let ts = self.new_timestamp();
            let id = self.next_effect_id;
            self.next_effect_id += 1;
            self.effects_mut().push(Arc::new(CreatedEffect {
                id,
                source: spell,
                source_name: name.clone(),
                controller,
                timestamp: ts,
                duration,
                def,
                locked,
                targets: Arc::from(targets),
            }));
        }
        let objects: Vec<ObjectId> = targets
            .iter()
            .filter(|t| !gone.contains(t))
            .filter_map(|t| object_of(*t))
            .collect();
        let at = |i: &u8| {
            targets
                .get(*i as usize)
                .filter(|_| !illegal.contains(&(*i as usize)))
                .and_then(|t| object_of(*t))
        };
        let turn = |object: ObjectId, face_down: bool| {
            if face_down {
                Action::TurnFaceDown { object }
            } else {
                Action::TurnFaceUp { object }
            }
        };
        let mut then = Vec::new();
        for os in &sp.one_shots {
            match os {
                OneShot::MoveTargets(z) => {
                    if !objects.is_empty() {
                        then.push(Action::MoveTogether(
                            objects.iter().map(|t| (*t, *z)).collect(),
                        ));
                    }
                }
                OneShot::TurnTargets { face_down } => {
                    then.extend(objects.iter().map(|t| turn(*t, *face_down)));
                }
                OneShot::MoveTargetAt(i, z) => {
                    if let Some(t) = at(i) {
                        then.push(Action::Move {
                            object: t,
                            zone: *z,
                        });
                    }
                }
                OneShot::TurnTargetAt { index, face_down } => {
                    if let Some(t) = at(index) {
                        then.push(turn(t, *face_down));
                    }
                }
                OneShot::PutCounters { counter, count } => {
                    then.extend(objects.iter().map(|t| Action::AddCounters {
                        object: *t,
                        counter: *counter,
                        count: *count,
                    }));
                }
            }
        }
        if let Some(z) = self.ruleset.resolved_zone {
            if self.obj(spell).zone != z {
                then.push(Action::Move {
                    object: spell,
                    zone: z,
                });
            }
        }
        then
    }

    /// Runs the ruleset's state-based checks until none applies; all objects a round finds move at
    /// once. Effects "for as long as" something that no longer holds end first, in every round.
    pub(crate) fn run_state_checks(&mut self, out: &mut Outcome) -> Result<(), ActionError> {
        let rs = self.ruleset.clone();
        for round in 0..1000 {
            let lapsed = self.end_lapsed_effects();
            let mut moves: Vec<(ObjectId, Option<ZoneId>, String)> = Vec::new();
            self.refresh();
            // After a change that reached only some objects, only those can newly fail a check:
            // the others passed before it (or, after the first round, in the round before).
            let only: Option<Vec<ObjectId>> = if round == 0 {
                self.to_check()
            } else {
                self.changed_under_local_checks()
            };
            let all: Vec<ObjectId>;
            let objects: &[ObjectId] = match &only {
                Some(l) => l,
                None => {
                    all = self.object_ids().collect();
                    &all
                }
            };
            {
                let ctx = Ctx::new(self, &self.derived().sheet, None, None, &[]);
                for &o in objects {
                    if !self.in_play(o) {
                        continue;
                    }
                    if let Some(c) = rs
                        .state_checks
                        .iter()
                        .find(|c| ctx.test(&c.condition, Subject::Object(o)))
                    {
                        moves.push((o, c.to_zone, c.name.clone()));
                    }
                }
            }
            if moves.is_empty() && !lapsed {
                self.settled = true;
                return Ok(());
            }
            // Objects that move, move at once; an Equipment that is unattached stays where it is
            // (CR 704.5n).
            let list: Vec<(ObjectId, ZoneId)> = moves
                .iter()
                .filter_map(|(o, z, _)| z.map(|z| (*o, z)))
                .collect();
            for (o, z, _) in &moves {
                if z.is_none() {
                    self.set_attached(*o, None);
                }
            }
            for (o, _, name) in moves {
                out.state_checks.push((o, name));
            }
            // The moves are occurrences (a creature put into a graveyard from play can be
            // answered): they happen as the event core takes them, and their change runs the
            // next round of checks.
            if !list.is_empty() && self.ruleset.builtin.is_some() {
                return self.state_moves(list);
            }
            self.move_objects(&list);
        }
        Err(ActionError::StateChecksLoop)
    }
}

impl GameState {
    /// Whom a created effect applies to from now on: these objects as they are now (a new object,
    /// once one changes zones) or these players (CR 611.2c).
    pub(crate) fn locked(&self, affects: &Affects, subs: &[Subject]) -> Locked {
        match affects {
            Affects::Objects(_) => Locked::Objects(
                subs.iter()
                    .filter_map(|s| match s {
                        Subject::Object(o) => Some((*o, self.obj(*o).incarnation)),
                        Subject::Player(_) => None,
                    })
                    .collect(),
            ),
            Affects::Players(_) => Locked::Players(
                subs.iter()
                    .filter_map(|s| match s {
                        Subject::Player(p) => Some(*p),
                        Subject::Object(_) => None,
                    })
                    .collect(),
            ),
        }
    }
}

/// A created effect's duration with its player decided: "until your next turn" is `you`'s, "until
/// its controller's next turn" that of the controller of its first object target (`you` without
/// one).
pub(crate) fn duration_for(
    d: &Duration,
    you: PlayerId,
    its_controller: impl FnOnce() -> Option<PlayerId>,
) -> Duration {
    match d {
        Duration::UntilTurnOf(TurnOf::You) => Duration::UntilTurnOfPlayer(you),
        Duration::UntilTurnOf(TurnOf::ItsController) => {
            Duration::UntilTurnOfPlayer(its_controller().unwrap_or(you))
        }
        d => d.clone(),
    }
}

fn object_of(s: Subject) -> Option<ObjectId> {
    match s {
        Subject::Object(o) => Some(o),
        Subject::Player(_) => None,
    }
}

/// The first target that is an object.
fn first_object(targets: &[Subject]) -> Option<ObjectId> {
    targets.iter().find_map(|t| object_of(*t))
}

/// CR 608.2h, 611.2c: a resolving spell's effect works out its numbers once, as it resolves, for
/// each subject it locked ("+X/+0 where X is its power"); those written `continuously`, and
/// written numbers, are left as they are. A subtraction stays one (it is ordered as a decrease).
pub(crate) fn fix_numbers(ctx: &Ctx, def: &Arc<EffectDef>, subjects: &[Subject]) -> Arc<EffectDef> {
    use crate::condition::NumExpr;
    let fix = |e: &NumExpr| -> Option<NumExpr> {
        if e.is_constant() {
            return None;
        }
        let inner = match e {
            NumExpr::Neg(a) if !a.is_constant() => a,
            _ => e,
        };
        let values: Vec<(Subject, Option<i64>)> =
            subjects.iter().map(|s| (*s, ctx.eval(inner, *s))).collect();
        let fixed = NumExpr::Fixed(Arc::from(values));
        Some(match e {
            NumExpr::Neg(a) if !a.is_constant() => NumExpr::Neg(Box::new(fixed)),
            _ => fixed,
        })
    };
    let mut out: Option<EffectDef> = None;
    for (i, op) in def.ops.iter().enumerate() {
        if op.continuous {
            continue;
        }
        let fixed = match &op.change {
            Change::SetNumber(e) => fix(e).map(Change::SetNumber),
            Change::Modify(e) => fix(e).map(Change::Modify),
            _ => None,
        };
        if let Some(c) = fixed {
            let d = out.get_or_insert_with(|| (**def).clone());
            d.ops[i].change = c;
            d.counts_counters = Default::default();
        }
    }
    out.map_or_else(|| def.clone(), Arc::new)
}
