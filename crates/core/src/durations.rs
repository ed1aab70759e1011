//! Durations that end when something stops being true: "for as long as you control ..." (CR
//! 611.2b). Such an effect ends, once and for all, the first time its condition does not hold; it
//! does not come back when the condition holds again.

use crate::condition::eval::Ctx;
use crate::condition::Subject;
use crate::effect::Duration;
use crate::state::GameState;

impl GameState {
    /// Ends every created effect "for as long as" a condition that does not hold now, tested on the
    /// effect's source (the spell) with the effect's "you" and targets, on the values as derived
    /// now. Those found end together. True if any ended.
    pub(crate) fn end_lapsed_effects(&mut self) -> bool {
        if !self
            .effects
            .iter()
            .any(|e| matches!(e.duration, Duration::ForAsLongAs(_)))
        {
            return false;
        }
        let lapsed: Vec<u32> = {
            let sheet = &self.derived().sheet;
            self.effects
                .iter()
                .filter_map(|e| {
                    let Duration::ForAsLongAs(c) = &e.duration else {
                        return None;
                    };
                    let ctx = Ctx::new(self, sheet, Some(e.source), Some(e.controller), &e.targets);
                    (!ctx.test(c, Subject::Object(e.source))).then_some(e.id)
                })
                .collect()
        };
        if lapsed.is_empty() {
            return false;
        }
        self.touch();
        self.effects.retain(|e| !lapsed.contains(&e.id));
        true
    }
}
