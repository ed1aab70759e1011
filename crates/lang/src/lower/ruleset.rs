//! Ruleset files (docs/language.md, "Rulesets"): characteristics, player properties, zones,
//! counters, terms, layers and sublayers, state-based checks.

use super::common::{term_stmt, zone};
use super::cond::{condition, Allow};
use super::cursor::{unknown, Cursor, Res};
use super::defs::char_def;
use super::events::{event_decl, rule_decl, timing_decl};
use super::values::{ability, printed_value};
use super::{block, no_block, Env};
use crate::diagnostics::Diagnostic;
use crate::syntax::Stmt;
use rulecraft_core::model::effect::{Change, Op, OpKind};
use rulecraft_core::model::ids::LayerId;
use rulecraft_core::model::ids::SlotTarget;
use rulecraft_core::model::ruleset::{
    Category, ChangeClass, CharDef, CharKind, CounterDef, Intrinsic, LayerDef, PropDef, Slot,
    StateCheck, ZoneDef,
};
use rulecraft_core::Ability;

const KINDS: [&str; 7] = [
    "number",
    "symbols",
    "text",
    "abilities",
    "controller",
    "name",
    "state",
];

/// Lowers the statements of a ruleset file, which holds one `ruleset "name" { ... }`.
pub fn lower(file: crate::diagnostics::FileId, stmts: &[Stmt]) -> Res<Env> {
    let mut env = Env::default();
    let mut seen = false;
    let mut spans = Vec::new();
    let mut counter_spans = Vec::new();
    let mut plays = Vec::new();
    for s in stmts {
        let mut c = Cursor::new(&s.head);
        if !c.eat_word("ruleset") {
            return Err(c.err("`ruleset \"name\" { ... }`"));
        }
        if seen {
            return Err(Diagnostic::new(
                s.head[0].span,
                "a ruleset file holds one ruleset; this is the second",
            ));
        }
        seen = true;
        let (name, _) = c.name_or_string("the ruleset's name")?;
        c.finish()?;
        env.ruleset.name = name;
        for item in block(s, "the ruleset")? {
            if item.head[0].is_word("play") {
                // Its deeds may name built-in events, added once the ruleset's own are read.
                plays.push(item);
                continue;
            }
            let before = env.ruleset.layers.len();
            let counters = env.ruleset.counters.len();
            item_stmt(&mut env, item)?;
            if env.ruleset.counters.len() > counters {
                counter_spans.push(item.head[0].span);
            }
            spans.extend(std::iter::repeat_n(
                item.head[0].span,
                env.ruleset.layers.len() - before,
            ));
        }
    }
    if !seen {
        return Err(Diagnostic::new(
            crate::diagnostics::Span::new(file, 0, 0),
            "empty ruleset file: expected `ruleset \"name\" { ... }`",
        ));
    }
    check_order(&env, &spans)?;
    env.ruleset.add_builtin_events();
    for p in plays {
        super::events::play_decl(&mut env, p)?;
    }
    if !env.ruleset.plays.is_empty() && env.ruleset.turn_structure.is_none() {
        return Err(Diagnostic::new(
            plays_span(stmts),
            "plays are offered in the phases of a turn: declare `turn turn(player: player) { phase ... }`",
        ));
    }
    place_counter_ops(&mut env, &counter_spans)?;
    Ok(env)
}

/// `decks { zone: library; draw: draws; opening hand: 7 }`: how a game starts from deck lists.
fn decks_decl(env: &mut Env, s: &Stmt) -> Res<()> {
    let mut zone_ = None;
    let mut draw = None;
    let mut hand = 0u8;
    let mut first_player = None;
    for item in block(s, "`zone:`, `draw:` and `opening hand:`")? {
        no_block(item)?;
        let mut c = Cursor::new(&item.head);
        if c.eat_word("zone") {
            c.expect_punct(":")?;
            let (z, zs) = c.name("a zone")?;
            zone_ = Some(zone(env, &z, zs)?);
        } else if c.eat_word("draw") {
            c.expect_punct(":")?;
            let (e, es) =
                super::events::event_named(env, &mut c, "the event by which a player draws")?;
            let k = &env.ruleset.events[e.index()];
            if !matches!(&k.params[..], [p] if p.kind == rulecraft_core::model::event::ParamKind::Player)
            {
                return Err(Diagnostic::new(
                    es,
                    format!("`{}` must take one player parameter to be a draw", k.name),
                ));
            }
            draw = Some(e);
        } else if c.eat_words(&["opening", "hand"]) {
            c.expect_punct(":")?;
            let (n, ns) = c.number("the number of cards")?;
            hand = u8::try_from(n)
                .map_err(|_| Diagnostic::new(ns, "an opening hand of 0 to 255 cards"))?;
        } else if c.eat_words(&["first", "player"]) {
            c.expect_punct(":")?;
            let prop = super::common::prop_named(env, &mut c)?;
            c.expect_punct("=")?;
            first_player = Some((prop, c.number("a number")?.0));
        } else {
            return Err(c.err("`zone:`, `draw:`, `opening hand:` or `first player:`"));
        }
        c.finish()?;
    }
    let (Some(zone), Some(draw)) = (zone_, draw) else {
        return Err(Diagnostic::new(
            s.head[0].span,
            "`decks` needs the zone decks start in (`zone: library`) and the draw event (`draw: draws`)",
        ));
    };
    env.ruleset.deck = Some(rulecraft_core::model::ruleset::DeckRules {
        zone,
        draw,
        hand,
        first_player,
    });
    Ok(())
}

/// The first `play` statement of a ruleset file.
fn plays_span(stmts: &[Stmt]) -> crate::diagnostics::Span {
    stmts
        .iter()
        .filter_map(|s| s.block.as_ref())
        .flat_map(|b| b.stmts.iter())
        .find(|i| i.head[0].is_word("play"))
        .map_or(stmts[0].head[0].span, |i| i.head[0].span)
}

/// Not yet placed in a layer: a counter's operation, until every layer is declared.
const UNPLACED: LayerId = LayerId(u16::MAX);

/// A keyword counter's ability applies in the first layer that accepts adding it (CR 613.1f:
/// layer 6); `counter_spans` are the counter statements, in order.
fn place_counter_ops(env: &mut Env, counter_spans: &[crate::diagnostics::Span]) -> Res<()> {
    let rs = &mut env.ruleset;
    for (k, span) in counter_spans.iter().enumerate() {
        for i in 0..rs.counters[k].ops.len() {
            let op = &rs.counters[k].ops[i];
            let Some(layer) = rs.layer_for(op.target, op.change.kind(), false) else {
                let n = match op.target {
                    SlotTarget::Char(c) => char_def(rs, c).name.clone(),
                    SlotTarget::Prop(p) => rs.props[p.index()].name.clone(),
                };
                return Err(Diagnostic::new(
                    *span,
                    format!(
                        "no layer of ruleset `{}` applies `{}` to `{n}`: counter `{}` needs one",
                        rs.name,
                        op.change.kind().name(),
                        rs.counters[k].name
                    ),
                ));
            };
            rs.counters[k].ops[i].layer = layer;
        }
    }
    Ok(())
}

/// CR 613.10-613.11: player and rules effects apply after every object layer.
fn check_order(env: &Env, spans: &[crate::diagnostics::Span]) -> Res<()> {
    let rs = &env.ruleset;
    let mut seen_player = None;
    for (l, span) in rs.layers.iter().zip(spans) {
        let has_char = l
            .slots
            .iter()
            .any(|s| matches!(s.target, SlotTarget::Char(_)));
        let has_prop = l
            .slots
            .iter()
            .any(|s| matches!(s.target, SlotTarget::Prop(_)));
        // A rules layer may change both players and objects (spell costs, CR 601.2f).
        if has_prop {
            seen_player = Some(l);
        } else if has_char {
            if let Some(p) = seen_player {
                return Err(Diagnostic::new(
                    *span,
                    format!(
                        "layer `{}` changes objects but comes after player layer `{}`: player and rules layers must come after every object layer (CR 613.10-613.11)",
                        l.label, p.label
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn name_taken(env: &Env, name: &str) -> bool {
    env.ruleset.char_id(name).is_some() || env.ruleset.prop_id(name).is_some()
}

fn item_stmt(env: &mut Env, s: &Stmt) -> Res<()> {
    let mut c = Cursor::new(&s.head);
    let (kw, kws) = c.name("a ruleset item (`characteristic`, `meter`, `type`, `player`, `zone`, `counter`, `term`, `layer`, `check`, `spells`, `event`, `period`, `turn`, `timing`, `rule`)")?;
    match kw.as_str() {
        "characteristic" => {
            no_block(s)?;
            let (name, ns) = c.name("a characteristic name")?;
            if name_taken(env, &name) {
                return Err(Diagnostic::new(ns, format!("`{name}` is declared twice")));
            }
            c.expect_punct(":")?;
            let (k, ks) =
                c.name("a kind: number, symbols, text, abilities, controller, name or state")?;
            let state = k == "state";
            let kind = match k.as_str() {
                "state" => CharKind::Symbols,
                "number" => CharKind::Number,
                "symbols" => CharKind::Symbols,
                "text" => CharKind::Text,
                "abilities" => CharKind::Abilities,
                "controller" => CharKind::Controller,
                "name" => CharKind::Name,
                _ => return Err(unknown(ks, "characteristic kind", &k, KINDS)),
            };
            // `position: number = 0`: the base value where a class prints none.
            let mut default = None;
            if let Some(eq) = c.peek().filter(|t| t.is_punct("=")).map(|t| t.span) {
                if kind != CharKind::Number || state {
                    return Err(Diagnostic::new(
                        eq,
                        format!(
                            "`{name}` is a {k} characteristic: only a number characteristic takes a default (`= N`)"
                        ),
                    ));
                }
                c.bump();
                if !c.eat_word("none") {
                    default = Some(c.number("a number or `none`")?.0);
                }
            }
            c.finish()?;
            if matches!(
                kind,
                CharKind::Abilities | CharKind::Controller | CharKind::Name
            ) && env.ruleset.char_of_kind(kind).is_some()
            {
                return Err(Diagnostic::new(
                    ks,
                    format!("a ruleset has at most one `{k}` characteristic"),
                ));
            }
            if state && env.ruleset.state_char().is_some() {
                return Err(Diagnostic::new(
                    ks,
                    "a ruleset has at most one `state` characteristic",
                ));
            }
            env.ruleset.characteristics.push(CharDef {
                name,
                kind,
                state,
                default,
                meter: false,
            });
        }
        "effects" => super::events::groups_decl(env, s)?,
        "meter" => {
            // `meter farming`: a number characteristic, the max value, derived through the
            // layers from 0; and a counter kind of the same name, the current value, which only
            // occurrences change (FreeOrion's max and current meters).
            no_block(s)?;
            let (name, ns) = c.name("a meter name")?;
            if name_taken(env, &name) {
                return Err(Diagnostic::new(ns, format!("`{name}` is declared twice")));
            }
            if env.ruleset.counter_id(&name).is_some() {
                return Err(Diagnostic::new(
                    ns,
                    format!("`{name}` is declared twice: a meter's current value is a counter of its name"),
                ));
            }
            c.finish()?;
            env.ruleset.characteristics.push(CharDef {
                name: name.clone(),
                kind: CharKind::Number,
                state: false,
                default: Some(0),
                meter: true,
            });
            env.ruleset.counters.push(CounterDef {
                name,
                changes: Vec::new(),
                ops: Vec::new(),
            });
        }
        "type" => {
            // `type planet: size, environment, farming`: the characteristics only objects of
            // this type have (FreeOrion's object types).
            no_block(s)?;
            let (name, ns) = c.name("an object type name")?;
            // `type system also: x, y`: more characteristics for a type declared earlier.
            let also = c.eat_word("also");
            let before = match (env.ruleset.type_id(&name), also) {
                (Some(_), false) => {
                    return Err(Diagnostic::new(
                        ns,
                        format!("type `{name}` is declared twice"),
                    ))
                }
                (None, true) => {
                    return Err(unknown(
                        ns,
                        "object type",
                        &name,
                        env.ruleset.types.iter().map(|t| t.name.as_str()),
                    ))
                }
                (Some(t), true) => Some(t),
                (None, false) => None,
            };
            let mut chars = Vec::new();
            if also {
                c.expect_punct(":")?;
            }
            if let Some(t) = before {
                chars = env.ruleset.types[t.index()].chars.clone();
            }
            if also || c.eat_punct(":") {
                loop {
                    let (ch, chs) = c.name("a characteristic name")?;
                    let Some(id) = env.ruleset.char_id(&ch) else {
                        let known: Vec<&str> = env
                            .ruleset
                            .characteristics
                            .iter()
                            .map(|d| d.name.as_str())
                            .collect();
                        return Err(unknown(chs, "characteristic", &ch, known));
                    };
                    if chars.contains(&id) {
                        return Err(Diagnostic::new(chs, format!("`{ch}` is listed twice")));
                    }
                    chars.push(id);
                    if !c.eat_punct(",") {
                        break;
                    }
                }
            }
            c.finish()?;
            match before {
                Some(t) => env.ruleset.types[t.index()].chars = chars,
                None => env
                    .ruleset
                    .types
                    .push(rulecraft_core::model::ruleset::TypeDef { name, chars }),
            }
        }
        "order" => order_decl(env, s, &mut c)?,
        "owned" => {
            // `owned through system: planet` (FreeOrion's effects system, Empire Affiliation: a
            // system is owned by every empire that owns a planet in it).
            no_block(s)?;
            c.expect_word("through")?;
            let owned = object_type(env, &mut c)?;
            c.expect_punct(":")?;
            let by = object_type(env, &mut c)?;
            c.finish()?;
            env.ruleset.owned_through.push((owned, by));
        }
        "map" => {
            // `map: x, y, lanes, on_lane, detection`: the position's two number characteristics,
            // the symbols naming a system's neighbours one starlane jump away, the symbols naming
            // the two systems at the ends of the starlane an object outside a system is on, and
            // the detection range (FreeOrion's effects system: distances, starlane jumps and
            // visibility).
            no_block(s)?;
            c.expect_punct(":")?;
            let mut chars = Vec::new();
            for (i, want) in [
                CharKind::Number,
                CharKind::Number,
                CharKind::Symbols,
                CharKind::Symbols,
                CharKind::Number,
            ]
            .into_iter()
            .enumerate()
            {
                if i > 0 {
                    if c.at_end() {
                        return Err(Diagnostic::new(
                            c.here(),
                            format!(
                                "a map names five characteristics (`map: x, y, lanes, on_lane, \
                                 detection`), found {i}"
                            ),
                        ));
                    }
                    c.expect_punct(",")?;
                }
                chars.push(kind_char(
                    env,
                    &mut c,
                    want,
                    "a characteristic (`map: x, y, lanes, on_lane, detection`)",
                    None,
                )?);
            }
            c.finish()?;
            let Some(name) = env.ruleset.char_of_kind(CharKind::Name) else {
                return Err(Diagnostic::new(
                    kws,
                    "a map names systems by their name: the ruleset needs a `name` characteristic",
                ));
            };
            env.ruleset.map = Some(rulecraft_core::model::ruleset::GalaxyMap {
                places: rulecraft_core::model::condition::Places {
                    x: chars[0],
                    y: chars[1],
                    lanes: chars[2],
                    on_lane: Some(chars[3]),
                    name,
                },
                detection: chars[4],
            });
        }
        "unowned" => {
            // `unowned: tags has monster`: the objects owned by no empire, whoever controls them
            // (FreeOrion's effects system, Empire Affiliation: "space monsters").
            no_block(s)?;
            c.expect_punct(":")?;
            let cond = condition(env, &mut c, Allow::default())?;
            c.finish()?;
            if env.ruleset.unowned.is_some() {
                return Err(Diagnostic::new(kws, "`unowned:` is declared twice"));
            }
            env.ruleset.unowned = Some(cond);
        }
        "player" => {
            no_block(s)?;
            let (name, ns) = c.name("a player property name")?;
            if name_taken(env, &name) {
                return Err(Diagnostic::new(ns, format!("`{name}` is declared twice")));
            }
            c.expect_punct(":")?;
            // `player available_techs: symbols`: a set of names, empty as a game begins
            // (FreeOrion's empire's available techs and buildable classes).
            if c.eat_word("symbols") {
                c.finish()?;
                env.ruleset.props.push(PropDef {
                    name,
                    default: None,
                    min: None,
                    symbols: true,
                });
                return Ok(());
            }
            if !c.peek().is_some_and(|t| t.is_word("number")) {
                return Err(c.err("`number` or `symbols`"));
            }
            c.expect_word("number")?;
            let default = if c.eat_punct("=") {
                if c.eat_word("none") {
                    None
                } else {
                    Some(c.number("a number or `none`")?.0)
                }
            } else {
                Some(0)
            };
            // `at least N`: a change cannot take it lower (CR 106.4: a mana pool holds no
            // negative amount).
            c.eat_punct(",");
            let min = if c.eat_words(&["at", "least"]) {
                let (n, ns) = c.number("a number")?;
                if default.is_some_and(|d| d < n) {
                    return Err(Diagnostic::new(
                        ns,
                        format!("`{name}` starts below its least value {n}"),
                    ));
                }
                Some(n)
            } else {
                None
            };
            c.finish()?;
            env.ruleset.props.push(PropDef {
                name,
                default,
                min,
                symbols: false,
            });
        }
        "zone" => {
            no_block(s)?;
            let (name, ns) = c.name("a zone name")?;
            if env.ruleset.zone_id(&name).is_some() {
                return Err(Diagnostic::new(
                    ns,
                    format!("zone `{name}` is declared twice"),
                ));
            }
            let (mut in_play, mut linked) = (false, false);
            if c.eat_punct(":") {
                if c.eat_word("linked") {
                    linked = true;
                } else {
                    c.expect_word("in")?;
                    c.expect_word("play")?;
                    in_play = true;
                }
            }
            c.finish()?;
            env.ruleset.zones.push(ZoneDef {
                name,
                in_play,
                linked,
            });
        }
        "counter" => {
            no_block(s)?;
            let (name, ns) = c.name_or_string("a counter name")?;
            if env.ruleset.counter_id(&name).is_some() {
                return Err(Diagnostic::new(
                    ns,
                    format!("counter `{name}` is declared twice"),
                ));
            }
            if name == "any" {
                return Err(Diagnostic::new(
                    ns,
                    "`any` is not a counter name: `counters(any)` counts counters of every kind",
                ));
            }
            let mut changes = Vec::new();
            let mut ops = Vec::new();
            // `counter time`: a counter that changes no characteristic (time, charge, lore).
            if c.at_end() {
                env.ruleset.counters.push(CounterDef { name, changes, ops });
                return Ok(());
            }
            c.expect_punct(":")?;
            loop {
                let (ch, chs) = c.name("a number characteristic")?;
                // `abilities += flying`: a keyword counter (CR 122.1b); its layer is found once
                // every layer is declared.
                if let Some(a) = env
                    .ruleset
                    .char_id(&ch)
                    .filter(|a| char_def(&env.ruleset, *a).kind == CharKind::Abilities)
                {
                    if !c.eat_punct("+=") {
                        return Err(c.err("`+=`: a counter adds an ability"));
                    }
                    let (k, _) = c.name_or_string("an ability name")?;
                    ops.push(Op::new(
                        SlotTarget::Char(a),
                        Change::AddAbilities(vec![Ability::Keyword(env.symbol(&k))]),
                        UNPLACED,
                        false,
                    ));
                    if !c.eat_punct(",") {
                        break;
                    }
                    continue;
                }
                let id = number_char(env, &ch, chs)?;
                let sign = if c.eat_punct("+=") {
                    1
                } else if c.eat_punct("-=") {
                    -1
                } else {
                    return Err(c.err("`+=` or `-=`"));
                };
                let (n, _) = c.number("a number")?;
                changes.push((id, sign * n));
                if !c.eat_punct(",") {
                    break;
                }
            }
            c.finish()?;
            env.ruleset.counters.push(CounterDef { name, changes, ops });
        }
        "term" => term_stmt(env, s)?,
        "layer" => {
            let (label, _) = c.label("a layer label such as `4` or `7`")?;
            let (lname, _) = c.name_or_string("the layer's name")?;
            let subs = s
                .block
                .as_ref()
                .is_some_and(|b| b.stmts.iter().any(|i| i.head[0].is_word("sublayer")));
            if subs {
                c.finish()?;
                for sub in block(s, "the layer's sublayers")? {
                    let mut sc = Cursor::new(&sub.head);
                    sc.expect_word("sublayer")?;
                    let (sl, _) = sc.label("a sublayer label such as `7a`")?;
                    let (sn, _) = sc.name_or_string("the sublayer's name")?;
                    let e = entries(env, sub, &mut sc)?;
                    push_layer(env, sl, sn, e, sub.head[0].span)?;
                }
            } else {
                let e = entries(env, s, &mut c)?;
                push_layer(env, label, lname, e, kws)?;
            }
        }
        "check" => {
            let (name, _) = c.name_or_string("the check's name")?;
            c.finish()?;
            let mut when = None;
            let mut to = None;
            let mut unattach = false;
            let mut loses = false;
            let mut happens = None;
            for item in block(s, "the check")? {
                no_block(item)?;
                let mut ic = Cursor::new(&item.head);
                if ic.eat_word("when") {
                    ic.expect_punct(":")?;
                    // `legally attached` reads what each object's class says: checks only.
                    env.checking = true;
                    let cond = condition(env, &mut ic, Allow::default());
                    env.checking = false;
                    when = Some(cond?);
                } else if ic.eat_words(&["move", "to"]) {
                    ic.expect_punct(":")?;
                    let (z, zs) = ic.name("a zone")?;
                    to = Some(zone(env, &z, zs)?);
                } else if ic.eat_word("unattach") {
                    unattach = true;
                } else if ic.eat_words(&["player", "loses"]) {
                    loses = true;
                } else if ic.eat_word("happens") {
                    // `happens: destroyed`: the object is the argument of an occurrence of the
                    // event (Revised-era lethal damage destroys: regeneration can replace it).
                    ic.expect_punct(":")?;
                    let (e, es) = crate::lower::events::event_named(env, &mut ic, "an event")?;
                    let kind = &env.ruleset.events[e.index()];
                    let one_object = kind.params.len() == 1
                        && matches!(
                            kind.params[0].kind,
                            rulecraft_core::model::event::ParamKind::Object
                                | rulecraft_core::model::event::ParamKind::Any
                        );
                    if !one_object || kind.period {
                        return Err(Diagnostic::new(
                            es,
                            format!(
                                "`happens:` names an event with one object parameter, the object the check finds; `{}` has {} parameter(s)",
                                kind.name,
                                kind.params.len()
                            ),
                        ));
                    }
                    happens = Some(e);
                } else {
                    return Err(
                        ic.err("`when:`, `move to:`, `happens:`, `unattach` or `player loses`")
                    );
                }
                ic.finish()?;
            }
            let actions = usize::from(to.is_some())
                + usize::from(unattach)
                + usize::from(loses)
                + usize::from(happens.is_some());
            let (Some(condition), 1) = (when, actions) else {
                return Err(Diagnostic::new(
                    s.head[0].span,
                    "a check needs `when:` and one of `move to:`, `happens:`, `unattach` or `player loses`",
                ));
            };
            env.ruleset.state_checks.push(StateCheck {
                name,
                condition,
                to_zone: to,
                unattach,
                loses,
                happens,
            });
        }
        "copiable" => {
            // `copiable: name, types, ...`: what a copy effect copies (layer 1a, CR 613.2a).
            no_block(s)?;
            c.expect_punct(":")?;
            loop {
                let (n, sp) = c.name("a characteristic")?;
                let id = env.ruleset.char_id(&n).ok_or_else(|| {
                    let known = env.ruleset.characteristics.iter().map(|c| c.name.as_str());
                    unknown(sp, "characteristic", &n, known)
                })?;
                env.ruleset.copiable.push(id);
                if !c.eat_punct(",") {
                    break;
                }
            }
            c.finish()?;
        }
        "face" => {
            // `face down { power = 2 ... }`: a face-down object's values (layer 1b, CR 613.2b).
            c.expect_word("down")?;
            c.finish()?;
            for item in block(s, "the face-down values")? {
                no_block(item)?;
                let mut ic = Cursor::new(&item.head);
                let (n, sp) = ic.name("a characteristic")?;
                let id = env.ruleset.char_id(&n).ok_or_else(|| {
                    let known = env.ruleset.characteristics.iter().map(|c| c.name.as_str());
                    unknown(sp, "characteristic", &n, known)
                })?;
                ic.expect_punct("=")?;
                let v = printed_value(char_def(&env.ruleset, id).kind, &mut ic, sp)?;
                ic.finish()?;
                env.ruleset.face_down.push((id, v));
            }
        }
        "categories" => categories(env, s, &mut c)?,
        "intrinsic" => intrinsic(env, s, &mut c)?,
        "event" | "period" | "turn" => event_decl(env, s)?,
        "timing" => timing_decl(env, s)?,
        "rule" | "prohibition" => rule_decl(env, s)?,
        "spells" => {
            // `spells resolve to: graveyard`; `spells wait in: batch` (cast, until they
            // resolve).
            no_block(s)?;
            if c.eat_word("cast") {
                // `spells cast as: casts`: the event of a spell successfully cast.
                c.expect_word("as")?;
                c.expect_punct(":")?;
                let (e, es) = super::events::event_named(env, &mut c, "an event")?;
                let k = &env.ruleset.events[e.index()];
                use rulecraft_core::model::event::ParamKind;
                if !matches!(&k.params[..], [a, b] if a.kind == ParamKind::Object && b.kind == ParamKind::Player)
                    || k.period
                {
                    return Err(Diagnostic::new(
                        es,
                        format!("`{}` must be an event of a spell and its caster: `(card: object, player: player)`", k.name),
                    ));
                }
                env.ruleset.cast_event = Some(e);
                return c.finish();
            }
            let wait = if c.eat_word("wait") {
                c.expect_word("in")?;
                true
            } else {
                c.expect_word("resolve")?;
                c.expect_word("to")?;
                false
            };
            c.expect_punct(":")?;
            let (z, zs) = c.name("a zone")?;
            let z = zone(env, &z, zs)?;
            if wait {
                env.ruleset.wait_zone = Some(z);
            } else {
                env.ruleset.resolved_zone = Some(z);
            }
            c.finish()?;
        }
        "decks" => decks_decl(env, s)?,
        _ => {
            return Err(unknown(
                kws,
                "ruleset item",
                &kw,
                [
                    "characteristic",
                    "meter",
                    "type",
                    "effects",
                    "player",
                    "zone",
                    "counter",
                    "term",
                    "layer",
                    "check",
                    "spells",
                    "decks",
                    "play",
                    "copiable",
                    "face",
                    "categories",
                    "intrinsic",
                    "event",
                    "period",
                    "turn",
                    "timing",
                    "rule",
                    "prohibition",
                ],
            ))
        }
    }
    Ok(())
}

/// `categories subtypes by types { creature, kindred: others ... land: forest, island ... }`: the
/// sets a symbols characteristic's symbols fall in (CR 205.3), each tied, with `by`, to the
/// symbols (card types) of another characteristic it belongs to.
/// An object type the ruleset declared, by name.
fn object_type(env: &Env, c: &mut Cursor) -> Res<rulecraft_core::model::ids::TypeId> {
    let (t, ts) = c.name("an object type")?;
    env.ruleset.type_id(&t).ok_or_else(|| {
        unknown(
            ts,
            "object type",
            &t,
            env.ruleset.types.iter().map(|t| t.name.as_str()),
        )
    })
}

/// `order size: tiny, small, medium`: a symbols characteristic's symbols in order; `order
/// environment: ring swamp, toxic, ...`: around a ring, the last next to the first (FreeOrion's
/// planet sizes and environment wheel).
fn order_decl(env: &mut Env, s: &Stmt, c: &mut Cursor) -> Res<()> {
    no_block(s)?;
    let sp = c.here();
    let ch = symbols_char(env, c, "an order ranks symbols")?;
    let rs = &env.ruleset;
    let n = &char_def(rs, ch).name;
    if rs.orders.iter().any(|o| o.char == ch) {
        return Err(Diagnostic::new(
            sp,
            format!("the order of `{n}` is declared twice"),
        ));
    }
    c.expect_punct(":")?;
    let ring = c.eat_word("ring");
    let mut symbols: Vec<std::sync::Arc<str>> = Vec::new();
    loop {
        let (sym, ss) = c.name_or_string("a symbol")?;
        if symbols.iter().any(|x| **x == *sym) {
            return Err(Diagnostic::new(ss, format!("`{sym}` is listed twice")));
        }
        symbols.push(sym.as_str().into());
        if !c.eat_punct(",") {
            break;
        }
    }
    c.finish()?;
    env.ruleset
        .orders
        .push(rulecraft_core::model::ruleset::SymbolOrder {
            char: ch,
            symbols,
            ring,
        });
    Ok(())
}

/// A symbols characteristic named next; `why` ends the error for one of another kind.
fn symbols_char(env: &Env, c: &mut Cursor, why: &str) -> Res<rulecraft_core::CharId> {
    kind_char(
        env,
        c,
        CharKind::Symbols,
        "a symbols characteristic",
        Some(why),
    )
}

/// A characteristic of kind `want` named next (`expected`: what the error for no name says);
/// `why`, if given, ends the error for one of another kind.
fn kind_char(
    env: &Env,
    c: &mut Cursor,
    want: CharKind,
    expected: &str,
    why: Option<&str>,
) -> Res<rulecraft_core::CharId> {
    let (n, sp) = c.name(expected)?;
    let rs = &env.ruleset;
    let id = rs.char_id(&n).ok_or_else(|| {
        unknown(
            sp,
            "characteristic",
            &n,
            rs.characteristics.iter().map(|c| c.name.as_str()),
        )
    })?;
    if char_def(rs, id).kind != want {
        let why = why.map(|w| format!(": {w}")).unwrap_or_default();
        return Err(Diagnostic::new(
            sp,
            format!("`{n}` is not a {} characteristic{why}", want.name()),
        ));
    }
    Ok(id)
}

fn categories(env: &mut Env, s: &Stmt, c: &mut Cursor) -> Res<()> {
    let at = c.here();
    let ch = symbols_char(env, c, "categories divide symbols")?;
    if env.ruleset.categories_of(ch).next().is_some() {
        return Err(Diagnostic::new(
            at,
            format!(
                "the categories of `{}` are declared twice",
                char_def(&env.ruleset, ch).name
            ),
        ));
    }
    let by = if c.eat_word("by") {
        Some(symbols_char(env, c, "categories divide symbols")?)
    } else {
        None
    };
    c.finish()?;
    let mut others = false;
    for item in block(s, "the categories")? {
        no_block(item)?;
        let mut ic = Cursor::new(&item.head);
        let mut names = Vec::new();
        loop {
            let (n, sp) = ic.name_or_string("a category name")?;
            names.push((n, sp));
            if by.is_none() || !ic.eat_punct(",") {
                break;
            }
        }
        let (name, nsp) = names[0].clone();
        if env.ruleset.categories_of(ch).any(|x| x.name == name) {
            return Err(Diagnostic::new(
                nsp,
                format!("category `{name}` is declared twice"),
            ));
        }
        ic.expect_punct(":")?;
        let members = if ic.peek().is_some_and(|t| t.is_word("others")) {
            let sp = ic.here();
            ic.bump();
            if std::mem::replace(&mut others, true) {
                return Err(Diagnostic::new(
                    sp,
                    "only one category can hold the others: the symbols no category lists",
                ));
            }
            None
        } else {
            let mut list = Vec::new();
            loop {
                let (w, wsp) = ic.name_or_string("a symbol or `others`")?;
                let sym = env.symbol(&w);
                if let Some(x) = env
                    .ruleset
                    .categories_of(ch)
                    .find(|x| x.members.as_ref().is_some_and(|m| m.contains(&sym)))
                {
                    return Err(Diagnostic::new(
                        wsp,
                        format!("`{w}` is already in category `{}`", x.name),
                    ));
                }
                list.push(sym);
                if !ic.eat_punct(",") {
                    break;
                }
            }
            Some(list.into_iter().collect())
        };
        ic.finish()?;
        env.ruleset.categories.push(Category {
            char: ch,
            name,
            by: by.map(|b| (b, names.iter().map(|(n, _)| env.symbol(n)).collect())),
            members,
        });
    }
    Ok(())
}

/// `intrinsic subtypes when types has land { forest: "{T}: Add {G}." ... }`: the abilities some
/// symbols give an object that holds a symbol in another characteristic (CR 305.6).
fn intrinsic(env: &mut Env, s: &Stmt, c: &mut Cursor) -> Res<()> {
    let at = c.here();
    let ch = symbols_char(env, c, "its symbols give the abilities")?;
    let rs = &env.ruleset;
    if rs.intrinsic_of(ch).is_some() {
        return Err(Diagnostic::new(
            at,
            format!(
                "the abilities of `{}` are declared twice",
                char_def(rs, ch).name
            ),
        ));
    }
    if rs.char_of_kind(CharKind::Abilities).is_none() {
        return Err(Diagnostic::new(
            at,
            "this ruleset declares no `abilities` characteristic for the abilities to go in",
        ));
    }
    c.expect_word("when")?;
    let by = symbols_char(env, c, "its symbols give the abilities")?;
    c.expect_word("has")?;
    let (w, _) = c.name_or_string("a symbol")?;
    c.finish()?;
    let mut abilities = Vec::new();
    for item in block(s, "the abilities")? {
        no_block(item)?;
        let mut ic = Cursor::new(&item.head);
        let (sym, ssp) = ic.name_or_string("a symbol")?;
        let sym = env.symbol(&sym);
        if abilities.iter().any(|(x, _)| *x == sym) {
            return Err(Diagnostic::new(
                ssp,
                format!("`{sym}` is given its abilities twice"),
            ));
        }
        ic.expect_punct(":")?;
        let a = ability(&mut ic)?;
        ic.finish()?;
        abilities.push((sym, a));
    }
    env.ruleset.intrinsic.push(Intrinsic {
        char: ch,
        when: (by, env.symbol(&w)),
        abilities,
    });
    Ok(())
}

fn number_char(env: &Env, ch: &str, sp: crate::diagnostics::Span) -> Res<rulecraft_core::CharId> {
    let rs = &env.ruleset;
    let id = rs.char_id(ch).ok_or_else(|| {
        unknown(
            sp,
            "characteristic",
            ch,
            rs.characteristics.iter().map(|c| c.name.as_str()),
        )
    })?;
    if char_def(rs, id).kind != CharKind::Number {
        return Err(Diagnostic::new(
            sp,
            format!(
                "`{ch}` is not a number characteristic: counters change numbers or add abilities"
            ),
        ));
    }
    Ok(id)
}

fn push_layer(
    env: &mut Env,
    label: String,
    name: String,
    e: Entries,
    sp: crate::diagnostics::Span,
) -> Res<()> {
    if env.ruleset.layers.iter().any(|l| l.label == label) {
        return Err(Diagnostic::new(
            sp,
            format!("layer `{label}` is declared twice"),
        ));
    }
    if e.counters && env.ruleset.counters_layer().is_some() {
        return Err(Diagnostic::new(
            sp,
            "counters already apply in an earlier layer: expected one layer with `counters`",
        ));
    }
    env.ruleset.layers.push(LayerDef {
        label,
        name,
        slots: e.slots,
        counters: e.counters,
        face_down: e.face_down,
        dependency: e.dependency,
        kind_order: e.kind_order,
    });
    Ok(())
}

/// What a layer or sublayer holds.
struct Entries {
    slots: Vec<Slot>,
    counters: bool,
    face_down: bool,
    dependency: bool,
    kind_order: Vec<ChangeClass>,
}

/// A layer's entries: after `:` on one line, or one per statement in a block. An entry is a list of
/// characteristics (see `slots`), `counters`, `timestamp order only`, or `order: increase, decrease,
/// set`.
fn entries(env: &Env, s: &Stmt, c: &mut Cursor) -> Res<Entries> {
    let mut e = Entries {
        slots: Vec::new(),
        counters: false,
        face_down: false,
        dependency: true,
        kind_order: Vec::new(),
    };
    if c.eat_punct(":") {
        no_block(s)?;
        entry(env, c, &mut e)?;
        return Ok(e);
    }
    c.finish()?;
    for item in block(s, "the layer's entries")? {
        no_block(item)?;
        let mut ec = Cursor::new(&item.head);
        entry(env, &mut ec, &mut e)?;
    }
    Ok(e)
}

fn entry(env: &Env, c: &mut Cursor, e: &mut Entries) -> Res<()> {
    if c.eat_word("counters") {
        e.counters = true;
    } else if c.eat_words(&["face", "down"]) {
        e.face_down = true;
    } else if c.eat_words(&["copy", "effects"]) {
        // Layer 1a (CR 613.2a): copy effects change every copiable characteristic.
        if env.ruleset.copiable.is_empty() {
            return Err(Diagnostic::new(
                c.toks[0].span,
                "`copy effects` needs the ruleset's `copiable:` list declared before this layer",
            ));
        }
        for ch in &env.ruleset.copiable {
            e.slots.push(Slot {
                target: SlotTarget::Char(*ch),
                kinds: Some(vec![OpKind::Copy]),
                defining_only: false,
            });
        }
    } else if c.eat_words(&["text", "effects"]) {
        // Layer 3 (CR 613.1c): text-changing effects, on any characteristic.
        for i in 0..env.ruleset.characteristics.len() {
            e.slots.push(Slot {
                target: SlotTarget::Char(rulecraft_core::CharId(i as u16)),
                kinds: Some(vec![OpKind::Text]),
                defining_only: false,
            });
        }
    } else if c.eat_words(&["timestamp", "order", "only"]) {
        e.dependency = false;
    } else if c.eat_word("order") {
        c.expect_punct(":")?;
        loop {
            let (w, sp) = c.name("`increase`, `decrease` or `set`")?;
            let k = match w.as_str() {
                "increase" => ChangeClass::Increase,
                "decrease" => ChangeClass::Decrease,
                "set" => ChangeClass::Set,
                _ => {
                    return Err(unknown(
                        sp,
                        "kind of change",
                        &w,
                        ["increase", "decrease", "set"],
                    ))
                }
            };
            if e.kind_order.contains(&k) {
                return Err(Diagnostic::new(sp, format!("`{w}` is listed twice")));
            }
            e.kind_order.push(k);
            if !c.eat_punct(",") {
                break;
            }
        }
    } else {
        e.slots.extend(slots(env, c)?);
        return Ok(());
    }
    c.finish()
}

/// `[defining] [set|modify|switch|add|remove ...] name, name`
fn slots(env: &Env, c: &mut Cursor) -> Res<Vec<Slot>> {
    let defining_only = c.eat_word("defining");
    let mut kinds = Vec::new();
    loop {
        let k = match c.peek().and_then(|t| t.word()) {
            Some("set") => OpKind::Set,
            Some("modify") => OpKind::Modify,
            Some("switch") => OpKind::Switch,
            Some("add") => OpKind::Add,
            Some("remove") => OpKind::Remove,
            _ => break,
        };
        c.bump();
        kinds.push(k);
        c.eat_word("and");
    }
    let mut out = Vec::new();
    loop {
        let (n, sp) = c.name("a characteristic or player property")?;
        let target = if let Some(ch) = env.ruleset.char_id(&n) {
            SlotTarget::Char(ch)
        } else if let Some(p) = env.ruleset.prop_id(&n) {
            SlotTarget::Prop(p)
        } else {
            let known = env
                .ruleset
                .characteristics
                .iter()
                .map(|c| c.name.as_str())
                .chain(env.ruleset.props.iter().map(|p| p.name.as_str()));
            return Err(unknown(sp, "characteristic or player property", &n, known));
        };
        out.push(Slot {
            target,
            kinds: (!kinds.is_empty()).then(|| kinds.clone()),
            defining_only,
        });
        if !c.eat_punct(",") {
            break;
        }
    }
    c.finish()?;
    Ok(out)
}
