//! Values as written (docs/language.md, "Content"): a printed characteristic's value, and the
//! lists of symbols and abilities that printed values and operations name.

use super::cursor::{unknown, Cursor, Res};
use super::Env;
use crate::diagnostics::{Diagnostic, Span};
use crate::lexer::Tok;
use rulecraft_core::model::effect::SymList;
use rulecraft_core::model::ruleset::CharKind;
use rulecraft_core::{Ability, AbilityKind, Symbol, SymbolSet, Value};
use std::sync::Arc;

/// A value as written after `CHAR:` in a class or `CHAR =` in the ruleset's face-down values.
pub(crate) fn printed_value(kind: CharKind, c: &mut Cursor, at: Span) -> Res<Value> {
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

/// A printed symbol list: `none`, `all`, or names separated by commas.
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
pub(crate) fn sym_list_in(env: &Env, ch: rulecraft_core::CharId, c: &mut Cursor) -> Res<SymList> {
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

/// A list of abilities: `none` or abilities separated by commas.
pub(crate) fn abilities(c: &mut Cursor) -> Res<Vec<Ability>> {
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
pub(crate) fn ability(c: &mut Cursor) -> Res<Ability> {
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
