//! Accounting of counters (FreeOrion's meter accounting: a current meter value explains itself):
//! every change to an object's counters of a kind, in order, read back from the log, each with
//! the occurrence that made it and the response or rule that made that occurrence.

use crate::model::error::ActionError;
use crate::model::ids::{CounterId, ObjectId, PlayerId, PropId};
use crate::model::occurrence::{LogEntry, Logged};
use crate::model::value::Arg;
use crate::state::GameState;

/// One change to a counter count: what made it, and the count before and after.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CounterStep {
    /// The response or rule whose deed made the change ("Farm Grant \"Each planet gets 5...\""),
    /// if one did.
    pub by: Option<String>,
    /// The occurrence that made it, in words (`current_changes(Earth, farming, 5)`, or the current
    /// values growing).
    pub what: String,
    /// The count before.
    pub before: i64,
    /// The count after.
    pub after: i64,
}

/// How an object's count of a kind of counters came to be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Accounting {
    /// Each change, oldest first.
    pub steps: Vec<CounterStep>,
    /// The count now.
    pub count: i64,
    /// What the log does not account for (0 where every change went through a logged
    /// occurrence; counters an object entered with are not logged).
    pub unaccounted: i64,
}

impl GameState {
    /// Every change to `object`'s counters of `kind`, from the log, with what made each. An id that
    /// names no object or no counter kind is an error.
    pub fn account(&self, object: ObjectId, kind: CounterId) -> Result<Accounting, ActionError> {
        let obj = self.object(object)?;
        if kind.index() >= self.ruleset.counters.len() {
            return Err(ActionError::NoSuchCounter(kind.0));
        }
        let placed = self.ruleset.builtin.as_ref().map(|b| b.counters_placed);
        let entries = self.log();
        let mut steps = Vec::new();
        let mut count = 0i64;
        for (i, e) in entries.iter().enumerate() {
            let by = match &e.what {
                Logged::Happened { occurrence } if Some(occurrence.event) == placed => {
                    let args = &occurrence.args;
                    let on = matches!(args.first(), Some(Arg::Object(o)) if *o == object);
                    let of = matches!(args.get(2), Some(Arg::Counter(k)) if *k == kind);
                    match (on && of, args.get(1)) {
                        (true, Some(Arg::Number(n))) => *n,
                        _ => continue,
                    }
                }
                Logged::CurrentValues { changes, .. } => {
                    match changes.iter().find(|c| c.0 == object && c.1 == kind) {
                        Some(c) => c.2,
                        None => continue,
                    }
                }
                _ => continue,
            };
            let before = count;
            count = (count + by).max(0);
            let (what, cause) = context(self, &entries, i);
            steps.push(CounterStep {
                by: cause,
                what,
                before,
                after: count,
            });
        }
        let now = obj.counter_count(kind).unwrap_or(0);
        Ok(Accounting {
            steps,
            count: now,
            unaccounted: now - count,
        })
    }
}

/// One change to a player's property that holds symbols: what made it, and the symbol added or
/// removed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymbolStep {
    /// The response or rule whose deed made the change, if one did.
    pub by: Option<String>,
    /// The occurrence that made it, in words (`tech_availability_set(Ann, Algae Farming, 1)`).
    pub what: String,
    /// The symbol (a class's name).
    pub symbol: String,
    /// Added (or removed).
    pub added: bool,
}

impl GameState {
    /// Every change to a player's property that holds symbols (FreeOrion's empire's available
    /// techs and buildable classes), from the log, with what made each: each occurrence that
    /// happened whose event adds a class's name to that property of that player or removes it
    /// (an occurrence that would have changed nothing failed, and is not listed). A bad id is an
    /// error.
    pub fn account_symbols(
        &self,
        player: PlayerId,
        prop: PropId,
    ) -> Result<Vec<SymbolStep>, ActionError> {
        self.check_player(player)?;
        if prop.index() >= self.ruleset.props.len() {
            return Err(ActionError::NoSuchProperty(prop.0));
        }
        let entries = self.log();
        let mut steps = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            let Logged::Happened { occurrence } = &e.what else {
                continue;
            };
            let args = &occurrence.args;
            for c in &self.ruleset.event_kind(occurrence.event).changes {
                let crate::model::event::Primitive::Classes {
                    player: pi,
                    prop: q,
                    class,
                    on,
                } = c
                else {
                    continue;
                };
                let whose = matches!(args.get(*pi as usize), Some(Arg::Player(p)) if *p == player);
                let Some(Arg::Class(k)) = args.get(*class as usize) else {
                    continue;
                };
                let Some(name) = self.content.classes.get(k.index()).map(|c| c.name.clone()) else {
                    continue;
                };
                if *q != prop || !whose {
                    continue;
                }
                let added = match on {
                    crate::model::event::Amount::Const(n) => *n != 0,
                    crate::model::event::Amount::Param(j) => {
                        !matches!(args.get(*j as usize), Some(Arg::Number(0)))
                    }
                };
                let (what, by) = context(self, &entries, i);
                steps.push(SymbolStep {
                    by,
                    what,
                    symbol: name,
                    added,
                });
            }
        }
        Ok(steps)
    }
}

/// What made the change logged at `i`: the occurrence it belongs to (the nearest shallower
/// occurrence of the ruleset's own, else the entry itself) and the response or rule above it.
fn context(state: &GameState, entries: &[&LogEntry], i: usize) -> (String, Option<String>) {
    let here = entries[i];
    let mut what = match &here.what {
        Logged::Happened { occurrence } => occurrence.display(state),
        Logged::CurrentValues { capped: true, .. } => "capped by its max value".to_string(),
        Logged::CurrentValues { capped: false, .. } => "grows".to_string(),
        other => LogEntry {
            depth: 0,
            what: other.clone(),
        }
        .display(state),
    };
    let grouped = matches!(here.what, Logged::CurrentValues { .. });
    let mut depth = here.depth;
    let mut by = None;
    let mut named = false;
    // The parent of an entry is the latest entry before it that is one shallower.
    for e in entries[..i].iter().rev() {
        if e.depth >= depth {
            continue;
        }
        depth = e.depth;
        match &e.what {
            Logged::Starts { occurrence } | Logged::Happened { occurrence }
                if !state.ruleset.is_builtin(occurrence.event) && !named =>
            {
                named = true;
                what = if grouped {
                    format!("{what} ({})", occurrence.display(state))
                } else {
                    occurrence.display(state)
                };
            }
            Logged::Response { by: r, .. } => {
                by = Some(r.display(state));
                break;
            }
            _ => {}
        }
    }
    (what, by)
}
