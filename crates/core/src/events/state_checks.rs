//! State-based checks (CR 704) after each change: effects "for as long as" something that no
//! longer holds end (CR 611.2b), then objects that fail a check move or become unattached, all of
//! one round at once. Each round is a frame of occurrences of the built-in events
//! (`effect_ends`, `changes_zone` and `leaves_play`, `unattached`), so it can be answered and is
//! logged; its change runs the next round, until none applies.

use crate::condition::eval::Ctx;
use crate::model::condition::Subject;
use crate::model::error::ActionError;
use crate::model::ids::{ObjectId, PlayerId, ZoneId};
use crate::model::occurrence::Occurrence;
use crate::model::value::Arg;
use crate::state::GameState;
use crate::state::{Mode, Task};

impl GameState {
    /// Runs a round of the ruleset's state-based checks: what it finds happens as a frame of its
    /// own, taken next, before what was under way goes on.
    pub(crate) fn run_state_checks(&mut self) -> Result<(), ActionError> {
        // The ruleset read in place, its pointer not copied: games on other threads share it,
        // and its count would pass between cores after every change.
        let lapsing = self
            .effects
            .iter()
            .any(|e| matches!(e.duration, crate::model::effect::Duration::ForAsLongAs(_)));
        if self.ruleset.state_checks.is_empty() && !lapsing {
            return Ok(());
        }
        let b = self.builtin;
        // Effects "for as long as" end first; the checks then see the state without them.
        let lapsed = self.lapsed_effects();
        if !lapsed.is_empty() {
            let occs = lapsed
                .into_iter()
                .map(|(source, id)| {
                    Occurrence::new(
                        b.effect_ends,
                        smallvec::smallvec![Arg::Object(source), Arg::Number(i64::from(id))],
                    )
                })
                .collect();
            return self.push_state_checks(occs);
        }
        // CR 704.3: nothing changed since a round found nothing (no object's values, no
        // property a player check reads): none applies now either.
        if self.settled && self.players_settled && super::shortcuts() {
            return Ok(());
        }
        let mut found: Vec<(ObjectId, Option<ZoneId>, String)> = Vec::new();
        // Checks that make an occurrence of an event about the object (`happens:`).
        let mut happening: Vec<Occurrence> = Vec::new();
        self.refresh();
        // After a change that reached only some objects, only those can newly fail a check:
        // the others passed before it.
        // Otherwise the objects in play: the checks are of objects in play.
        let only: Option<Vec<ObjectId>> = self.to_check();
        let in_play = self.in_play.clone();
        let objects: &[ObjectId] = match &only {
            Some(l) => l,
            None => &in_play,
        };
        // An object a round under way is already about (its destruction waiting for a Reaction
        // to be paid for) is not found again: that check has been made.
        let under_way: Vec<Arg> = self
            .timing
            .tasks
            .iter()
            .filter_map(|t| match t {
                Task::Frame(f) if f.state_checks => Some(f),
                _ => None,
            })
            .flat_map(|f| f.occs.iter().filter(|o| o.alive && !o.happened))
            .filter_map(|o| o.occ.args.first().copied())
            .collect();
        // Whether an object was passed over for a round under way: the checks are then not clear.
        let mut passed = false;
        {
            let ctx = Ctx::new(self, &self.derived().sheet, None, None, &[]);
            for &o in objects {
                if !self.in_play(o) {
                    continue;
                }
                if under_way.contains(&Arg::Object(o)) {
                    passed = true;
                    continue;
                }
                if let Some(c) = self
                    .ruleset
                    .state_checks
                    .iter()
                    .filter(|c| !c.loses)
                    .find(|c| ctx.test(&c.condition, Subject::Object(o)))
                {
                    match c.happens {
                        Some(e) => {
                            happening.push(Occurrence::new(e, smallvec::smallvec![Arg::Object(o)]))
                        }
                        None => found.push((o, c.to_zone, c.name.clone())),
                    }
                }
            }
        }
        // CR 704.5a: a player's checks, tested on each player still in the game, in the same
        // round (CR 704.3: every check that applies is made at once).
        let losing = if self.players_settled {
            Vec::new()
        } else {
            self.losing_players()
        };
        self.players_settled = losing.is_empty()
            && self.content.player_checks_read_props(&self.ruleset)
            && !crate::layers::props_written(self);
        if found.is_empty() && losing.is_empty() && happening.is_empty() {
            self.settled = !passed;
            return Ok(());
        }
        // An Equipment that is unattached stays where it is (CR 704.5n); the others move.
        let moves: Vec<(ObjectId, ZoneId)> = found
            .iter()
            .filter_map(|(o, z, _)| z.map(|z| (*o, z)))
            .collect();
        let mut occs: Vec<Occurrence> = found
            .iter()
            .filter(|(_, z, _)| z.is_none())
            .map(|(o, _, _)| Occurrence::new(b.unattached, smallvec::smallvec![Arg::Object(*o)]))
            .collect();
        occs.extend(self.moving(&moves));
        occs.extend(happening);
        occs.extend(
            losing
                .into_iter()
                .map(|p| Occurrence::new(b.loses, smallvec::smallvec![Arg::Player(p)])),
        );
        let outcome = self.outcome_mut();
        for (o, _, name) in found {
            outcome.state_checks.push((o, name));
        }
        self.push_state_checks(occs)
    }

    /// The players still in the game that a player check (`player loses`) finds.
    pub(crate) fn losing_players(&self) -> Vec<PlayerId> {
        if !self.ruleset.state_checks.iter().any(|c| c.loses) {
            return Vec::new();
        }
        let ctx = Ctx::new(self, &self.derived().sheet, None, None, &[]);
        (0..self.players.len())
            .map(|i| PlayerId(i as u8))
            .filter(|p| !self.players[p.index()].lost)
            .filter(|p| {
                self.ruleset
                    .state_checks
                    .iter()
                    .any(|c| c.loses && ctx.test(&c.condition, Subject::Player(*p)))
            })
            .collect()
    }

    /// A round of state-based checks as a frame, above what was under way.
    fn push_state_checks(&mut self, occs: Vec<Occurrence>) -> Result<(), ActionError> {
        if self.state_check_rounds() >= 1000 {
            return Err(ActionError::StateChecksLoop);
        }
        let depth = match self.timing.tasks.last() {
            Some(Task::Frame(f)) => f.depth,
            Some(Task::Run(r)) => r.depth,
            Some(Task::Batch(b)) => b.depth,
            None => 0,
        };
        self.push_frame(occs, Mode::Plain, depth);
        let top = self.timing.tasks.len() - 1;
        self.frame_mut(top).state_checks = true;
        Ok(())
    }

    /// What the engine action just taken did besides its own change (the objects it made, the
    /// moves of the state-based checks it caused).
    pub(crate) fn take_outcome(&mut self) -> crate::model::action::Outcome {
        if self.timing.outcome.is_none() {
            return Default::default();
        }
        self.timing_mut().outcome.take().unwrap_or_default()
    }

    /// What the engine action under way did besides its own change, to add to.
    pub(crate) fn outcome_mut(&mut self) -> &mut crate::model::action::Outcome {
        self.timing_mut()
            .outcome
            .get_or_insert_with(Default::default)
    }
}
