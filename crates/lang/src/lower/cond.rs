//! Conditions and numeric expressions (docs/language.md, "Conditions"): parsed from a statement's
//! tokens and checked against the ruleset's characteristics, zones, counters and terms.

use super::cursor::{unknown, Cursor, Res};
use super::defs::char_def;
use super::Env;
use crate::diagnostics::Diagnostic;
use crate::diagnostics::Span;
use crate::lexer::Tok;
use rulecraft_core::model::condition::{
    Affiliation, CmpOp, Cond, EmpireRef, Metric, Nearness, NumExpr, ObjRef, OrderTest, Owners,
    PlayerRef, StockpileTest, Visibility, Word,
};
use rulecraft_core::model::ids::CounterId;
use rulecraft_core::model::ruleset::CharKind;
use rulecraft_core::AbilityKind;

/// Words that end a condition's implicit "and" run.
const STOP: [&str; 5] = ["or", "and", "then", "to", "of"];

/// What the statement's condition may refer to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Allow<'a> {
    /// `target` (a spell's effects and its target condition).
    pub target: bool,
    /// The names of the spell's targets, in order, where it names them (`target "first": ...`).
    pub names: &'a [String],
    /// `outer`: inside `exists`, `no`, `count`, `sum` or after `among`.
    pub outer: bool,
    /// The parameters of the event a response answers, in order: `event NAME` names one.
    pub params: &'a [String],
}

impl<'a> Allow<'a> {
    /// Inside an aggregate, where `outer` names the subject of the condition around it.
    pub fn inside(self) -> Self {
        Allow {
            outer: true,
            ..self
        }
    }
}

/// The most parts a condition or expression may have once its terms are written out: terms may
/// use terms, so without a bound a few lines could stand for more parts than any machine holds.
pub const MAX_PARTS: usize = 10_000;

/// How many parts a condition has, terms written out (saturating).
pub fn cond_size(c: &Cond) -> usize {
    1usize.saturating_add(match c {
        Cond::And(cs) | Cond::Or(cs) => cs
            .iter()
            .fold(0usize, |a, c| a.saturating_add(cond_size(c))),
        Cond::Not(c) | Cond::Exists(c) => cond_size(c),
        Cond::Cmp(a, _, b) => num_size(a).saturating_add(num_size(b)),
        _ => 0,
    })
}

/// How many parts an expression has, terms written out (saturating).
pub fn num_size(e: &NumExpr) -> usize {
    1usize.saturating_add(match e {
        NumExpr::Count(c) | NumExpr::Sum(_, c) | NumExpr::Distinct(_, c) => cond_size(c),
        NumExpr::Add(a, b)
        | NumExpr::Sub(a, b)
        | NumExpr::Mul(a, b)
        | NumExpr::Div(a, b)
        | NumExpr::Max(a, b)
        | NumExpr::Min(a, b) => num_size(a).saturating_add(num_size(b)),
        NumExpr::Neg(a) => num_size(a),
        _ => 0,
    })
}

/// Adds a part's size to a running total; an error at the part (tokens `from` up to the cursor)
/// once the total passes `MAX_PARTS`.
fn budget(c: &Cursor, from: usize, total: &mut usize, size: usize, what: &str) -> Res<()> {
    *total = total.saturating_add(size);
    if *total <= MAX_PARTS {
        return Ok(());
    }
    let first = c.toks[from.min(c.toks.len() - 1)].span;
    let last = c.toks[c.pos.max(from + 1).min(c.toks.len()) - 1].span;
    Err(Diagnostic::new(
        first.to(last),
        format!("this {what} is too large: written out with its terms it has more than {MAX_PARTS} parts"),
    ))
}

pub(crate) fn condition(env: &Env, c: &mut Cursor, allow: Allow) -> Res<Cond> {
    let top = c.depth == 0;
    let start = c.pos;
    let cond = condition_in(env, c, allow)?;
    if top {
        let cond = through_holders(&env.ruleset, cond);
        within_tree_limit(c, start, cond_depth(&cond))?;
        return Ok(cond);
    }
    Ok(cond)
}

fn condition_in(env: &Env, c: &mut Cursor, allow: Allow) -> Res<Cond> {
    let mut total = 0;
    let from = c.pos;
    let first = and(env, c, allow)?;
    budget(c, from, &mut total, cond_size(&first), "condition")?;
    let mut parts = vec![first];
    while c.eat_word("or") {
        let from = c.pos;
        let part = and(env, c, allow)?;
        budget(c, from, &mut total, cond_size(&part), "condition")?;
        parts.push(part);
    }
    Ok(if parts.len() == 1 {
        parts.pop().unwrap_or(Cond::True)
    } else {
        Cond::Or(parts)
    })
}

/// "each creature you control", "a creature an opponent controls": these words read well and mean
/// nothing more.
fn filler(c: &mut Cursor) {
    while c.eat_word("each")
        || c.eat_word("every")
        || c.eat_word("all")
        || c.eat_word("a")
        || c.eat_word("an")
    {}
}

fn and(env: &Env, c: &mut Cursor, allow: Allow) -> Res<Cond> {
    filler(c);
    let mut total = 0;
    let from = c.pos;
    let first = unary(env, c, allow)?;
    budget(c, from, &mut total, cond_size(&first), "condition")?;
    let mut parts = vec![first];
    loop {
        let from = c.pos;
        if c.eat_word("and") {
            let part = unary(env, c, allow)?;
            budget(c, from, &mut total, cond_size(&part), "condition")?;
            parts.push(part);
            continue;
        }
        // Juxtaposition is "and": `other creature you control`.
        match c.peek() {
            Some(t) if t.is_punct("(") || t.word().is_some_and(|w| !STOP.contains(&w)) => {
                let part = unary(env, c, allow)?;
                budget(c, from, &mut total, cond_size(&part), "condition")?;
                parts.push(part)
            }
            _ => break,
        }
    }
    Ok(if parts.len() == 1 {
        parts.pop().unwrap_or(Cond::True)
    } else {
        Cond::And(parts)
    })
}

/// Each level of nesting may need more stack than the thread has (a test thread has 2 MiB; a debug
/// build's frames are large): the parsers grow it on the heap when it runs low.
const STACK_RED_ZONE: usize = 128 * 1024;
const STACK_GROWTH: usize = 4 * 1024 * 1024;

fn unary(env: &Env, c: &mut Cursor, allow: Allow) -> Res<Cond> {
    c.nest()?;
    let r = stacker::maybe_grow(STACK_RED_ZONE, STACK_GROWTH, || unary_in(env, c, allow));
    c.unnest(1);
    r
}

fn unary_in(env: &Env, c: &mut Cursor, allow: Allow) -> Res<Cond> {
    filler(c);
    if c.eat_word("not") {
        return Ok(Cond::Not(Box::new(unary(env, c, allow)?)));
    }
    primary(env, c, allow)
}

fn player_ref(c: &mut Cursor) -> Option<PlayerRef> {
    if c.eat_word("you") {
        Some(PlayerRef::You)
    } else if c.eat_word("opponent") || c.eat_word("an_opponent") {
        Some(PlayerRef::Opponent)
    } else if c.eat_words(&["active", "player"]) {
        Some(PlayerRef::Active)
    } else if c.eat_word("owner") || c.eat_word("its_owner") {
        Some(PlayerRef::Owner)
    } else {
        None
    }
}

fn primary(env: &Env, c: &mut Cursor, allow: Allow) -> Res<Cond> {
    let rs = &env.ruleset;
    if c.eat_punct("(") {
        let inner = condition(env, c, allow)?;
        c.expect_punct(")")?;
        return Ok(inner);
    }
    let Some(tok) = c.peek() else {
        return Err(c.err("a condition"));
    };
    let Some(word) = tok.word() else {
        // A number starts a comparison: `2 <= count(colors)`.
        if matches!(tok.tok, Tok::Number(_)) || tok.is_punct("-") {
            return comparison(env, c, allow);
        }
        return Err(c.err("a condition"));
    };
    let span = tok.span;
    // Player phrases: "you control", "an opponent controls", "you own", and players themselves.
    let save = c.pos;
    let dotted = c.peek_at(1).is_some_and(|t| t.is_punct("."));
    if dotted {
        // `you.life > 3`, `enchanted.power >= 2`: a comparison.
        if let Some(w) = c.peek().and_then(|t| t.word()) {
            if matches!(
                w,
                "you" | "opponent" | "owner" | "enchanted" | "equipped" | "attached" | "fortified"
            ) {
                return comparison(env, c, allow);
            }
        }
    }
    if !dotted {
        if let Some(cond) = galaxy_condition(env, c, allow, word, span)? {
            return Ok(cond);
        }
    }
    if matches!(word, "sum" | "none" | "max" | "min") {
        return comparison(env, c, allow);
    }
    if let Some(p) = player_ref(c) {
        if c.eat_word("control") || c.eat_word("controls") {
            return Ok(Cond::ControlledBy(p));
        }
        if c.eat_word("own") || c.eat_word("owns") {
            return Ok(Cond::OwnedBy(p));
        }
        if p != PlayerRef::Owner {
            return Ok(Cond::IsPlayer(p));
        }
        c.pos = save;
    }
    match word {
        "player" | "players" => {
            c.bump();
            return Ok(Cond::AnyPlayer);
        }
        "in" => {
            c.bump();
            if c.eat_word("play") {
                return Ok(Cond::InPlay);
            }
            let (z, zs) = c.name("a zone name or `play`")?;
            return match rs.zone_id(&z) {
                Some(id) => Ok(Cond::InZone(id)),
                None => Err(unknown(
                    zs,
                    "zone",
                    &z,
                    rs.zones.iter().map(|z| z.name.as_str()),
                )),
            };
        }
        "face" if c.peek_at(1).is_some_and(|t| t.is_word("down")) => {
            c.bump();
            c.bump();
            return Ok(Cond::FaceDown);
        }
        "face_down" => {
            c.bump();
            return Ok(Cond::FaceDown);
        }
        "linked" => {
            c.bump();
            return Ok(Cond::Linked);
        }
        "on" if c.peek_at(1).is_some_and(|t| t.is_word("top")) => {
            // `on top of graveyard`: the latest object to enter that zone among yours.
            c.bump();
            c.bump();
            c.expect_word("of")?;
            let (z, zs) = c.name("a zone")?;
            return match rs.zone_id(&z) {
                Some(id) => Ok(Cond::OnTop(id)),
                None => Err(unknown(
                    zs,
                    "zone",
                    &z,
                    rs.zones.iter().map(|z| z.name.as_str()),
                )),
            };
        }
        "other" | "another" => {
            c.bump();
            return Ok(Cond::Not(Box::new(Cond::IsSource)));
        }
        "event" if !dotted => {
            // `event amount > 1`, `event card.force >= 3`: a comparison.
            if c.peek_at(2).is_some_and(|t| {
                [".", "<", "<=", ">", ">=", "=", "!=", "+", "-", "*"]
                    .iter()
                    .any(|p| t.is_punct(p))
            }) {
                return comparison(env, c, allow);
            }
            // `event card`: the tested object or player is that argument of the occurrence.
            c.bump();
            return event_cond(c, allow, span);
        }
        "source" | "self" | "this" | "it" if !c.peek_at(1).is_some_and(|t| t.is_punct(".")) => {
            c.bump();
            return Ok(Cond::IsSource);
        }
        "outer" if !dotted => {
            c.bump();
            check_outer(allow, span)?;
            return Ok(Cond::IsOuter);
        }
        "target" | "targeted" => {
            c.bump();
            if !allow.target {
                return Err(Diagnostic::new(
                    span,
                    "`target` is only allowed in a spell's effects: a static ability has no target",
                ));
            }
            let at = target_name(c, allow)?;
            // `target.life > 3`: a comparison on a player target.
            if c.peek().is_some_and(|t| t.is_punct(".")) {
                c.pos = save;
                return comparison(env, c, allow);
            }
            // `target controls`, `target "victim" owns`: the target is a player.
            if c.eat_word("control") || c.eat_word("controls") {
                return Ok(Cond::ControlledBy(PlayerRef::Target(at)));
            }
            if c.eat_word("own") || c.eat_word("owns") {
                return Ok(Cond::OwnedBy(PlayerRef::Target(at)));
            }
            return Ok(match at {
                Some(i) => Cond::IsTargetAt(i),
                None => Cond::IsTarget,
            });
        }
        "shares" => {
            // `shares subtypes with outer`: "shares a creature type with it".
            c.bump();
            let (w, sp) = c.name("a symbols characteristic after `shares`")?;
            let ch = rs.char_id(&w).ok_or_else(|| {
                unknown(
                    sp,
                    "characteristic",
                    &w,
                    rs.characteristics.iter().map(|c| c.name.as_str()),
                )
            })?;
            let kind = char_def(rs, ch).kind;
            if kind != CharKind::Symbols {
                return Err(Diagnostic::new(
                    sp,
                    format!(
                        "`{w}` is a {} characteristic: `shares` compares symbols",
                        kind.name()
                    ),
                ));
            }
            c.expect_word("with")?;
            let r = ref_word(c, allow)?;
            return Ok(Cond::Shares(r, ch));
        }
        "named" => {
            // `named "Grizzly Bears"`, `named chosen`.
            c.bump();
            let Some(ch) = rs.char_of_kind(CharKind::Name) else {
                return Err(Diagnostic::new(
                    span,
                    "this ruleset declares no `name` characteristic: `named` compares an object's name",
                ));
            };
            let bare = c.peek().is_some_and(|t| t.word().is_some());
            let (n, _) = c.name_or_string("a name after `named`")?;
            let w = match (bare, choice_index(&n)) {
                (true, Some(i)) => Word::Choice(i),
                _ => Word::Lit(n.as_str().into()),
            };
            return Ok(Cond::Named(ch, w));
        }
        "object" | "objects" => {
            c.bump();
            return Ok(Cond::AnyObject);
        }
        "attached" if c.peek_at(1).is_some_and(|t| t.is_word("to")) => {
            // `attached to creature`: the tested object is attached to one that satisfies it.
            c.bump();
            c.bump();
            return Ok(Cond::AttachedTo(Box::new(unary(env, c, allow)?)));
        }
        "legally" => {
            c.bump();
            c.expect_word("attached")?;
            if !env.checking {
                return Err(Diagnostic::new(
                    span,
                    "`legally attached` is only allowed in a state-based check's `when:`",
                ));
            }
            return Ok(Cond::LegallyAttached);
        }
        "enchanted" | "equipped" | "attached" | "fortified" if !dotted => {
            c.bump();
            return Ok(Cond::IsAttached);
        }
        "exists" | "no" => {
            c.bump();
            c.expect_punct("(")?;
            let inner = condition(env, c, allow.inside())?;
            c.expect_punct(")")?;
            let e = Cond::Exists(Box::new(inner));
            return Ok(if word == "no" {
                Cond::Not(Box::new(e))
            } else {
                e
            });
        }
        _ => {}
    }
    // `colors has red`, `source.colors has red`
    let (obj, char_tok) = if c.peek_at(1).is_some_and(|t| t.is_punct(".")) {
        (obj_ref(c, allow)?, c.peek_at(0))
    } else {
        (ObjRef::This, Some(tok))
    };
    if let Some(ch_tok) = char_tok {
        if let Some(ch) = ch_tok.word().and_then(|w| rs.char_id(w)) {
            if c.peek_at(1)
                .is_some_and(|t| t.is_word("has") || t.is_word("lacks"))
            {
                c.bump();
                let lacks = c.bump().is_some_and(|t| t.is_word("lacks"));
                let kind = char_def(rs, ch).kind;
                if !matches!(kind, CharKind::Symbols | CharKind::Abilities) {
                    return Err(Diagnostic::new(
                        ch_tok.span,
                        format!(
                            "`{}` is a {} characteristic: `has` expects symbols or abilities",
                            char_def(rs, ch).name,
                            kind.name()
                        ),
                    ));
                }
                // `abilities has an activated ability`: an ability of that kind (CR 113.3).
                let save_kind = c.pos;
                if kind == CharKind::Abilities {
                    c.eat_word("a");
                    c.eat_word("an");
                    let k = c.peek().and_then(|t| t.word()).and_then(AbilityKind::named);
                    let noun = c
                        .peek_at(1)
                        .is_some_and(|t| t.is_word("ability") || t.is_word("abilities"));
                    if let (Some(k), true) = (k, noun) {
                        c.bump();
                        c.bump();
                        let cond = Cond::HasKind(obj, ch, k);
                        return Ok(if lacks {
                            Cond::Not(Box::new(cond))
                        } else {
                            cond
                        });
                    }
                    c.pos = save_kind;
                }
                let bare = c.peek().is_some_and(|t| t.word().is_some());
                let (sym, sym_span) = c.name_or_string("a symbol after `has`")?;
                // `has chosen`: the source's choice, as `chosen` is in an operation's symbols.
                let cond = match (bare, choice_index(&sym)) {
                    (true, Some(i)) => Cond::HasChoice(obj, ch, i),
                    _ => {
                        if bare {
                            env.note_symbol(sym_span, ch, &sym, lacks);
                        }
                        Cond::Has(obj, ch, env.symbol(&sym))
                    }
                };
                return Ok(if lacks {
                    Cond::Not(Box::new(cond))
                } else {
                    cond
                });
            }
            // Otherwise a comparison such as `toughness <= 0`.
            c.pos = save;
            return comparison(env, c, allow);
        }
    }
    if obj != ObjRef::This {
        c.pos = save;
        return comparison(env, c, allow);
    }
    // A term of the ruleset, singular or plural: `creature`, `creatures`.
    if let Some(t) = env.term(word) {
        c.bump();
        return Ok(t.clone());
    }
    // An object type, singular or plural: `planet`, `planets`.
    if let Some(t) = rs
        .type_id(word)
        .or_else(|| word.strip_suffix('s').and_then(|w| rs.type_id(w)))
    {
        c.bump();
        return Ok(Cond::OfType(t));
    }
    if rs.prop_id(word).is_some()
        || matches!(word, "count" | "counters")
        || (word == "current" && c.peek_at(1).is_some_and(|t| t.is_punct("(")))
    {
        return comparison(env, c, allow);
    }
    let mut known: Vec<&str> = env.terms.keys().map(|s| s.as_str()).collect();
    known.sort();
    Err(unknown(span, "term", word, known).with_help(
        "a condition is a term, a phrase such as `you control` or `in play`, or a comparison",
    ))
}

fn comparison(env: &Env, c: &mut Cursor, allow: Allow) -> Res<Cond> {
    let l = num(env, c, allow)?;
    let op = cmp_op(c, "a comparison (`<`, `<=`, `>`, `>=`, `=`, `!=`)")?;
    let r = num(env, c, allow)?;
    Ok(Cond::Cmp(l, op, r))
}

/// A comparison operator, taken; `expected` names what was expected where there is none.
fn cmp_op(c: &mut Cursor, expected: &str) -> Res<CmpOp> {
    let op = match c.peek() {
        Some(t) if t.is_punct("<") => CmpOp::Lt,
        Some(t) if t.is_punct("<=") => CmpOp::Le,
        Some(t) if t.is_punct(">") => CmpOp::Gt,
        Some(t) if t.is_punct(">=") => CmpOp::Ge,
        Some(t) if t.is_punct("==") || t.is_punct("=") => CmpOp::Eq,
        Some(t) if t.is_punct("!=") => CmpOp::Ne,
        _ => return Err(c.err(expected)),
    };
    c.bump();
    Ok(op)
}

/// `R.` before a characteristic.
fn obj_ref(c: &mut Cursor, allow: Allow) -> Res<ObjRef> {
    let (w, sp) = c.name("`source`, `this` or `enchanted`")?;
    let r = match w.as_str() {
        "source" | "self" => ObjRef::Source,
        "this" | "it" => ObjRef::This,
        "enchanted" | "equipped" | "attached" | "fortified" => ObjRef::Attached,
        "outer" => {
            check_outer(allow, sp)?;
            ObjRef::Outer
        }
        _ => {
            return Err(Diagnostic::new(
                sp,
                format!(
                    "unknown object `{w}`: expected `source`, `this`, `enchanted` or `outer` before `.`"
                ),
            ))
        }
    };
    c.expect_punct(".")?;
    Ok(r)
}

/// An object named alone, as after `shares ... with`.
fn ref_word(c: &mut Cursor, allow: Allow) -> Res<ObjRef> {
    let (w, sp) = c.name("`source`, `this`, `enchanted` or `outer`")?;
    Ok(match w.as_str() {
        "source" | "self" => ObjRef::Source,
        "this" | "it" => ObjRef::This,
        "enchanted" | "equipped" | "attached" | "fortified" => ObjRef::Attached,
        "outer" => {
            check_outer(allow, sp)?;
            ObjRef::Outer
        }
        _ => {
            return Err(Diagnostic::new(
                sp,
                format!("unknown object `{w}`: expected `source`, `this`, `enchanted` or `outer`"),
            ))
        }
    })
}

/// `outer` names the subject of the condition around an aggregate: only inside one.
fn check_outer(allow: Allow, sp: crate::diagnostics::Span) -> Res<()> {
    if allow.outer {
        return Ok(());
    }
    Err(Diagnostic::new(
        sp,
        "`outer` names the object the condition around it is tested on: it is only allowed inside `exists(...)`, `no(...)`, `count(...)`, `sum(...)` or after `among`",
    ))
}

/// Which of the source's choices a word names: `chosen` and `first_choice` the first,
/// `second_choice` the second.
pub fn choice_index(w: &str) -> Option<u8> {
    match w {
        "chosen" | "first_choice" => Some(0),
        "second_choice" => Some(1),
        _ => None,
    }
}

/// After `target`: the name of one of the spell's targets, if one follows (a string, or a word that
/// names one of them); its index.
fn target_name(c: &mut Cursor, allow: Allow) -> Res<Option<u8>> {
    let Some(t) = c.peek() else { return Ok(None) };
    let (name, is_str) = match &t.tok {
        Tok::Str(s) => (s.as_str(), true),
        Tok::Word(w) if allow.names.iter().any(|n| n == w) => (w.as_str(), false),
        _ => return Ok(None),
    };
    match allow.names.iter().position(|n| n == name) {
        Some(i) => {
            c.bump();
            Ok(Some(i as u8))
        }
        None if is_str => Err(if allow.names.is_empty() {
            Diagnostic::new(
                t.span,
                format!("unknown target `{name}`: this spell names no targets (`target \"{name}\": ...`)"),
            )
        } else {
            unknown(
                t.span,
                "target",
                name,
                allow.names.iter().map(|s| s.as_str()),
            )
        }),
        None => Ok(None),
    }
}

/// A numeric expression: sums of products of numbers, characteristics, properties and counts.
pub(crate) fn num(env: &Env, c: &mut Cursor, allow: Allow) -> Res<NumExpr> {
    let top = c.depth == 0;
    let start = c.pos;
    let mut total = 0;
    let from = c.pos;
    let mut e = product(env, c, allow)?;
    budget(c, from, &mut total, num_size(&e), "expression")?;
    // Each operator in a row nests the tree one level deeper (`1 + 1 + 1` is `(1 + 1) + 1`).
    let mut chain = 0;
    loop {
        let from = c.pos;
        let add = if c.eat_punct("+") {
            true
        } else if c.eat_punct("-") {
            false
        } else {
            c.unnest(chain);
            if top {
                within_tree_limit(c, start, num_depth(&e))?;
            }
            return Ok(e);
        };
        chain += 1;
        c.nest()?;
        let r = product(env, c, allow)?;
        budget(c, from, &mut total, num_size(&r) + 1, "expression")?;
        e = if add {
            NumExpr::Add(Box::new(e), Box::new(r))
        } else {
            NumExpr::Sub(Box::new(e), Box::new(r))
        };
    }
}

fn product(env: &Env, c: &mut Cursor, allow: Allow) -> Res<NumExpr> {
    let mut total = 0;
    let from = c.pos;
    let mut e = atom(env, c, allow)?;
    budget(c, from, &mut total, num_size(&e), "expression")?;
    let mut chain = 0;
    loop {
        let from = c.pos;
        let times = if c.eat_punct("*") {
            true
        } else if c.eat_punct("/") {
            false
        } else {
            c.unnest(chain);
            return Ok(e);
        };
        chain += 1;
        c.nest()?;
        let r = atom(env, c, allow)?;
        budget(c, from, &mut total, num_size(&r) + 1, "expression")?;
        e = if times {
            NumExpr::Mul(Box::new(e), Box::new(r))
        } else {
            NumExpr::Div(Box::new(e), Box::new(r))
        };
    }
}

fn atom(env: &Env, c: &mut Cursor, allow: Allow) -> Res<NumExpr> {
    c.nest()?;
    let r = stacker::maybe_grow(STACK_RED_ZONE, STACK_GROWTH, || atom_in(env, c, allow));
    c.unnest(1);
    r
}

fn atom_in(env: &Env, c: &mut Cursor, allow: Allow) -> Res<NumExpr> {
    let rs = &env.ruleset;
    if c.eat_punct("-") {
        return Ok(NumExpr::Neg(Box::new(atom(env, c, allow)?)));
    }
    if c.eat_punct("(") {
        let e = num(env, c, allow)?;
        c.expect_punct(")")?;
        return Ok(e);
    }
    let Some(tok) = c.peek() else {
        return Err(c.err("a number or a numeric expression"));
    };
    if let Tok::Number(n) = tok.tok {
        c.bump();
        return Ok(NumExpr::Const(n));
    }
    let Some(word) = tok.word() else {
        return Err(c.err("a number or a numeric expression"));
    };
    match word {
        "none" => {
            c.bump();
            return Ok(NumExpr::Nothing);
        }
        "event" => {
            c.bump();
            return event_num(env, c, allow, tok.span);
        }
        "X" if rs.char_id("X").is_none() && rs.prop_id("X").is_none() => {
            if !env.chosen.get() {
                return Err(Diagnostic::new(
                    tok.span,
                    "`X` is the number announced as a spell is cast: only in a spell that says `choose X: MIN..MAX`",
                ));
            }
            c.bump();
            return Ok(NumExpr::Chosen);
        }
        "count" => {
            c.bump();
            c.expect_punct("(")?;
            // `count(types among in graveyard)`: how many different symbols the matching hold.
            if let (Some(ch), true) = (
                c.peek().and_then(|t| t.word()).and_then(|w| rs.char_id(w)),
                c.peek_at(1).is_some_and(|t| t.is_word("among")),
            ) {
                c.bump();
                c.bump();
                let inner = condition(env, c, allow.inside())?;
                c.expect_punct(")")?;
                return Ok(NumExpr::Distinct(ch, Box::new(inner)));
            }
            // `count(colors)`: the size of a symbol set; otherwise how many objects match.
            let set = c.peek().and_then(|t| t.word()).and_then(|w| rs.char_id(w));
            let closes = c.peek_at(1).is_some_and(|t| t.is_punct(")"));
            if let (Some(ch), true) = (set, closes) {
                c.bump();
                c.bump();
                return Ok(NumExpr::SetSize(ObjRef::This, ch));
            }
            if c.peek_at(1).is_some_and(|t| t.is_punct("."))
                && c.peek_at(3).is_some_and(|t| t.is_punct(")"))
            {
                let r = obj_ref(c, allow)?;
                let (w, sp) = c.name("a characteristic")?;
                let ch = rs.char_id(&w).ok_or_else(|| {
                    unknown(
                        sp,
                        "characteristic",
                        &w,
                        rs.characteristics.iter().map(|c| c.name.as_str()),
                    )
                })?;
                c.expect_punct(")")?;
                return Ok(NumExpr::SetSize(r, ch));
            }
            let inner = condition(env, c, allow.inside())?;
            c.expect_punct(")")?;
            return Ok(NumExpr::Count(Box::new(inner)));
        }
        "max" | "min" => {
            c.bump();
            c.expect_punct("(")?;
            let a = num(env, c, allow)?;
            c.expect_punct(",")?;
            let b = num(env, c, allow)?;
            c.expect_punct(")")?;
            return Ok(if word == "max" {
                NumExpr::Max(Box::new(a), Box::new(b))
            } else {
                NumExpr::Min(Box::new(a), Box::new(b))
            });
        }
        "sum" => {
            // `sum(mana_value of other creature you control)`
            c.bump();
            c.expect_punct("(")?;
            let (w, sp) = c.name("a number characteristic")?;
            let NumExpr::Char(_, ch) = number_char(env, ObjRef::This, &w, sp)? else {
                unreachable!("number_char returns a characteristic")
            };
            c.expect_word("of")?;
            let inner = condition(env, c, allow.inside())?;
            c.expect_punct(")")?;
            return Ok(NumExpr::Sum(ch, Box::new(inner)));
        }
        "counters" => {
            c.bump();
            return counters_of(env, c, ObjRef::This);
        }
        "current" if c.peek_at(1).is_some_and(|t| t.is_punct("(")) => {
            c.bump();
            return current_of(env, c, ObjRef::This);
        }
        "target" | "targeted" => {
            // `target.life`, `target "victim".life`: a player target's property.
            c.bump();
            if !allow.target {
                return Err(Diagnostic::new(
                    tok.span,
                    "`target` is only allowed in a spell's effects: a static ability has no target",
                ));
            }
            let at = target_name(c, allow)?;
            c.expect_punct(".")?;
            let (w, sp) = c.name("a player property")?;
            let prop = rs.prop_id(&w).ok_or_else(|| {
                unknown(
                    sp,
                    "player property",
                    &w,
                    rs.props.iter().map(|p| p.name.as_str()),
                )
            })?;
            return Ok(NumExpr::Prop(PlayerRef::Target(at), prop));
        }
        _ => {}
    }
    // `you.life`
    if c.peek_at(1).is_some_and(|t| t.is_punct(".")) {
        let save = c.pos;
        if let Some(p) = player_ref(c) {
            c.expect_punct(".")?;
            let (w, sp) = c.name("a player property")?;
            let prop = rs.prop_id(&w).ok_or_else(|| {
                unknown(
                    sp,
                    "player property",
                    &w,
                    rs.props.iter().map(|p| p.name.as_str()),
                )
            })?;
            return Ok(NumExpr::Prop(p, prop));
        }
        c.pos = save;
        let r = obj_ref(c, allow)?;
        // `source.counters(charge)`: counters on that object.
        if c.peek().is_some_and(|t| t.is_word("counters"))
            && c.peek_at(1).is_some_and(|t| t.is_punct("("))
        {
            c.bump();
            return counters_of(env, c, r);
        }
        if c.peek().is_some_and(|t| t.is_word("current"))
            && c.peek_at(1).is_some_and(|t| t.is_punct("("))
        {
            c.bump();
            return current_of(env, c, r);
        }
        let (w, sp) = c.name("a characteristic")?;
        return number_char(env, r, &w, sp);
    }
    c.bump();
    if let Some(p) = rs.prop_id(word) {
        return Ok(NumExpr::Prop(PlayerRef::Owner, p));
    }
    number_char(env, ObjRef::This, word, tok.span)
}

/// `(damage)` or `(any)` after `counters`: how many counters of that kind (of every kind) are on
/// the object.
pub(crate) fn counters_of(env: &Env, c: &mut Cursor, r: ObjRef) -> Res<NumExpr> {
    c.expect_punct("(")?;
    let kind = counter_kind(env, c)?;
    c.expect_punct(")")?;
    Ok(match kind {
        Some(k) => NumExpr::Counters(r, k),
        None => NumExpr::AllCounters(r),
    })
}

/// `(farming)` after `current`: a meter's current value, the count of the counter kind of its
/// name (FreeOrion's current meters).
pub(crate) fn current_of(env: &Env, c: &mut Cursor, r: ObjRef) -> Res<NumExpr> {
    let rs = &env.ruleset;
    c.expect_punct("(")?;
    let (name, sp) = c.name("a meter name")?;
    let meters = || {
        rs.characteristics
            .iter()
            .filter(|d| d.meter)
            .map(|d| d.name.as_str())
    };
    let Some(k) = rs.char_id(&name).and_then(|ch| rs.meter_counter(ch)) else {
        if meters().next().is_none() {
            return Err(Diagnostic::new(
                sp,
                format!("unknown meter `{name}`: the ruleset declares no meters (`meter NAME`)"),
            ));
        }
        return Err(unknown(sp, "meter", &name, meters()));
    };
    c.expect_punct(")")?;
    Ok(NumExpr::Counters(r, k))
}

/// In a ruleset with object types, each part of a condition that reads a characteristic some
/// type lacks reads it through the attachment hierarchy (`Cond::Holder`): on the object itself
/// if its type has it, else up what it is attached to; false where none has it. Aggregates'
/// conditions are made so as they are read.
pub(crate) fn through_holders(rs: &rulecraft_core::model::ruleset::Ruleset, c: Cond) -> Cond {
    if rs.types.is_empty() {
        return c;
    }
    let typed =
        |ch: rulecraft_core::model::ids::CharId| rs.types.iter().any(|t| t.chars.contains(&ch));
    let wrap = |chars: Vec<rulecraft_core::model::ids::CharId>, c: Cond| {
        let mut out = c;
        for ch in chars.into_iter().rev() {
            if typed(ch) {
                out = Cond::Holder(ch, Box::new(out));
            }
        }
        out
    };
    match c {
        Cond::And(cs) => Cond::And(cs.into_iter().map(|c| through_holders(rs, c)).collect()),
        Cond::Or(cs) => Cond::Or(cs.into_iter().map(|c| through_holders(rs, c)).collect()),
        Cond::Not(x) => Cond::Not(Box::new(through_holders(rs, *x))),
        Cond::Exists(x) => Cond::Exists(Box::new(through_holders(rs, *x))),
        Cond::AttachedTo(x) => Cond::AttachedTo(Box::new(through_holders(rs, *x))),
        Cond::Has(ObjRef::This, ch, _)
        | Cond::HasChoice(ObjRef::This, ch, _)
        | Cond::HasKind(ObjRef::This, ch, _)
        | Cond::Shares(_, ch)
        | Cond::Named(ch, _) => wrap(vec![ch], c),
        Cond::Within(t) => {
            let ch = t.char;
            wrap(vec![ch], Cond::Within(t))
        }
        // What is near is tested on other objects, each through its own hierarchy.
        Cond::Near(mut n) => {
            n.of = through_holders(rs, n.of);
            Cond::Near(n)
        }
        Cond::Cmp(a, op, b) => {
            let a = num_through_holders(rs, a);
            let b = num_through_holders(rs, b);
            let mut chars = Vec::new();
            this_chars(rs, &a, &mut chars);
            this_chars(rs, &b, &mut chars);
            chars.dedup();
            wrap(chars, Cond::Cmp(a, op, b))
        }
        c => c,
    }
}

fn num_through_holders(rs: &rulecraft_core::model::ruleset::Ruleset, e: NumExpr) -> NumExpr {
    let b = |x: Box<NumExpr>| Box::new(num_through_holders(rs, *x));
    match e {
        NumExpr::Count(c) => NumExpr::Count(Box::new(through_holders(rs, *c))),
        NumExpr::Sum(ch, c) => NumExpr::Sum(ch, Box::new(through_holders(rs, *c))),
        NumExpr::Distinct(ch, c) => NumExpr::Distinct(ch, Box::new(through_holders(rs, *c))),
        NumExpr::Add(x, y) => NumExpr::Add(b(x), b(y)),
        NumExpr::Sub(x, y) => NumExpr::Sub(b(x), b(y)),
        NumExpr::Mul(x, y) => NumExpr::Mul(b(x), b(y)),
        NumExpr::Div(x, y) => NumExpr::Div(b(x), b(y)),
        NumExpr::Max(x, y) => NumExpr::Max(b(x), b(y)),
        NumExpr::Min(x, y) => NumExpr::Min(b(x), b(y)),
        NumExpr::Neg(x) => NumExpr::Neg(b(x)),
        e => e,
    }
}

/// The characteristics an expression reads of the tested object itself (not inside
/// aggregates), a meter's current value counted as its meter.
fn this_chars(
    rs: &rulecraft_core::model::ruleset::Ruleset,
    e: &NumExpr,
    out: &mut Vec<rulecraft_core::model::ids::CharId>,
) {
    match e {
        NumExpr::Char(ObjRef::This, ch) | NumExpr::SetSize(ObjRef::This, ch) => out.push(*ch),
        NumExpr::Counters(ObjRef::This, k) => {
            let name = &rs.counters[k.index()].name;
            if let Some(ch) = rs
                .char_id(name)
                .filter(|ch| rs.meter_counter(*ch) == Some(*k))
            {
                out.push(ch);
            }
        }
        NumExpr::Add(x, y)
        | NumExpr::Sub(x, y)
        | NumExpr::Mul(x, y)
        | NumExpr::Div(x, y)
        | NumExpr::Max(x, y)
        | NumExpr::Min(x, y) => {
            this_chars(rs, x, out);
            this_chars(rs, y, out);
        }
        NumExpr::Neg(x) => this_chars(rs, x, out),
        _ => {}
    }
}

/// A counter kind of the ruleset, or `any` (`None`): counters of every kind ("has a counter").
/// An unknown name is an error naming the ruleset's counter kinds.
pub(crate) fn counter_kind(env: &Env, c: &mut Cursor) -> Res<Option<CounterId>> {
    let rs = &env.ruleset;
    if c.eat_word("any") {
        return Ok(None);
    }
    let (name, sp) = c.name_or_string("a counter name or `any`")?;
    match rs.counter_id(&name) {
        Some(k) => Ok(Some(k)),
        None if rs.counters.is_empty() => Err(Diagnostic::new(
            sp,
            format!("unknown counter `{name}`: the ruleset declares no counters (`counter NAME`)"),
        )),
        None => Err(unknown(
            sp,
            "counter",
            &name,
            rs.counters.iter().map(|c| c.name.as_str()),
        )),
    }
}

fn number_char(env: &Env, r: ObjRef, w: &str, sp: crate::diagnostics::Span) -> Res<NumExpr> {
    let rs = &env.ruleset;
    let Some(ch) = rs.char_id(w) else {
        let known = rs
            .characteristics
            .iter()
            .filter(|c| c.kind == CharKind::Number)
            .map(|c| c.name.as_str());
        return Err(unknown(sp, "number characteristic", w, known));
    };
    let kind = char_def(rs, ch).kind;
    if kind != CharKind::Number {
        return Err(Diagnostic::new(
            sp,
            format!(
                "`{w}` is a {} characteristic: expected a number",
                kind.name()
            ),
        ));
    }
    Ok(NumExpr::Char(r, ch))
}

/// How deep a lowered condition may be once the terms it names are put in its place. One line
/// stays far below this (at most four tree levels per level of [`super::MAX_NESTING`]); only a
/// chain of terms, each built on the one before, comes near it.
pub const MAX_TREE_DEPTH: usize = 512;

fn within_tree_limit(c: &Cursor, start: usize, depth: usize) -> Res<()> {
    if depth <= MAX_TREE_DEPTH {
        return Ok(());
    }
    let first = c.toks.get(start).map(|t| t.span).unwrap_or(c.end);
    let last = c.toks[..c.pos].last().map(|t| t.span).unwrap_or(first);
    Err(Diagnostic::new(
        first.to(last),
        format!(
            "too deeply nested once its terms are put in: expected at most {MAX_TREE_DEPTH} levels"
        ),
    ))
}

/// The depth of a lowered condition (bounded: see [`MAX_TREE_DEPTH`]).
fn cond_depth(c: &Cond) -> usize {
    1 + match c {
        Cond::And(v) | Cond::Or(v) => v.iter().map(cond_depth).max().unwrap_or(0),
        Cond::Not(x) | Cond::Exists(x) | Cond::Holder(_, x) | Cond::AttachedTo(x) => cond_depth(x),
        Cond::Cmp(a, _, b) => num_depth(a).max(num_depth(b)),
        _ => 0,
    }
}

fn num_depth(e: &NumExpr) -> usize {
    1 + match e {
        NumExpr::Count(x) | NumExpr::Sum(_, x) | NumExpr::Distinct(_, x) => cond_depth(x),
        NumExpr::Max(a, b)
        | NumExpr::Min(a, b)
        | NumExpr::Add(a, b)
        | NumExpr::Sub(a, b)
        | NumExpr::Mul(a, b) => num_depth(a).max(num_depth(b)),
        NumExpr::Neg(a) => num_depth(a),
        _ => 0,
    }
}

/// `event amount`: a number argument; `event card.force`, `event player.honor`: a value of an
/// object or player argument. Kept out of `atom_in`, whose frame every nesting level pays for.
#[inline(never)]
fn event_num(
    env: &Env,
    c: &mut Cursor,
    allow: Allow,
    span: crate::diagnostics::Span,
) -> Res<NumExpr> {
    let rs = &env.ruleset;
    let (p, ps) = c.name("a parameter of the event after `event`")?;
    let Some(i) = allow.params.iter().position(|x| *x == p) else {
        if allow.params.is_empty() {
            return Err(Diagnostic::new(
                span,
                "`event ...` names a parameter of the event a response answers: only in a response",
            ));
        }
        return Err(unknown(
            ps,
            "event parameter",
            &p,
            allow.params.iter().map(|s| s.as_str()),
        ));
    };
    let i = i as u8;
    if !c.eat_punct(".") {
        return Ok(NumExpr::Param(i));
    }
    // `event card.counters(damage)`: counters on the occurrence's object.
    if c.peek().is_some_and(|t| t.is_word("counters"))
        && c.peek_at(1).is_some_and(|t| t.is_punct("("))
    {
        c.bump();
        return counters_of(env, c, ObjRef::Param(i));
    }
    if c.peek().is_some_and(|t| t.is_word("current"))
        && c.peek_at(1).is_some_and(|t| t.is_punct("("))
    {
        c.bump();
        return current_of(env, c, ObjRef::Param(i));
    }
    let (w, ws) = c.name("a number characteristic or a player property")?;
    if let Some(ch) = rs.char_id(&w) {
        if char_def(rs, ch).kind != CharKind::Number {
            return Err(Diagnostic::new(ws, format!("`{w}` is not a number")));
        }
        return Ok(NumExpr::Char(ObjRef::Param(i), ch));
    }
    if let Some(prop) = rs.prop_id(&w) {
        return Ok(NumExpr::Prop(PlayerRef::Param(i), prop));
    }
    Err(unknown(
        ws,
        "characteristic or player property",
        &w,
        rs.characteristics
            .iter()
            .map(|c| c.name.as_str())
            .chain(rs.props.iter().map(|p| p.name.as_str())),
    ))
}

/// `event card` in a condition: the tested object or player is that argument. Kept out of
/// `primary`, whose frame every nesting level pays for.
#[inline(never)]
fn event_cond(c: &mut Cursor, allow: Allow, span: crate::diagnostics::Span) -> Res<Cond> {
    let (p, ps) = c.name("a parameter of the event after `event`")?;
    match allow.params.iter().position(|x| *x == p) {
        Some(i) => Ok(Cond::IsParam(i as u8)),
        None if allow.params.is_empty() => Err(Diagnostic::new(
            span,
            "`event ...` names a parameter of the event a response answers: only in a response",
        )),
        None => Err(unknown(
            ps,
            "event parameter",
            &p,
            allow.params.iter().map(|s| s.as_str()),
        )),
    }
}

/// The ruleset's ownership rules, for a condition over empires.
fn owners(env: &Env, span: Span) -> Res<Owners> {
    let rs = &env.ruleset;
    let Some(controller) = rs.char_of_kind(CharKind::Controller) else {
        return Err(Diagnostic::new(
            span,
            "an object's empire is its controller: the ruleset declares no `controller` characteristic",
        ));
    };
    Ok(Owners {
        controller,
        through: rs.owned_through.clone(),
        unowned: rs.unowned.clone(),
    })
}

/// The ruleset's galaxy map, for a condition over places.
fn map(env: &Env, span: Span) -> Res<&rulecraft_core::model::ruleset::GalaxyMap> {
    env.ruleset.map.as_ref().ok_or_else(|| {
        Diagnostic::new(
            span,
            "distances, starlane jumps and visibility need the ruleset's `map: x, y, lanes, on_lane, detection`",
        )
    })
}

/// FreeOrion's effects system's conditions over empires, orders, chance and places, where the
/// words at the cursor start one: `owned by ...`, `CHAR within N of SYMBOL`, `chance N in M`,
/// `stockpile(PROP) >= N`, `visible to source`, `sees source`, `within N [jumps] of ...`.
fn galaxy_condition(
    env: &Env,
    c: &mut Cursor,
    allow: Allow,
    word: &str,
    span: Span,
) -> Res<Option<Cond>> {
    let rs = &env.ruleset;
    let next_word = |c: &Cursor, i: usize, w: &str| c.peek_at(i).is_some_and(|t| t.is_word(w));
    let next_number = |c: &Cursor, i: usize| {
        c.peek_at(i)
            .is_some_and(|t| matches!(t.tok, Tok::Number(_)))
    };
    match word {
        // Empire Affiliation: `owned by [enemies of] (you | none | PROP) [only]`.
        "owned" if next_word(c, 1, "by") => {
            c.bump();
            c.bump();
            let enemies = c.eat_words(&["enemies", "of"]);
            let (w, ws) = c.name("`you`, `none` or a player property naming an empire")?;
            let empire = match w.as_str() {
                "you" => EmpireRef::Source,
                "none" => EmpireRef::NoEmpire,
                _ => match rs.prop_id(&w).filter(|p| !rs.props[p.index()].symbols) {
                    Some(p) => EmpireRef::Marked(p),
                    None => {
                        let known = ["you", "none"].into_iter().chain(
                            rs.props
                                .iter()
                                .filter(|p| !p.symbols)
                                .map(|p| p.name.as_str()),
                        );
                        return Err(unknown(ws, "empire", &w, known).with_help(
                            "an empire is `you` (the source's), `none`, or the players whose property of that name is not 0",
                        ));
                    }
                },
            };
            let exclusive = c.eat_word("only");
            if exclusive && empire == EmpireRef::NoEmpire {
                return Err(Diagnostic::new(
                    c.toks[c.pos - 1].span,
                    "`only` says the objects are not shared with another empire: no object is shared with no empire",
                ));
            }
            return Ok(Some(Cond::Affiliated(Box::new(Affiliation {
                empire,
                enemies,
                exclusive,
                owners: owners(env, span)?,
            }))));
        }
        // Chance: `chance 1 in 3`.
        "chance" => {
            c.bump();
            let (num, ns) = c.number("a number of chances (`chance 1 in 3`)")?;
            c.expect_word("in")?;
            let (den, ds) = c.number("how many in all (`chance 1 in 3`)")?;
            if den <= 0 || den > i64::from(u32::MAX) {
                return Err(Diagnostic::new(
                    ds,
                    "expected a positive number of chances in all",
                ));
            }
            if num < 0 || num > den {
                return Err(Diagnostic::new(
                    ns,
                    format!("a chance is from 0 in {den} to {den} in {den}"),
                ));
            }
            return Ok(Some(Cond::Chance {
                num: num as u32,
                den: den as u32,
                salt: span.start as u64,
            }));
        }
        // Current Stockpile Value: `stockpile(food) >= 10`.
        "stockpile" if c.peek_at(1).is_some_and(|t| t.is_punct("(")) => {
            c.bump();
            c.expect_punct("(")?;
            let (p, ps) = c.name("a player property (an empire's stockpile)")?;
            let Some(prop) = rs.prop_id(&p).filter(|p| !rs.props[p.index()].symbols) else {
                return Err(unknown(
                    ps,
                    "number player property",
                    &p,
                    rs.props
                        .iter()
                        .filter(|p| !p.symbols)
                        .map(|p| p.name.as_str()),
                ));
            };
            c.expect_punct(")")?;
            let op = cmp_op(c, "a comparison (`>=` for a minimum, `<=` for a maximum)")?;
            let neg = c.eat_punct("-");
            let (n, _) = c.number("a number")?;
            return Ok(Some(Cond::Stockpile(Box::new(StockpileTest {
                prop,
                op,
                value: if neg { -n } else { n },
                owners: owners(env, span)?,
                holds: None,
            }))));
        }
        // Scope Object Visible To Source Object: `visible to source`.
        "visible" if next_word(c, 1, "to") => {
            c.bump();
            c.bump();
            c.expect_word("source")?;
            let m = map(env, span)?;
            return Ok(Some(Cond::Visible(Box::new(Visibility {
                source_sees: true,
                detection: m.detection,
                places: m.places.clone(),
                owners: owners(env, span)?,
            }))));
        }
        // Source Object Visible To Scope Object: `sees source`.
        "sees" if next_word(c, 1, "source") => {
            c.bump();
            c.bump();
            let m = map(env, span)?;
            return Ok(Some(Cond::Visible(Box::new(Visibility {
                source_sees: false,
                detection: m.detection,
                places: m.places.clone(),
                owners: owners(env, span)?,
            }))));
        }
        // Direct Distance and Starlane Jumps, to Source or to Object of Class: `within 3 of
        // source`, `within 2 jumps of "Shipyard"`, `within 0 of (planet and owned by you)`.
        "within" if next_number(c, 1) => {
            c.bump();
            let (n, ns) = c.number("a distance")?;
            if n < 0 {
                return Err(Diagnostic::new(ns, "expected a distance of 0 or more"));
            }
            let metric = if c.eat_word("jumps") || c.eat_word("jump") {
                Metric::Jumps
            } else {
                Metric::Direct
            };
            c.expect_word("of")?;
            let of = near_what(env, c, allow)?;
            let m = map(env, span)?;
            return Ok(Some(Cond::Near(Box::new(Nearness {
                metric,
                within: n,
                of,
                places: m.places.clone(),
            }))));
        }
        _ => {}
    }
    // An empire's set of classes: `available_techs has "Algae Farming"` (some empire of the
    // object may research it), `buildable_ships lacks "Battleship"`.
    if let Some(prop) = rs.prop_id(word).filter(|p| rs.props[p.index()].symbols) {
        if c.peek_at(1)
            .is_some_and(|t| t.is_word("has") || t.is_word("lacks"))
        {
            c.bump();
            let lacks = c.bump().is_some_and(|t| t.is_word("lacks"));
            let (sym, _) = c.name_or_string("a class's name after `has`")?;
            let cond = Cond::Stockpile(Box::new(StockpileTest {
                prop,
                op: CmpOp::Ge,
                value: 0,
                owners: owners(env, span)?,
                holds: Some(env.symbol(&sym)),
            }));
            return Ok(Some(if lacks {
                Cond::Not(Box::new(cond))
            } else {
                cond
            }));
        }
    }
    // Planet Environment, Planet Size: `environment within 1 of terran`.
    if let Some(ch) = rs.char_id(word) {
        if next_word(c, 1, "within") {
            let Some(order) = rs.orders.iter().find(|o| o.char == ch) else {
                return Err(Diagnostic::new(
                    span,
                    format!("`{word}` has no declared order (`order {word}: ...` in the ruleset): `within` counts steps along it"),
                ));
            };
            c.bump();
            c.bump();
            let (n, ns) = c.number("how many steps")?;
            if n < 0 || n > i64::from(u32::MAX) {
                return Err(Diagnostic::new(ns, "expected a number of steps, 0 or more"));
            }
            c.expect_word("of")?;
            let (sym, ss) = c.name_or_string("a symbol")?;
            let on_order = order.symbols.iter().any(|s| **s == *sym);
            if !on_order {
                env.note_symbol(ss, ch, &sym, false);
            }
            return Ok(Some(Cond::Within(Box::new(OrderTest {
                char: ch,
                order: order.symbols.iter().map(|s| env.symbol(s)).collect(),
                ring: order.ring,
                at: env.symbol(&sym),
                range: n as u32,
            }))));
        }
    }
    Ok(None)
}

/// What `within N of` is near: `source`, a class by its name (`"Shipyard"`), or a condition in
/// brackets, tested on each object in play.
fn near_what(env: &Env, c: &mut Cursor, allow: Allow) -> Res<Cond> {
    if c.eat_word("source") || c.eat_word("self") {
        return Ok(Cond::IsSource);
    }
    if c.peek().is_some_and(|t| matches!(t.tok, Tok::Str(_))) {
        let Some(name) = env.ruleset.char_of_kind(CharKind::Name) else {
            return Err(c.err("a condition in brackets: the ruleset has no name characteristic"));
        };
        let (n, _) = c.string("a class name")?;
        return Ok(Cond::Named(name, Word::Lit(n.as_str().into())));
    }
    if !c.peek().is_some_and(|t| t.is_punct("(")) {
        return Err(c.err("`source`, a class name in quotes or a condition in brackets"));
    }
    c.expect_punct("(")?;
    let inner = condition(env, c, allow)?;
    c.expect_punct(")")?;
    Ok(inner)
}
