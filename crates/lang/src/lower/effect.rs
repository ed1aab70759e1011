//! Effects (docs/language.md, "Content"): a static ability's or a spell's continuous effect, read
//! from its lines (what it affects, as long as what, where it works, its operations), each
//! operation placed in the ruleset's layer that applies it (CR 613.1); and a spell's durations.

use super::common::{char_named, zone_list};
use super::cond::{condition, num, Allow};
use super::cursor::{unknown, Cursor, Res};
use super::defs::char_def;
use super::values::{abilities, sym_list_in};
use super::{block, no_block, Env};
use crate::diagnostics::{Diagnostic, Span};
use crate::lexer::{Tok, Token};
use crate::syntax::Stmt;
use rulecraft_core::model::condition::{Cond, NumExpr, PlayerRef};
use rulecraft_core::model::effect::{
    Affects, Change, CopySource, Duration, EffectDef, Op, SymRef, TurnOf,
};
use rulecraft_core::model::ids::SlotTarget;
use rulecraft_core::model::ruleset::{CharKind, Intrinsic};
use rulecraft_core::{AbilityKind, CharId, Symbol, SymbolSet, ZoneId};
use std::sync::Arc;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum EffectKind {
    Static,
    Spell { has_target: bool },
}

/// An operation as written, before its layer is found.
struct Written {
    target: SlotTarget,
    change: Change,
    /// Where it is written (its first word).
    span: Span,
    continuous: bool,
}

/// What an effect's lines say, in order.
#[derive(Default)]
struct Lines {
    /// The condition after `affects:`, read once every line is.
    affects: Option<Vec<Token>>,
    while_cond: Option<Cond>,
    zones: Vec<ZoneId>,
    ops: Vec<Written>,
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
    let allow = Allow {
        target: matches!(kind, EffectKind::Spell { .. }),
        names,
        outer: false,
        params,
    };
    let mut lines = Lines::default();
    for item in block(s, "the effect")? {
        no_block(item)?;
        line(env, item, kind, allow, &mut lines)?;
    }
    let on_players = on_players(s, &lines.ops)?;
    let ops = place(env, lines.ops, defining)?;
    let cond = affected(env, s, kind, allow, lines.affects)?;
    let cond = if on_players && matches!(cond, Cond::IsSource) {
        Cond::IsPlayer(PlayerRef::You)
    } else {
        cond
    };
    Ok(EffectDef {
        zones: lines.zones,
        text: Arc::from(text),
        affects: if on_players {
            Affects::Players(cond)
        } else {
            Affects::Objects(cond)
        },
        while_cond: lines.while_cond,
        defining,
        ops,
        stacking: 0,
        priority: 0,
        affects_text: Default::default(),
        text_symbol: Default::default(),
        counts_counters: Default::default(),
    })
}

/// One line of an effect: `works in:`, `copy of` / `text of`, `replace`, `affects:`,
/// `as long as:`, `switch`, or an operation (`power += 1`).
fn line(env: &Env, item: &Stmt, kind: EffectKind, allow: Allow, lines: &mut Lines) -> Res<()> {
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
        lines.zones.extend(zone_list(env, &mut c)?);
        return c.finish();
    }
    if c.eat_words(&["copy", "of"]) || c.eat_words(&["text", "of"]) {
        lines.ops.push(copy_or_text(env, item, &mut c, allow)?);
        return Ok(());
    }
    if c.eat_word("replace") {
        lines.ops.push(replace_word(env, item, &mut c)?);
        return Ok(());
    }
    if c.eat_word("affects") {
        c.expect_punct(":")?;
        if c.at_end() {
            return Err(c.err("a condition after `affects:`"));
        }
        lines.affects = Some(item.head[c.pos..].to_vec());
        return Ok(());
    }
    if c.eat_words(&["as", "long", "as"]) {
        c.expect_punct(":")?;
        lines.while_cond = Some(condition(env, &mut c, allow)?);
        return c.finish();
    }
    if c.eat_word("switch") {
        lines.ops.push(switch(env, item, &mut c)?);
        return Ok(());
    }
    lines.ops.push(operation(env, &mut c, kind, allow)?);
    Ok(())
}

/// After `copy of` or `text of`: `target [NAME]` or `top(ZONE)` (layers 1a and 3, CR 613.2a,
/// 613.1c). Copy and text effects change every copiable characteristic; they name the first.
fn copy_or_text(env: &Env, item: &Stmt, c: &mut Cursor, allow: Allow) -> Res<Written> {
    let rs = &env.ruleset;
    let is_copy = item.head[0].is_word("copy");
    let Some(target) = rs.copiable.first().map(|c| SlotTarget::Char(*c)) else {
        return Err(Diagnostic::new(
            item.head[0].span,
            "this ruleset declares no `copiable:` characteristics to copy",
        ));
    };
    let src = if c.eat_word("target") {
        if !allow.target {
            return Err(Diagnostic::new(
                c.toks[c.pos - 1].span,
                "`target` is only allowed in a spell's effects: a static ability has no target",
            ));
        }
        match target_ref(c, allow.names)? {
            Some(i) => CopySource::TargetAt(i),
            None => CopySource::Target,
        }
    } else if c.eat_word("top") {
        c.expect_punct("(")?;
        let (z, zs) = c.name("a zone")?;
        let z = rs
            .zone_id(&z)
            .ok_or_else(|| unknown(zs, "zone", &z, rs.zones.iter().map(|z| z.name.as_str())))?;
        c.expect_punct(")")?;
        CopySource::Top(z)
    } else {
        return Err(c.err("`target` or `top(ZONE)`"));
    };
    c.finish()?;
    let change = if is_copy {
        if matches!(src, CopySource::Top(_)) {
            return Err(Diagnostic::new(
                item.head[0].span,
                "a copy takes its values when it is created: write `copy of target` in a spell",
            ));
        }
        Change::CopyOf(src)
    } else {
        Change::TextOf(src)
    };
    Ok(Written {
        target,
        change,
        span: item.head[0].span,
        continuous: false,
    })
}

/// After `replace`: `island with forest in abilities` (layer 3, CR 613.1c: Mind Bend).
fn replace_word(env: &Env, item: &Stmt, c: &mut Cursor) -> Res<Written> {
    let rs = &env.ruleset;
    let from = word_ref(c)?;
    c.expect_word("with")?;
    let to = word_ref(c)?;
    c.expect_word("in")?;
    let (n, nsp) = c.name("a characteristic")?;
    let ch = char_named(env, &n, nsp)?;
    if !matches!(
        char_def(rs, ch).kind,
        CharKind::Abilities | CharKind::Symbols
    ) {
        return Err(Diagnostic::new(
            nsp,
            format!("`{n}` is not abilities or symbols: `replace` changes words in those"),
        ));
    }
    c.finish()?;
    Ok(Written {
        target: SlotTarget::Char(ch),
        change: Change::ReplaceWord(from, to),
        span: item.head[0].span,
        continuous: false,
    })
}

/// After `switch`: two number characteristics whose values are exchanged (CR 613.4d).
fn switch(env: &Env, item: &Stmt, c: &mut Cursor) -> Res<Written> {
    let (a, asp) = c.name("a characteristic")?;
    c.expect_punct(",")?;
    let (b, bsp) = c.name("a characteristic")?;
    c.finish()?;
    let ca = char_named(env, &a, asp)?;
    let cb = char_named(env, &b, bsp)?;
    for (id, n, sp) in [(ca, &a, asp), (cb, &b, bsp)] {
        if char_def(&env.ruleset, id).kind != CharKind::Number {
            return Err(Diagnostic::new(
                sp,
                format!("`{n}` is not a number: `switch` exchanges two numbers"),
            ));
        }
    }
    Ok(Written {
        target: SlotTarget::Char(ca),
        change: Change::SwitchWith(cb),
        span: item.head[0].span,
        continuous: false,
    })
}

/// An operation: a characteristic or player property, `=`, `+=` or `-=`, what it is set to or
/// changed by, and for a spell's number, `continuously`.
fn operation(env: &Env, c: &mut Cursor, kind: EffectKind, allow: Allow) -> Res<Written> {
    let rs = &env.ruleset;
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
    let char_kind = match target {
        SlotTarget::Char(ch) => char_def(rs, ch).kind,
        SlotTarget::Prop(_) => CharKind::Number,
    };
    let change = match (char_kind, target) {
        (CharKind::Number, _) => {
            let n = num(env, c, allow)?;
            match op {
                '=' => Change::SetNumber(n),
                '+' => Change::Modify(n),
                _ => Change::Modify(NumExpr::Neg(Box::new(n))),
            }
        }
        (CharKind::Symbols, SlotTarget::Char(ch)) => symbols_change(env, c, ch, op)?,
        (CharKind::Abilities, _) => abilities_change(env, c, op, allow)?,
        (CharKind::Controller, _) if op == '=' => Change::SetPlayer(new_controller(c, allow)?),
        (CharKind::Text | CharKind::Name, _) if op == '=' => {
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
        if kind == EffectKind::Static {
            return Err(Diagnostic::new(
                c.toks[c.pos].span,
                "`continuously` belongs to a spell's effect: a static ability's numbers are always read continuously",
            ));
        }
        c.bump();
    }
    c.finish()?;
    Ok(Written {
        target,
        change,
        span: nsp,
        continuous,
    })
}

/// After `=`, `+=` or `-=` (`op`) on symbols characteristic `ch`: the symbols set, added or
/// removed.
fn symbols_change(env: &Env, c: &mut Cursor, ch: CharId, op: char) -> Res<Change> {
    let rs = &env.ruleset;
    let set = sym_list_in(env, ch, c)?;
    Ok(match op {
        '=' => {
            // With categories (CR 205.3), only the sets of the new symbols are replaced.
            let sets = rs.categories_of(ch).next().is_some();
            if sets && (set.chosen || !(set.set.is_empty() || set.set == SymbolSet::every())) {
                let replaced = rs.categories_holding(ch, &set.set);
                Change::SetInCategories { set, replaced }
            } else {
                Change::SetSymbols(set)
            }
        }
        '+' => Change::AddSymbols(set),
        _ => Change::RemoveSymbols(set),
    })
}

/// After `=`, `+=` or `-=` (`op`) on abilities: the abilities set, added or removed; or added,
/// one per symbol (`"protection from {}" for each colors among ...`) or those of other objects
/// (`activated abilities of ...`).
fn abilities_change(env: &Env, c: &mut Cursor, op: char, allow: Allow) -> Res<Change> {
    match op {
        '=' => return Ok(Change::SetAbilities(env.symbols.abilities(&abilities(c)?))),
        '-' => {
            return Ok(Change::RemoveAbilities(
                env.symbols.abilities(&abilities(c)?),
            ))
        }
        _ => {}
    }
    let template = matches!(&c.peek().map(|t| &t.tok), Some(Tok::Str(s)) if s.contains("{}"))
        && c.peek_at(1).is_some_and(|t| t.is_word("for"));
    if template {
        // `abilities += "protection from {}" for each colors among permanent you control`
        let (template, _) = c.string("an ability template")?;
        c.expect_word("for")?;
        c.eat_word("each");
        let (n, nsp) = c.name("a symbols characteristic")?;
        let of = char_named(env, &n, nsp)?;
        if char_def(&env.ruleset, of).kind != CharKind::Symbols {
            return Err(Diagnostic::new(
                nsp,
                format!("`{n}` is not a symbols characteristic"),
            ));
        }
        c.expect_word("among")?;
        let among = condition(env, c, allow.inside())?;
        return Ok(Change::AbilitiesPer {
            template: Arc::from(template.as_str()),
            of,
            among,
        });
    }
    let of_others = c
        .peek()
        .and_then(|t| t.word())
        .is_some_and(|w| w == "all" || AbilityKind::named(w).is_some())
        && c.peek_at(1).is_some_and(|t| t.is_word("abilities"))
        && c.peek_at(2).is_some_and(|t| t.is_word("of"));
    if of_others {
        // `abilities += activated abilities of in graveyard and types has creature`
        let kind = c.bump().and_then(|t| t.word()).and_then(AbilityKind::named);
        c.bump();
        c.bump();
        let among = condition(env, c, allow)?;
        return Ok(Change::AbilitiesOf { kind, among });
    }
    Ok(Change::AddAbilities(env.symbols.abilities(&abilities(c)?)))
}

/// After `controller =`: `you`, `owner`, `active [player]` or, in a spell, `target [NAME]`
/// (Donate: "target player gains control of ...").
fn new_controller(c: &mut Cursor, allow: Allow) -> Res<PlayerRef> {
    let (w, sp) = c.name("`you`, `owner`, `active` or `target`")?;
    Ok(match w.as_str() {
        "you" => PlayerRef::You,
        "owner" => PlayerRef::Owner,
        "active" => {
            c.eat_word("player");
            PlayerRef::Active
        }
        "target" if allow.target => PlayerRef::Target(target_ref(c, allow.names)?),
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

/// Whether the operations change players rather than objects: at least one, all of one kind.
fn on_players(s: &Stmt, ops: &[Written]) -> Res<bool> {
    let Some(first) = ops.first() else {
        return Err(Diagnostic::new(
            s.head[0].span,
            "this effect changes nothing: expected at least one operation such as `power += 1`",
        ));
    };
    let on_players = matches!(first.target, SlotTarget::Prop(_));
    if let Some(w) = ops
        .iter()
        .find(|w| matches!(w.target, SlotTarget::Prop(_)) != on_players)
    {
        return Err(Diagnostic::new(
            w.span,
            "one effect changes either objects or players, not both: split it into two",
        ));
    }
    Ok(on_players)
}

/// Whether the operations make an object concerned by intrinsic abilities `i` (`types = land`:
/// `Some(true)`), make it not concerned, or do not say.
fn makes(ops: &[Written], i: &Intrinsic) -> Option<bool> {
    ops.iter().find_map(|w| {
        if w.target != SlotTarget::Char(i.when.0) {
            return None;
        }
        match &w.change {
            Change::SetSymbols(l) | Change::SetInCategories { set: l, .. } => {
                Some(l.set.contains(&i.when.1))
            }
            Change::AddSymbols(l) => l.set.contains(&i.when.1).then_some(true),
            Change::RemoveSymbols(l) => l.set.contains(&i.when.1).then_some(false),
            _ => None,
        }
    })
}

/// Each operation in the first layer of the ruleset that applies it; a change to symbols that give
/// abilities (CR 305.6-305.7) writes those abilities too.
fn place(env: &Env, ops: Vec<Written>, defining: bool) -> Res<Vec<Op>> {
    let rs = &env.ruleset;
    let whens: Vec<Option<bool>> = ops
        .iter()
        .map(|w| match w.target {
            SlotTarget::Char(ch) => rs.intrinsic_of(ch).and_then(|i| makes(&ops, i)),
            SlotTarget::Prop(_) => None,
        })
        .collect();
    let mut lowered = Vec::new();
    for (w, made) in ops.into_iter().zip(whens) {
        let Written {
            target,
            change,
            span,
            continuous,
        } = w;
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
                SlotTarget::Char(c) => char_def(rs, c).name.clone(),
                SlotTarget::Prop(p) => rs.props[p.index()].name.clone(),
            };
            return Err(Diagnostic::new(
                span,
                format!(
                    "no layer of ruleset `{}` applies `{}` to `{n}`",
                    rs.name,
                    change.kind().name()
                ),
            ));
        };
        lowered.push(Op::new(target, change, layer, continuous));
    }
    Ok(lowered)
}

/// What the effect affects: the condition after `affects:`; without one, the source for a static
/// ability and every target for a spell with targets.
fn affected(
    env: &Env,
    s: &Stmt,
    kind: EffectKind,
    allow: Allow,
    affects: Option<Vec<Token>>,
) -> Res<Cond> {
    match affects {
        Some(toks) => {
            let mut c = Cursor::new(&toks);
            let cond = condition(env, &mut c, allow)?;
            c.finish()?;
            Ok(cond)
        }
        None => match kind {
            EffectKind::Static => Ok(Cond::IsSource),
            // Every target (of the kind the effect changes).
            EffectKind::Spell { has_target: true } => Ok(Cond::IsTarget),
            EffectKind::Spell { has_target: false } => Err(Diagnostic::new(
                s.head[0].span,
                "expected `affects:`: a spell with no target must say what its effect affects",
            )),
        },
    }
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

/// After `target` in an effect or one-shot: the name of one of the spell's targets, if one follows
/// (a string, or a word that names one); its index.
pub(crate) fn target_ref(c: &mut Cursor, names: &[String]) -> Res<Option<u8>> {
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
    // "Until the end of the battle", "until the end of the next phase": a period of the
    // ruleset; "next" excludes the one in progress.
    if c.eat_words(&["until", "end", "of"]) || c.eat_words(&["until", "the", "end", "of"]) {
        c.eat_word("the");
        let next = c.eat_word("next");
        let (p, ps) = c.name("a period of the ruleset (`turn`, or an event declared `period`)")?;
        let periods = || {
            env.ruleset
                .events
                .iter()
                .filter(|e| e.period)
                .map(|e| &*e.name)
        };
        let Some(period) = env.ruleset.event_id(&p) else {
            return Err(unknown(ps, "period", &p, periods()));
        };
        if !super::defs::event_def(&env.ruleset, period).period {
            return Err(Diagnostic::new(
                ps,
                format!("`{p}` is not a period: it happens, it does not end; expected one of the ruleset's periods"),
            ));
        }
        return Ok(Some(Duration::UntilEndOf { period, next }));
    }
    // "For as long as you control ...": ends the first time the condition does not hold.
    if c.eat_words(&["for", "as", "long", "as"]) {
        c.expect_punct(":")?;
        let cond = condition(env, c, allow)?;
        return Ok(Some(Duration::ForAsLongAs(Arc::new(cond))));
    }
    Ok(None)
}
