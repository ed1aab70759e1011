//! Changes to created effects and to the turn: an effect starts or ends; "this turn" ends.

use crate::model::effect::{CreatedEffect, Duration};
use crate::model::occurrence::Occurrence;
use crate::state::GameState;
use std::sync::Arc;

impl GameState {
    /// A created effect starts: it gets the next id and a new timestamp (CR 613.7b: an effect
    /// from a resolving spell or ability receives a timestamp when it is created).
    pub(super) fn start_effect(&mut self, mut e: CreatedEffect) {
        e.timestamp = self.new_timestamp();
        e.id = self.next_effect_id;
        self.next_effect_id += 1;
        self.effects_mut().push(Arc::new(e));
    }

    /// "This turn" ends: delayed effects that last this turn, and effects until end of turn
    /// (CR 514.2).
    pub(super) fn this_turn_ends(&mut self) {
        let turn = self.turn;
        if self
            .timing
            .delayed
            .iter()
            .any(|d| d.turn.is_some_and(|t| t <= turn))
        {
            self.timing
                .delayed
                .retain(|d| d.turn.is_none_or(|t| t > turn));
        }
        if self
            .effects
            .iter()
            .any(|e| e.duration == Duration::UntilEndOfTurn)
        {
            self.touch();
            self.effects
                .retain(|e| e.duration != Duration::UntilEndOfTurn);
        }
    }

    /// A period ends: effects "until the end of" a period of its kind end, unless it was in
    /// progress when one said "the next"; then that one waits for the next end.
    pub(super) fn period_ends(&mut self, ended: &Occurrence) {
        let waits = |e: &CreatedEffect| match &e.duration {
            Duration::UntilPeriodEnds { period, .. } => *period == ended.event,
            _ => false,
        };
        if !self.effects.iter().any(|e| waits(e)) {
            return;
        }
        self.touch();
        self.effects.retain(|e| match &e.duration {
            Duration::UntilPeriodEnds { period, skip } => {
                *period != ended.event || skip.contains(ended)
            }
            _ => true,
        });
        for e in self.effects.iter_mut() {
            if let Duration::UntilPeriodEnds { skip, .. } = &e.duration {
                if let Some(k) = skip.iter().position(|o| o == ended) {
                    let e = Arc::make_mut(e);
                    if let Duration::UntilPeriodEnds { skip, .. } = &mut e.duration {
                        skip.remove(k);
                    }
                }
            }
        }
    }

    /// The turn ends and the next player's begins: "until your next turn" effects of that player
    /// end as it begins (CR 611.2, 502: its first step is the untap step).
    pub(super) fn end_turn(&mut self) {
        self.touch();
        self.this_turn_ends();
        self.active = self.next_player(self.active);
        self.turn += 1;
        let active = self.active;
        self.effects
            .retain(|e| e.duration != Duration::UntilTurnOfPlayer(active));
    }
}
