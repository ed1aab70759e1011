//! Occurrences, responses and log lines in words, with objects and players by name.

use crate::model::occurrence::{LogEntry, Logged, Occurrence, Responder, Why};
use crate::model::value::Arg;
use crate::state::GameState;

impl Occurrence {
    /// "gains_honor(Bob, 1)", with objects and players by name.
    pub fn display(&self, state: &GameState) -> String {
        let kind = state.ruleset.event_kind(self.event);
        let args: Vec<String> = self.args.iter().map(|a| a.display(state)).collect();
        if args.is_empty() {
            kind.name.to_string()
        } else {
            format!("{}({})", kind.name, args.join(", "))
        }
    }
}

impl Arg {
    /// The argument in words: objects, players, zones, counter kinds and properties by name.
    pub fn display(&self, state: &GameState) -> String {
        match self {
            Arg::Object(o) => state
                .get_object(*o)
                .map(|x| x.name.to_string())
                .unwrap_or_else(|| format!("object {}", o.0)),
            Arg::Player(p) => state.player_name(*p).to_string(),
            Arg::Number(n) => n.to_string(),
            Arg::Zone(z) => state
                .ruleset
                .zones
                .get(z.index())
                .map_or_else(|| format!("zone {}", z.0), |d| d.name.to_string()),
            Arg::Counter(c) => state
                .ruleset
                .counters
                .get(c.index())
                .map_or_else(|| format!("counter {}", c.0), |d| d.name.to_string()),
            Arg::Property(q) => state
                .ruleset
                .props
                .get(q.index())
                .map_or_else(|| format!("property {}", q.0), |d| d.name.to_string()),
            Arg::Class(k) => state
                .content
                .classes
                .get(k.index())
                .map_or_else(|| format!("class {}", k.0), |c| c.name.clone()),
        }
    }
}

impl Responder {
    /// Who responded, in words: the source's name and the response's rules text, or `rule` and its
    /// text for a rulebook rule.
    pub fn display(&self, state: &GameState) -> String {
        match self.source.and_then(|s| state.get_object(s)) {
            Some(o) => format!("{} \"{}\"", o.name, self.text),
            None => format!("rule \"{}\"", self.text),
        }
    }
}

impl LogEntry {
    /// The line as text, with objects and players by name.
    pub fn display(&self, state: &GameState) -> String {
        let occ = |o: &Occurrence| o.display(state);
        let text = match &self.what {
            Logged::Starts { occurrence } => format!("{}: starts", occ(occurrence)),
            Logged::Happened { occurrence } => format!("{}: happens", occ(occurrence)),
            Logged::Failed { occurrence } => format!(
                "{}: fails: it would change nothing (failure comes before any effect)",
                occ(occurrence)
            ),
            Logged::Moved { occurrence } => format!(
                "{}: does not happen: a card it is about changed zones since it began, and is a new object (CR 400.7)",
                occ(occurrence)
            ),
            Logged::Prohibited { occurrence, by } => format!(
                "{}: does not happen: prohibited by {}",
                occ(occurrence),
                by.display(state)
            ),
            Logged::Negated { occurrence, by } => format!(
                "{}: its effects are negated by {}",
                occ(occurrence),
                by.display(state)
            ),
            Logged::Immune {
                occurrence,
                by,
                what,
            } => format!(
                "{} cannot {what} {}",
                by.display(state),
                occ(occurrence)
            ),
            Logged::Prevented { occurrence, by } => {
                format!("{}: does not happen: {}", occ(occurrence), by.display(state))
            }
            Logged::Substituted {
                occurrence,
                by,
                with,
            } => format!(
                "{}: does not happen: {} instead, by {}",
                occ(occurrence),
                occ(with),
                by.display(state)
            ),
            Logged::Amount {
                occurrence,
                from,
                to,
                by,
            } => format!(
                "{}: amount {} -> {} by {}",
                occ(occurrence),
                from,
                to,
                by.display(state)
            ),
            Logged::Param {
                occurrence,
                param,
                to,
                by,
            } => format!(
                "{}: {} -> {} by {}",
                occ(occurrence),
                param,
                to.display(state),
                by.display(state)
            ),
            Logged::Zero { occurrence } => format!(
                "{}: reduced to 0 once step B is over: no longer a change for Reactions or later triggers",
                occ(occurrence)
            ),
            Logged::Response {
                occurrence,
                point,
                step,
                by,
                why,
            } => {
                let why = match why {
                    Why::Only => "the only one".to_string(),
                    Why::Chosen { by, among } => format!(
                        "chosen by {} among {}",
                        state.player_name(*by),
                        among
                    ),
                    Why::Taken { by } => format!("taken by {}", state.player_name(*by)),
                };
                format!(
                    "{} {}: step {}: {} ({})",
                    point.name(),
                    occ(occurrence),
                    step,
                    by.display(state),
                    why
                )
            }
            Logged::Fizzled { by, why } => format!("{}: does nothing: {}", by.display(state), why),
            Logged::Passed { player, step } => {
                format!("step {}: {} passes", step, state.player_name(*player))
            }
            Logged::Played { player, label } => {
                format!("{} plays: {}", state.player_name(*player), label)
            }
            Logged::AddedToBatch { item, by } => {
                format!("added to the batch as item {item}: {}", by.display(state))
            }
            Logged::BeingCast { item, by } => {
                format!("being cast, as item {item}: {} (interrupts may come, its caster first)", by.display(state))
            }
            Logged::BatchComplete { items } => {
                format!("the batch is complete: {items} item(s) resolve, last in first out")
            }
            Logged::BatchResolves { item, by } => {
                format!("batch item {item} resolves: {}", by.display(state))
            }
            Logged::Delayed { by, text } => {
                format!("{}: sets up \"{}\"", by.display(state), text)
            }
            Logged::EffectStarts { by, subjects } => {
                format!(
                    "{}: an effect starts, applying to {} subject(s)",
                    by.display(state),
                    subjects
                )
            }
            Logged::GameOver { winner } => match winner {
                Some(p) => format!("the game is over: {} wins", state.player_name(*p)),
                None => "the game is over: a draw".to_string(),
            },
            Logged::CurrentValues { capped, changes } => format!(
                "current values {}: {} change(s)",
                if *capped { "are capped by their max" } else { "grow" },
                changes.len()
            ),
            Logged::Period {
                occurrence,
                begins,
            } => format!(
                "{} {}",
                occ(occurrence),
                if *begins { "begins" } else { "ends" }
            ),
        };
        format!("{}{}", "  ".repeat(self.depth as usize), text)
    }
}
