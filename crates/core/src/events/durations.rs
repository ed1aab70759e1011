//! Durations that end when something stops being true: "for as long as you control ..." (CR
//! 611.2b). Such an effect ends, once and for all, the first time its condition does not hold; it
//! does not come back when the condition holds again.

use crate::condition::eval::Ctx;
use crate::model::condition::Subject;
use crate::model::effect::Duration;
use crate::model::ids::ObjectId;
use crate::state::GameState;

impl GameState {
    /// Every created effect "for as long as" a condition that does not hold now, tested on the
    /// effect's source (the spell) with the effect's "you" and targets, on the values as derived
    /// now: its source and id. The state-based checks end them together.
    pub(crate) fn lapsed_effects(&self) -> Vec<(ObjectId, u32)> {
        if !self
            .effects
            .iter()
            .any(|e| matches!(e.duration, Duration::ForAsLongAs(_)))
        {
            return Vec::new();
        }
        let sheet = &self.derived().sheet;
        self.effects
            .iter()
            .filter_map(|e| {
                let Duration::ForAsLongAs(c) = &e.duration else {
                    return None;
                };
                let ctx = Ctx::new(self, sheet, Some(e.source), Some(e.controller), &e.targets);
                (!ctx.test(c, Subject::Object(e.source))).then_some((e.source, e.id))
            })
            .collect()
    }
}
