//! Events, the timing procedure and responses (docs/language.md, "Events and timing"): event
//! kinds and their changes, the steps run at every timing point, and the triggered traits,
//! Reactions, replacement effects, rulebook effects and delayed effects that answer occurrences.

use super::common::{zone, zone_list};
use super::cond::{condition, num, Allow};
use super::cursor::{unknown, Cursor, Res};
use super::defs::{char_def, event_def};
use super::effect::{duration, effect, EffectKind};
use super::{block, no_block, Env};
use crate::diagnostics::{Diagnostic, Span};
use crate::syntax::Stmt;
use rulecraft_core::model::condition::TargetSpec;
use rulecraft_core::model::condition::{NumExpr, ObjRef, PlayerRef};
use rulecraft_core::model::event::{Amount, EventKind, ParamDef, ParamKind, ParamOr, Primitive};
use rulecraft_core::model::response::{
    ArgExpr, Deed, DelayedDef, Pattern, ResponseDef, ResponseKind, Trigger,
};
use rulecraft_core::model::response::{Lasting, Standing};
use rulecraft_core::model::timing::{Point, Responds, Taking, TimingStep};
use rulecraft_core::EventId;
use std::sync::Arc;

/// `event NAME(PARAM: KIND, ...) { CHANGE ... }`, or `period` / `turn` for a period.
pub fn event_decl(env: &mut Env, s: &Stmt) -> Res<()> {
    let mut c = Cursor::new(&s.head);
    let (kw, _) = c.name("`event`, `period` or `turn`")?;
    let (name, ns) = c.name("the event's name")?;
    if rulecraft_core::model::ruleset::Builtin::NAMES.contains(&name.as_str()) {
        return Err(Diagnostic::new(
            ns,
            format!("`{name}` is a built-in event (the engine's own actions are occurrences of it): choose another name"),
        ));
    }
    if env.ruleset.event_id(&name).is_some() {
        return Err(Diagnostic::new(
            ns,
            format!("event `{name}` is declared twice"),
        ));
    }
    let mut params: Vec<ParamDef> = Vec::new();
    if c.eat_punct("(") && !c.eat_punct(")") {
        loop {
            let (p, ps) = c.name("a parameter name")?;
            if params.iter().any(|x| *x.name == *p) {
                return Err(Diagnostic::new(
                    ps,
                    format!("parameter `{p}` is declared twice"),
                ));
            }
            c.expect_punct(":")?;
            let (k, ks) = c.name(
                "a parameter kind: object, player, any, number, zone, counter, property or class",
            )?;
            let kind = match k.as_str() {
                // `tech: class of tech`: an object class of the content, of that type.
                "class" if c.eat_word("of") => {
                    let (t, ts) = c.name("an object type")?;
                    let Some(ty) = env.ruleset.type_id(&t) else {
                        return Err(unknown(
                            ts,
                            "object type",
                            &t,
                            env.ruleset.types.iter().map(|t| t.name.as_str()),
                        ));
                    };
                    ParamKind::Class(Some(ty))
                }
                "class" => ParamKind::Class(None),
                "any" => ParamKind::Any,
                "object" => ParamKind::Object,
                "player" => ParamKind::Player,
                "number" => ParamKind::Number,
                "zone" => ParamKind::Zone,
                "counter" => ParamKind::Counter,
                "property" => ParamKind::Property,
                _ => {
                    return Err(unknown(
                        ks,
                        "parameter kind",
                        &k,
                        [
                            "object", "player", "any", "number", "zone", "counter", "property",
                            "class",
                        ],
                    ))
                }
            };
            params.push(ParamDef {
                name: Arc::from(p.as_str()),
                kind,
            });
            if c.eat_punct(")") {
                break;
            }
            c.expect_punct(",")?;
        }
    }
    c.finish()?;
    if params.len() > 16 {
        return Err(Diagnostic::new(ns, "an event has at most 16 parameters"));
    }
    let mut kind = EventKind {
        name: Arc::from(name.as_str()),
        params,
        changes: Vec::new(),
        amount: None,
        period: kw != "event",
        turn: kw == "turn",
        ordered_by: None,
        any_order: Vec::new(),
    };
    let mut phases = Vec::new();
    let mut phase_ends = Vec::new();
    if let Some(b) = &s.block {
        for item in &b.stmts {
            no_block(item)?;
            if kw == "turn" && item.head[0].is_word("phase") {
                phases.push(item);
                continue;
            }
            if kw == "turn" && item.head[0].is_word("each") {
                phase_ends.push(item);
                continue;
            }
            change_item(env, &mut kind, item)?;
        }
    }
    let turn_params = kind.params.clone();
    let turn = EventId(env.ruleset.events.len() as u16);
    env.ruleset.events.push(kind);
    if !phases.is_empty() {
        phase_decls(env, turn, &turn_params, &phases)?;
    }
    for item in phase_ends {
        // `each phase ends: EVENT, ...`: events with one player parameter.
        let mut c = Cursor::new(&item.head);
        for w in ["each", "phase", "ends"] {
            c.expect_word(w)?;
        }
        c.expect_punct(":")?;
        let Some(ts) = env.ruleset.turn_structure.as_ref() else {
            return Err(Diagnostic::new(
                item.head[0].span,
                "`each phase ends:` needs the turn's phases (`phase NAME`)",
            ));
        };
        let mut events = ts.phase_ends.clone();
        loop {
            let (e, es) = event_named(env, &mut c, "an event with one player parameter")?;
            let k = event_def(&env.ruleset, e);
            if !matches!(&k.params[..], [p] if p.kind == ParamKind::Player) || k.period {
                return Err(Diagnostic::new(
                    es,
                    format!("`{}` must be an event with one player parameter", k.name),
                ));
            }
            events.push(e);
            if !c.eat_punct(",") {
                break;
            }
        }
        c.finish()?;
        if let Some(ts) = env.ruleset.turn_structure.as_mut() {
            ts.phase_ends = events;
        }
    }
    Ok(())
}

/// A turn's `phase NAME[: fast][, main]` lines: each phase is a period with the turn's
/// parameters, begun and ended by the engine in this order once a game is started.
fn phase_decls(env: &mut Env, turn: EventId, params: &[ParamDef], items: &[&Stmt]) -> Res<()> {
    if env.ruleset.turn_structure.is_some() {
        return Err(Diagnostic::new(
            items[0].head[0].span,
            "a ruleset has one turn structure: this is the second `turn` with phases",
        ));
    }
    if !matches!(params, [p] if p.kind == ParamKind::Player) {
        return Err(Diagnostic::new(
            items[0].head[0].span,
            "a turn with phases has one parameter, its player: `turn turn(player: player)`",
        ));
    }
    let mut phases = Vec::new();
    for item in items {
        let mut c = Cursor::new(&item.head);
        c.expect_word("phase")?;
        let (name, ns) = c.name("the phase's name")?;
        if env.ruleset.event_id(&name).is_some()
            || rulecraft_core::model::ruleset::Builtin::NAMES.contains(&name.as_str())
        {
            return Err(Diagnostic::new(
                ns,
                format!("event `{name}` is declared twice"),
            ));
        }
        let (mut fast, mut main) = (false, false);
        if c.eat_punct(":") {
            loop {
                let (w, ws) = c.name("`fast` or `main`")?;
                match w.as_str() {
                    "fast" if !fast => fast = true,
                    "main" if !main => main = true,
                    _ => return Err(unknown(ws, "phase flag", &w, ["fast", "main"])),
                }
                if !c.eat_punct(",") {
                    break;
                }
            }
        }
        c.finish()?;
        let event = EventId(env.ruleset.events.len() as u16);
        env.ruleset.events.push(EventKind {
            name: Arc::from(name.as_str()),
            params: params.to_vec(),
            changes: Vec::new(),
            amount: None,
            period: true,
            turn: false,
            ordered_by: None,
            any_order: Vec::new(),
        });
        phases.push(rulecraft_core::model::batch::PhaseDef { event, fast, main });
    }
    env.ruleset.turn_structure = Some(rulecraft_core::model::batch::TurnStructure {
        turn,
        phases,
        phase_ends: Vec::new(),
    });
    Ok(())
}

/// `play "LABEL" { from: ZONE; cards: COND; when: fast|main; once per turn; cast | activate |
/// DEED... }`: a kind of play the game offers a player (lowered once the built-in events exist,
/// which its deeds may name).
pub fn play_decl(env: &mut Env, s: &Stmt) -> Res<()> {
    use rulecraft_core::model::batch::{PlayDef, PlayKind, PlayTiming};
    let mut c = Cursor::new(&s.head);
    c.expect_word("play")?;
    let (label, _) = c.string("the play's label")?;
    c.finish()?;
    let mut from = None;
    let mut cards = None;
    let mut timing = None;
    let mut once_per_turn = false;
    let mut unless_batch = false;
    let mut only_if = None;
    let mut kind: Option<PlayKind> = None;
    let mut deeds = Vec::new();
    for item in block(s, "the play: `from:`, `cards:`, `when:` and what it does")? {
        no_block(item)?;
        let mut c = Cursor::new(&item.head);
        if c.eat_word("from") {
            c.expect_punct(":")?;
            let (z, zs) = c.name("a zone")?;
            from = Some(zone(env, &z, zs)?);
        } else if c.eat_word("cards") {
            c.expect_punct(":")?;
            cards = Some(condition(env, &mut c, Allow::default())?);
        } else if c.eat_word("when") {
            c.expect_punct(":")?;
            let (w, ws) = c.name("`fast`, `main` or `interrupt`")?;
            timing = Some(match w.as_str() {
                "fast" => PlayTiming::Fast,
                "main" => PlayTiming::Main,
                "interrupt" => PlayTiming::Interrupt,
                _ => {
                    return Err(unknown(
                        ws,
                        "play timing",
                        &w,
                        ["fast", "main", "interrupt"],
                    ))
                }
            });
        } else if c.eat_words(&["once", "per", "turn"]) {
            once_per_turn = true;
        } else if c.eat_word("if") {
            c.expect_punct(":")?;
            only_if = Some(condition(env, &mut c, Allow::default())?);
        } else if c.eat_words(&["unless", "a", "batch", "begins"]) {
            unless_batch = true;
        } else if c.eat_word("cast") {
            kind = Some(if c.eat_word("into") {
                // `cast into play`: a permanent spell, put into that zone as it resolves.
                let (z, zs) = c.name("the zone a permanent spell is put into")?;
                let z = zone(env, &z, zs)?;
                if !env.ruleset.zones[z.index()].in_play {
                    return Err(Diagnostic::new(
                        zs,
                        format!(
                            "a permanent spell is put into a zone in play: `{}` is not declared `: in play`",
                            env.ruleset.zones[z.index()].name
                        ),
                    ));
                }
                PlayKind::CastInto(z)
            } else {
                PlayKind::Cast
            });
        } else if c.eat_word("activate") {
            kind = Some(PlayKind::Activate);
        } else if c.eat_words(&["phase", "costs"]) {
            // Pay or decline each permanent's phase cost due now.
            kind = Some(PlayKind::PhaseCost);
        } else {
            deeds.push(spell_deed(env, &mut c, 0)?);
        }
        c.finish()?;
    }
    let span = s.head[0].span;
    let kind = match (kind, deeds.is_empty()) {
        (Some(k), true) => k,
        (None, false) => PlayKind::Deeds(deeds),
        (Some(_), false) => {
            return Err(Diagnostic::new(
                span,
                "a play either casts, activates, or does its deeds: not more than one",
            ))
        }
        (None, true) => {
            return Err(Diagnostic::new(
                span,
                "a play needs what it does: `cast`, `activate`, or an event such as `changes_zone(this, hand, battlefield)`",
            ))
        }
    };
    let Some(timing) = timing else {
        return Err(Diagnostic::new(
            span,
            "a play needs `when: fast`, `when: main` or `when: interrupt`",
        ));
    };
    let casts = matches!(kind, PlayKind::Cast | PlayKind::CastInto(_));
    if matches!(kind, PlayKind::PhaseCost) && timing != PlayTiming::Fast {
        return Err(Diagnostic::new(
            span,
            "paying a phase cost (or declining to) is played as an instant: `when: fast`",
        ));
    }
    if timing == PlayTiming::Interrupt && !matches!(kind, PlayKind::Cast) {
        return Err(Diagnostic::new(
            span,
            "an interrupt is a spell cast while another is being cast: `when: interrupt` plays `cast`",
        ));
    }
    if from.is_none() && casts {
        return Err(Diagnostic::new(
            span,
            "a play of a card needs the zone it is played from: `from: hand`",
        ));
    }
    if unless_batch && (timing != PlayTiming::Main || !matches!(kind, PlayKind::Deeds(_))) {
        return Err(Diagnostic::new(
            span,
            "`unless a batch begins` is for a play of deeds in the neutral state of a main phase (`when: main`), such as announcing an attack",
        ));
    }
    if only_if.is_some() && (from.is_some() || !matches!(kind, PlayKind::Deeds(_))) {
        return Err(Diagnostic::new(
            span,
            "`if:` is for a play of no card (tested on the player); a play of cards says which with `cards:`",
        ));
    }
    if from.is_none() && cards.is_some() && matches!(kind, PlayKind::Deeds(_)) {
        return Err(Diagnostic::new(
            span,
            "`cards:` says which cards a play is for: it needs `from: ZONE` (or `activate`)",
        ));
    }
    if casts && env.ruleset.wait_zone.is_none() {
        return Err(Diagnostic::new(
            span,
            "a play that casts needs the zone where spells wait: `spells wait in: ZONE`",
        ));
    }
    env.ruleset.plays.push(PlayDef {
        label: Arc::from(label.as_str()),
        from,
        cards,
        timing,
        once_per_turn,
        kind,
        unless_batch,
        only_if,
    });
    Ok(())
}

/// What a timing step takes: `replacements`, `triggered` or `reactions`.
fn responds(c: &mut Cursor) -> Res<Responds> {
    let (r, rsp) = c.name("a kind of response: replacements, triggered or reactions")?;
    match r.as_str() {
        "replacements" => Ok(Responds::Replacements),
        "triggered" => Ok(Responds::Triggered),
        "reactions" => Ok(Responds::Reactions),
        _ => Err(unknown(
            rsp,
            "kind of response",
            &r,
            ["replacements", "triggered", "reactions"],
        )),
    }
}

/// A `state` characteristic of the ruleset, by name.
fn state_char(rs: &rulecraft_core::Ruleset, what: &str, ws: Span) -> Res<rulecraft_core::CharId> {
    rs.char_id(what)
        .filter(|ch| char_def(rs, *ch).state)
        .ok_or_else(|| {
            unknown(
                ws,
                "state characteristic",
                what,
                rs.characteristics
                    .iter()
                    .filter(|x| x.state)
                    .map(|x| x.name.as_str()),
            )
        })
}

fn param_of(kind: &EventKind, c: &mut Cursor, want: ParamKind) -> Res<u8> {
    let (p, ps) = c.name(&format!("a parameter of `{}`", kind.name))?;
    let Some(i) = kind.param(&p) else {
        return Err(unknown(
            ps,
            "parameter",
            &p,
            kind.params.iter().map(|x| &*x.name),
        ));
    };
    let got = kind.params[i as usize].kind;
    // An object-or-player parameter names either in a change; the change is made for its kind.
    let either = got == ParamKind::Any && matches!(want, ParamKind::Object | ParamKind::Player);
    if got != want && !either {
        return Err(Diagnostic::new(
            ps,
            format!(
                "`{p}` is a {} parameter: expected a {} one here",
                got.name(),
                want.name()
            ),
        ));
    }
    Ok(i)
}

fn amount(kind: &EventKind, c: &mut Cursor) -> Res<Amount> {
    if let Some(t) = c.peek() {
        if t.word().is_some() {
            return Ok(Amount::Param(param_of(kind, c, ParamKind::Number)?));
        }
    }
    Ok(Amount::Const(c.number("a number or a number parameter")?.0))
}

/// One change of an event: `card status += bowed`, `player honor += amount`,
/// `move card to discard`, `put amount "+1F" on card`, `size: amount`.
fn change_item(env: &Env, kind: &mut EventKind, item: &Stmt) -> Res<()> {
    let rs = &env.ruleset;
    let mut c = Cursor::new(&item.head);
    if c.eat_word("size") {
        c.expect_punct(":")?;
        kind.amount = Some(param_of(kind, &mut c, ParamKind::Number)?);
        return c.finish();
    }
    if c.eat_words(&["ordered", "by"]) {
        c.expect_punct(":")?;
        kind.ordered_by = Some(param_of(kind, &mut c, ParamKind::Player)?);
        return c.finish();
    }
    if c.eat_words(&["any", "order"]) {
        // "Gold production from multiple sources to pay a single cost occurs in an order chosen
        // by the player paying the cost, even if this would violate the relative order of steps
        // B and C" (Legend of the Five Rings, "CE Timing").
        c.expect_punct(":")?;
        loop {
            let r = responds(&mut c)?;
            if kind.any_order.contains(&r) {
                return Err(c.err("each kind of response once"));
            }
            kind.any_order.push(r);
            if !c.eat_punct(",") {
                break;
            }
        }
        if kind.any_order.len() < 2 {
            return Err(c.err("`,` and another kind of response: `any order:` names at least two"));
        }
        return c.finish();
    }
    if c.peek().is_some_and(|t| t.is_word("each"))
        && (c.peek_at(1).is_some_and(|t| t.is_word("meter"))
            || c.peek_at(2).is_some_and(|t| t.is_word("meter")))
    {
        // `each meter grows by 1`, `each farming meter is capped`: every object in play that
        // has the meter, its current value grown, or capped by its max value (FreeOrion's turn
        // processing: current-meter growth, then the cap).
        c.bump();
        let meter = if c.eat_word("meter") {
            None
        } else {
            let (m, ms) = c.name("a meter name")?;
            let rs = &env.ruleset;
            let Some(ch) = rs.char_id(&m).filter(|ch| rs.meter_counter(*ch).is_some()) else {
                return Err(unknown(
                    ms,
                    "meter",
                    &m,
                    rs.characteristics
                        .iter()
                        .filter(|d| d.meter)
                        .map(|d| d.name.as_str()),
                ));
            };
            c.expect_word("meter")?;
            Some(ch)
        };
        let growth = if c.eat_word("grows") {
            c.expect_word("by")?;
            let neg = c.eat_punct("-");
            let (n, _) = c.number("a number")?;
            Some(if neg { -n } else { n })
        } else if c.eat_word("is") {
            c.expect_word("capped")?;
            None
        } else {
            return Err(c.err("`grows by N` or `is capped`"));
        };
        kind.changes.push(Primitive::Meters { meter, growth });
        return c.finish();
    }
    if c.eat_words(&["each", "permanent", "loses"]) {
        // `each permanent loses damage counters`: damage wears off (CR 514.2).
        let counter = super::common::counter_named(env, &mut c)?;
        c.expect_word("counters")?;
        kind.changes.push(Primitive::ClearAll { counter });
        return c.finish();
    }
    if c.eat_word("take") {
        // `take AMOUNT from PLAYER PROP, PROP, ...`: generic mana paid from a pool's colors,
        // in the order named (CR 107.4c).
        let amount = amount(kind, &mut c)?;
        c.expect_word("from")?;
        let player = param_of(kind, &mut c, ParamKind::Player)?;
        let mut props = Vec::new();
        loop {
            let (prop, qs) = super::common::prop_named_at(env, &mut c)?;
            if props.contains(&prop) {
                return Err(Diagnostic::new(
                    qs,
                    format!(
                        "`{}` is named twice: each property gives once",
                        rs.props[prop.index()].name
                    ),
                ));
            }
            props.push(prop);
            if !c.eat_punct(",") {
                break;
            }
        }
        kind.changes.push(Primitive::Take {
            player,
            props,
            amount,
        });
        return c.finish();
    }
    if c.eat_words(&["each", "permanent", "of"]) {
        // `each permanent of PLAYER STATE -= SYMBOL`: untap all permanents (CR 502.3).
        let player = param_of(kind, &mut c, ParamKind::Player)?;
        let (what, ws) = c.name("a state characteristic")?;
        let ch = state_char(rs, &what, ws)?;
        let on = if c.eat_punct("+=") {
            true
        } else if c.eat_punct("-=") {
            false
        } else {
            return Err(c.err("`+=` or `-=`"));
        };
        let (sym, _) = c.name_or_string("a state symbol")?;
        kind.changes.push(Primitive::StateAll {
            player,
            char: ch,
            symbol: env.symbol(&sym),
            on,
        });
        return c.finish();
    }
    if c.eat_words(&["move", "top", "of"]) {
        // `move top of PLAYER ZONE to ZONE [else PLAYER PROPERTY += 1]`: a draw.
        let player = param_of(kind, &mut c, ParamKind::Player)?;
        let (z, zs) = c.name("the zone the top card is taken from")?;
        let from = zone(env, &z, zs)?;
        c.expect_word("to")?;
        let (z, zs) = c.name("a zone")?;
        let to = zone(env, &z, zs)?;
        let empty = if c.eat_word("else") {
            let at = c.here();
            let again = param_of(kind, &mut c, ParamKind::Player)?;
            if again != player {
                return Err(Diagnostic::new(
                    at,
                    format!(
                        "`else` counts the empty draw for the player whose zone it is: `{}`",
                        kind.params[player as usize].name
                    ),
                ));
            }
            let prop = super::common::prop_named(env, &mut c)?;
            c.expect_punct("+=")?;
            let (n, ns) = c.number("1")?;
            if n != 1 {
                return Err(Diagnostic::new(
                    ns,
                    "`else ... += 1`: an empty zone counts once",
                ));
            }
            Some(prop)
        } else {
            None
        };
        kind.changes.push(Primitive::MoveTop {
            player,
            from,
            to,
            empty,
        });
        return c.finish();
    }
    if c.eat_word("move") {
        let object = param_of(kind, &mut c, ParamKind::Object)?;
        c.expect_word("to")?;
        let (z, zs) = c.name("a zone or a zone parameter")?;
        let zone = match kind.param(&z) {
            Some(i) if kind.params[i as usize].kind == ParamKind::Zone => ParamOr::Param(i),
            _ => ParamOr::Const(zone(env, &z, zs)?),
        };
        kind.changes.push(Primitive::Move { object, zone });
        return c.finish();
    }
    if c.eat_word("put") {
        let amount = amount(kind, &mut c)?;
        let (k, ks) = c.name_or_string("a counter kind")?;
        // `put amount meter on planet`: a `counter` parameter names the kind.
        let param = kind
            .param(&k)
            .filter(|i| kind.params[*i as usize].kind == ParamKind::Counter);
        let counter = match param {
            Some(i) => ParamOr::Param(i),
            None => ParamOr::Const(rs.counter_id(&k).ok_or_else(|| {
                unknown(
                    ks,
                    "counter",
                    &k,
                    rs.counters.iter().map(|x| x.name.as_str()),
                )
            })?),
        };
        c.eat_word("counter");
        c.eat_word("counters");
        c.expect_word("on")?;
        let object = param_of(kind, &mut c, ParamKind::Object)?;
        kind.changes.push(Primitive::Counters {
            object,
            counter,
            amount,
        });
        return c.finish();
    }
    let (p, ps) = c.name(
        "a change: `PARAM STATE += SYMBOL`, `PARAM PROPERTY += N`, `move`, `put` or `size:`",
    )?;
    let Some(i) = kind.param(&p) else {
        return Err(unknown(
            ps,
            "parameter",
            &p,
            kind.params.iter().map(|x| &*x.name),
        ));
    };
    let (what, ws) = c.name("a state characteristic or a player property")?;
    if kind.params[i as usize].kind == ParamKind::Object
        && c.peek()
            .is_some_and(|t| t.is_punct("=") || t.is_word("steps"))
    {
        return scaled_item(env, kind, &mut c, i, &what, ws);
    }
    // `empire available_techs += tech`, `-= tech`, `has tech = available`: a class's name
    // added to or removed from a player's symbols property.
    if let Some(prop) = rs.prop_id(&what).filter(|q| rs.props[q.index()].symbols) {
        if !matches!(
            kind.params[i as usize].kind,
            ParamKind::Player | ParamKind::Any
        ) {
            return Err(Diagnostic::new(
                ps,
                format!(
                    "`{p}` is a {} parameter: `{what}` is a player property",
                    kind.params[i as usize].kind.name()
                ),
            ));
        }
        let has = c.eat_word("has");
        let on = if has {
            None
        } else if c.eat_punct("+=") {
            Some(Amount::Const(1))
        } else if c.eat_punct("-=") {
            Some(Amount::Const(0))
        } else {
            return Err(c.err(
                "`+= CLASS`, `-= CLASS` or `has CLASS = NUMBER` (a property that holds symbols)",
            ));
        };
        let (cp, cps) = c.name(&format!("a class parameter of `{}`", kind.name))?;
        let class = match kind.param(&cp) {
            Some(k) if matches!(kind.params[k as usize].kind, ParamKind::Class(_)) => k,
            Some(k) => {
                return Err(Diagnostic::new(
                    cps,
                    format!(
                        "`{cp}` is a {} parameter: a symbols property holds a class's name (`{cp}: class`)",
                        kind.params[k as usize].kind.name()
                    ),
                ))
            }
            None => {
                return Err(unknown(
                    cps,
                    "parameter",
                    &cp,
                    kind.params.iter().map(|x| &*x.name),
                ))
            }
        };
        let on = match on {
            Some(on) => on,
            None => {
                c.expect_punct("=")?;
                Amount::Param(param_of(kind, &mut c, ParamKind::Number)?)
            }
        };
        kind.changes.push(Primitive::Classes {
            player: i,
            prop,
            class,
            on,
        });
        return c.finish();
    }
    let negative = if c.eat_punct("+=") {
        false
    } else if c.eat_punct("-=") {
        true
    } else {
        return Err(c.err("`+=` or `-=`"));
    };
    // An object-or-player parameter: a player property names it as a player.
    let pk = match kind.params[i as usize].kind {
        ParamKind::Any if rs.prop_id(&what).is_some() => ParamKind::Player,
        ParamKind::Any => ParamKind::Object,
        k => k,
    };
    match pk {
        ParamKind::Object => {
            let ch = state_char(rs, &what, ws)?;
            let (sym, _) = c.name_or_string("a state symbol")?;
            kind.changes.push(Primitive::State {
                object: i,
                char: ch,
                symbol: env.symbol(&sym),
                on: !negative,
            });
        }
        ParamKind::Player => {
            let Some(prop) = rs.prop_id(&what) else {
                return Err(unknown(
                    ws,
                    "player property",
                    &what,
                    rs.props.iter().map(|x| x.name.as_str()),
                ));
            };
            let amount = amount(kind, &mut c)?;
            kind.changes.push(Primitive::Property {
                player: i,
                prop,
                amount,
                negative,
            });
        }
        k => {
            return Err(Diagnostic::new(
                ps,
                format!(
                    "`{p}` is a {}: a change is made to an object or a player",
                    k.name()
                ),
            ))
        }
    }
    c.finish()
}

/// A symbols characteristic that is not a state (`size`), for a change that sets it for good.
fn symbols_char(rs: &rulecraft_core::Ruleset, what: &str, ws: Span) -> Res<rulecraft_core::CharId> {
    match rs.char_id(what) {
        Some(ch)
            if matches!(
                char_def(rs, ch).kind,
                rulecraft_core::model::ruleset::CharKind::Symbols
            ) =>
        {
            Ok(ch)
        }
        _ => Err(unknown(
            ws,
            "symbols characteristic",
            what,
            rs.characteristics
                .iter()
                .filter(|d| matches!(d.kind, rulecraft_core::model::ruleset::CharKind::Symbols))
                .map(|d| d.name.as_str()),
        )),
    }
}

/// `S1, S2, ...`: a scale of symbols, in order.
fn scale(env: &Env, c: &mut Cursor) -> Res<Vec<rulecraft_core::model::value::Symbol>> {
    let mut out = Vec::new();
    loop {
        let (w, _) = c.name_or_string("a symbol")?;
        out.push(env.symbol(&w));
        if !c.eat_punct(",") {
            return Ok(out);
        }
    }
}

/// `planet size = to of tiny, small, ...` (set for good to the symbol at that position:
/// FreeOrion's Set Planet Size, Environment, Star Colour) or `planet size steps by by through
/// SIZES with environment through ENVIRONMENTS kept as COUNTER else FIRST and LAST`
/// (FreeOrion's Modify Planet Size).
fn scaled_item(
    env: &Env,
    kind: &mut EventKind,
    c: &mut Cursor,
    object: u8,
    what: &str,
    ws: Span,
) -> Res<()> {
    let rs = &env.ruleset;
    let ch = symbols_char(rs, what, ws)?;
    if c.eat_punct("=") {
        let to = amount(kind, c)?;
        c.expect_word("of")?;
        let scale = scale(env, c)?;
        kind.changes.push(Primitive::SetScaled {
            object,
            char: ch,
            scale,
            to,
        });
        return c.finish();
    }
    c.expect_word("steps")?;
    c.expect_word("by")?;
    let by = amount(kind, c)?;
    c.expect_word("through")?;
    let sizes = scale(env, c)?;
    if sizes.len() < 3 {
        return Err(c.err("at least three sizes: the first and last are the ends"));
    }
    c.expect_word("with")?;
    let (e, es) = c.name("the environment characteristic")?;
    let environment = symbols_char(rs, &e, es)?;
    c.expect_word("through")?;
    let environments = scale(env, c)?;
    c.expect_word("kept")?;
    c.expect_word("as")?;
    let kept = super::common::counter_named(env, c)?;
    c.expect_word("else")?;
    let (f, _) = c.name_or_string("the environment leaving the first end")?;
    c.expect_word("and")?;
    let (l, _) = c.name_or_string("the environment leaving the last end")?;
    kind.changes.push(Primitive::Resize {
        object,
        by,
        size: ch,
        sizes,
        environment,
        environments,
        kept,
        off_first: env.symbol(&f),
        off_last: env.symbol(&l),
    });
    c.finish()
}

/// `timing { step A: replacements, ordered ... }`: the steps run at every timing point.
pub fn timing_decl(env: &mut Env, s: &Stmt) -> Res<()> {
    let mut c = Cursor::new(&s.head);
    c.expect_word("timing")?;
    c.finish()?;
    if !env.ruleset.timing.steps.is_empty() {
        return Err(Diagnostic::new(
            s.head[0].span,
            "a ruleset has one `timing` procedure",
        ));
    }
    for item in block(s, "the timing procedure's steps")? {
        no_block(item)?;
        let mut c = Cursor::new(&item.head);
        if c.eat_word("after") {
            // `after: once resolved`: "after" answers wait for the effect resolving.
            c.expect_punct(":")?;
            if !c.eat_words(&["once", "resolved"]) {
                return Err(c.err("`once resolved`"));
            }
            c.finish()?;
            if env.ruleset.timing.after_once_resolved {
                return Err(Diagnostic::new(
                    item.head[0].span,
                    "`after: once resolved` is said once",
                ));
            }
            env.ruleset.timing.after_once_resolved = true;
            continue;
        }
        if !c.peek().is_some_and(|t| t.is_word("step")) {
            return Err(c.err("`step NAME: ...` or `after: once resolved`"));
        }
        c.expect_word("step")?;
        let (name, _) = c.name_or_string("the step's name")?;
        c.expect_punct(":")?;
        let responds = responds(&mut c)?;
        c.expect_punct(",")?;
        let taking = if c.eat_word("ordered") {
            Taking::Ordered
        } else if c.eat_words(&["each", "player", "in", "turn"]) {
            Taking::EachPlayerInTurn
        } else if c.eat_words(&["action", "round"]) {
            Taking::ActionRound
        } else if c.eat_words(&["in", "declared", "order"]) {
            // No one chooses: priority, then timestamp (FreeOrion's effects groups).
            Taking::Declared
        } else if c.peek().is_some_and(|t| t.is_word("batch")) {
            return Err(c.err(
                "`ordered`, `each player in turn` or `action round` (batches are the turn structure's: `play ... { cast }`)",
            ));
        } else {
            return Err(
                c.err("`ordered`, `each player in turn`, `action round` or `in declared order`")
            );
        };
        c.finish()?;
        env.ruleset.timing.steps.push(TimingStep {
            name: Arc::from(name.as_str()),
            responds,
            taking,
        });
    }
    Ok(())
}

/// `rule "text" { ... }` in a ruleset: a triggered rulebook effect.
pub fn rule_decl(env: &mut Env, s: &Stmt) -> Res<()> {
    let mut c = Cursor::new(&s.head);
    let kind = if c.eat_word("prohibition") {
        ResponseKind::Prohibition
    } else {
        c.expect_word("rule")?;
        ResponseKind::Rule
    };
    let (text, _) = c.string(&format!("the {}'s text", kind.name()))?;
    c.finish()?;
    let def = response(env, s, kind, &text, 0)?;
    env.ruleset.rules.push(Arc::new(def));
    Ok(())
}

/// `effects groups fire after EVENT(...) [begins]`: the point of the turn where non-meter
/// effects groups fire, each as a triggered trait of its class (FreeOrion's effects system,
/// Turn Processing Order).
pub fn groups_decl(env: &mut Env, s: &Stmt) -> Res<()> {
    no_block(s)?;
    let mut c = Cursor::new(&s.head);
    c.expect_word("effects")?;
    c.expect_word("groups")?;
    c.expect_word("fire")?;
    let (w, ws) = c.name("`before`, `when` or `after`")?;
    if !matches!(w.as_str(), "before" | "when" | "after") {
        return Err(unknown(ws, "timing point", &w, ["before", "when", "after"]));
    }
    let (t, _) = trigger_line(env, &mut c, &w)?;
    env.ruleset.effects_groups = Some(t);
    Ok(())
}

/// One effect of a non-meter effects group: `create "CLASS" in ZONE` (owned by the empire of
/// the object fired on, attached to it: FreeOrion's Create Object) or an occurrence of an
/// event, `target` naming the object fired on (`current_changes(target, farming, 2)`).
pub(crate) fn group_effect(env: &Env, c: &mut Cursor) -> Res<Deed> {
    if c.eat_word("create") {
        let (class, _) = c.string("the class of the object created")?;
        c.expect_word("in")?;
        let (z, zs) = c.name("a zone")?;
        let zone = zone(env, &z, zs)?;
        return Ok(Deed::Create {
            class: Arc::from(class.as_str()),
            count: 1,
            owner: ArgExpr::ControllerOfTarget(0),
            zone,
            at: Some(ArgExpr::Target(0)),
        });
    }
    // `size_set(target, large)`: a number parameter that is a position on a scale the event
    // sets may be written as the symbol there.
    let Some((event, _)) = c
        .peek()
        .and_then(|t| t.word())
        .and_then(|w| env.ruleset.event_id(w).map(|e| (e, w)))
    else {
        return occurrence_deed(env, c, &[], 1);
    };
    let kind = event_def(&env.ruleset, event).clone();
    // Whether a class is added (`has tech = available`) may be written `yes` or `no`.
    let yes_no = vec![env.symbol("no"), env.symbol("yes")];
    let scales: Vec<(u8, &Vec<rulecraft_core::model::value::Symbol>)> = kind
        .changes
        .iter()
        .filter_map(|p| match p {
            Primitive::SetScaled {
                scale,
                to: Amount::Param(i),
                ..
            } => Some((*i, scale)),
            Primitive::Classes {
                on: Amount::Param(i),
                ..
            } => Some((*i, &yes_no)),
            _ => None,
        })
        .collect();
    if scales.is_empty() || env.ruleset.is_builtin(event) || kind.period {
        return occurrence_deed(env, c, &[], 1);
    }
    c.bump();
    c.expect_punct("(")?;
    let mut args = Vec::new();
    for (i, p) in kind.params.iter().enumerate() {
        if i > 0 {
            c.expect_punct(",")?;
        }
        let scale = scales
            .iter()
            .find(|(k, _)| *k as usize == i)
            .map(|(_, sc)| *sc);
        let position = |w: Option<&str>| -> Option<usize> {
            let w = w?;
            scale?.iter().position(|x| x.as_str() == w)
        };
        let named = position(c.peek().and_then(|t| t.word()));
        let from_source = scale.is_some()
            && c.peek().and_then(|t| t.word()) == Some("source")
            && c.peek_at(1).is_some_and(|t| t.is_punct("."));
        match (named, scale) {
            (Some(at), _) => {
                c.bump();
                args.push(ArgExpr::Number(NumExpr::Const(at as i64)));
            }
            // FreeOrion's effects system, Non-Numeric Parameters: the source's property
            // (`source.size`), looked up the attachment hierarchy, with a default (`else medium`;
            // none: off the scale, which sets nothing).
            (None, Some(sc)) if from_source => {
                c.bump();
                c.bump();
                let (name, at) = c.name("a characteristic of the source")?;
                let Some(char) = env.ruleset.char_id(&name) else {
                    return Err(Diagnostic::new(
                        at,
                        format!("unknown characteristic `{name}`"),
                    ));
                };
                let default = if c.eat_word("else") {
                    let here = c.here();
                    match position(c.peek().and_then(|t| t.word())) {
                        Some(d) => {
                            c.bump();
                            d as i64
                        }
                        None => {
                            return Err(Diagnostic::new(
                                here,
                                format!(
                                    "expected one of the scale's symbols: {}",
                                    sc.iter().map(|x| x.as_str()).collect::<Vec<_>>().join(", ")
                                ),
                            ))
                        }
                    }
                } else {
                    -1
                };
                args.push(ArgExpr::Number(NumExpr::SourceSymbol {
                    char,
                    scale: sc.clone().into(),
                    default,
                }));
            }
            _ => args.push(arg(env, c, p.kind, &[], 1)?),
        }
    }
    c.expect_punct(")")?;
    let standing = standing(c)?;
    Ok(Deed::Occur {
        event,
        args,
        standing,
    })
}

/// The names of an event's parameters.
fn names_of(env: &Env, e: EventId) -> Vec<String> {
    event_def(&env.ruleset, e)
        .params
        .iter()
        .map(|p| p.name.to_string())
        .collect()
}

/// A response's own trigger line, after its first word, to its end: the trigger, and the names
/// of its event's parameters that `event PARAM` may use (none where the events joined by `or`
/// name them differently).
fn trigger_line(env: &Env, c: &mut Cursor, point_word: &str) -> Res<(Trigger, Vec<String>)> {
    let t = trigger(env, c, point_word, &[])?;
    c.finish()?;
    let mut params = names_of(env, t.patterns[0].event);
    if t.patterns[1..]
        .iter()
        .any(|p| names_of(env, p.event) != params)
    {
        params = Vec::new();
    }
    Ok((t, params))
}

/// `before|when|after EVENT(FILTER, ...) [begins|ends] [or EVENT(...)]`.
fn trigger(env: &Env, c: &mut Cursor, point_word: &str, outer: &[String]) -> Res<Trigger> {
    let mut point = match point_word {
        "before" => Point::Before,
        // `next time X`: when X happens; for a period, after it begins or ends.
        "when" | "next time" => Point::When,
        _ => Point::After,
    };
    let mut patterns = Vec::new();
    let mut spans = Vec::new();
    loop {
        let (event, es) = event_named(env, c, "an event")?;
        spans.push(es);
        let kind = event_def(&env.ruleset, event);
        let mut filters = vec![None; kind.params.len()];
        if c.eat_punct("(") {
            let mut i = 0;
            if !c.eat_punct(")") {
                loop {
                    if i >= kind.params.len() {
                        return Err(Diagnostic::new(
                            c.here(),
                            format!("`{}` has {} parameter(s)", kind.name, kind.params.len()),
                        ));
                    }
                    if !(c.eat_word("_") || c.eat_word("any")) {
                        let k = kind.params[i].kind;
                        // An `any` argument is tested as whichever it is, an object or a player.
                        if !matches!(k, ParamKind::Object | ParamKind::Player | ParamKind::Any) {
                            return Err(Diagnostic::new(
                                c.here(),
                                format!(
                                    "`{}` is a {}: write `_` (conditions on it go in `if:`)",
                                    kind.params[i].name,
                                    k.name()
                                ),
                            ));
                        }
                        let allow = Allow {
                            params: outer,
                            ..Allow::default()
                        };
                        filters[i] = Some(condition(env, c, allow)?);
                    }
                    i += 1;
                    if c.eat_punct(")") {
                        break;
                    }
                    c.expect_punct(",")?;
                }
            }
        }
        if c.eat_word("begins") || c.eat_word("ends") {
            let begins = c.toks[c.pos - 1].is_word("begins");
            if !kind.period {
                return Err(Diagnostic::new(
                    c.toks[c.pos - 1].span,
                    format!("`{}` is not a period: it does not begin or end", kind.name),
                ));
            }
            point = match (point_word, begins) {
                ("before", true) => Point::Before,
                ("after" | "next time", true) => Point::AfterBegins,
                ("before", false) => Point::BeforeEnds,
                ("after" | "next time", false) => Point::After,
                _ => {
                    return Err(Diagnostic::new(
                        es,
                        "a period begins or ends `before` or `after`, not `when`",
                    ))
                }
            };
        }
        patterns.push(Pattern { event, filters });
        if !c.eat_word("or") {
            break;
        }
    }
    for (p, es) in patterns.iter().zip(spans) {
        never_fires(env, p.event, point, point_word, es)?;
    }
    Ok(Trigger { point, patterns })
}

/// An error where an event never goes through a trigger's point (`when enters`): the procedure
/// takes each occurrence only through its event's points (`Ruleset::points`).
fn never_fires(env: &Env, event: EventId, point: Point, point_word: &str, at: Span) -> Res<()> {
    let points = env.ruleset.points(event);
    if points.contains(&point) {
        return Ok(());
    }
    let kind = event_def(&env.ruleset, event);
    let name = &kind.name;
    let written = |p: Point| match (p, kind.period) {
        (Point::Before, true) => format!("`before {name} begins`"),
        (Point::After, true) => format!("`after {name} ends`"),
        (Point::AfterBegins, _) => format!("`after {name} begins`"),
        (Point::BeforeEnds, _) => format!("`before {name} ends`"),
        (Point::Before, false) => format!("`before {name}`"),
        (Point::When, _) => format!("`when {name}`"),
        (Point::After, false) => format!("`after {name}`"),
    };
    let trigger = if point_word == "next time" {
        format!("`next time {name}`")
    } else {
        written(point)
    };
    let mut why = if kind.period {
        format!("`{name}` is a period, which has no `when` point")
    } else if point_word == "next time" {
        format!("a `next time` trigger answers its event `when` it happens, and `{name}` has no `when` point")
    } else {
        format!("`{name}` has no `{}` point", point.name())
    };
    if points == [Point::After] {
        why.push_str(" (it is announced once the objects have entered)");
    }
    let listed: Vec<String> = points.iter().map(|p| written(*p)).collect();
    let can = match listed.as_slice() {
        [one] => format!("{one} only"),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
        [] => "nowhere".to_string(),
    };
    Err(Diagnostic::new(
        at,
        format!("{trigger} never fires: {why}; it can be answered {can}"),
    ))
}

/// A response's items, for a trait, Reaction, replacement or rule. `targets_before`: targets of
/// an enclosing response (a delayed effect's deeds see them).
fn response(
    env: &Env,
    s: &Stmt,
    kind: ResponseKind,
    text: &str,
    targets_before: usize,
) -> Res<ResponseDef> {
    response_of(env, s, kind, text, targets_before, false)
}

/// [`response`], or (`phase_cost`) a class's `phase cost "TEXT" { ... }`.
fn response_of(
    env: &Env,
    s: &Stmt,
    kind: ResponseKind,
    text: &str,
    targets_before: usize,
    phase_cost: bool,
) -> Res<ResponseDef> {
    let mut whose: Option<ArgExpr> = None;
    let mut mandatory: Option<Span> = None;
    let mut affects: Option<rulecraft_core::model::condition::Cond> = None;
    let mut unpaid: Vec<Deed> = Vec::new();
    let mut during_at: Option<Span> = None;
    let mut trig: Option<Trigger> = None;
    let mut condition_: Option<rulecraft_core::model::condition::Cond> = None;
    let mut targets: Vec<TargetSpec> = Vec::new();
    let mut choosers = Vec::new();
    let mut costs = Vec::new();
    let mut optional_costs = false;
    let mut deeds = Vec::new();
    let mut zones = Vec::new();
    let mut params: Vec<String> = Vec::new();
    let mut during = None;
    let mut granted = false;
    // An ability is played, not triggered: its deeds follow no trigger.
    let played = matches!(kind, ResponseKind::Ability | ResponseKind::ManaAbility);
    let no_trigger = Trigger {
        point: Point::After,
        patterns: Vec::new(),
    };
    if played {
        trig = Some(no_trigger.clone());
    }
    for item in block(s, "the response's trigger and what it does")? {
        let mut c = Cursor::new(&item.head);
        let Some(w) = item.head[0].word() else {
            return Err(c.err("a trigger, `if:`, `target:`, `cost:` or what it does"));
        };
        match w {
            "prohibits" if kind == ResponseKind::Prohibition && trig.is_none() => {
                // `prohibits EVENT(FILTER, ...) [or ...]`: what cannot happen; tested as an
                // occurrence begins, before its "before" point.
                no_block(item)?;
                c.bump();
                let (t, names) = trigger_line(env, &mut c, "before")?;
                (trig, params) = (Some(t), names);
            }
            "before" | "when" | "after" if kind == ResponseKind::Prohibition => {
                return Err(Diagnostic::new(
                    item.head[0].span,
                    "a prohibition says what cannot happen, not when it answers: `prohibits EVENT(...)`",
                ))
            }
            "before" | "when" | "after" if played => {
                return Err(Diagnostic::new(
                    item.head[0].span,
                    "an ability is played, not triggered: it has no `before`, `when` or `after` line",
                ))
            }
            "before" | "when" | "after" if trig.is_none() => {
                no_block(item)?;
                c.bump();
                let (t, names) = trigger_line(env, &mut c, w)?;
                (trig, params) = (Some(t), names);
            }
            "before" | "when" | "after" => {
                return Err(Diagnostic::new(
                    item.head[0].span,
                    "a response has one trigger (join events with `or`)",
                ))
            }
            "if" => {
                no_block(item)?;
                c.bump();
                c.expect_punct(":")?;
                let allow = Allow {
                    params: &params,
                    ..Allow::default()
                };
                condition_ = Some(condition(env, &mut c, allow)?);
                c.finish()?;
            }
            "target" => {
                // `target [NAME] [by PLAYER]: COND`.
                no_block(item)?;
                c.bump();
                let name = match c.peek() {
                    Some(t) if matches!(t.tok, crate::lexer::Tok::Str(_)) => {
                        let (n, ns) = c.string("the target's name")?;
                        if targets
                            .iter()
                            .any(|t: &TargetSpec| t.name.as_deref() == Some(&n))
                        {
                            return Err(Diagnostic::new(
                                ns,
                                format!("target `{n}` is named twice"),
                            ));
                        }
                        Some(Arc::from(n.as_str()))
                    }
                    _ => None,
                };
                let chooser = if c.eat_word("by") {
                    Some(match arg(env, &mut c, ParamKind::Player, &params, 0)? {
                        ArgExpr::Player(p) => p,
                        ArgExpr::Param(i) => PlayerRef::Param(i),
                        _ => {
                            return Err(Diagnostic::new(
                                c.here(),
                                "`by` names who chooses: `you`, `opponent`, `active player` or `event PARAM`",
                            ))
                        }
                    })
                } else {
                    None
                };
                c.expect_punct(":")?;
                let allow = Allow {
                    params: &params,
                    ..Allow::default()
                };
                targets.push(TargetSpec {
                    name,
                    cond: condition(env, &mut c, allow)?,
                });
                choosers.push(chooser);
                c.finish()?;
            }
            "mandatory" if kind == ResponseKind::Ability && !phase_cost => {
                // A phase effect the phase cannot end without.
                no_block(item)?;
                c.bump();
                c.finish()?;
                mandatory = Some(item.head[0].span);
            }
            "affects" if phase_cost => {
                // `affects: COND`: the permanents that bear the phase cost ("all artifacts").
                no_block(item)?;
                c.bump();
                c.expect_punct(":")?;
                affects = Some(condition(env, &mut c, Allow::default())?);
                c.finish()?;
            }
            "unpaid" if phase_cost => {
                // `unpaid: EVENT(...)`: the penalty for not paying ("buried").
                no_block(item)?;
                c.bump();
                c.expect_punct(":")?;
                unpaid.push(occurrence_deed(env, &mut c, &params, 0)?);
                c.finish()?;
            }
            "unpaid" | "affects" => {
                return Err(Diagnostic::new(
                    item.head[0].span,
                    format!("`{w}:` belongs to a `phase cost \"...\" {{ ... }}`"),
                ))
            }
            "during" => {
                // `during: dynasty_phase`: only while such a period is open.
                no_block(item)?;
                c.bump();
                c.expect_punct(":")?;
                during_at = c.peek().map(|t| t.span);
                let (id, es) = event_named(env, &mut c, "a period")?;
                let e = event_def(&env.ruleset, id).name.clone();
                if !event_def(&env.ruleset, id).period {
                    return Err(Diagnostic::new(
                        es,
                        format!("`{e}` is not a period: `during` names a period"),
                    ));
                }
                during = Some(id);
                if kind == ResponseKind::Ability && !phase_cost && c.eat_word("of") {
                    // `during: upkeep of controller of attached`: whose phase.
                    whose = Some(arg(env, &mut c, ParamKind::Player, &params, 0)?);
                }
                c.finish()?;
            }
            "granted" if kind != ResponseKind::Rule => {
                // `granted`: an ability the class's effects give other objects
                // (`abilities += triggered "TEXT"`); the class's own objects lack it.
                no_block(item)?;
                c.bump();
                c.finish()?;
                granted = true;
            }
            "works" => {
                no_block(item)?;
                c.bump();
                c.expect_word("in")?;
                c.expect_punct(":")?;
                zones.extend(zone_list(env, &mut c)?);
                c.finish()?;
            }
            "cost" | "optional" => {
                // `optional cost: ...`: its controller may decline to pay, and it does nothing.
                no_block(item)?;
                if c.eat_word("optional") {
                    optional_costs = true;
                    c.expect_word("cost")?;
                } else {
                    c.bump();
                }
                c.expect_punct(":")?;
                let d = occurrence_deed(env, &mut c, &params, targets_before + targets.len())?;
                c.finish()?;
                costs.push(d);
            }
            "until" | "while" | "effect" | "for" if trig.is_some() => {
                // `until end of turn { affects: ... force += 2 }`: a continuous effect it starts.
                let names: Vec<String> = targets
                    .iter()
                    .map(|t| t.name.as_deref().unwrap_or("").to_string())
                    .collect();
                let has_target = targets_before + targets.len() > 0;
                let allow = Allow {
                    target: true,
                    params: &params,
                    ..Allow::default()
                };
                let Some(duration) = duration(env, &mut c, allow, has_target)? else {
                    return Err(c.err(
                        "a duration: `until end of turn`, `until end of [next] PERIOD`, `while source in play`, `effect`, `until your next turn` or `for as long as:`",
                    ));
                };
                c.finish()?;
                let named: Vec<String> = if names.iter().all(|n| !n.is_empty()) {
                    names
                } else {
                    Vec::new()
                };
                let def = effect(
                    env,
                    item,
                    text,
                    false,
                    EffectKind::Spell { has_target },
                    &named,
                    &params,
                )?;
                // Its "as long as" is tested as long as the effect lasts, after the response
                // has run: the occurrence it answered is gone by then.
                let lasting_reads = def
                    .while_cond
                    .as_ref()
                    .is_some_and(rulecraft_core::model::condition::Cond::reads_occurrence)
                    || matches!(&duration, rulecraft_core::model::effect::Duration::ForAsLongAs(c) if c.reads_occurrence());
                if lasting_reads {
                    return Err(Diagnostic::new(
                        item.head[0].span,
                        "an effect a response starts cannot test the occurrence in `as long as:` (`event ...`): the occurrence is over once the response has run",
                    ));
                }
                deeds.push(Deed::Effect {
                    duration,
                    def: Arc::new(def),
                });
            }
            _ => {
                if trig.is_none() {
                    return Err(c.err("the trigger first: `before`, `when` or `after` an event"));
                }
                let d = deed(
                    env,
                    item,
                    &mut c,
                    trig.as_ref().expect("checked"),
                    &params,
                    targets_before + targets.len(),
                )?;
                deeds.push(d);
            }
        }
    }
    if kind == ResponseKind::Prohibition {
        if trig.is_none() {
            return Err(Diagnostic::new(
                s.head[0].span,
                "a prohibition needs what it forbids: `prohibits EVENT(...)`",
            ));
        }
        if !deeds.is_empty() || !targets.is_empty() || !costs.is_empty() {
            return Err(Diagnostic::new(
                s.head[0].span,
                "a prohibition only forbids (`prohibits`, `if:`, `works in:`, `granted`): it has no targets, costs or deeds",
            ));
        }
    }
    let Some(trigger) = trig else {
        return Err(Diagnostic::new(
            s.head[0].span,
            format!(
                "a {} needs a trigger: `before`, `when` or `after` an event",
                kind.name()
            ),
        ));
    };
    let phase = phase_use(
        env,
        s,
        PhaseParts {
            during: during.map(|d| (d, during_at.unwrap_or(s.head[0].span))),
            whose,
            mandatory,
            phase_cost,
            affects,
            unpaid,
            costs: !costs.is_empty(),
            deeds_or_targets: !deeds.is_empty() || !targets.is_empty(),
            optional: optional_costs,
        },
    )?;
    let replaces = deeds
        .iter()
        .any(|d| matches!(d, Deed::Prevent | Deed::Negate | Deed::Instead { .. }));
    // CR 614.1: a replacement effect stops an event, puts another in its place, or changes how
    // it happens (its size, where a card goes).
    let modifies = deeds
        .iter()
        .any(|d| matches!(d, Deed::ChangeAmount(_) | Deed::SetParam { .. }));
    if kind == ResponseKind::Replacement && !replaces && !modifies {
        return Err(Diagnostic::new(
            s.head[0].span,
            "a replacement says `prevent`, `instead EVENT(...)`, `set PARAM = ...` or `amount += N`",
        ));
    }
    // A Reaction may negate what it answers (taken in its action round); any other effect that
    // negates, prevents or substitutes is a replacement, applied first.
    if replaces && !matches!(kind, ResponseKind::Replacement | ResponseKind::Reaction) {
        return Err(Diagnostic::new(
            s.head[0].span,
            format!(
                "`prevent` and `instead` make an occurrence not happen: write a `replacement` (or a `reaction`), not a {}",
                kind.name()
            ),
        ));
    }
    Ok(ResponseDef {
        kind,
        text: Arc::from(text),
        trigger,
        condition: condition_,
        targets,
        choosers,
        costs,
        optional_costs,
        deeds,
        zones,
        during,
        granted,
        phase,
        priority: 0,
    })
}

/// What a response says of phases, checked by [`phase_use`].
struct PhaseParts {
    during: Option<(EventId, Span)>,
    whose: Option<ArgExpr>,
    mandatory: Option<Span>,
    phase_cost: bool,
    affects: Option<rulecraft_core::model::condition::Cond>,
    unpaid: Vec<Deed>,
    costs: bool,
    deeds_or_targets: bool,
    optional: bool,
}

/// An ability whose `during:` names a phase of the turn is a phase effect (played as an
/// instant in that phase, once); a `phase cost` is paid in its phase or its penalty happens.
fn phase_use(
    env: &Env,
    s: &Stmt,
    p: PhaseParts,
) -> Res<Option<rulecraft_core::model::response::PhaseUse>> {
    use rulecraft_core::model::response::{PhaseCost, PhaseUse};
    let at = s.head[0].span;
    let phases: Vec<EventId> = env
        .ruleset
        .turn_structure
        .as_ref()
        .map(|t| t.phases.iter().map(|x| x.event).collect())
        .unwrap_or_default();
    let Some((during, dspan)) = p.during else {
        if p.phase_cost {
            return Err(Diagnostic::new(
                at,
                "a phase cost needs the phase it is paid in: `during: PHASE` (`during: upkeep`)",
            ));
        }
        if let Some(m) = p.mandatory {
            return Err(Diagnostic::new(
                m,
                "`mandatory` is for a phase effect: it needs the phase it is played in, `during: PHASE`",
            ));
        }
        return Ok(None);
    };
    let is_phase = phases.contains(&during);
    if !is_phase && (p.phase_cost || p.mandatory.is_some() || p.whose.is_some()) {
        let named: Vec<&str> = phases
            .iter()
            .map(|e| &*event_def(&env.ruleset, *e).name)
            .collect();
        return Err(Diagnostic::new(
            dspan,
            format!(
                "`{}` is not a phase of the turn: a phase effect or cost names one ({})",
                event_def(&env.ruleset, during).name,
                if named.is_empty() {
                    "the ruleset declares no `turn { phase ... }`".to_string()
                } else {
                    named.join(", ")
                }
            ),
        ));
    }
    if p.phase_cost {
        if !p.costs {
            return Err(Diagnostic::new(
                at,
                "a phase cost needs what it costs: `cost: EVENT(...)`",
            ));
        }
        if p.deeds_or_targets || p.optional {
            return Err(Diagnostic::new(
                at,
                "a phase cost is paid (`cost:`) or its penalty happens (`unpaid:`): it has no targets, deeds or `optional`",
            ));
        }
        return Ok(Some(PhaseUse {
            whose: None,
            mandatory: true,
            cost: Some(PhaseCost {
                affects: p.affects,
                unpaid: p.unpaid,
            }),
        }));
    }
    if !is_phase {
        return Ok(None);
    }
    Ok(Some(PhaseUse {
        whose: p.whose,
        mandatory: p.mandatory.is_some(),
        cost: None,
    }))
}

/// `EVENT(ARG, ...)`: an occurrence a response makes.
/// A spell's cost: an occurrence (`cost: pays(you, 1)`).
pub(crate) fn cost_deed(env: &Env, c: &mut Cursor, ntargets: usize) -> Res<Deed> {
    occurrence_deed(env, c, &[], ntargets)
}

fn occurrence_deed(env: &Env, c: &mut Cursor, params: &[String], ntargets: usize) -> Res<Deed> {
    let (event, span) = event_named(env, c, "an event")?;
    let name = &event_def(&env.ruleset, event).name;
    if env.ruleset.is_builtin(event) && !MADE_BY_DEEDS.contains(&&**name) {
        // These are the engine's own steps (an object entering, a spell resolving, a turn
        // ending), which no action stands for alone.
        return Err(Diagnostic::new(
            span,
            format!(
                "`{name}` happens only through the engine's own steps: a deed can make only these built-in events: {}",
                MADE_BY_DEEDS.map(|e| format!("`{e}`")).join(", ")
            ),
        ));
    }
    let kind = event_def(&env.ruleset, event);
    if kind.period {
        return Err(Diagnostic::new(
            span,
            format!(
                "`{}` is a period: it does not happen, it begins and ends; write `begin {}(...)` or `end {}`",
                kind.name, kind.name, kind.name
            ),
        ));
    }
    let args = args(env, c, event, params, ntargets)?;
    let standing = standing(c)?;
    Ok(Deed::Occur {
        event,
        args,
        standing,
    })
}

/// The built-in events a deed can make: each stands for one engine action, whose whole change
/// its arguments say.
const MADE_BY_DEEDS: [&str; 10] = [
    "changes_zone",
    "counters_placed",
    "attached",
    "turns_face_up",
    "turns_face_down",
    "merges",
    "effects_end",
    "property_set",
    "shuffles",
    "loses",
];

/// `begin PERIOD(ARG, ...)` or `end PERIOD`, after the first word: a period an effect begins
/// (an additional phase, a duel) or ends.
fn period_deed(
    env: &Env,
    c: &mut Cursor,
    begins: bool,
    params: &[String],
    ntargets: usize,
) -> Res<Deed> {
    let (event, span) = event_named(env, c, "a period of the ruleset")?;
    let kind = event_def(&env.ruleset, event);
    if !kind.period {
        return Err(Diagnostic::new(
            span,
            format!(
                "`{}` is not a period: it happens (`{}(...)`), it does not {}",
                kind.name,
                kind.name,
                if begins { "begin" } else { "end" }
            ),
        ));
    }
    if begins {
        let args = args(env, c, event, params, ntargets)?;
        Ok(Deed::Begin { event, args })
    } else {
        Ok(Deed::End(event))
    }
}

/// `create [N] "CLASS" [for PLAYER] [in ZONE]`, after `create`: owned by you and in the first
/// zone in play unless it says otherwise.
fn create_deed(env: &Env, c: &mut Cursor, params: &[String], ntargets: usize) -> Res<Deed> {
    let count = match c.peek().map(|t| &t.tok) {
        Some(crate::lexer::Tok::Number(n)) if (1..=100).contains(n) => {
            let n = *n as u8;
            c.bump();
            n
        }
        Some(crate::lexer::Tok::Number(_)) => {
            return Err(c.err("a number of objects from 1 to 100"));
        }
        _ => 1,
    };
    let (class, at) = c.name_or_string("the class of the objects created")?;
    env.class_refs.note(&class, at);
    let owner = if c.eat_word("for") {
        arg(env, c, ParamKind::Player, params, ntargets)?
    } else {
        ArgExpr::Player(rulecraft_core::model::condition::PlayerRef::You)
    };
    let zone = if c.eat_word("in") {
        let (z, zs) = c.name("a zone")?;
        zone(env, &z, zs)?
    } else {
        let Some(i) = env.ruleset.zones.iter().position(|z| z.in_play) else {
            return Err(c.err("`in ZONE`: this ruleset has no zone in play"));
        };
        rulecraft_core::ZoneId(i as u16)
    };
    Ok(Deed::Create {
        class: std::sync::Arc::from(class.as_str()),
        count,
        owner,
        zone,
        at: None,
    })
}

/// A resolving spell's deed: `create ...`, `begin PERIOD(...)`, `end PERIOD` or
/// `EVENT(ARG, ...)`, whose `target` (or `target N`) names the spell's target of that line.
pub(crate) fn spell_deed(env: &Env, c: &mut Cursor, ntargets: usize) -> Res<Deed> {
    if c.eat_word("create") {
        return create_deed(env, c, &[], ntargets);
    }
    if c.eat_word("begin") {
        return period_deed(env, c, true, &[], ntargets);
    }
    if c.eat_word("end") {
        return period_deed(env, c, false, &[], ntargets);
    }
    occurrence_deed(env, c, &[], ntargets)
}

/// What may not touch an occurrence a deed makes, written after it: `even if prohibited` (a
/// prohibition does not stop it), `cannot be prevented`, `cannot be negated` (its effects),
/// `cannot be changed` (its size and arguments); several joined by `,`.
fn standing(c: &mut Cursor) -> Res<Standing> {
    let mut st = Standing::default();
    loop {
        if c.eat_words(&["even", "if", "prohibited"]) {
            st.despite_prohibitions = true;
        } else if c.eat_words(&["cannot", "be", "prevented"]) {
            st.unpreventable = true;
        } else if c.eat_words(&["cannot", "be", "negated"]) {
            st.unnegatable = true;
        } else if c.eat_words(&["cannot", "be", "changed"]) {
            st.fixed = true;
        } else if st != Standing::default() && c.peek().is_some() {
            return Err(c.err(
                "`even if prohibited`, `cannot be prevented`, `cannot be negated` or `cannot be changed`",
            ));
        } else {
            return Ok(st);
        }
        if !c.eat_punct(",") {
            return Ok(st);
        }
    }
}

fn args(
    env: &Env,
    c: &mut Cursor,
    event: EventId,
    params: &[String],
    ntargets: usize,
) -> Res<Vec<ArgExpr>> {
    let kind = event_def(&env.ruleset, event).clone();
    let mut out = Vec::new();
    let open = c.here();
    if c.eat_punct("(") && !c.eat_punct(")") {
        loop {
            let Some(p) = kind.params.get(out.len()) else {
                return Err(Diagnostic::new(
                    c.here(),
                    format!("`{}` takes {} argument(s)", kind.name, kind.params.len()),
                ));
            };
            out.push(arg(env, c, p.kind, params, ntargets)?);
            if c.eat_punct(")") {
                break;
            }
            c.expect_punct(",")?;
        }
    }
    if out.len() != kind.params.len() {
        return Err(Diagnostic::new(
            open,
            format!(
                "`{}` takes {} argument(s) ({}), got {}",
                kind.name,
                kind.params.len(),
                kind.params
                    .iter()
                    .map(|p| format!("{}: {}", p.name, p.kind.name()))
                    .collect::<Vec<_>>()
                    .join(", "),
                out.len()
            ),
        ));
    }
    Ok(out)
}

/// One argument: `this`, `attached`, `target`, `you`, `active player`, `opponent`,
/// `controller of OBJECT`, `event PARAM`, or a number expression.
fn arg(
    env: &Env,
    c: &mut Cursor,
    want: ParamKind,
    params: &[String],
    ntargets: usize,
) -> Res<ArgExpr> {
    let here = c.here();
    if want == ParamKind::Number {
        // `event amount - 1`, `event card.force`: any numeric expression.
        let allow = Allow {
            params,
            ..Allow::default()
        };
        return Ok(ArgExpr::Number(num(env, c, allow)?));
    }
    if c.eat_word("event") {
        let (p, ps) = c.name("a parameter of the event answered")?;
        let Some(i) = params.iter().position(|x| *x == p) else {
            if params.is_empty() {
                return Err(Diagnostic::new(
                    here,
                    "`event ...` names a parameter of the event answered: the trigger comes first",
                ));
            }
            return Err(unknown(
                ps,
                "event parameter",
                &p,
                params.iter().map(|s| s.as_str()),
            ));
        };
        return Ok(ArgExpr::Param(i as u8));
    }
    if c.eat_word("target") {
        if ntargets == 0 {
            return Err(Diagnostic::new(
                here,
                "`target` needs a `target:` line before it",
            ));
        }
        // `target 2`: the second target line.
        if let Some(crate::lexer::Tok::Number(_)) = c.peek().map(|t| &t.tok) {
            let (n, ns) = c.number("a target's number")?;
            if n < 1 || n as usize > ntargets {
                return Err(Diagnostic::new(
                    ns,
                    format!("there are {ntargets} target line(s): expected 1 to {ntargets}"),
                ));
            }
            return Ok(ArgExpr::Target((n - 1) as u8));
        }
        return Ok(ArgExpr::Target(0));
    }
    match want {
        ParamKind::Any => {
            let player_word = c.peek().is_some_and(|t| {
                ["you", "active", "opponent", "controller"]
                    .iter()
                    .any(|w| t.is_word(w))
            });
            let k = if player_word {
                ParamKind::Player
            } else {
                ParamKind::Object
            };
            arg(env, c, k, params, ntargets)
        }
        ParamKind::Object => {
            let (w, ws) = c.name("an object: `this`, `attached`, `target` or `event PARAM`")?;
            match w.as_str() {
                "this" | "source" | "self" => Ok(ArgExpr::Object(ObjRef::Source)),
                "attached" | "enchanted" | "equipped" => Ok(ArgExpr::Object(ObjRef::Attached)),
                _ => Err(unknown(
                    ws,
                    "object",
                    &w,
                    ["this", "attached", "target", "event"],
                )),
            }
        }
        ParamKind::Player => {
            if c.eat_word("you") {
                return Ok(ArgExpr::Player(PlayerRef::You));
            }
            if c.eat_words(&["active", "player"]) {
                return Ok(ArgExpr::Player(PlayerRef::Active));
            }
            if c.eat_word("opponent") {
                return Ok(ArgExpr::Player(PlayerRef::Opponent));
            }
            if c.eat_words(&["controller", "of"]) {
                let o = match arg(env, c, ParamKind::Object, params, ntargets)? {
                    ArgExpr::Object(o) => o,
                    ArgExpr::Param(i) => ObjRef::Param(i),
                    ArgExpr::Target(i) => return Ok(ArgExpr::ControllerOfTarget(i)),
                    _ => {
                        return Err(Diagnostic::new(
                            here,
                            "`controller of` takes `this`, `attached` or `event PARAM`",
                        ))
                    }
                };
                return Ok(ArgExpr::ControllerOf(o));
            }
            Err(c.err("a player: `you`, `opponent`, `active player`, `controller of ...`, `target` or `event PARAM`"))
        }
        ParamKind::Number => {
            let allow = Allow {
                params,
                ..Allow::default()
            };
            Ok(ArgExpr::Number(num(env, c, allow)?))
        }
        ParamKind::Zone => {
            let (z, zs) = c.name("a zone")?;
            Ok(ArgExpr::Zone(zone(env, &z, zs)?))
        }
        ParamKind::Counter => Ok(ArgExpr::Counter(super::common::counter_named(env, c)?)),
        ParamKind::Property => Ok(ArgExpr::Property(super::common::prop_named(env, c)?)),
        ParamKind::Class(ty) => {
            // Checked once every class of the content is known, with its type.
            let (class, at) = c.string("an object class's name, in quotes")?;
            let ty = ty.map(|t| (t, env.ruleset.types[t.index()].name.clone()));
            env.class_refs.note_of_type(&class, at, ty);
            Ok(ArgExpr::Class(Arc::from(class.as_str())))
        }
    }
}

/// What a response does: an occurrence, `prevent`, `instead EVENT(...)`, `amount += N`,
/// `set PARAM = ARG`, or `next time [this game] EVENT(...) [or ...] "text" { ... }`.
fn deed(
    env: &Env,
    item: &Stmt,
    c: &mut Cursor,
    trig: &Trigger,
    params: &[String],
    ntargets: usize,
) -> Res<Deed> {
    let first = c.peek().expect("a statement has a head");
    let span: Span = first.span;
    let w = first.word().unwrap_or("");
    let d = match w {
        "prevent" => {
            c.bump();
            Deed::Prevent
        }
        "negate" => {
            c.bump();
            Deed::Negate
        }
        "create" => {
            c.bump();
            create_deed(env, c, params, ntargets)?
        }
        "begin" | "end" => {
            c.bump();
            period_deed(env, c, w == "begin", params, ntargets)?
        }
        "instead" => {
            c.bump();
            let at = c.here();
            match occurrence_deed(env, c, params, ntargets)? {
                Deed::Occur {
                    event,
                    args,
                    standing,
                } if standing == Standing::default() => Deed::Instead { event, args },
                _ => {
                    return Err(Diagnostic::new(
                        at,
                        "a substitute happens in the old occurrence's place, as it stood: `even if prohibited` and `cannot be ...` are written on an occurrence of its own",
                    ))
                }
            }
        }
        "amount" => {
            c.bump();
            let answered = trig
                .patterns
                .iter()
                .all(|p| event_def(&env.ruleset, p.event).amount.is_some());
            if !answered {
                return Err(Diagnostic::new(
                    span,
                    "`amount` changes the size of the change answered: its event declares no `size:`",
                ));
            }
            let neg = if c.eat_punct("+=") {
                false
            } else if c.eat_punct("-=") {
                true
            } else {
                return Err(c.err("`+=` or `-=`"));
            };
            let allow = Allow {
                params,
                ..Allow::default()
            };
            let e = num(env, c, allow)?;
            Deed::ChangeAmount(if neg { NumExpr::Neg(Box::new(e)) } else { e })
        }
        "set" => {
            c.bump();
            let (p, ps) = c.name("a parameter of the event answered")?;
            let Some(i) = params.iter().position(|x| *x == p) else {
                return Err(unknown(
                    ps,
                    "event parameter",
                    &p,
                    params.iter().map(|s| s.as_str()),
                ));
            };
            c.expect_punct("=")?;
            let want = event_def(&env.ruleset, trig.patterns[0].event).params[i].kind;
            let to = arg(env, c, want, params, ntargets)?;
            Deed::SetParam { param: i as u8, to }
        }
        "next" | "first" => {
            c.bump();
            c.expect_word("time")?;
            let lasting = if c.eat_words(&["this", "game"]) {
                Lasting::ThisGame
            } else {
                c.eat_words(&["this", "turn"]);
                Lasting::ThisTurn
            };
            let trigger = trigger(env, c, "next time", params)?;
            let (text, _) = c.string("the delayed effect's text")?;
            c.finish()?;
            // Inside, `event PARAM` still names the occurrence answered now (bound when it is
            // set up).
            let mut deeds = Vec::new();
            for inner in block(item, "what the delayed effect does")? {
                no_block(inner)?;
                let mut ic = Cursor::new(&inner.head);
                deeds.push(deed(env, inner, &mut ic, trig, params, ntargets)?);
                ic.finish()?;
            }
            return Ok(Deed::Delayed(Arc::new(DelayedDef {
                text: Arc::from(text.as_str()),
                trigger,
                lasting,
                deeds,
            })));
        }
        _ => occurrence_deed(env, c, params, ntargets)?,
    };
    no_block(item)?;
    c.finish()?;
    Ok(d)
}

/// `trait "text" { ... }`, `reaction "text" { ... }`, `replacement "text" { ... }` in a class.
pub fn class_response(env: &Env, item: &Stmt) -> Res<ResponseDef> {
    let mut c = Cursor::new(&item.head);
    if c.eat_words(&["phase", "cost"]) {
        // `phase cost "TEXT" { during: PHASE; [affects: COND;] cost: ...; unpaid: ... }`.
        let (text, _) = c.string("the phase cost's rules text")?;
        c.finish()?;
        return response_of(env, item, ResponseKind::Ability, &text, 0, true);
    }
    let (w, _) = c.name("`trait`, `reaction`, `replacement`, `prohibition` or `ability`")?;
    let kind = match w.as_str() {
        "trait" => ResponseKind::Trait,
        "reaction" => ResponseKind::Reaction,
        "prohibition" => ResponseKind::Prohibition,
        "ability" => ResponseKind::Ability,
        "mana" => {
            c.expect_word("ability")?;
            ResponseKind::ManaAbility
        }
        _ => ResponseKind::Replacement,
    };
    let (text, _) = c.string(&format!("the {w}'s rules text"))?;
    c.finish()?;
    response(env, item, kind, &text, 0)
}

/// An event named at the cursor: `unknown event` (with the ruleset's events) when none has the
/// name.
pub(crate) fn event_named(env: &Env, c: &mut Cursor, what: &str) -> Res<(EventId, Span)> {
    let (e, es) = c.name(what)?;
    match env.ruleset.event_id(&e) {
        Some(id) => Ok((id, es)),
        None => Err(unknown(
            es,
            "event",
            &e,
            env.ruleset.events.iter().map(|x| &*x.name),
        )),
    }
}
