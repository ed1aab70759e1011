//! Content files (docs/language.md, "Content"): object classes with printed characteristics, static
//! abilities, characteristic-defining abilities and spells.

use super::cond::{condition, num, Allow};
use super::cursor::{unknown, Cursor, Res};
use super::{block, no_block, Env};
use crate::diagnostics::{Diagnostic, Span};
use crate::lexer::Tok;
use crate::syntax::Stmt;
use rulecraft_core::condition::{Cond, NumExpr, PlayerRef};
use rulecraft_core::content::{Content, ObjectClass, OneShot, Spell};
use rulecraft_core::effect::{
    Affects, Change, CopySource, Duration, EffectDef, Op, SymList, SymRef,
};
use rulecraft_core::ruleset::{CharKind, SlotTarget};
use rulecraft_core::{Ability, ClassId, Symbol, SymbolSet, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// Whether a statement starts an object class: `card "Name" { ... }` or `object "Name" { ... }`.
pub fn is_class(s: &Stmt) -> bool {
    s.head[0].is_word("card") || s.head[0].is_word("object")
}

/// Lowers every class in a content file into `content`.
pub fn lower(env: &Env, stmts: &[Stmt], content: &mut Content) -> Res<()> {
    if let Some(s) = stmts.iter().find(|s| !is_class(s)) {
        let c = Cursor::new(&s.head);
        return Err(c.err("`card \"Name\" { ... }` or `object \"Name\" { ... }`"));
    }
    add_classes(env, stmts, content)
}

/// Lowers class statements into `content`, where each replaces a class of the same name loaded
/// before (from another file); one file defining a name twice is an error naming both.
pub fn add_classes<'a>(
    env: &Env,
    stmts: impl IntoIterator<Item = &'a Stmt>,
    content: &mut Content,
) -> Res<()> {
    let mut seen: HashMap<String, Span> = HashMap::new();
    for s in stmts {
        let class = class(env, s, content)?;
        // `class` read the name as the statement's second token.
        let at = s.head[1].span;
        if let Some(first) = seen.insert(class.name.clone(), at) {
            return Err(Diagnostic::new(
                at,
                format!(
                    "object class `{}` is defined twice in this file",
                    class.name
                ),
            )
            .with_related(first, "the first definition"));
        }
        content.add(class);
    }
    Ok(())
}

/// One `card "Name" { ... }`.
pub fn class(env: &Env, s: &Stmt, content: &Content) -> Res<ObjectClass> {
    let rs = &env.ruleset;
    let mut c = Cursor::new(&s.head);
    c.bump();
    let (name, _) = c.name_or_string("the object's name")?;
    c.finish()?;
    let id = content
        .class_id(&name)
        .unwrap_or(ClassId(content.classes.len() as u32));
    let mut printed: Vec<(rulecraft_core::CharId, Value)> = Vec::new();
    let mut keywords: Vec<Ability> = Vec::new();
    let mut statics: Vec<Arc<EffectDef>> = Vec::new();
    let mut spell = None;
    let mut enters_as_copy = false;
    for item in block(s, "the object's definition")? {
        let mut ic = Cursor::new(&item.head);
        let first = &item.head[0];
        match first.word() {
            Some(kw @ ("static" | "defining"))
                if ic.peek_at(1).is_some_and(|t| matches!(t.tok, Tok::Str(_))) =>
            {
                ic.bump();
                let (text, _) = ic.string("the ability's rules text")?;
                ic.finish()?;
                let def = effect(env, item, &text, kw == "defining", EffectKind::Static)?;
                statics.push(Arc::new(def));
            }
            Some("enters") => {
                // `enters as a copy`: Clone (seed 004, layer 1a).
                no_block(item)?;
                ic.bump();
                ic.expect_word("as")?;
                ic.eat_word("a");
                ic.expect_word("copy")?;
                ic.finish()?;
                enters_as_copy = true;
            }
            Some("spell") => {
                ic.bump();
                let (text, _) = ic.string("the spell's rules text")?;
                ic.finish()?;
                if spell.is_some() {
                    return Err(Diagnostic::new(
                        first.span,
                        "an object has at most one `spell`",
                    ));
                }
                spell = Some(spell_def(env, item, text)?);
            }
            Some(kw @ ("static" | "defining")) if rs.char_id(kw).is_none() => {
                ic.bump();
                return Err(ic.err(&format!(
                    "the {kw} ability's rules text as a string after `{kw}`"
                )));
            }
            Some(w) if rs.char_id(w).is_some() => {
                no_block(item)?;
                let ch = rs.char_id(w).expect("checked");
                ic.bump();
                ic.expect_punct(":")?;
                if printed.iter().any(|(c, _)| *c == ch)
                    || (rs.char(ch).kind == CharKind::Abilities && !keywords.is_empty())
                {
                    return Err(Diagnostic::new(
                        first.span,
                        format!("`{w}` is printed twice"),
                    ));
                }
                let kind = rs.char(ch).kind;
                let v = printed_value(kind, &mut ic, first.span)?;
                if let Value::Abilities(list) = v {
                    keywords = list.to_vec();
                    ic.finish()?;
                    continue;
                }
                ic.finish()?;
                printed.push((ch, v));
            }
            _ => {
                let (w, sp) =
                    ic.name_or_string("a characteristic, `static`, `defining` or `spell`")?;
                let known = rs
                    .characteristics
                    .iter()
                    .map(|c| c.name.as_str())
                    .chain(["static", "defining", "spell"]);
                return Err(unknown(sp, "characteristic or ability", &w, known));
            }
        }
    }
    // The abilities characteristic: printed keywords, then static abilities in order.
    if let Some(ac) = rs.char_of_kind(CharKind::Abilities) {
        let mut list = keywords;
        for (i, d) in statics.iter().enumerate() {
            list.push(Ability::Static {
                class: id,
                index: i as u16,
                text: d.text.clone(),
            });
        }
        printed.retain(|(c, _)| *c != ac);
        printed.push((ac, Value::Abilities(list.into())));
    } else if !statics.is_empty() {
        return Err(Diagnostic::new(
            s.head[0].span,
            "this ruleset declares no `abilities` characteristic, so objects cannot have static abilities",
        ));
    }
    Ok(ObjectClass {
        enters_as_copy,
        name,
        printed,
        statics,
        spell,
    })
}

/// A printed symbol list: `none`, `all`, or names separated by commas.
/// A value as written after `CHAR:` in a class or `CHAR =` in the ruleset's face-down values.
pub fn printed_value(kind: CharKind, c: &mut Cursor, at: Span) -> Res<Value> {
    Ok(match kind {
        CharKind::Number => {
            if c.eat_word("none") {
                Value::Number(None)
            } else {
                Value::Number(Some(c.number("a number or `none`")?.0))
            }
        }
        CharKind::Symbols => Value::Symbols(symbols(c)?),
        CharKind::Text | CharKind::Name => Value::Text(Arc::from(c.string("a string")?.0.as_str())),
        CharKind::Abilities => Value::Abilities(abilities(c)?.into()),
        CharKind::Controller => {
            return Err(Diagnostic::new(
                at,
                "a controller is not printed: an object's controller is who puts it into play",
            ))
        }
    })
}

fn symbols(c: &mut Cursor) -> Res<SymbolSet> {
    let l = sym_list(c)?;
    if l.chosen {
        return Err(Diagnostic::new(c.toks[c.pos - 1].span, "`chosen` names a choice made as an object enters: it belongs in an effect, not a printed value"));
    }
    Ok(l.set)
}

/// An operation's symbols: `none`, `all`, `chosen` (the source's choice) or names.
fn sym_list(c: &mut Cursor) -> Res<SymList> {
    if c.eat_word("none") {
        return Ok(SymList::default());
    }
    if c.eat_word("all") {
        return Ok(SymList {
            set: SymbolSet::every(),
            chosen: false,
        });
    }
    let mut out = Vec::new();
    let mut chosen = false;
    loop {
        let (w, _) = c.name_or_string("a symbol")?;
        if w == "chosen" && matches!(c.toks[c.pos - 1].tok, Tok::Word(_)) {
            chosen = true;
        } else {
            out.push(Symbol::new(&w));
        }
        if !c.eat_punct(",") {
            break;
        }
    }
    Ok(SymList {
        set: SymbolSet::from_iter(out),
        chosen,
    })
}

fn abilities(c: &mut Cursor) -> Res<Vec<Ability>> {
    if c.peek().is_some_and(|t| t.is_word("all")) {
        return Err(c.err("ability names or `none` (`all` names every symbol, not abilities)"));
    }
    Ok(symbols(c)?.iter().cloned().map(Ability::Keyword).collect())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum EffectKind {
    Static,
    Spell { has_target: bool },
}

/// An effect's statements: `affects:`, `as long as:`, and operations.
fn effect(env: &Env, s: &Stmt, text: &str, defining: bool, kind: EffectKind) -> Res<EffectDef> {
    let rs = &env.ruleset;
    let allow = Allow {
        target: matches!(kind, EffectKind::Spell { .. }),
    };
    let mut affects: Option<(Vec<crate::lexer::Token>, Span)> = None;
    let mut while_cond = None;
    let mut zones = Vec::new();
    let mut ops: Vec<(SlotTarget, Change, Span)> = Vec::new();
    // Copy and text effects change every copiable characteristic; they name the first.
    let copy_target = rs.copiable.first().map(|c| SlotTarget::Char(*c));
    for item in block(s, "the effect")? {
        no_block(item)?;
        let mut c = Cursor::new(&item.head);
        if c.eat_words(&["works", "in"]) {
            if !matches!(kind, EffectKind::Static) {
                return Err(Diagnostic::new(
                    item.head[0].span,
                    "`works in:` belongs to a static ability: a spell's effects work wherever the spell put them",
                ));
            }
            // A static ability that works outside play ("this spell costs {1} less").
            c.expect_punct(":")?;
            loop {
                let (z, zs) = c.name("a zone")?;
                zones.push(rs.zone_id(&z).ok_or_else(|| {
                    unknown(zs, "zone", &z, rs.zones.iter().map(|z| z.name.as_str()))
                })?);
                if !c.eat_punct(",") {
                    break;
                }
            }
            c.finish()?;
            continue;
        }
        if c.eat_words(&["copy", "of"]) || c.eat_words(&["text", "of"]) {
            let is_copy = item.head[0].is_word("copy");
            let Some(target) = copy_target else {
                return Err(Diagnostic::new(
                    item.head[0].span,
                    "this ruleset declares no `copiable:` characteristics to copy",
                ));
            };
            let src = if c.eat_word("target") {
                if !allow.target {
                    return Err(Diagnostic::new(c.toks[c.pos - 1].span, "`target` is only allowed in a spell's effects: a static ability has no target"));
                }
                CopySource::Target
            } else if c.eat_word("top") {
                c.expect_punct("(")?;
                let (z, zs) = c.name("a zone")?;
                let z = rs.zone_id(&z).ok_or_else(|| {
                    unknown(zs, "zone", &z, rs.zones.iter().map(|z| z.name.as_str()))
                })?;
                c.expect_punct(")")?;
                CopySource::Top(z)
            } else {
                return Err(c.err("`target` or `top(ZONE)`"));
            };
            c.finish()?;
            let change = if is_copy {
                if src != CopySource::Target {
                    return Err(Diagnostic::new(item.head[0].span, "a copy takes its values when it is created: write `copy of target` in a spell"));
                }
                Change::CopyOf(src)
            } else {
                Change::TextOf(src)
            };
            ops.push((target, change, item.head[0].span));
            continue;
        }
        if c.eat_word("replace") {
            // `replace island with forest in abilities` (seed 004, layer 3: Mind Bend).
            let from = word_ref(&mut c)?;
            c.expect_word("with")?;
            let to = word_ref(&mut c)?;
            c.expect_word("in")?;
            let (n, nsp) = c.name("a characteristic")?;
            let ch = char_named(env, &n, nsp)?;
            if !matches!(rs.char(ch).kind, CharKind::Abilities | CharKind::Symbols) {
                return Err(Diagnostic::new(
                    nsp,
                    format!("`{n}` is not abilities or symbols: `replace` changes words in those"),
                ));
            }
            c.finish()?;
            ops.push((
                SlotTarget::Char(ch),
                Change::ReplaceWord(from, to),
                item.head[0].span,
            ));
            continue;
        }
        if c.eat_word("affects") {
            c.expect_punct(":")?;
            if c.at_end() {
                return Err(c.err("a condition after `affects:`"));
            }
            affects = Some((item.head[c.pos..].to_vec(), item.head[0].span));
            continue;
        }
        if c.eat_words(&["as", "long", "as"]) {
            c.expect_punct(":")?;
            while_cond = Some(condition(env, &mut c, allow)?);
            c.finish()?;
            continue;
        }
        if c.eat_word("switch") {
            let (a, asp) = c.name("a characteristic")?;
            c.expect_punct(",")?;
            let (b, bsp) = c.name("a characteristic")?;
            c.finish()?;
            let ca = char_named(env, &a, asp)?;
            let cb = char_named(env, &b, bsp)?;
            for (id, n, sp) in [(ca, &a, asp), (cb, &b, bsp)] {
                if rs.char(id).kind != CharKind::Number {
                    return Err(Diagnostic::new(
                        sp,
                        format!("`{n}` is not a number: `switch` exchanges two numbers"),
                    ));
                }
            }
            ops.push((
                SlotTarget::Char(ca),
                Change::SwitchWith(cb),
                item.head[0].span,
            ));
            continue;
        }
        let (name, nsp) =
            c.name("`affects:`, `as long as:`, `switch`, or a characteristic to change")?;
        let target = if let Some(ch) = rs.char_id(&name) {
            SlotTarget::Char(ch)
        } else if let Some(p) = rs.prop_id(&name) {
            SlotTarget::Prop(p)
        } else {
            let known = rs
                .characteristics
                .iter()
                .map(|c| c.name.as_str())
                .chain(rs.props.iter().map(|p| p.name.as_str()))
                .chain(["affects", "switch"]);
            return Err(unknown(
                nsp,
                "characteristic or player property",
                &name,
                known,
            ));
        };
        let op = if c.eat_punct("=") {
            '='
        } else if c.eat_punct("+=") {
            '+'
        } else if c.eat_punct("-=") {
            '-'
        } else {
            return Err(c.err("`=`, `+=` or `-=`"));
        };
        let kind = match target {
            SlotTarget::Char(ch) => rs.char(ch).kind,
            SlotTarget::Prop(_) => CharKind::Number,
        };
        let change = match (kind, op) {
            (CharKind::Number, '=') => Change::SetNumber(num(env, &mut c, allow)?),
            (CharKind::Number, '+') => Change::Modify(num(env, &mut c, allow)?),
            (CharKind::Number, _) => {
                Change::Modify(NumExpr::Neg(Box::new(num(env, &mut c, allow)?)))
            }
            (CharKind::Symbols, '=') => Change::SetSymbols(sym_list(&mut c)?),
            (CharKind::Symbols, '+') => Change::AddSymbols(sym_list(&mut c)?),
            (CharKind::Symbols, _) => Change::RemoveSymbols(sym_list(&mut c)?),
            (CharKind::Abilities, '=') => Change::SetAbilities(abilities(&mut c)?),
            (CharKind::Abilities, '+')
                if matches!(&c.peek().map(|t| &t.tok), Some(Tok::Str(s)) if s.contains("{}"))
                    && c.peek_at(1).is_some_and(|t| t.is_word("for")) =>
            {
                // `abilities += "protection from {}" for each colors among permanent you control`
                let (template, _) = c.string("an ability template")?;
                c.expect_word("for")?;
                c.eat_word("each");
                let (n, nsp) = c.name("a symbols characteristic")?;
                let of = char_named(env, &n, nsp)?;
                if rs.char(of).kind != CharKind::Symbols {
                    return Err(Diagnostic::new(
                        nsp,
                        format!("`{n}` is not a symbols characteristic"),
                    ));
                }
                c.expect_word("among")?;
                let among = condition(env, &mut c, allow)?;
                Change::AbilitiesPer {
                    template: Arc::from(template.as_str()),
                    of,
                    among,
                }
            }
            (CharKind::Abilities, '+') => Change::AddAbilities(abilities(&mut c)?),
            (CharKind::Abilities, _) => Change::RemoveAbilities(abilities(&mut c)?),
            (CharKind::Controller, '=') => {
                let (w, sp) = c.name("`you`, `owner` or `active`")?;
                Change::SetPlayer(match w.as_str() {
                    "you" => PlayerRef::You,
                    "owner" => PlayerRef::Owner,
                    "active" => {
                        c.eat_word("player");
                        PlayerRef::Active
                    }
                    _ => return Err(unknown(sp, "player", &w, ["you", "owner", "active player"])),
                })
            }
            (CharKind::Text | CharKind::Name, '=') => {
                Change::SetText(Arc::from(c.string("a string")?.0.as_str()))
            }
            (k, _) => {
                return Err(Diagnostic::new(
                    nsp,
                    format!(
                        "`{name}` is a {} characteristic: only `=` sets it",
                        k.name()
                    ),
                ))
            }
        };
        c.finish()?;
        ops.push((target, change, nsp));
    }
    if ops.is_empty() {
        return Err(Diagnostic::new(
            s.head[0].span,
            "this effect changes nothing: expected at least one operation such as `power += 1`",
        ));
    }
    let on_players = matches!(ops[0].0, SlotTarget::Prop(_));
    if let Some((_, _, sp)) = ops
        .iter()
        .find(|(t, _, _)| matches!(t, SlotTarget::Prop(_)) != on_players)
    {
        return Err(Diagnostic::new(
            *sp,
            "one effect changes either objects or players, not both: split it into two",
        ));
    }
    let mut lowered = Vec::new();
    for (target, change, sp) in ops {
        let Some(layer) = rs.layer_for(target, change.kind(), defining) else {
            let n = match target {
                SlotTarget::Char(c) => rs.char(c).name.clone(),
                SlotTarget::Prop(p) => rs.props[p.index()].name.clone(),
            };
            return Err(Diagnostic::new(
                sp,
                format!(
                    "no layer of ruleset `{}` applies `{}` to `{n}`",
                    rs.name,
                    change.kind().name()
                ),
            ));
        };
        lowered.push(Op {
            target,
            change,
            layer,
        });
    }
    let cond =
        match affects {
            Some((toks, _)) => {
                let mut c = Cursor::new(&toks);
                let cond = condition(env, &mut c, allow)?;
                c.finish()?;
                cond
            }
            None => match kind {
                EffectKind::Static => Cond::IsSource,
                EffectKind::Spell { has_target: true } => Cond::IsTarget,
                EffectKind::Spell { has_target: false } => return Err(Diagnostic::new(
                    s.head[0].span,
                    "expected `affects:`: a spell with no target must say what its effect affects",
                )),
            },
        };
    let cond = if on_players && matches!(cond, Cond::IsSource) {
        Cond::IsPlayer(PlayerRef::You)
    } else {
        cond
    };
    Ok(EffectDef {
        zones,
        text: Arc::from(text),
        affects: if on_players {
            Affects::Players(cond)
        } else {
            Affects::Objects(cond)
        },
        while_cond,
        defining,
        ops: lowered,
        affects_text: Default::default(),
        text_symbol: Default::default(),
    })
}

/// A word in `replace X with Y`: a symbol, or `first_choice` / `second_choice` of the source.
fn word_ref(c: &mut Cursor) -> Res<SymRef> {
    let (w, _) = c.name_or_string("a word, `first_choice` or `second_choice`")?;
    Ok(match w.as_str() {
        "first_choice" => SymRef::Chosen(0),
        "second_choice" => SymRef::Chosen(1),
        _ => SymRef::Lit(Symbol::new(&w)),
    })
}

fn char_named(env: &Env, n: &str, sp: Span) -> Res<rulecraft_core::CharId> {
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

fn spell_def(env: &Env, s: &Stmt, text: String) -> Res<Spell> {
    let mut target = None;
    let mut effects = Vec::new();
    let mut one_shots = Vec::new();
    let items = block(s, "the spell")?;
    // The target comes first so that effects know whether they may say `target`.
    for item in items {
        let mut c = Cursor::new(&item.head);
        if c.eat_word("target") {
            no_block(item)?;
            c.expect_punct(":")?;
            target = Some(condition(env, &mut c, Allow { target: false })?);
            c.finish()?;
        }
    }
    let kind = EffectKind::Spell {
        has_target: target.is_some(),
    };
    for item in items {
        let mut c = Cursor::new(&item.head);
        if c.eat_word("target") {
            continue;
        }
        let duration = if c.eat_words(&["until", "end", "of", "turn"]) {
            Some(Duration::UntilEndOfTurn)
        } else if c.eat_words(&["while", "source", "in", "play"]) {
            Some(Duration::WhileSourceInPlay)
        } else if c.eat_word("effect") {
            Some(Duration::Indefinite)
        } else {
            None
        };
        if let Some(d) = duration {
            c.finish()?;
            let def = effect(env, item, &text, false, kind)?;
            effects.push((d, Arc::new(def)));
            continue;
        }
        if c.eat_words(&["turn", "target", "face"]) {
            no_block(item)?;
            if target.is_none() {
                return Err(Diagnostic::new(
                    item.head[0].span,
                    "`turn target` needs the spell to have a `target:`",
                ));
            }
            let face_down = if c.eat_word("down") {
                true
            } else if c.eat_word("up") {
                false
            } else {
                return Err(c.err("`up` or `down`"));
            };
            c.finish()?;
            one_shots.push(OneShot::TurnTargets { face_down });
            continue;
        }
        if c.eat_words(&["move", "target", "to"]) {
            no_block(item)?;
            c.expect_punct(":")?;
            if target.is_none() {
                return Err(Diagnostic::new(
                    item.head[0].span,
                    "`move target` needs the spell to have a `target:`",
                ));
            }
            let (z, zs) = c.name("a zone")?;
            let zone = env.ruleset.zone_id(&z).ok_or_else(|| {
                unknown(
                    zs,
                    "zone",
                    &z,
                    env.ruleset.zones.iter().map(|z| z.name.as_str()),
                )
            })?;
            c.finish()?;
            one_shots.push(OneShot::MoveTargets(zone));
            continue;
        }
        return Err(c.err("`target:`, `until end of turn {`, `while source in play {`, `effect {` or `move target to:`"));
    }
    Ok(Spell {
        text: Arc::from(text.as_str()),
        target,
        effects,
        one_shots,
    })
}
