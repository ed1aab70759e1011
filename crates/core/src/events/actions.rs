//! The engine's actions as occurrences of the built-in events: each carries its whole change as
//! arguments (where a card moves, which counters and how many), so that a response that changes
//! an argument changes what happens, and the kernel makes it like any other occurrence's change.
//! A spell resolving is the one action whose change is more than its arguments (its targets and
//! its effects): the frame keeps it.

use crate::action::apply::Then;
use crate::kernel::Change;
use crate::model::action::{Action, Outcome};
use crate::model::decision::DecisionRequest;
use crate::model::error::ActionError;
use crate::model::ids::{EventId, ObjectId};
use crate::model::occurrence::{Logged, Occurrence, Responder};
use crate::model::response::{ResponseDef, ResponseKind, Standing, Trigger};
use crate::model::timing::Point;
use crate::model::value::Arg;
use crate::state::GameState;
use crate::state::{Mode, Run, Task};
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
            let (created, entered) = self.create_entering(list, 0);
            self.outcome_mut().created.extend(&created);
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
            self.push_action(occs, action, 0, Standing::default());
        }
        self.run_timing()?;
        Ok(self.take_outcome())
    }

    /// Objects are created; those created in a zone in play are answered as entering ("after
    /// it enters", once the state-based checks they cause are done), in a frame at `depth`.
    /// The objects created, and those that entered.
    pub(super) fn create_entering(
        &mut self,
        list: Vec<crate::model::action::NewObject>,
        depth: u16,
    ) -> (Vec<ObjectId>, Vec<ObjectId>) {
        let created = self.make(Change::Create(list));
        let entered: Vec<ObjectId> = created
            .iter()
            .copied()
            .filter(|o| self.in_play(*o))
            .collect();
        if !entered.is_empty() {
            let b = self.builtin;
            let occs = entered
                .iter()
                .map(|o| Occurrence::new(b.enters, smallvec::smallvec![Arg::Object(*o)]))
                .collect();
            self.push_frame(occs, Mode::AfterOnly, depth);
        }
        (created, entered)
    }

    /// Takes an action through the event core as these occurrences, standing as a deed made them.
    pub(super) fn push_action(
        &mut self,
        occs: Vec<Occurrence>,
        action: Action,
        depth: u16,
        standing: Standing,
    ) {
        let resolving = matches!(action, Action::ResolveTargeting { .. });
        self.push_frame_with(occs, Mode::Plain, depth, standing);
        if resolving {
            let top = self.timing.tasks.len() - 1;
            self.frame_mut(top).action = Some(Box::new(action));
        }
    }

    /// The engine action an occurrence of a built-in event made by a deed stands for: its
    /// arguments are the whole change. `changes_zone(card, from, to)` moves the card only while
    /// it is in `from`.
    pub(super) fn action_of_builtin(
        &self,
        event: EventId,
        args: &[Arg],
    ) -> Result<Action, ActionError> {
        let b = self.builtin;
        let name = &self.ruleset.event_kind(event).name;
        let bad = || ActionError::BadOccurrence(format!("`{name}` cannot be made with {args:?}"));
        Ok(match (args, event) {
            ([Arg::Object(o), Arg::Zone(from), Arg::Zone(to)], e) if e == b.changes_zone => {
                let now = self.object(*o)?.zone;
                if now != *from {
                    return Err(ActionError::BadOccurrence(format!(
                        "`{name}`: the card is in {}, not {}",
                        self.ruleset.zone_def(now).name,
                        self.ruleset.zone_def(*from).name
                    )));
                }
                Action::Move {
                    object: *o,
                    zone: *to,
                }
            }
            ([Arg::Object(o), Arg::Number(n), Arg::Counter(c)], e) if e == b.counters_placed => {
                Action::AddCounters {
                    object: *o,
                    counter: *c,
                    count: *n,
                }
            }
            ([Arg::Object(o), Arg::Object(to)], e) if e == b.attached => Action::Attach {
                object: *o,
                to: *to,
            },
            ([Arg::Object(o)], e) if e == b.turns_face_up => Action::TurnFaceUp { object: *o },
            ([Arg::Object(o)], e) if e == b.turns_face_down => Action::TurnFaceDown { object: *o },
            ([Arg::Object(o), Arg::Object(into), Arg::Number(under)], e) if e == b.merges => {
                Action::Merge {
                    object: *o,
                    into: *into,
                    under: *under != 0,
                }
            }
            ([Arg::Object(o)], e) if e == b.effects_end => Action::EndEffectsOf { source: *o },
            ([Arg::Player(p)], e) if e == b.loses => Action::Lose { player: *p },
            ([Arg::Player(p), Arg::Zone(z)], e) if e == b.shuffles => Action::Shuffle {
                player: *p,
                zone: *z,
            },
            ([Arg::Player(p), Arg::Property(q), Arg::Number(v)], e) if e == b.property_set => {
                Action::SetProperty {
                    player: *p,
                    prop: *q,
                    value: Some(*v),
                }
            }
            _ => return Err(bad()),
        })
    }

    /// The occurrences of the built-in events an action is, after checking it in full (every
    /// action but `Create`, whose objects do not exist before it).
    pub(super) fn occurrences_of(&self, action: &Action) -> Result<Vec<Occurrence>, ActionError> {
        self.check_action(action)?;
        let b = self.builtin;
        let obj = |o: ObjectId| Arg::Object(o);
        let one = |e: EventId, args: crate::model::occurrence::Args| vec![Occurrence::new(e, args)];
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
                smallvec::smallvec![obj(*object), Arg::Number(*count), Arg::Counter(*counter)],
            ),
            Action::Attach { object, to } => {
                one(b.attached, smallvec::smallvec![obj(*object), obj(*to)])
            }
            Action::ResolveTargeting {
                spell, controller, ..
            } => one(
                b.resolves,
                smallvec::smallvec![obj(*spell), Arg::Player(*controller)],
            ),
            Action::TurnFaceDown { object } => {
                one(b.turns_face_down, smallvec::smallvec![obj(*object)])
            }
            Action::TurnFaceUp { object } => {
                one(b.turns_face_up, smallvec::smallvec![obj(*object)])
            }
            Action::Merge {
                object,
                into,
                under,
            } => one(
                b.merges,
                smallvec::smallvec![obj(*object), obj(*into), Arg::Number(i64::from(*under))],
            ),
            Action::EndEffectsOf { source } => {
                one(b.effects_end, smallvec::smallvec![obj(*source)])
            }
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
                    smallvec::smallvec![
                        Arg::Player(*player),
                        Arg::Property(*prop),
                        Arg::Number(*v)
                    ],
                )
            }
            Action::EndTurn => one(b.turn_ends, smallvec::smallvec![Arg::Player(self.active)]),
            Action::Shuffle { player, zone } => one(
                b.shuffles,
                smallvec::smallvec![Arg::Player(*player), Arg::Zone(*zone)],
            ),
            Action::Lose { player } => one(b.loses, smallvec::smallvec![Arg::Player(*player)]),
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
        let (then, illegal) = if self.frame(fi).occs.iter().any(|o| o.negated) {
            // Its effects are negated: it counts as resolved (what answers it "after" comes), and
            // none of its effects or one-shot changes happen; it still goes to the zone for
            // resolved spells, which is not one of its effects.
            let to_zone = self.to_resolved_zone(spell).map(Then::Act);
            (to_zone.into_iter().collect(), Vec::new())
        } else {
            // CR 608.2b: every target illegal by now (a target became illegal since the spell
            // was cast): it does not resolve. With some still legal it resolves, and does nothing
            // to the others.
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
                    // A spell that waited in a batch and fizzles is put into the zone for
                    // resolved spells, doing nothing.
                    let waiting = self.ruleset.wait_zone;
                    if self
                        .get_object(spell)
                        .is_some_and(|o| Some(o.zone) == waiting)
                    {
                        if let Some(to) = self.to_resolved_zone(spell) {
                            let occs = self.occurrences_of(&to)?;
                            self.push_action(occs, to, depth + 1, Standing::default());
                        }
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
            (self.resolve(spell, controller, &targets, &illegal), illegal)
        };
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
            match next {
                Then::Act(next) => match self.occurrences_of(&next) {
                    Ok(occs) => self.push_action(occs, next, depth + 1, Standing::default()),
                    Err(e) => self.log_at(
                        depth + 1,
                        Logged::Fizzled {
                            by: self.spell_responder(spell),
                            why: e.to_string(),
                        },
                    ),
                },
                Then::Deeds(deeds) => {
                    // Its deeds are done as a response's are, each occurrence through its own
                    // points before the next; it does nothing to a target no longer legal.
                    let text = self.spell_responder(spell).text;
                    let def = ResponseDef::of_deeds(
                        ResponseKind::Spell,
                        text,
                        Trigger {
                            point: Point::After,
                            patterns: Vec::new(),
                        },
                        deeds,
                    );
                    let mut run = Run::new(
                        fi,
                        0,
                        Arc::new(def),
                        Some(spell),
                        Some(controller),
                        targets.clone(),
                        None,
                        depth + 1,
                    );
                    run.illegal = illegal.iter().map(|i| *i as u8).collect();
                    run.holds = self.ruleset.timing.after_once_resolved.then(Vec::new);
                    self.timing_mut().tasks.push(Task::Run(Box::new(run)));
                }
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
