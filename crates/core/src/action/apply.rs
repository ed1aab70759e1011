//! Carrying out an action: checked in full first, then made through the event core, then the
//! state-based checks.

use crate::condition::eval::Ctx;
use crate::layers::subjects;
use crate::model::action::{Action, Outcome};
use crate::model::condition::Subject;
use crate::model::content::OneShot;
use crate::model::decision::{Choice, DecisionRequest};
use crate::model::effect::TurnOf;
use crate::model::effect::{
    Affects, Change, CopySource, CreatedEffect, Duration, EffectDef, Locked,
};
use crate::model::error::ActionError;
use crate::model::ids::{ObjectId, PlayerId, ZoneId};
use crate::state::GameState;
use std::sync::Arc;

impl GameState {
    /// An object of this game, and a zone of its ruleset, to move it to.
    pub(crate) fn check_move(&self, o: ObjectId, zone: ZoneId) -> Result<(), ActionError> {
        self.check_object(o)?;
        if zone.index() >= self.ruleset.zones.len() {
            return Err(ActionError::NoSuchZone(zone.0));
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

    /// Applies an action, then the state-based checks. On error nothing has changed. Entering,
    /// moving, counters and attaching are occurrences of the built-in events (`enters`,
    /// `changes_zone`, `leaves_play`, `counters_placed`, `attached`): they go through their timing
    /// points, so that they can be answered, prevented and logged.
    pub fn apply(&mut self, action: Action) -> Result<Outcome, ActionError> {
        if self.is_over() {
            return Err(ActionError::GameOver);
        }
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
                    if n.class.index() >= self.content.classes.len() {
                        return Err(ActionError::NoSuchClass(n.class.0));
                    }
                    if n.zone.index() >= self.ruleset.zones.len() {
                        return Err(ActionError::NoSuchZone(n.zone.0));
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
                // CR 701.3a: an object in play is attached to an object in play, or linked to it
                // from a zone whose objects may be (CR 607.2a: exiled with an ability); a merging
                // spell joins a permanent from where it is (CR 721.2).
                let attaching = matches!(action, Action::Attach { .. });
                let linkable = self.ruleset.zone_def(self.obj(*a).zone).linked;
                for o in [*b]
                    .into_iter()
                    .chain((attaching && !linkable).then_some(*a))
                {
                    if !self.in_play(o) {
                        return Err(ActionError::NotInPlay(self.obj(o).name.to_string()));
                    }
                }
            }
            Action::AddCounters {
                object, counter, ..
            } => {
                self.check_object(*object)?;
                if counter.index() >= self.ruleset.counters.len() {
                    return Err(ActionError::NoSuchCounter(counter.0));
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
                let Some(def) = self.ruleset.props.get(prop.index()) else {
                    return Err(ActionError::NoSuchProperty(prop.0));
                };
                if def.symbols {
                    return Err(ActionError::BadOccurrence(format!(
                        "`{}` holds symbols: only its events' changes set it",
                        def.name
                    )));
                }
            }
            Action::Shuffle { player, zone } => {
                self.check_player(*player)?;
                self.check_zone(*zone)?;
            }
            Action::Lose { player } => self.check_player(*player)?,
            Action::EndTurn => {}
        }
        Ok(())
    }

    /// Answers the pending decision.
    pub fn decide(&mut self, choice: Choice) -> Result<Outcome, ActionError> {
        self.decide_guarded(choice, true)
    }

    /// [`GameState::decide`], with or without the backup copy that puts the state back on an
    /// error. Without it (`guarded` false) an answer that is not legal is still refused before
    /// anything changes, but an error the occurrences meet on their way (a loop of responses)
    /// leaves the state where it stopped: for whole games, which stop at an error.
    pub(crate) fn decide_guarded(
        &mut self,
        choice: Choice,
        guarded: bool,
    ) -> Result<Outcome, ActionError> {
        let Some(req) = self.pending.clone() else {
            return Err(ActionError::NoDecisionPending);
        };
        if !matches!(&*req, DecisionRequest::OrderTimestamps { .. }) {
            // A decision of the timing procedure: checked, then the occurrence goes on. On an
            // error nothing has changed: the state is put back from a copy of it.
            if !guarded {
                self.decide_timing(choice)?;
                return Ok(Outcome::default());
            }
            let backup = self.backup();
            if let Err(e) = self.decide_timing(choice) {
                *self = backup;
                return Err(e);
            }
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
                self.make(crate::kernel::Change::Timestamps(order));
            }
            (_, c) => {
                return Err(ActionError::BadChoice(format!(
                    "{c:?} does not answer this request: expected an order of the objects"
                )));
            }
        }
        self.pending = None;
        self.run_state_checks()?;
        // The objects that entered together now go through "after they enter".
        self.run_timing()?;
        Ok(self.take_outcome())
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
            .class_def(self.obj(object).class)
            .attaches_to
            .is_none();
        if free {
            return object != to;
        }
        Ctx::new(self, &self.derived().sheet, None, None, &[]).could_attach(object, to)
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
            op.set_change(Change::SetValues(Arc::new(values)));
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
        let Some(sp) = &self.content.class_def(self.obj(spell).class).spell else {
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
        Ok(self.illegal_of(&sp.targets, Some(spell), controller, targets))
    }

    /// The indexes of these targets that are not legal now for their own `target` lines (CR
    /// 608.2b), for a spell or an ability alike.
    pub(crate) fn illegal_of(
        &self,
        specs: &[crate::model::condition::TargetSpec],
        source: Option<ObjectId>,
        you: PlayerId,
        targets: &[Subject],
    ) -> Vec<usize> {
        let ctx = Ctx::new(self, &self.derived().sheet, source, Some(you), targets);
        specs
            .iter()
            .zip(targets)
            .enumerate()
            .filter(|(_, (spec, t))| {
                let t: Subject = **t;
                let exists = match t {
                    Subject::Object(o) => self.get_object(o).is_some(),
                    Subject::Player(p) => p.index() < self.players.len(),
                };
                !exists || !ctx.test(&spec.cond, t)
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// A spell resolves: its effects start, locked against the state as it stands; returns its
    /// one-shot changes and its move to the zone for resolved spells, in order, as the actions
    /// that come next. CR 608.2b: it does nothing to a target that is no longer legal (`illegal`,
    /// by index; its other targets are still affected; with every target illegal it does not
    /// resolve at all, which the caller checks first).
    pub(crate) fn resolve(
        &mut self,
        spell: ObjectId,
        controller: PlayerId,
        targets: &[Subject],
        illegal: &[usize],
    ) -> Vec<Then> {
        let name = self.obj(spell).name.clone();
        let class = self.obj(spell).class;
        let content = self.content.clone();
        let Some(sp) = &content.class_def(class).spell else {
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
                let duration = duration_for(
                    duration,
                    controller,
                    || first_object(targets).and_then(|o| ctx.controller_of(o)),
                    &self.timing.periods,
                );
                let def = self.snapshot_copies(def, targets);
                created.push((duration, fix_numbers(&ctx, &def, &subs), locked));
            }
        }
        // CR 613.7b: an effect from a resolving spell receives a timestamp when it is created.
        for (duration, def, locked) in created {
            self.make(crate::kernel::Change::StartEffect(Box::new(
                CreatedEffect {
                    id: 0,
                    source: spell,
                    source_name: name.clone(),
                    controller,
                    timestamp: crate::model::ids::Timestamp(0),
                    duration,
                    def,
                    locked,
                    targets: Arc::from(targets),
                    for_good: None,
                },
            )));
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
        let mut then: Vec<Then> = Vec::new();
        for os in &sp.one_shots {
            match os {
                OneShot::Deed(d) => {
                    // Deeds in a row are done by one run, in order.
                    match then.last_mut() {
                        Some(Then::Deeds(ds)) => ds.push(d.clone()),
                        _ => then.push(Then::Deeds(vec![d.clone()])),
                    }
                }
                OneShot::MoveTargets(z) => {
                    if !objects.is_empty() {
                        then.push(Then::Act(Action::MoveTogether(
                            objects.iter().map(|t| (*t, *z)).collect(),
                        )));
                    }
                }
                OneShot::TurnTargets { face_down } => {
                    then.extend(objects.iter().map(|t| Then::Act(turn(*t, *face_down))));
                }
                OneShot::MoveTargetAt(i, z) => {
                    if let Some(t) = at(i) {
                        then.push(Then::Act(Action::Move {
                            object: t,
                            zone: *z,
                        }));
                    }
                }
                OneShot::TurnTargetAt { index, face_down } => {
                    if let Some(t) = at(index) {
                        then.push(Then::Act(turn(t, *face_down)));
                    }
                }
                OneShot::PutCounters { counter, count } => {
                    then.extend(objects.iter().map(|t| {
                        Then::Act(Action::AddCounters {
                            object: *t,
                            counter: *counter,
                            count: *count,
                        })
                    }));
                }
            }
        }
        then.extend(self.to_resolved_zone(spell).map(Then::Act));
        then
    }

    /// A resolved spell's move to the zone for resolved spells, unless it is there (CR 608.2n):
    /// the last step of its resolving, which is not one of its effects.
    pub(crate) fn to_resolved_zone(&self, spell: ObjectId) -> Option<Action> {
        let z = self.ruleset.resolved_zone?;
        (self.obj(spell).zone != z).then_some(Action::Move {
            object: spell,
            zone: z,
        })
    }
}

/// What a resolving spell does after its effects start, in order (CR 608.2c).
#[derive(Debug)]
pub(crate) enum Then {
    /// An engine action (moving, turning, counters on its targets; its move to the zone for
    /// resolved spells).
    Act(Action),
    /// Deeds in a row, done as a response's are.
    Deeds(Vec<crate::model::response::Deed>),
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
    open: &[crate::model::occurrence::Occurrence],
) -> Duration {
    match d {
        Duration::UntilEndOf { period, next } => Duration::UntilPeriodEnds {
            period: *period,
            skip: if *next {
                open.iter()
                    .filter(|o| o.event == *period)
                    .cloned()
                    .collect()
            } else {
                Vec::new()
            },
        },
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
    use crate::model::condition::NumExpr;
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
            d.ops[i].set_change(c);
            d.counts_counters = Default::default();
        }
    }
    out.map_or_else(|| def.clone(), Arc::new)
}
