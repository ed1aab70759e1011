//! The engine's actions as occurrences of the built-in events: each carries its whole change as
//! arguments (where a card moves, which counters and how many), so that a response that changes
//! an argument changes what happens, and the kernel makes it like any other occurrence's change.
//! A spell resolving is the one action whose change is more than its arguments (its targets and
//! its effects): the frame keeps it.

use crate::kernel::Change;
use crate::model::action::{Action, Outcome};
use crate::model::decision::DecisionRequest;
use crate::model::error::ActionError;
use crate::model::ids::{EventId, ObjectId};
use crate::model::occurrence::{Logged, Occurrence, Responder};
use crate::model::value::Arg;
use crate::state::GameState;
use crate::state::Mode;
use std::sync::Arc;

impl GameState {
    /// An engine action, as occurrences of the built-in events: entering (after the objects have
    /// entered), moving, counters, attaching, resolving, turning face up or down, merging, ending
    /// an object's effects, setting a property, ending a turn. Checked in full before anything
    /// happens; on an error nothing has changed.
    pub(crate) fn apply_through_events(&mut self, action: Action) -> Result<Outcome, ActionError> {
        let action = action.targeting();
        self.check_action(&action)?;
        self.timing_mut().outcome = Some(Outcome::default());
        if let Action::Create(list) = action {
            let into_play = list
                .iter()
                .filter(|n| self.ruleset.zone_def(n.zone).in_play)
                .count();
            let created = self.make(Change::Create(list));
            self.outcome_mut().created.extend(&created);
            let entered: Vec<ObjectId> = created
                .iter()
                .copied()
                .filter(|o| self.in_play(*o))
                .collect();
            if !entered.is_empty() {
                // "After it enters", once the state-based checks it caused are done.
                let b = self.builtin;
                let occs = entered
                    .iter()
                    .map(|o| Occurrence::new(b.enters, vec![Arg::Object(*o)]))
                    .collect();
                self.push_frame(occs, Mode::AfterOnly, 0);
            }
            if into_play > 1 {
                // CR 613.7: objects entering at once get timestamps in the order the active
                // player chooses; the checks wait for that order (`decide`).
                self.pending = Some(Arc::new(DecisionRequest::OrderTimestamps {
                    player: self.active,
                    objects: entered,
                }));
            } else {
                self.run_state_checks()?;
            }
        } else {
            let occs = self.occurrences_of(&action)?;
            self.push_action(occs, action, 0);
        }
        self.run_timing()?;
        Ok(self.take_outcome())
    }

    /// Takes an action through the event core as these occurrences.
    fn push_action(&mut self, occs: Vec<Occurrence>, action: Action, depth: u16) {
        let resolving = matches!(action, Action::ResolveTargeting { .. });
        self.push_frame(occs, Mode::Plain, depth);
        if resolving {
            let top = self.timing.tasks.len() - 1;
            self.frame_mut(top).action = Some(Box::new(action));
        }
    }

    /// The occurrences of the built-in events an action is, after checking it in full (every
    /// action but `Create`, whose objects do not exist before it).
    fn occurrences_of(&self, action: &Action) -> Result<Vec<Occurrence>, ActionError> {
        self.check_action(action)?;
        let b = self.builtin;
        let obj = |o: ObjectId| Arg::Object(o);
        let one = |e: EventId, args: Vec<Arg>| vec![Occurrence::new(e, args)];
        Ok(match action {
            Action::Create(_) | Action::Resolve { .. } => {
                return Err(ActionError::BadOccurrence(
                    "this action is taken through the event core another way".into(),
                ))
            }
            Action::MoveTogether(moves) => self.moving(moves),
            Action::Move { object, zone } => self.moving(&[(*object, *zone)]),
            Action::AddCounters {
                object,
                counter,
                count,
            } => one(
                b.counters_placed,
                vec![obj(*object), Arg::Number(*count), Arg::Counter(*counter)],
            ),
            Action::Attach { object, to } => one(b.attached, vec![obj(*object), obj(*to)]),
            Action::ResolveTargeting {
                spell, controller, ..
            } => one(b.resolves, vec![obj(*spell), Arg::Player(*controller)]),
            Action::TurnFaceDown { object } => one(b.turns_face_down, vec![obj(*object)]),
            Action::TurnFaceUp { object } => one(b.turns_face_up, vec![obj(*object)]),
            Action::Merge {
                object,
                into,
                under,
            } => one(
                b.merges,
                vec![obj(*object), obj(*into), Arg::Number(i64::from(*under))],
            ),
            Action::EndEffectsOf { source } => one(b.effects_end, vec![obj(*source)]),
            Action::SetProperty {
                player,
                prop,
                value,
            } => {
                let Some(v) = value else {
                    return Err(ActionError::BadOccurrence(
                        "a player's property is set to a number, not `none`".into(),
                    ));
                };
                one(
                    b.property_set,
                    vec![Arg::Player(*player), Arg::Property(*prop), Arg::Number(*v)],
                )
            }
            Action::EndTurn => one(b.turn_ends, vec![Arg::Player(self.active)]),
        })
    }

    /// A spell resolving: made when its occurrence was not prevented or substituted. Its
    /// effects start; its one-shot changes and its move to the zone for resolved spells come
    /// next, each an occurrence of its own, in order, before its "after" point.
    pub(super) fn make_resolution(&mut self, fi: usize) -> Result<(), ActionError> {
        let f = self.frame_mut(fi);
        let Some(action) = f.action.take() else {
            return Ok(());
        };
        let depth = f.depth;
        if !f.occs.iter().all(|o| o.alive) {
            for o in &mut f.occs {
                o.alive = false;
            }
            return Ok(());
        }
        let Action::ResolveTargeting {
            spell,
            controller,
            targets,
            choices,
        } = *action
        else {
            return Ok(());
        };
        // CR 608.2b: every target illegal by now (a target became illegal since the spell was
        // cast): it does not resolve. With some still legal it resolves, and does nothing to the
        // others.
        let illegal = match self.illegal_targets(spell, controller, &targets) {
            Err(e) => Err(e),
            Ok(bad) if !targets.is_empty() && bad.len() == targets.len() => {
                Err(self.illegal_target(spell, targets[bad[0]]))
            }
            Ok(bad) => Ok(bad),
        };
        let illegal = match illegal {
            Ok(bad) => bad,
            Err(e) => {
                self.log_at(
                    depth,
                    Logged::Fizzled {
                        by: self.spell_responder(spell),
                        why: e.to_string(),
                    },
                );
                for o in &mut self.frame_mut(fi).occs {
                    o.alive = false;
                }
                return Ok(());
            }
        };
        if !choices.is_empty() {
            self.make(Change::Choices {
                object: spell,
                choices,
            });
        }
        let then = self.resolve(spell, controller, &targets, &illegal);
        let happened: Vec<Occurrence> = {
            let f = self.frame_mut(fi);
            for o in &mut f.occs {
                o.happened = true;
            }
            f.occs.iter().map(|o| o.occ.clone()).collect()
        };
        for occurrence in happened {
            self.log_at(depth, Logged::Happened { occurrence });
        }
        if then.is_empty() {
            return self.run_state_checks();
        }
        // State-based checks wait for the one-shot changes (CR 704.3: not while a spell
        // resolves); each runs them after its own change. The first on top.
        for next in then.into_iter().rev() {
            match self.occurrences_of(&next) {
                Ok(occs) => self.push_action(occs, next, depth + 1),
                Err(e) => self.log_at(
                    depth + 1,
                    Logged::Fizzled {
                        by: self.spell_responder(spell),
                        why: e.to_string(),
                    },
                ),
            }
        }
        Ok(())
    }

    /// A spell as the answerer in the log: the object and its rules text.
    fn spell_responder(&self, spell: ObjectId) -> Responder {
        let class = self.content.class_def(self.obj(spell).class);
        Responder {
            source: Some(spell),
            text: class
                .spell
                .as_ref()
                .map_or_else(|| self.obj(spell).name.clone(), |sp| sp.text.clone()),
        }
    }
}
