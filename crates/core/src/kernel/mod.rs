//! The kernel: the one place a game state changes. Every change, whatever asked for it (an API
//! action, a spell's one-shot change, a response's deed, a ruleset event's declared changes, a
//! state-based check, a duration ending), is made here as one of these primitive changes, as
//! the change of an occurrence the event procedure took through its timing points.

mod effects;
mod objects;

use crate::model::action::NewObject;
use crate::model::effect::CreatedEffect;
use crate::model::ids::{CounterId, ObjectId, PlayerId, PropId, ZoneId};
use crate::model::value::Symbol;
use crate::state::GameState;

/// One primitive change of state.
#[derive(Clone, Debug)]
pub enum Change {
    /// Objects come into being in their zones; more than one entering play at once get their
    /// timestamps in an order the active player chooses (CR 613.7).
    Create(Vec<NewObject>),
    /// Objects change zones at once (CR 400.7: each becomes a new object).
    Move(Vec<(ObjectId, ZoneId)>),
    /// Counters put on (a negative count: taken off, the latest placements first).
    Counters {
        object: ObjectId,
        counter: CounterId,
        count: i64,
    },
    /// Attach to another object (CR 701.3, 613.7e).
    Attach { object: ObjectId, to: ObjectId },
    /// Becomes unattached and stays where it is (CR 704.5n).
    Unattach { object: ObjectId },
    /// Turned face down or face up (CR 613.7f).
    Face { object: ObjectId, down: bool },
    /// Merged with a permanent, under or over it (CR 721.2).
    Merge {
        object: ObjectId,
        into: ObjectId,
        under: bool,
    },
    /// A symbol added to (`on`) or removed from an object's state ("bowed").
    State {
        object: ObjectId,
        symbol: Symbol,
        on: bool,
    },
    /// A player's base property value set.
    SetProperty {
        player: PlayerId,
        prop: PropId,
        value: Option<i64>,
    },
    /// A symbol added to (`on`) or removed from a player's symbols property (an empire's
    /// available techs, by name).
    PropertySymbol {
        player: PlayerId,
        prop: PropId,
        symbol: Symbol,
        on: bool,
    },
    /// A player's property raised (or lowered) by a number.
    AddProperty {
        player: PlayerId,
        prop: PropId,
        by: i64,
    },
    /// A continuous effect starts, with a new timestamp (CR 613.7b) and id.
    StartEffect(Box<CreatedEffect>),
    /// The created effects of a source end.
    EndEffectsOf { source: ObjectId },
    /// The created effects with these ids end.
    EndEffects(Vec<u32>),
    /// A player loses and leaves the game (CR 104.3, 800.4).
    Loses(PlayerId),
    /// A player's cards in a zone are put in a random order (CR 701.20a): each gets a new
    /// timestamp, in the order drawn from the game's random source (the latest is on top).
    Shuffle { player: PlayerId, zone: ZoneId },
    /// "This turn" ends: "until end of turn" effects and delayed effects that last this turn
    /// end (CR 514.2), as a turn period ends.
    ThisTurnEnds,
    /// A period ends: effects "until the end of" it end, or wait for the next one when it was
    /// in progress as they began and they said "the next".
    PeriodEnds(crate::model::occurrence::Occurrence),
    /// The turn ends and the next player becomes active: "this turn" ends, and effects "until
    /// your next turn" of that player end (CR 514, 611.2).
    EndTurn,
    /// The choices an object was cast or entered with ("choose a creature type").
    Choices {
        object: ObjectId,
        choices: Vec<Symbol>,
    },
    /// A turn begins: its player (if it names one) becomes the active player; `next`: it is not
    /// the game's first turn, and the turn count goes up.
    TurnBegins {
        player: Option<PlayerId>,
        next: bool,
    },
    /// New timestamps for objects, in this order (CR 613.7: objects entering together).
    Timestamps(Vec<ObjectId>),
}

impl GameState {
    /// Makes one primitive change. Returns the objects it created. The change has been checked
    /// by the event procedure that made it; the kernel still never indexes out of bounds on a
    /// bad id (such a change does nothing).
    pub(crate) fn make(&mut self, change: Change) -> Vec<ObjectId> {
        self.timing_mut().made += 1;
        let known = |s: &GameState, o: ObjectId| o.index() < s.objects.len();
        match change {
            Change::Create(list) => return self.create_objects(list),
            Change::Move(moves) => {
                let moves: Vec<_> = moves
                    .into_iter()
                    .filter(|(o, z)| known(self, *o) && z.index() < self.ruleset.zones.len())
                    .collect();
                self.move_objects(&moves)
            }
            Change::Counters {
                object,
                counter,
                count,
            } => {
                if known(self, object) && counter.index() < self.ruleset.counters.len() {
                    self.put_counters(object, counter, count)
                }
            }
            Change::Attach { object, to } => {
                if known(self, object) && known(self, to) {
                    self.attach(object, to)
                }
            }
            Change::Unattach { object } => {
                if known(self, object) {
                    self.set_attached(object, None)
                }
            }
            Change::Face { object, down } => {
                if known(self, object) {
                    self.turn_face(object, down)
                }
            }
            Change::Merge {
                object,
                into,
                under,
            } => {
                if known(self, object) && known(self, into) {
                    self.merge(object, into, under)
                }
            }
            Change::State { object, symbol, on } => {
                if known(self, object) {
                    let o = self.object_mut(object);
                    if on {
                        o.state.insert(symbol);
                    } else {
                        o.state.remove(&symbol);
                    }
                }
            }
            Change::SetProperty {
                player,
                prop,
                value,
            } => self.set_property(player, prop, value),
            Change::PropertySymbol {
                player,
                prop,
                symbol,
                on,
            } => {
                let now = self
                    .player_props
                    .get(player.index())
                    .and_then(|p| p.get(prop.index()));
                if let Some(crate::model::value::Value::Symbols(set)) = now {
                    if set.contains(&symbol) != on {
                        let mut set = set.clone();
                        if on {
                            set.insert(symbol);
                        } else {
                            set.remove(&symbol);
                        }
                        self.set_property_value(
                            player,
                            prop,
                            crate::model::value::Value::Symbols(set),
                        );
                    }
                }
            }
            Change::AddProperty { player, prop, by } => {
                let current = self
                    .player_props
                    .get(player.index())
                    .and_then(|p| p.get(prop.index()))
                    .map(|v| v.number().unwrap_or(0));
                if let Some(v) = current {
                    self.set_property(player, prop, Some(v + by));
                }
            }
            Change::StartEffect(e) => self.start_effect(*e),
            Change::EndEffectsOf { source } => {
                if self.effects.iter().any(|e| e.source == source) {
                    self.effects_mut().retain(|e| e.source != source);
                }
            }
            Change::EndEffects(ids) => {
                if self.effects.iter().any(|e| ids.contains(&e.id)) {
                    self.effects_mut().retain(|e| !ids.contains(&e.id));
                }
            }
            Change::ThisTurnEnds => self.this_turn_ends(),
            Change::Loses(p) => {
                self.players_settled = false;
                let mut players = self.players.to_vec();
                if let Some(pl) = players.get_mut(p.index()) {
                    pl.lost = true;
                    self.players = players.into();
                }
            }
            Change::Shuffle { player, zone } => {
                let mut cards = self.cards_in_small(player, zone);
                self.random.shuffle(&mut cards);
                // Out of play, where no effect reads the order, the new order reaches no
                // derived value.
                let unseen = !self.ruleset.zone_def(zone).in_play
                    && !self.content.order_derived(&self.ruleset);
                for o in cards {
                    let ts = self.new_timestamp();
                    if unseen {
                        self.restamp_unseen(o, ts);
                    } else {
                        self.object_mut(o).timestamp = ts;
                    }
                }
            }
            Change::PeriodEnds(occ) => self.period_ends(&occ),
            Change::EndTurn => self.end_turn(),
            Change::TurnBegins { player, next } => {
                if next {
                    // A new turn: what reads the turn number (FreeOrion's Chance draws anew each
                    // turn) is derived again.
                    if self.content.turn_derived(&self.ruleset) {
                        self.touch();
                    }
                    self.turn += 1;
                }
                if let Some(p) = player.filter(|p| p.index() < self.players.len()) {
                    self.active = p;
                }
            }
            Change::Choices { object, choices } => {
                if known(self, object) {
                    self.object_mut(object).choices = choices;
                }
            }
            Change::Timestamps(order) => {
                for o in order {
                    if known(self, o) {
                        let ts = self.new_timestamp();
                        self.object_mut(o).timestamp = ts;
                    }
                }
            }
        }
        Vec::new()
    }
}
