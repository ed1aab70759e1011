//! What every kind of file may write: terms (`term NAME: COND`) and the names of the ruleset's
//! zones and characteristics, looked up.

use super::cond::{condition, Allow};
use super::cursor::{unknown, Cursor, Res};
use super::{no_block, Env};
use crate::diagnostics::{Diagnostic, Span};
use crate::syntax::Stmt;
use rulecraft_core::model::ids::CounterId;
use rulecraft_core::{CharId, PropId, ZoneId};

/// `term NAME: COND`, in a ruleset or a content file: a name for a condition, usable after it.
pub fn term_stmt(env: &mut Env, s: &Stmt) -> Res<()> {
    no_block(s)?;
    let mut c = Cursor::new(&s.head);
    c.expect_word("term")?;
    let (name, ns) = c.name("a term name")?;
    if env.terms.contains_key(&name) {
        return Err(Diagnostic::new(
            ns,
            format!("term `{name}` is declared twice"),
        ));
    }
    c.expect_punct(":")?;
    let cond = condition(env, &mut c, Allow::default())?;
    c.finish()?;
    env.terms.insert(name, cond);
    Ok(())
}

/// The zone of this name, or `unknown zone` with the ruleset's zones.
pub(crate) fn zone(env: &Env, z: &str, zs: Span) -> Res<ZoneId> {
    env.ruleset.zone_id(z).ok_or_else(|| {
        unknown(
            zs,
            "zone",
            z,
            env.ruleset.zones.iter().map(|z| z.name.as_str()),
        )
    })
}

/// `ZONE, ZONE, ...` (`works in:`).
/// A counter kind of the ruleset, by name (a string where it is not a plain word: `"+1/+1"`).
pub(crate) fn counter_named(env: &Env, c: &mut Cursor) -> Res<CounterId> {
    let rs = &env.ruleset;
    let (n, sp) = c.name_or_string("a counter name")?;
    rs.counter_id(&n).ok_or_else(|| {
        unknown(
            sp,
            "counter",
            &n,
            rs.counters.iter().map(|c| c.name.as_str()),
        )
    })
}

/// A player property of the ruleset, by name.
pub(crate) fn prop_named(env: &Env, c: &mut Cursor) -> Res<PropId> {
    prop_named_at(env, c).map(|(p, _)| p)
}

/// A player property of the ruleset, by name, with where its name is written.
pub(crate) fn prop_named_at(env: &Env, c: &mut Cursor) -> Res<(PropId, Span)> {
    let rs = &env.ruleset;
    let (n, sp) = c.name("a player property")?;
    let p = rs.prop_id(&n).ok_or_else(|| {
        unknown(
            sp,
            "player property",
            &n,
            rs.props.iter().map(|p| p.name.as_str()),
        )
    })?;
    Ok((p, sp))
}

pub(crate) fn zone_list(env: &Env, c: &mut Cursor) -> Res<Vec<ZoneId>> {
    let mut zones = Vec::new();
    loop {
        let (z, zs) = c.name("a zone")?;
        zones.push(zone(env, &z, zs)?);
        if !c.eat_punct(",") {
            return Ok(zones);
        }
    }
}

/// The characteristic of this name, or `unknown characteristic` with the ruleset's.
pub(crate) fn char_named(env: &Env, n: &str, sp: Span) -> Res<CharId> {
    let rs = &env.ruleset;
    rs.char_id(n).ok_or_else(|| {
        unknown(
            sp,
            "characteristic",
            n,
            rs.characteristics.iter().map(|c| c.name.as_str()),
        )
    })
}
