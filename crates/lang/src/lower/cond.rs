//! Conditions and numeric expressions (docs/language.md, "Conditions"): parsed from a statement's
//! tokens and checked against the ruleset's characteristics, zones, counters and terms.

use super::cursor::{unknown, Cursor, Res};
use super::Env;
use crate::diagnostics::Diagnostic;
use crate::lexer::Tok;
use rulecraft_core::condition::{CmpOp, Cond, NumExpr, ObjRef, PlayerRef};
use rulecraft_core::ruleset::CharKind;
use rulecraft_core::Symbol;

/// Words that end a condition's implicit "and" run.
const STOP: [&str; 5] = ["or", "and", "then", "to", "of"];

/// What the statement's condition may refer to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Allow {
    /// `target` (a spell's effects and its target condition).
    pub target: bool,
}

pub fn condition(env: &Env, c: &mut Cursor, allow: Allow) -> Res<Cond> {
    let top = c.depth == 0;
    let start = c.pos;
    let cond = condition_in(env, c, allow)?;
    if top {
        within_tree_limit(c, start, cond_depth(&cond))?;
    }
    Ok(cond)
}

fn condition_in(env: &Env, c: &mut Cursor, allow: Allow) -> Res<Cond> {
    let mut parts = vec![and(env, c, allow)?];
    while c.eat_word("or") {
        parts.push(and(env, c, allow)?);
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
    let mut parts = vec![unary(env, c, allow)?];
    loop {
        if c.eat_word("and") {
            parts.push(unary(env, c, allow)?);
            continue;
        }
        // Juxtaposition is "and": `other creature you control`.
        match c.peek() {
            Some(t) if t.is_punct("(") || t.word().is_some_and(|w| !STOP.contains(&w)) => {
                parts.push(unary(env, c, allow)?)
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

fn unary(env: &Env, c: &mut Cursor, allow: Allow) -> Res<Cond> {
    c.nest()?;
    let r = unary_in(env, c, allow);
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
        "source" | "self" | "this" | "it" if !c.peek_at(1).is_some_and(|t| t.is_punct(".")) => {
            c.bump();
            return Ok(Cond::IsSource);
        }
        "target" | "targeted" => {
            c.bump();
            if !allow.target {
                return Err(Diagnostic::new(
                    span,
                    "`target` is only allowed in a spell's effects: a static ability has no target",
                ));
            }
            return Ok(Cond::IsTarget);
        }
        "enchanted" | "equipped" | "attached" | "fortified" if !dotted => {
            c.bump();
            return Ok(Cond::IsAttached);
        }
        "exists" | "no" => {
            c.bump();
            c.expect_punct("(")?;
            let inner = condition(env, c, allow)?;
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
        (obj_ref(c)?, c.peek_at(0))
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
                let kind = rs.char(ch).kind;
                if !matches!(kind, CharKind::Symbols | CharKind::Abilities) {
                    return Err(Diagnostic::new(
                        ch_tok.span,
                        format!(
                            "`{}` is a {} characteristic: `has` expects symbols or abilities",
                            rs.char(ch).name,
                            kind.name()
                        ),
                    ));
                }
                let (sym, _) = c.name_or_string("a symbol after `has`")?;
                let cond = Cond::Has(obj, ch, Symbol::new(&sym));
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
    if rs.prop_id(word).is_some() || matches!(word, "count" | "counters") {
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
    let op = match c.peek() {
        Some(t) if t.is_punct("<") => CmpOp::Lt,
        Some(t) if t.is_punct("<=") => CmpOp::Le,
        Some(t) if t.is_punct(">") => CmpOp::Gt,
        Some(t) if t.is_punct(">=") => CmpOp::Ge,
        Some(t) if t.is_punct("==") || t.is_punct("=") => CmpOp::Eq,
        Some(t) if t.is_punct("!=") => CmpOp::Ne,
        _ => return Err(c.err("a comparison (`<`, `<=`, `>`, `>=`, `=`, `!=`)")),
    };
    c.bump();
    let r = num(env, c, allow)?;
    Ok(Cond::Cmp(l, op, r))
}

fn obj_ref(c: &mut Cursor) -> Res<ObjRef> {
    let (w, sp) = c.name("`source`, `this` or `enchanted`")?;
    let r = match w.as_str() {
        "source" | "self" => ObjRef::Source,
        "this" | "it" => ObjRef::This,
        "enchanted" | "equipped" | "attached" | "fortified" => ObjRef::Attached,
        _ => {
            return Err(Diagnostic::new(
                sp,
                format!(
                    "unknown object `{w}`: expected `source`, `this` or `enchanted` before `.`"
                ),
            ))
        }
    };
    c.expect_punct(".")?;
    Ok(r)
}

/// A numeric expression: sums of products of numbers, characteristics, properties and counts.
pub fn num(env: &Env, c: &mut Cursor, allow: Allow) -> Res<NumExpr> {
    let top = c.depth == 0;
    let start = c.pos;
    let mut e = product(env, c, allow)?;
    // Each operator in a row nests the tree one level deeper (`1 + 1 + 1` is `(1 + 1) + 1`).
    let mut chain = 0;
    loop {
        if c.eat_punct("+") {
            chain += 1;
            c.nest()?;
            e = NumExpr::Add(Box::new(e), Box::new(product(env, c, allow)?));
        } else if c.eat_punct("-") {
            chain += 1;
            c.nest()?;
            e = NumExpr::Sub(Box::new(e), Box::new(product(env, c, allow)?));
        } else {
            c.unnest(chain);
            if top {
                within_tree_limit(c, start, num_depth(&e))?;
            }
            return Ok(e);
        }
    }
}

fn product(env: &Env, c: &mut Cursor, allow: Allow) -> Res<NumExpr> {
    let mut e = atom(env, c, allow)?;
    let mut chain = 0;
    while c.eat_punct("*") {
        chain += 1;
        c.nest()?;
        e = NumExpr::Mul(Box::new(e), Box::new(atom(env, c, allow)?));
    }
    c.unnest(chain);
    Ok(e)
}

fn atom(env: &Env, c: &mut Cursor, allow: Allow) -> Res<NumExpr> {
    c.nest()?;
    let r = atom_in(env, c, allow);
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
                let inner = condition(env, c, allow)?;
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
                let r = obj_ref(c)?;
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
            let inner = condition(env, c, allow)?;
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
            let inner = condition(env, c, allow)?;
            c.expect_punct(")")?;
            return Ok(NumExpr::Sum(ch, Box::new(inner)));
        }
        "counters" => {
            c.bump();
            c.expect_punct("(")?;
            let (name, sp) = c.name_or_string("a counter name")?;
            let k = rs.counter_id(&name).ok_or_else(|| {
                unknown(
                    sp,
                    "counter",
                    &name,
                    rs.counters.iter().map(|c| c.name.as_str()),
                )
            })?;
            c.expect_punct(")")?;
            return Ok(NumExpr::Counters(ObjRef::This, k));
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
        let r = obj_ref(c)?;
        let (w, sp) = c.name("a characteristic")?;
        return number_char(env, r, &w, sp);
    }
    c.bump();
    if let Some(p) = rs.prop_id(word) {
        return Ok(NumExpr::Prop(PlayerRef::Owner, p));
    }
    number_char(env, ObjRef::This, word, tok.span)
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
    let kind = rs.char(ch).kind;
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
/// stays far below this (at most four tree levels per level of [`super::cursor::MAX_NESTING`]); only a chain of
/// terms, each built on the one before, comes near it.
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
        Cond::Not(x) | Cond::Exists(x) => cond_depth(x),
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
