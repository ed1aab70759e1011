//! State-based checks (CR 704) after each change: effects "for as long as" something that no
//! longer holds end (CR 611.2b), then objects that fail a check move or become unattached, all of
//! one round at once. Each round is a frame of occurrences of the built-in events
//! (`effect_ends`, `changes_zone` and `leaves_play`, `unattached`), so it can be answered and is
//! logged; its change runs the next round, until none applies.

use crate::condition::eval::Ctx;
use crate::model::condition::Subject;
use crate::model::error::ActionError;
use crate::model::ids::{ObjectId, ZoneId};
use crate::model::occurrence::Occurrence;
use crate::model::value::Arg;
use crate::state::GameState;
use crate::state::{Mode, Task};

impl GameState {
    /// Runs a round of the ruleset's state-based checks: what it finds happens as a frame of its
    /// own, taken next, before what was under way goes on.
    pub(crate) fn run_state_checks(&mut self) -> Result<(), ActionError> {
        let rs = self.ruleset.clone();
        let lapsing = self
            .effects
            .iter()
            .any(|e| matches!(e.duration, crate::model::effect::Duration::ForAsLongAs(_)));
        if rs.state_checks.is_empty() && !lapsing {
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
                        vec![Arg::Object(source), Arg::Number(i64::from(id))],
                    )
                })
                .collect();
            return self.push_state_checks(occs);
        }
        let mut found: Vec<(ObjectId, Option<ZoneId>, String)> = Vec::new();
        self.refresh();
        // After a change that reached only some objects, only those can newly fail a check:
        // the others passed before it.
        let only: Option<Vec<ObjectId>> = self.to_check();
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
                    found.push((o, c.to_zone, c.name.clone()));
                }
            }
        }
        if found.is_empty() {
            self.settled = true;
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
            .map(|(o, _, _)| Occurrence::new(b.unattached, vec![Arg::Object(*o)]))
            .collect();
        occs.extend(self.moving(&moves));
        let outcome = self.outcome_mut();
        for (o, _, name) in found {
            outcome.state_checks.push((o, name));
        }
        self.push_state_checks(occs)
    }

    /// A round of state-based checks as a frame, above what was under way.
    fn push_state_checks(&mut self, occs: Vec<Occurrence>) -> Result<(), ActionError> {
        if self.state_check_rounds() >= 1000 {
            return Err(ActionError::StateChecksLoop);
        }
        let depth = match self.timing.tasks.last() {
            Some(Task::Frame(f)) => f.depth,
            Some(Task::Run(r)) => r.depth,
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
