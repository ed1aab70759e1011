//! Explanations in words: an object's characteristics and a player's properties, each with
//! the effects that made it, in layer order.

use crate::model::derived::Derived;
use crate::model::error::ActionError;
use crate::model::ids::{CharId, CounterId, ObjectId, PlayerId};
use crate::state::GameState;

/// Prints how one characteristic got its value: base value, then each step in the order applied.
/// An id that names no object or characteristic of this state and derivation is an error.
pub fn describe_char(
    state: &GameState,
    d: &Derived,
    o: ObjectId,
    c: CharId,
) -> Result<String, ActionError> {
    state.object(o)?;
    let name = |p: PlayerId| state.player_name(p).to_string();
    let rs = &state.ruleset;
    let final_v = d
        .sheet
        .objects
        .get_row(o.index())
        .ok_or(ActionError::NoSuchObject(o.0))?
        .get(c.index())
        .ok_or(ActionError::NoSuchCharacteristic(c.0))?;
    let mut out = format!(
        "{} = {}\n",
        rs.char_def(c).name,
        final_v.display_with(&name)
    );
    if let Some(e) = &d.explanation {
        let base = &e.base.objects[o.index()][c.index()];
        out.push_str(&format!("    base: {}\n", base.display_with(&name)));
        for s in &e.objects[o.index()][c.index()] {
            out.push_str(&format!(
                "    layer {} ({}): {} \"{}\": {} -> {}\n        why here: {}\n",
                s.layer,
                s.layer_name,
                s.source,
                s.text,
                s.before.display_with(&name),
                s.after.display_with(&name),
                s.reason
            ));
        }
    }
    Ok(out)
}

/// Prints an object's zone, timestamp, every characteristic with how it was derived, and its
/// counters by kind ([`describe_counters`]).
pub fn describe_object(state: &GameState, d: &Derived, o: ObjectId) -> Result<String, ActionError> {
    let obj = state.object(o)?;
    let rs = &state.ruleset;
    let mut out = format!(
        "{} (object #{}, owner {}, in {}, timestamp {})\n",
        obj.name,
        o.0,
        state.player_name(obj.owner),
        rs.zone_def(obj.zone).name,
        obj.timestamp.0
    );
    for (i, _) in rs.characteristics.iter().enumerate() {
        let c = CharId(i as u16);
        out.push_str("  ");
        out.push_str(&describe_char(state, d, o, c)?);
    }
    // Indented as a characteristic is: its first line by two spaces.
    for line in describe_counters(state, o)?.lines() {
        if !line.starts_with(' ') {
            out.push_str("  ");
        }
        out.push_str(line);
        out.push('\n');
    }
    Ok(out)
}

/// The counters on an object, by kind in the order the ruleset declares them, as expectations
/// write them: `counters(damage) = 2`, then each placement with its timestamp (CR 613.4c orders
/// number counters by it); `counters(any) = 0` for an object with none. An id that names no
/// object of this state is an error.
pub fn describe_counters(state: &GameState, o: ObjectId) -> Result<String, ActionError> {
    let obj = state.object(o)?;
    let mut out = String::new();
    for (i, def) in state.ruleset.counters.iter().enumerate() {
        let kind = CounterId(i as u16);
        let placed: Vec<_> = obj.counters.iter().filter(|c| c.kind == kind).collect();
        if placed.is_empty() {
            continue;
        }
        let count = obj
            .counter_count(kind)
            .map_or_else(|| "none".to_string(), |n| n.to_string());
        let list: Vec<String> = placed
            .iter()
            .map(|c| format!("{} at timestamp {}", c.count, c.timestamp.0))
            .collect();
        out.push_str(&format!(
            "{} = {count}\n    placed: {}\n",
            counters_of(&def.name),
            list.join(", ")
        ));
        // A meter's current value accounts for itself, change by change, from the log.
        if state.ruleset.meter_of_counter(kind).is_some() {
            let a = state.account(o, kind)?;
            for step in &a.steps {
                let by = step
                    .by
                    .as_ref()
                    .map(|b| format!(" by {b}"))
                    .unwrap_or_default();
                out.push_str(&format!(
                    "    {}{}: {} -> {}\n",
                    step.what, by, step.before, step.after
                ));
            }
            if a.unaccounted != 0 {
                out.push_str(&format!("    not in the log: {:+}\n", a.unaccounted));
            }
        }
    }
    if out.is_empty() {
        out.push_str("counters(any) = 0\n");
    }
    Ok(out)
}

/// `counters(KIND)` as the language writes it: a kind that is not one word in quotes
/// (`counters("+1/+1")`).
pub fn counters_of(kind: &str) -> String {
    let word = kind.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && kind.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if word {
        format!("counters({kind})")
    } else {
        format!("counters({kind:?})")
    }
}

/// Prints a player's properties with how each was derived.
pub fn describe_player(state: &GameState, d: &Derived, p: PlayerId) -> Result<String, ActionError> {
    let rs = &state.ruleset;
    let row = d
        .sheet
        .players
        .get(p.index())
        .filter(|_| p.index() < state.players.len())
        .ok_or(ActionError::NoSuchPlayer(p.0))?;
    let mut out = format!("{} (player)\n", state.player_name(p));
    for (i, prop) in rs.props.iter().enumerate() {
        let v = row.get(i).ok_or(ActionError::NoSuchProperty(i as u16))?;
        out.push_str(&format!("  {} = {}\n", prop.name, v));
        if let Some(e) = &d.explanation {
            out.push_str(&format!("    base: {}\n", e.base.players[p.index()][i]));
            for s in &e.players[p.index()][i] {
                out.push_str(&format!(
                    "    layer {} ({}): {} \"{}\": {} -> {}\n        why here: {}\n",
                    s.layer, s.layer_name, s.source, s.text, s.before, s.after, s.reason
                ));
            }
        }
        // A set of class names accounts for itself, change by change, from the log.
        if prop.symbols {
            for s in state.account_symbols(p, crate::model::ids::PropId(i as u16))? {
                let by = s.by.map(|b| format!(" by {b}")).unwrap_or_default();
                let how = if s.added { "adds" } else { "removes" };
                out.push_str(&format!("    {}{by}: {how} {}\n", s.what, s.symbol));
            }
        }
    }
    Ok(out)
}
