//! Content files (docs/language.md, "Content"): object classes with printed characteristics, static
//! abilities, characteristic-defining abilities and spells.

use super::cond::{condition, num, Allow};
use super::cursor::{unknown, Cursor, Res};
use super::{block, no_block, Env};
use crate::diagnostics::{Diagnostic, Span};
use crate::lexer::Tok;
use crate::syntax::Stmt;
use rulecraft_core::condition::TargetSpec;
use rulecraft_core::condition::{Cond, NumExpr, PlayerRef};
use rulecraft_core::content::{Content, ObjectClass, OneShot, Spell};
use rulecraft_core::effect::{
    Affects, Change, CopySource, Duration, EffectDef, Op, SymList, SymRef, TurnOf,
};
use rulecraft_core::ids::SlotTarget;
use rulecraft_core::ruleset::CharKind;
use rulecraft_core::{Ability, AbilityKind, ClassId, Symbol, SymbolSet, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// Whether a statement starts an object class: `card "Name" { ... }` or `object "Name" { ... }`.
pub fn is_class(s: &Stmt) -> bool {
    s.head[0].is_word("card") || s.head[0].is_word("object")
}

/// Whether a statement declares a term: `term NAME: COND` (a content file may name conditions its
/// cards share, "merfolk creature").
pub fn is_term(s: &Stmt) -> bool {
    s.head[0].is_word("term")
}

/// Lowers the terms of a content file into `env`, where the content's classes will find them.
pub fn terms(env: &mut Env, stmts: &[Stmt]) -> Res<()> {
    for s in stmts.iter().filter(|s| is_term(s)) {
        super::ruleset::term_stmt(env, s)?;
    }
    Ok(())
}

/// Lowers every class in a content file into `content` (its terms were lowered by `terms`).
pub fn lower(env: &Env, stmts: &[Stmt], content: &mut Content) -> Res<()> {
    if let Some(s) = stmts.iter().find(|s| !is_class(s) && !is_term(s)) {
        let c = Cursor::new(&s.head);
        return Err(
            c.err("`card \"Name\" { ... }`, `object \"Name\" { ... }` or `term NAME: CONDITION`")
        );
    }
    add_classes(env, stmts.iter().filter(|s| !is_term(s)), content)
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
    let mut attaches_to = None;
    let mut responses = Vec::new();
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
                let def = effect(
                    env,
                    item,
                    &text,
                    kw == "defining",
                    EffectKind::Static,
                    &[],
                    &[],
                )?;
                statics.push(Arc::new(def));
            }
            Some("trait" | "reaction" | "replacement")
                if ic.peek_at(1).is_some_and(|t| matches!(t.tok, Tok::Str(_))) =>
            {
                responses.push(Arc::new(super::events::class_response(env, item)?));
            }
            Some("attaches") => {
                // `attaches to: creature`: what it can be attached to (CR 303.4a "Enchant",
                // 301.5: an Equipment equips a creature).
                no_block(item)?;
                ic.bump();
                ic.expect_word("to")?;
                ic.expect_punct(":")?;
                attaches_to = Some(condition(env, &mut ic, Allow::default())?);
                ic.finish()?;
            }
            Some("enters") => {
                // `enters as a copy`: Clone (layer 1a, CR 613.2a).
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
                let v = env.symbols.value(printed_value(kind, &mut ic, first.span)?);
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
                let known = rs.characteristics.iter().map(|c| c.name.as_str()).chain([
                    "static",
                    "defining",
                    "spell",
                    "trait",
                    "reaction",
                    "replacement",
                ]);
                return Err(unknown(sp, "characteristic or ability", &w, known));
            }
        }
    }
    // The abilities characteristic: printed keywords, the abilities its printed symbols give
    // (CR 305.6: a Forest's mana ability), then static abilities in order.
    if let Some(ac) = rs.char_of_kind(CharKind::Abilities) {
        let mut list = keywords;
        let printed_set = |c: rulecraft_core::CharId| {
            printed.iter().find_map(|(x, v)| match v {
                Value::Symbols(s) if *x == c => Some(s.clone()),
                _ => None,
            })
        };
        for i in &rs.intrinsic {
            let concerned = printed_set(i.when.0).is_some_and(|s| s.contains(&i.when.1));
            if let (true, Some(set)) = (concerned, printed_set(i.char)) {
                for a in i.of(&set) {
                    if !list.contains(a) {
                        list.push(a.clone());
                    }
                }
            }
        }
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
        attaches_to,
        responses,
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

/// An operation's symbols for characteristic `ch`: as `sym_list`, where `all CATEGORY` also names
/// every symbol of one of `ch`'s categories ("every creature type": `all creature`), alone or
/// among other symbols.
fn sym_list_in(env: &Env, ch: rulecraft_core::CharId, c: &mut Cursor) -> Res<SymList> {
    let rs = &env.ruleset;
    let category = |c: &Cursor| {
        let w = match &c.peek_at(1)?.tok {
            Tok::Word(w) | Tok::Str(w) => w.clone(),
            _ => return None,
        };
        rs.categories_of(ch).find(|x| x.name == w)
    };
    let all_then_word = c.peek().is_some_and(|t| t.is_word("all"))
        && c.peek_at(1)
            .is_some_and(|t| matches!(t.tok, Tok::Word(_) | Tok::Str(_)));
    if all_then_word && category(c).is_none() && rs.categories_of(ch).next().is_some() {
        let (w, sp) = {
            let mut look = Cursor {
                toks: c.toks,
                pos: c.pos + 1,
                end: c.end,
                depth: c.depth,
            };
            look.name_or_string("a category")?
        };
        return Err(unknown(
            sp,
            "category",
            &w,
            rs.categories_of(ch).map(|x| x.name.as_str()),
        ));
    }
    if !(all_then_word && category(c).is_some()) {
        return Ok(env.symbols.list(sym_list(c)?));
    }
    let mut out = SymList::default();
    loop {
        match category(c).filter(|_| c.peek().is_some_and(|t| t.is_word("all"))) {
            Some(cat) => {
                c.bump();
                c.bump();
                out.set.extend(&rs.category_set(cat));
            }
            None => {
                let (w, _) = c.name_or_string("a symbol or `all` and a category")?;
                if w == "chosen" && matches!(c.toks[c.pos - 1].tok, Tok::Word(_)) {
                    out.chosen = true;
                } else {
                    out.set.insert(env.symbol(&w));
                }
            }
        }
        if !c.eat_punct(",") {
            return Ok(out);
        }
    }
}

fn abilities(c: &mut Cursor) -> Res<Vec<Ability>> {
    if c.peek().is_some_and(|t| t.is_word("all")) {
        return Err(c.err("ability names or `none` (`all` names every symbol, not abilities)"));
    }
    if c.eat_word("none") {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    loop {
        out.push(ability(c)?);
        if !c.eat_punct(",") {
            break;
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// One ability in a list: a keyword (`flying`, `"first strike"`), or an ability of a kind named
/// by its text (CR 113.3): `activated "..."`, `mana "{T}: Add {G}."`, `triggered "..."`;
/// `static "..."` is a keyword.
pub fn ability(c: &mut Cursor) -> Res<Ability> {
    let kind = c
        .peek()
        .and_then(|t| t.word())
        .and_then(AbilityKind::named)
        .filter(|_| {
            c.peek_at(1)
                .is_some_and(|t| matches!(t.tok, Tok::Word(_) | Tok::Str(_)))
        });
    if kind.is_some() {
        c.bump();
    }
    let (w, _) = c.name_or_string("an ability")?;
    if w == "chosen" && matches!(c.toks[c.pos - 1].tok, Tok::Word(_)) {
        return Err(Diagnostic::new(c.toks[c.pos - 1].span, "`chosen` names a choice made as an object enters: it belongs in an effect, not a printed value"));
    }
    let name = Symbol::new(&w);
    Ok(match kind {
        None | Some(AbilityKind::Static) => Ability::Keyword(name),
        Some(kind) => Ability::Kinded { kind, name },
    })
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum EffectKind {
    Static,
    Spell { has_target: bool },
}

/// An effect's statements: `affects:`, `as long as:`, and operations. `names`: the spell's target
/// names, where it names them.
pub(crate) fn effect(
    env: &Env,
    s: &Stmt,
    text: &str,
    defining: bool,
    kind: EffectKind,
    names: &[String],
    params: &[String],
) -> Res<EffectDef> {
    let rs = &env.ruleset;
    let kind_of_effect = kind;
    let allow = Allow {
        target: matches!(kind, EffectKind::Spell { .. }),
        names,
        outer: false,
        params,
    };
    let mut affects: Option<(Vec<crate::lexer::Token>, Span)> = None;
    let mut while_cond = None;
    let mut zones = Vec::new();
    let mut ops: Vec<(SlotTarget, Change, Span, bool)> = Vec::new();
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
            zones.extend(super::ruleset::zone_list(env, &mut c)?);
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
                match target_ref(&mut c, names)? {
                    Some(i) => CopySource::TargetAt(i),
                    None => CopySource::Target,
                }
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
                if matches!(src, CopySource::Top(_)) {
                    return Err(Diagnostic::new(item.head[0].span, "a copy takes its values when it is created: write `copy of target` in a spell"));
                }
                Change::CopyOf(src)
            } else {
                Change::TextOf(src)
            };
            ops.push((target, change, item.head[0].span, false));
            continue;
        }
        if c.eat_word("replace") {
            // `replace island with forest in abilities` (layer 3, CR 613.1c: Mind Bend).
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
                false,
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
                false,
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
            (CharKind::Symbols, '=') => {
                let SlotTarget::Char(ch) = target else {
                    unreachable!("symbols are characteristics")
                };
                let set = sym_list_in(env, ch, &mut c)?;
                // With categories (CR 205.3), only the sets of the new symbols are replaced.
                let sets = rs.categories_of(ch).next().is_some();
                if sets && (set.chosen || !(set.set.is_empty() || set.set == SymbolSet::every())) {
                    let replaced = rs.categories_holding(ch, &set.set);
                    Change::SetInCategories { set, replaced }
                } else {
                    Change::SetSymbols(set)
                }
            }
            (CharKind::Symbols, '+') => match target {
                SlotTarget::Char(ch) => Change::AddSymbols(sym_list_in(env, ch, &mut c)?),
                SlotTarget::Prop(_) => unreachable!("symbols are characteristics"),
            },
            (CharKind::Symbols, _) => match target {
                SlotTarget::Char(ch) => Change::RemoveSymbols(sym_list_in(env, ch, &mut c)?),
                SlotTarget::Prop(_) => unreachable!("symbols are characteristics"),
            },
            (CharKind::Abilities, '=') => {
                Change::SetAbilities(env.symbols.abilities(&abilities(&mut c)?))
            }
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
                let among = condition(env, &mut c, allow.inside())?;
                Change::AbilitiesPer {
                    template: Arc::from(template.as_str()),
                    of,
                    among,
                }
            }
            (CharKind::Abilities, '+')
                if c.peek()
                    .and_then(|t| t.word())
                    .is_some_and(|w| w == "all" || AbilityKind::named(w).is_some())
                    && c.peek_at(1).is_some_and(|t| t.is_word("abilities"))
                    && c.peek_at(2).is_some_and(|t| t.is_word("of")) =>
            {
                // `abilities += activated abilities of in graveyard and types has creature`
                let kind = c.bump().and_then(|t| t.word()).and_then(AbilityKind::named);
                c.bump();
                c.bump();
                let among = condition(env, &mut c, allow)?;
                Change::AbilitiesOf { kind, among }
            }
            (CharKind::Abilities, '+') => {
                Change::AddAbilities(env.symbols.abilities(&abilities(&mut c)?))
            }
            (CharKind::Abilities, _) => {
                Change::RemoveAbilities(env.symbols.abilities(&abilities(&mut c)?))
            }
            (CharKind::Controller, '=') => {
                let (w, sp) = c.name("`you`, `owner`, `active` or `target`")?;
                Change::SetPlayer(match w.as_str() {
                    "you" => PlayerRef::You,
                    "owner" => PlayerRef::Owner,
                    "active" => {
                        c.eat_word("player");
                        PlayerRef::Active
                    }
                    // Donate: "target player gains control of ...".
                    "target" if allow.target => PlayerRef::Target(target_ref(&mut c, names)?),
                    _ => {
                        return Err(unknown(
                            sp,
                            "player",
                            &w,
                            ["you", "owner", "active player", "target"],
                        ))
                    }
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
        // `power += power continuously`: a spell's number read at every derivation.
        let continuous = c.peek().is_some_and(|t| t.is_word("continuously"));
        if continuous {
            if !matches!(change, Change::SetNumber(_) | Change::Modify(_)) {
                return Err(Diagnostic::new(
                    c.toks[c.pos].span,
                    format!("only a number is read `continuously`: `{name}` is not a number"),
                ));
            }
            if kind_of_effect == EffectKind::Static {
                return Err(Diagnostic::new(
                    c.toks[c.pos].span,
                    "`continuously` belongs to a spell's effect: a static ability's numbers are always read continuously",
                ));
            }
            c.bump();
        }
        c.finish()?;
        ops.push((target, change, nsp, continuous));
    }
    if ops.is_empty() {
        return Err(Diagnostic::new(
            s.head[0].span,
            "this effect changes nothing: expected at least one operation such as `power += 1`",
        ));
    }
    let on_players = matches!(ops[0].0, SlotTarget::Prop(_));
    if let Some((_, _, sp, _)) = ops
        .iter()
        .find(|(t, _, _, _)| matches!(t, SlotTarget::Prop(_)) != on_players)
    {
        return Err(Diagnostic::new(
            *sp,
            "one effect changes either objects or players, not both: split it into two",
        ));
    }
    // A change to symbols that give abilities (CR 305.6-305.7) writes those abilities too.
    let makes = |ops: &[(SlotTarget, Change, Span, bool)],
                 i: &rulecraft_core::ruleset::Intrinsic| {
        ops.iter().find_map(|(t, c, _, _)| {
            if *t != SlotTarget::Char(i.when.0) {
                return None;
            }
            match c {
                Change::SetSymbols(l) | Change::SetInCategories { set: l, .. } => {
                    Some(l.set.contains(&i.when.1))
                }
                Change::AddSymbols(l) => l.set.contains(&i.when.1).then_some(true),
                Change::RemoveSymbols(l) => l.set.contains(&i.when.1).then_some(false),
                _ => None,
            }
        })
    };
    let whens: Vec<Option<bool>> = ops
        .iter()
        .map(|(t, _, _, _)| match t {
            SlotTarget::Char(ch) => rs.intrinsic_of(*ch).and_then(|i| makes(&ops, i)),
            SlotTarget::Prop(_) => None,
        })
        .collect();
    let mut lowered = Vec::new();
    for ((target, change, sp, continuous), made) in ops.into_iter().zip(whens) {
        // Only a change that can give or take away the abilities symbols give is written with them.
        let intrinsic = match target {
            SlotTarget::Char(ch) => rs.intrinsic_of(ch).is_some_and(|i| i.concerns(&change)),
            SlotTarget::Prop(_) => false,
        };
        let change = match change {
            Change::SetSymbols(_)
            | Change::SetInCategories { .. }
            | Change::AddSymbols(_)
            | Change::RemoveSymbols(_)
                if intrinsic =>
            {
                Change::WithIntrinsic {
                    change: Box::new(change),
                    makes: made,
                }
            }
            c => c,
        };
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
            continuous,
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
                // Every target (of the kind the effect changes).
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
        counts_counters: Default::default(),
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

/// After `target` in an effect or one-shot: the name of one of the spell's targets, if one follows
/// (a string, or a word that names one); its index.
fn target_ref(c: &mut Cursor, names: &[String]) -> Res<Option<u8>> {
    let Some(t) = c.peek() else { return Ok(None) };
    let (name, is_str) = match &t.tok {
        Tok::Str(s) => (s.clone(), true),
        Tok::Word(w) if names.iter().any(|n| n == w) => (w.clone(), false),
        _ => return Ok(None),
    };
    match names.iter().position(|n| *n == name) {
        Some(i) => {
            c.bump();
            Ok(Some(i as u8))
        }
        None if is_str => Err(if names.is_empty() {
            Diagnostic::new(
                t.span,
                format!("unknown target `{name}`: this spell names no targets (`target \"{name}\": ...`)"),
            )
        } else {
            unknown(t.span, "target", &name, names.iter().map(|s| s.as_str()))
        }),
        None => Ok(None),
    }
}

/// A spell's duration line (before its block), if the line is one.
pub(crate) fn duration(
    env: &Env,
    c: &mut Cursor,
    allow: Allow,
    has_target: bool,
) -> Res<Option<Duration>> {
    let at = c.here();
    if c.eat_words(&["until", "end", "of", "turn"]) {
        return Ok(Some(Duration::UntilEndOfTurn));
    }
    if c.eat_words(&["while", "source", "in", "play"]) {
        return Ok(Some(Duration::WhileSourceInPlay));
    }
    if c.eat_word("effect") {
        return Ok(Some(Duration::Indefinite));
    }
    // "Until your next turn", "until your next untap step".
    if c.eat_words(&["until", "your", "next"]) {
        if !(c.eat_word("turn") || c.eat_words(&["untap", "step"])) {
            return Err(c.err("`turn` or `untap step`"));
        }
        return Ok(Some(Duration::UntilTurnOf(TurnOf::You)));
    }
    // "Until its controller's next untap step": `until next untap step of its controller`.
    if c.eat_words(&["until", "next"]) {
        if !(c.eat_word("turn") || c.eat_words(&["untap", "step"])) {
            return Err(c.err("`turn` or `untap step`"));
        }
        c.expect_word("of")?;
        if c.eat_word("you") {
            return Ok(Some(Duration::UntilTurnOf(TurnOf::You)));
        }
        c.eat_word("its");
        c.expect_word("controller")?;
        if !has_target {
            return Err(Diagnostic::new(
                at.to(c.toks[c.pos - 1].span),
                "`its controller` is the controller of the spell's target: the spell needs a `target:`",
            ));
        }
        return Ok(Some(Duration::UntilTurnOf(TurnOf::ItsController)));
    }
    // "For as long as you control ...": ends the first time the condition does not hold.
    if c.eat_words(&["for", "as", "long", "as"]) {
        c.expect_punct(":")?;
        let cond = condition(env, c, allow)?;
        return Ok(Some(Duration::ForAsLongAs(Arc::new(cond))));
    }
    Ok(None)
}

fn spell_def(env: &Env, s: &Stmt, text: String) -> Res<Spell> {
    let mut targets: Vec<TargetSpec> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut unnamed: Option<Span> = None;
    let mut effects = Vec::new();
    let mut one_shots = Vec::new();
    let items = block(s, "the spell")?;
    // The targets come first so that effects know which they may name.
    for item in items {
        let mut c = Cursor::new(&item.head);
        if c.eat_word("target") {
            no_block(item)?;
            let name = if c.peek().is_some_and(|t| t.is_punct(":")) {
                None
            } else {
                Some(c.name_or_string("`:` or the target's name")?)
            };
            c.expect_punct(":")?;
            let cond = condition(env, &mut c, Allow::default())?;
            c.finish()?;
            // One unnamed target, or every target named (each is an instance of "target").
            let clash = matches!(
                (&name, unnamed, targets.is_empty()),
                (None, _, false) | (Some(_), Some(_), _)
            );
            if clash {
                return Err(Diagnostic::new(
                    item.head[0].span,
                    "a spell with several targets names each: `target \"first\": ...`, `target \"second\": ...`",
                ));
            }
            match name {
                None => unnamed = Some(item.head[0].span),
                Some((n, sp)) => {
                    if names.contains(&n) {
                        return Err(Diagnostic::new(sp, format!("target `{n}` is named twice")));
                    }
                    if names.len() >= u8::MAX as usize {
                        return Err(Diagnostic::new(
                            sp,
                            "too many targets: expected at most 255",
                        ));
                    }
                    names.push(n);
                }
            }
            targets.push(TargetSpec {
                name: names
                    .last()
                    .filter(|_| unnamed.is_none())
                    .map(|n| Arc::from(n.as_str())),
                cond,
            });
        }
    }
    let has_target = !targets.is_empty();
    let kind = EffectKind::Spell { has_target };
    let allow = Allow {
        target: true,
        names: &names,
        outer: false,
        params: &[],
    };
    for item in items {
        let mut c = Cursor::new(&item.head);
        if c.peek().is_some_and(|t| t.is_word("target")) {
            continue;
        }
        if let Some(d) = duration(env, &mut c, allow, has_target)? {
            c.finish()?;
            let def = effect(env, item, &text, false, kind, &names, &[])?;
            effects.push((d, Arc::new(def)));
            continue;
        }
        if c.eat_words(&["turn", "target"]) {
            no_block(item)?;
            if !has_target {
                return Err(Diagnostic::new(
                    item.head[0].span,
                    "`turn target` needs the spell to have a `target:`",
                ));
            }
            let at = target_ref(&mut c, &names)?;
            c.expect_word("face")?;
            let face_down = if c.eat_word("down") {
                true
            } else if c.eat_word("up") {
                false
            } else {
                return Err(c.err("`up` or `down`"));
            };
            c.finish()?;
            one_shots.push(match at {
                Some(index) => OneShot::TurnTargetAt { index, face_down },
                None => OneShot::TurnTargets { face_down },
            });
            continue;
        }
        if c.eat_word("put") {
            // `put 1 flying counter on target`: on each target (CR 122.6).
            no_block(item)?;
            let (count, csp) = c.number("how many counters")?;
            if count <= 0 {
                return Err(Diagnostic::new(
                    csp,
                    "expected a positive number of counters",
                ));
            }
            let (k, ksp) = c.name_or_string("a counter")?;
            let counter = env.ruleset.counter_id(&k).ok_or_else(|| {
                unknown(
                    ksp,
                    "counter",
                    &k,
                    env.ruleset.counters.iter().map(|c| c.name.as_str()),
                )
            })?;
            if !c.eat_word("counter") {
                c.eat_word("counters");
            }
            c.expect_word("on")?;
            c.expect_word("target")?;
            if !has_target {
                return Err(Diagnostic::new(
                    item.head[0].span,
                    "`put ... on target` needs the spell to have a `target:`",
                ));
            }
            c.finish()?;
            one_shots.push(OneShot::PutCounters { counter, count });
            continue;
        }
        if c.eat_words(&["move", "target"]) {
            no_block(item)?;
            let at = target_ref(&mut c, &names)?;
            c.expect_word("to")?;
            c.expect_punct(":")?;
            if !has_target {
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
            one_shots.push(match at {
                Some(i) => OneShot::MoveTargetAt(i, zone),
                None => OneShot::MoveTargets(zone),
            });
            continue;
        }
        return Err(c.err("`target:`, `until end of turn {`, `while source in play {`, `effect {`, `until your next turn {`, `for as long as: ... {`, `move target to:`, `turn target` or `put N COUNTER on target`"));
    }
    Ok(Spell {
        text: Arc::from(text.as_str()),
        targets,
        effects,
        one_shots,
    })
}
