//! Content files (docs/language.md, "Content"): object classes with printed characteristics, static
//! abilities, characteristic-defining abilities and spells.

use super::common::{char_named, term_stmt, zone};
use super::cond::{condition, Allow};
use super::cursor::{unknown, Cursor, Res};
use super::defs::char_def;
use super::effect::{duration, effect, target_ref, EffectKind};
use super::events::class_response;
use super::values::printed_value;
use super::{block, no_block, Env};
use crate::diagnostics::{Diagnostic, Span};
use crate::lexer::Tok;
use crate::syntax::Stmt;
use rulecraft_core::model::condition::{NumExpr, TargetSpec};
use rulecraft_core::model::content::{Content, ObjectClass, OneShot, Spell};
use rulecraft_core::model::effect::Change;
use rulecraft_core::model::response::{ResponseDef, ResponseKind};
use rulecraft_core::model::ruleset::CharKind;
use rulecraft_core::{Ability, AbilityKind, ClassId, Value};
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
        term_stmt(env, s)?;
    }
    Ok(())
}

/// Lowers every class in a content file into `content` (its terms were lowered by `terms`).
/// `library`: the classes the library's earlier files defined, with where; a name defined in two
/// files of one library is an error naming both (storage order must not decide which wins).
pub fn lower(
    env: &Env,
    stmts: &[Stmt],
    content: &mut Content,
    library: &mut HashMap<String, Span>,
) -> Res<()> {
    if let Some(s) = stmts.iter().find(|s| !is_class(s) && !is_term(s)) {
        let c = Cursor::new(&s.head);
        return Err(
            c.err("`card \"Name\" { ... }`, `object \"Name\" { ... }` or `term NAME: CONDITION`")
        );
    }
    let mut file = HashMap::new();
    for s in stmts.iter().filter(|s| !is_term(s)) {
        let name = add_class(env, s, content, &mut file)?;
        if let Some(first) = library.get(&name) {
            return Err(Diagnostic::new(
                s.head[1].span,
                format!("object class `{name}` is defined in two content files: rename one (a scenario's own `object` may replace a library's class)"),
            )
            .with_related(*first, "the first definition"));
        }
    }
    library.extend(file);
    Ok(())
}

/// Lowers class statements into `content`, where each replaces a class of the same name loaded
/// before (a scenario's own classes replace the library's); one file defining a name twice is an
/// error naming both.
pub fn add_classes<'a>(
    env: &Env,
    stmts: impl IntoIterator<Item = &'a Stmt>,
    content: &mut Content,
) -> Res<()> {
    let mut seen: HashMap<String, Span> = HashMap::new();
    for s in stmts {
        add_class(env, s, content, &mut seen)?;
    }
    Ok(())
}

/// Lowers one class statement into `content`, noting where its name was defined in `seen`; a
/// name already in `seen` is an error naming both. Returns the name.
fn add_class(
    env: &Env,
    s: &Stmt,
    content: &mut Content,
    seen: &mut HashMap<String, Span>,
) -> Res<String> {
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
    let name = class.name.clone();
    content.add(class);
    Ok(name)
}

/// One `card "Name" { ... }`.
pub fn class(env: &Env, s: &Stmt, content: &Content) -> Res<ObjectClass> {
    let mut c = Cursor::new(&s.head);
    c.bump();
    let (name, _) = c.name_or_string("the object's name")?;
    c.finish()?;
    let id = content
        .class_id(&name)
        .unwrap_or(ClassId(content.classes.len() as u32));
    let mut class = ObjectClass {
        enters_as_copy: false,
        attaches_to: None,
        responses: Vec::new(),
        name,
        printed: Vec::new(),
        object_type: None,
        statics: Vec::new(),
        spell: None,
    };
    let mut keywords: Vec<Ability> = Vec::new();
    let mut costs: Vec<(rulecraft_core::model::response::Deed, Span)> = Vec::new();
    for item in block(s, "the object's definition")? {
        if item.head[0].is_word("type")
            && !env.ruleset.types.is_empty()
            && env.ruleset.char_id("type").is_none()
        {
            // `type: planet`: the object's type (FreeOrion's game object types).
            no_block(item)?;
            let mut ic = Cursor::new(&item.head);
            ic.bump();
            ic.expect_punct(":")?;
            let (t, ts) = ic.name("an object type")?;
            let Some(id) = env.ruleset.type_id(&t) else {
                let known: Vec<&str> = env.ruleset.types.iter().map(|d| d.name.as_str()).collect();
                return Err(super::cursor::unknown(ts, "object type", &t, known));
            };
            ic.finish()?;
            if class.object_type.replace(id).is_some() {
                return Err(Diagnostic::new(item.head[0].span, "`type:` is given twice"));
            }
            continue;
        }
        if item.head[0].is_word("cost") && env.ruleset.char_id("cost").is_none() {
            // `cost: EVENT(...)`: a permanent's cost, paid as it is cast (its mana cost); it
            // has no spell ability (CR 608.3).
            no_block(item)?;
            let mut ic = Cursor::new(&item.head);
            ic.bump();
            ic.expect_punct(":")?;
            costs.push((
                super::events::cost_deed(env, &mut ic, 0)?,
                item.head[0].span,
            ));
            ic.finish()?;
            continue;
        }
        class_item(env, item, &mut class, &mut keywords)?;
    }
    if let Some((_, at)) = costs.first() {
        if class.spell.is_some() {
            return Err(Diagnostic::new(
                *at,
                "a card with a `spell` writes its costs in the spell: `spell \"...\" { cost: ... }`",
            ));
        }
        class.spell = Some(Spell {
            text: Arc::from(class.name.as_str()),
            targets: Vec::new(),
            effects: Vec::new(),
            one_shots: Vec::new(),
            costs: costs.into_iter().map(|(d, _)| d).collect(),
            choose: None,
        });
    }
    abilities_printed(env, s, id, &mut class, keywords)?;
    Ok(class)
}

/// `group "..." { scope: ...; exclude: ...; activation: ...; METER += N ... }`: an effects group
/// that alters meters (FreeOrion's effects groups). Its scope starts empty; each `scope:`
/// condition adds the objects it holds for, then each `exclude:` condition removes those it
/// holds for; an object that has none of the characteristics a scope condition reads, itself or
/// up its attachments, is out of the scope. Every `activation:` condition must hold, tested on the
/// source. Each effect is a continuous effect of its own on the objects of the scope that have
/// its meter (an effect that cannot fire on an object is skipped for that object only).
fn effects_group(env: &Env, item: &Stmt, text: &str, class: &mut ObjectClass) -> Res<()> {
    use rulecraft_core::model::condition::Cond;
    let allow = Allow::default();
    let mut includes = Vec::new();
    let mut excludes = Vec::new();
    let mut activation = Vec::new();
    let mut effects = Vec::new();
    // 0 unless the group says (`stacking: 0` always fires).
    let mut stacking = 0u32;
    let mut priority = 0i32;
    for line in block(item, "the effects group")? {
        let mut lc = Cursor::new(&line.head);
        let word = line.head[0].word();
        if matches!(word, Some("stacking" | "priority"))
            && line.head.get(1).is_some_and(|t| t.is_punct(":"))
        {
            // `stacking: N` (FreeOrion's effects system, Stacking Number), `priority: N`.
            no_block(line)?;
            lc.bump();
            lc.expect_punct(":")?;
            let neg = lc.eat_punct("-");
            let (n, ns) = lc.number("a number")?;
            lc.finish()?;
            let n = if neg { -n } else { n };
            if word == Some("stacking") {
                let Ok(n) = u32::try_from(n) else {
                    return Err(Diagnostic::new(ns, "a stacking number is 0 or more"));
                };
                stacking = n;
            } else {
                let Ok(n) = i32::try_from(n) else {
                    return Err(Diagnostic::new(
                        ns,
                        "a priority is a number that fits in 32 bits",
                    ));
                };
                priority = n;
            }
            continue;
        }
        let list = match word {
            Some("scope") => &mut includes,
            Some("exclude") => &mut excludes,
            Some("activation") => &mut activation,
            _ => {
                effects.push(line);
                continue;
            }
        };
        no_block(line)?;
        lc.bump();
        lc.expect_punct(":")?;
        list.push(condition(env, &mut lc, allow)?);
        lc.finish()?;
    }
    if includes.is_empty() {
        return Err(Diagnostic::new(
            item.head[0].span,
            "an effects group needs a `scope:` condition (its scope starts empty)",
        ));
    }
    if effects.is_empty() {
        return Err(Diagnostic::new(
            item.head[0].span,
            "an effects group needs at least one effect (`farming += 3`)",
        ));
    }
    let scope_reads = includes
        .iter()
        .chain(&excludes)
        .chain(&activation)
        .any(|c| cond_reads_meter(&env.ruleset, c));
    // Absent everywhere up the hierarchy: excluded, whether the condition adds or removes.
    let with_presence = |c: Cond| {
        let mut chars = Vec::new();
        held_chars(&c, &mut chars);
        let all: Vec<Cond> = chars
            .into_iter()
            .map(|ch| Cond::Holder(ch, Box::new(Cond::True)))
            .collect();
        (all, c)
    };
    let mut scope_parts = Vec::new();
    let mut inc = Vec::new();
    for c in includes {
        let (mut all, c) = with_presence(c);
        all.push(c);
        inc.push(and_of(all));
    }
    scope_parts.push(if inc.len() == 1 {
        inc.pop().unwrap_or(Cond::True)
    } else {
        Cond::Or(inc)
    });
    for c in excludes {
        let (mut all, c) = with_presence(c);
        all.push(Cond::Not(Box::new(c)));
        scope_parts.push(and_of(all));
    }
    // FreeOrion's effects system, Effects Groups: a group alters meters or does not, never
    // both. A line that names a characteristic alters a meter; any other fires an occurrence.
    let alters = |l: &Stmt| {
        l.head[0]
            .word()
            .is_some_and(|w| env.ruleset.char_id(w).is_some())
    };
    let meters = alters(effects[0]);
    if let Some(l) = effects.iter().find(|l| alters(l) != meters) {
        return Err(Diagnostic::new(
            l.head[0].span,
            "an effects group holds effects that alter meters or effects that do not, never both: put this effect in a group of its own",
        ));
    }
    if !meters {
        let scope = and_of(scope_parts);
        return non_meter_group(
            env,
            item,
            text,
            class,
            NonMeter {
                scope,
                activation,
                effects,
                stacking,
                priority,
                scope_reads,
            },
        );
    }
    // FreeOrion's effects system, When can Meter Values be Used as Parameters: not in a group
    // whose effects alter meters.
    if scope_reads {
        return Err(Diagnostic::new(
            item.head[0].span,
            "this group's effects alter meters: its scope and activation conditions cannot read meter values",
        ));
    }
    let while_cond = (!activation.is_empty()).then(|| and_of(activation));
    for line in effects {
        let one = Stmt {
            head: item.head.clone(),
            block: Some(crate::syntax::Block {
                stmts: vec![line.clone()],
                open: line.head[0].span,
                close: line.head[0].span,
            }),
        };
        let mut def = effect(env, &one, text, false, EffectKind::Static, &[], &[])?;
        let chars: Vec<_> = def
            .ops
            .iter()
            .filter_map(|op| match op.target {
                rulecraft_core::model::ids::SlotTarget::Char(c) => Some(c),
                _ => None,
            })
            .collect();
        if chars.len() != def.ops.len() || chars.iter().any(|c| !char_def(&env.ruleset, *c).meter) {
            return Err(Diagnostic::new(
                line.head[0].span,
                "an effects group here alters meters: expected `METER += AMOUNT`, `-=` or `=` on a meter the ruleset declares (`meter NAME`)",
            ));
        }
        let reads_meter = def.ops.iter().any(|op| match &op.change {
            rulecraft_core::model::effect::Change::SetNumber(e)
            | rulecraft_core::model::effect::Change::Modify(e) => num_reads_meter(&env.ruleset, e),
            _ => false,
        });
        if reads_meter {
            return Err(Diagnostic::new(
                line.head[0].span,
                "an effect that alters a meter cannot take a meter value as its amount",
            ));
        }
        let mut parts = scope_parts.clone();
        parts.extend(chars.into_iter().map(Cond::Typed));
        def.affects = rulecraft_core::model::effect::Affects::Objects(and_of(parts));
        def.while_cond = while_cond.clone();
        def.stacking = stacking;
        def.priority = priority;
        class.statics.push(Arc::new(def));
    }
    Ok(())
}

/// A non-meter effects group's parts, lowered by [`non_meter_group`].
struct NonMeter<'a> {
    scope: rulecraft_core::model::condition::Cond,
    activation: Vec<rulecraft_core::model::condition::Cond>,
    effects: Vec<&'a Stmt>,
    stacking: u32,
    priority: i32,
    scope_reads: bool,
}

/// A group whose effects do not alter meters: a triggered trait of its class answering the
/// ruleset's point for them (`effects groups fire ...`), its activation the trait's condition on
/// the source, its one deed the group (FreeOrion's effects system, Effect Processing).
fn non_meter_group(
    env: &Env,
    item: &Stmt,
    text: &str,
    class: &mut ObjectClass,
    g: NonMeter,
) -> Res<()> {
    use rulecraft_core::model::response::{ArgExpr, Deed, GroupDef};
    let Some(trigger) = env.ruleset.effects_groups.clone() else {
        return Err(Diagnostic::new(
            item.head[0].span,
            "this effects group's effects do not alter meters: the ruleset must say where they fire (`effects groups fire after EVENT(...) begins`)",
        ));
    };
    let mut effects = Vec::new();
    let mut needs = Vec::new();
    for line in &g.effects {
        no_block(line)?;
        let mut lc = Cursor::new(&line.head);
        let d = super::events::group_effect(env, &mut lc)?;
        lc.finish()?;
        let mut reads = false;
        let mut need = Vec::new();
        if let Deed::Occur { event, args, .. } = &d {
            for a in args {
                if let ArgExpr::Number(e) = a {
                    reads |= num_reads_meter(&env.ruleset, e);
                }
            }
            need = changed_chars(&env.ruleset, *event, args);
        }
        // FreeOrion's effects system, When can Meter Values be Used as Parameters: an effect
        // may read meters only where its group's conditions do not.
        if reads && g.scope_reads {
            return Err(Diagnostic::new(
                line.head[0].span,
                "this effect reads a meter value, and so do its group's scope or activation conditions: only one of them may",
            ));
        }
        effects.push(d);
        needs.push(need);
    }
    let group = GroupDef {
        scope: g.scope,
        stacking: g.stacking,
        effects,
        needs,
    };
    let mut def = ResponseDef::of_deeds(
        ResponseKind::Trait,
        Arc::from(text),
        trigger,
        vec![Deed::Group(Arc::new(group))],
    );
    def.condition = (!g.activation.is_empty()).then(|| and_of(g.activation));
    def.priority = g.priority;
    class.responses.push(Arc::new(def));
    Ok(())
}

/// The characteristics an occurrence changes on the object fired on (`target`): the meters
/// whose current values (counters of their names) it changes, the characteristics it sets. The object must have them for
/// the effect to fire on it.
fn changed_chars(
    rs: &rulecraft_core::Ruleset,
    event: rulecraft_core::EventId,
    args: &[rulecraft_core::model::response::ArgExpr],
) -> Vec<rulecraft_core::CharId> {
    use rulecraft_core::model::event::{ParamOr, Primitive};
    use rulecraft_core::model::response::ArgExpr;
    let is_target = |i: u8| matches!(args.get(i as usize), Some(ArgExpr::Target(0)));
    let mut out = Vec::new();
    for p in &rs.events[event.index()].changes {
        if let Primitive::SetScaled { object, char, .. }
        | Primitive::Resize {
            object, size: char, ..
        } = p
        {
            if is_target(*object) {
                out.push(*char);
            }
        }
        if let Primitive::Counters {
            object, counter, ..
        } = p
        {
            let k = match counter {
                ParamOr::Const(k) => Some(*k),
                ParamOr::Param(i) => match args.get(*i as usize) {
                    Some(ArgExpr::Counter(k)) => Some(*k),
                    _ => None,
                },
            };
            let meter = k.and_then(|k| {
                let name = &rs.counters[k.index()].name;
                rs.char_id(name)
                    .filter(|ch| rs.meter_counter(*ch) == Some(k))
            });
            if let (true, Some(ch)) = (is_target(*object), meter) {
                out.push(ch);
            }
        }
    }
    out
}

/// Whether a condition reads a meter: a max value (the meter's characteristic) or a current
/// value (the counters of its name).
fn cond_reads_meter(
    rs: &rulecraft_core::Ruleset,
    c: &rulecraft_core::model::condition::Cond,
) -> bool {
    c.any_node(|n, _| node_reads_meter(rs, n))
}

fn num_reads_meter(
    rs: &rulecraft_core::Ruleset,
    e: &rulecraft_core::model::condition::NumExpr,
) -> bool {
    e.any_node(|n, _| node_reads_meter(rs, n))
}

fn node_reads_meter(
    rs: &rulecraft_core::Ruleset,
    n: rulecraft_core::model::condition::Node<'_>,
) -> bool {
    use rulecraft_core::model::condition::Node;
    if let Node::Num(NumExpr::Counters(_, k)) = n {
        let name = &rs.counters[k.index()].name;
        return rs
            .char_id(name)
            .is_some_and(|ch| rs.meter_counter(ch) == Some(*k));
    }
    match n {
        Node::Num(NumExpr::Char(_, ch))
        | Node::Cond(rulecraft_core::model::condition::Cond::Holder(ch, _)) => {
            char_def(rs, *ch).meter
        }
        _ => false,
    }
}

/// The characteristics a condition reads through the attachment hierarchy, outside aggregates.
fn held_chars(c: &rulecraft_core::model::condition::Cond, out: &mut Vec<rulecraft_core::CharId>) {
    use rulecraft_core::model::condition::Cond;
    match c {
        Cond::Holder(ch, inner) => {
            if !out.contains(ch) {
                out.push(*ch);
            }
            held_chars(inner, out);
        }
        Cond::And(cs) | Cond::Or(cs) => cs.iter().for_each(|c| held_chars(c, out)),
        Cond::Not(c) => held_chars(c, out),
        _ => {}
    }
}

fn and_of(
    mut parts: Vec<rulecraft_core::model::condition::Cond>,
) -> rulecraft_core::model::condition::Cond {
    if parts.len() == 1 {
        parts
            .pop()
            .unwrap_or(rulecraft_core::model::condition::Cond::True)
    } else {
        rulecraft_core::model::condition::Cond::And(parts)
    }
}

/// One item of a class: a printed characteristic, a static or characteristic-defining ability, a
/// trait, Reaction or replacement, `attaches to:`, `enters as a copy` or a `spell`.
fn class_item(
    env: &Env,
    item: &Stmt,
    class: &mut ObjectClass,
    keywords: &mut Vec<Ability>,
) -> Res<()> {
    let rs = &env.ruleset;
    let mut ic = Cursor::new(&item.head);
    let first = &item.head[0];
    let string_next = ic.peek_at(1).is_some_and(|t| matches!(t.tok, Tok::Str(_)));
    match first.word() {
        Some(kw @ ("static" | "defining")) if string_next => {
            ic.bump();
            let (text, _) = ic.string("the ability's rules text")?;
            ic.finish()?;
            let defining = kw == "defining";
            let def = effect(env, item, &text, defining, EffectKind::Static, &[], &[])?;
            class.statics.push(Arc::new(def));
        }
        Some("group") if string_next => {
            ic.bump();
            let (text, _) = ic.string("the effects group's description")?;
            ic.finish()?;
            effects_group(env, item, &text, class)?;
        }
        Some("trait" | "reaction" | "replacement" | "prohibition" | "ability") if string_next => {
            class.responses.push(Arc::new(class_response(env, item)?));
        }
        Some("phase") if ic.peek_at(1).is_some_and(|t| t.is_word("cost")) => {
            class.responses.push(Arc::new(class_response(env, item)?));
        }
        Some("mana") if ic.peek_at(1).is_some_and(|t| t.is_word("ability")) => {
            class.responses.push(Arc::new(class_response(env, item)?));
        }
        Some("attaches") => {
            // `attaches to: creature`: what it can be attached to (CR 303.4a "Enchant",
            // 301.5: an Equipment equips a creature).
            no_block(item)?;
            ic.bump();
            ic.expect_word("to")?;
            ic.expect_punct(":")?;
            class.attaches_to = Some(condition(env, &mut ic, Allow::default())?);
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
            class.enters_as_copy = true;
        }
        Some("spell") => {
            ic.bump();
            let (text, _) = ic.string("the spell's rules text")?;
            ic.finish()?;
            if class.spell.is_some() {
                return Err(Diagnostic::new(
                    first.span,
                    "an object has at most one `spell`",
                ));
            }
            class.spell = Some(spell_def(env, item, text)?);
        }
        Some(kw @ ("static" | "defining")) if rs.char_id(kw).is_none() => {
            ic.bump();
            return Err(ic.err(&format!(
                "the {kw} ability's rules text as a string after `{kw}`"
            )));
        }
        Some(w) if rs.char_id(w).is_some() => printed(env, item, &mut ic, class, keywords)?,
        _ => {
            let (w, sp) = ic.name_or_string("a characteristic, `static`, `defining` or `spell`")?;
            let known = rs.characteristics.iter().map(|c| c.name.as_str()).chain([
                "static",
                "defining",
                "spell",
                "trait",
                "reaction",
                "replacement",
                "prohibition",
                "ability",
            ]);
            return Err(unknown(sp, "characteristic or ability", &w, known));
        }
    }
    Ok(())
}

/// `CHAR: VALUE`, a printed characteristic; printed abilities are the class's keywords.
fn printed(
    env: &Env,
    item: &Stmt,
    ic: &mut Cursor,
    class: &mut ObjectClass,
    keywords: &mut Vec<Ability>,
) -> Res<()> {
    let rs = &env.ruleset;
    no_block(item)?;
    let (w, at) = ic.name("a characteristic")?;
    let ch = char_named(env, &w, at)?;
    ic.expect_punct(":")?;
    if class.printed.iter().any(|(c, _)| *c == ch)
        || (char_def(rs, ch).kind == CharKind::Abilities && !keywords.is_empty())
    {
        return Err(Diagnostic::new(at, format!("`{w}` is printed twice")));
    }
    let v = env
        .symbols
        .value(printed_value(char_def(rs, ch).kind, ic, at)?);
    ic.finish()?;
    match v {
        Value::Abilities(list) => *keywords = list.to_vec(),
        v => class.printed.push((ch, v)),
    }
    Ok(())
}

/// The abilities characteristic: printed keywords, the abilities its printed symbols give
/// (CR 305.6: a Forest's mana ability), then static abilities in order.
fn abilities_printed(
    env: &Env,
    s: &Stmt,
    id: ClassId,
    class: &mut ObjectClass,
    keywords: Vec<Ability>,
) -> Res<()> {
    let rs = &env.ruleset;
    let Some(ac) = rs.char_of_kind(CharKind::Abilities) else {
        if class.statics.is_empty() {
            return Ok(());
        }
        return Err(Diagnostic::new(
            s.head[0].span,
            "this ruleset declares no `abilities` characteristic, so objects cannot have static abilities",
        ));
    };
    let mut list = keywords;
    name_responses(&mut list, id, &class.responses);
    let printed_set = |c: rulecraft_core::CharId| {
        class.printed.iter().find_map(|(x, v)| match v {
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
    for (i, d) in class.statics.iter().enumerate() {
        list.push(Ability::Static {
            class: id,
            index: i as u16,
            text: d.text.clone(),
        });
    }
    // Its traits, Reactions and replacements are abilities too (CR 113.2c): an effect that
    // removes them silences them. One the list already names (`triggered "TEXT"`) is that one.
    for (i, r) in class.responses.iter().enumerate() {
        let a = response_ability(id, i, r);
        if !r.granted && !list.contains(&a) {
            list.push(a);
        }
    }
    // Effects of the class that give, remove or set an ability named as one of its responses
    // give, remove or set that response (`abilities += triggered "TEXT"` with a `granted`
    // response "TEXT": "creatures you control have ...").
    let responses = class.responses.clone();
    let effects = class.statics.iter_mut().chain(
        class
            .spell
            .iter_mut()
            .flat_map(|sp| sp.effects.iter_mut().map(|(_, d)| d)),
    );
    for d in effects {
        let d = Arc::make_mut(d);
        for op in &mut d.ops {
            if let Change::SetAbilities(l)
            | Change::AddAbilities(l)
            | Change::RemoveAbilities(l)
            | Change::MergeAbilities(l) = &mut op.change
            {
                name_responses(l, id, &responses);
            }
        }
    }
    class.printed.retain(|(c, _)| *c != ac);
    class.printed.push((ac, Value::Abilities(list.into())));
    Ok(())
}

/// A class's response as an ability: a trait is a triggered ability, a Reaction (an action a
/// player chooses to take when it is allowed) an activated one, a replacement a static one
/// (CR 614.1: replacement effects come from static abilities).
fn response_ability(class: ClassId, index: usize, r: &ResponseDef) -> Ability {
    Ability::Response {
        class,
        index: index as u16,
        kind: match r.kind {
            // A phase cost another permanent bears: the source's static ability ("all
            // artifacts have ...").
            ResponseKind::Ability if r.phase.as_ref().is_some_and(|p| p.cost.is_some()) => {
                AbilityKind::Static
            }
            ResponseKind::Reaction | ResponseKind::Ability => AbilityKind::Activated,
            ResponseKind::ManaAbility => AbilityKind::Mana,
            ResponseKind::Replacement | ResponseKind::Prohibition => AbilityKind::Static,
            _ => AbilityKind::Triggered,
        },
        text: r.text.clone(),
    }
}

/// Abilities in `list` named by the rules text of one of the class's responses become that
/// response.
fn name_responses(list: &mut [Ability], class: ClassId, responses: &[Arc<ResponseDef>]) {
    for a in list.iter_mut() {
        let named = match a {
            Ability::Keyword(n) | Ability::Kinded { name: n, .. } => n.as_str(),
            _ => continue,
        };
        if let Some(i) = responses.iter().position(|r| *r.text == *named) {
            *a = response_ability(class, i, &responses[i]);
        }
    }
}

/// `spell "text" { ... }`: its targets, then its effects (each after its duration) and one-shot
/// changes, in order.
fn spell_def(env: &Env, s: &Stmt, text: String) -> Res<Spell> {
    let items = block(s, "the spell")?;
    let choose = choose_x(env, items)?;
    // `X` names the number announced only where the spell declares it.
    env.chosen.set(choose.is_some());
    let spell = spell_parts(env, items, text, choose);
    env.chosen.set(false);
    spell
}

/// `choose X: MIN..MAX` (CR 601.2b: the caster announces X as the spell is cast), at most once
/// in a spell; MIN and MAX are read with the spell as the source and its caster as `you`.
fn choose_x(env: &Env, items: &[Stmt]) -> Res<Option<(NumExpr, NumExpr)>> {
    let mut found: Option<(NumExpr, NumExpr)> = None;
    for item in items {
        let mut c = Cursor::new(&item.head);
        let Some(first) = c.peek().filter(|t| t.is_word("choose")) else {
            continue;
        };
        let span = first.span;
        c.bump();
        no_block(item)?;
        if found.is_some() {
            return Err(Diagnostic::new(
                span,
                "a spell says `choose X` at most once",
            ));
        }
        let (w, ws) = c.name("`X`")?;
        if w != "X" {
            return Err(Diagnostic::new(
                ws,
                format!("only `X` is chosen as a spell is cast, not `{w}`"),
            ));
        }
        c.expect_punct(":")?;
        let min = super::cond::num(env, &mut c, Allow::default())?;
        c.expect_punct(".")?;
        c.expect_punct(".")?;
        let max = super::cond::num(env, &mut c, Allow::default())?;
        c.finish()?;
        let at = |e: &NumExpr| match e {
            NumExpr::Const(n) => Some(*n),
            _ => None,
        };
        if at(&min).is_some_and(|n| n < 0) {
            return Err(Diagnostic::new(span, "X is never less than 0 (CR 107.1b)"));
        }
        if let (Some(a), Some(b)) = (at(&min), at(&max)) {
            if a > b {
                return Err(Diagnostic::new(
                    span,
                    format!("the range of X is empty: {a} is more than {b}"),
                ));
            }
        }
        found = Some((min, max));
    }
    Ok(found)
}

/// A spell's items other than `choose X`.
fn spell_parts(
    env: &Env,
    items: &[Stmt],
    text: String,
    choose: Option<(NumExpr, NumExpr)>,
) -> Res<Spell> {
    // The targets come first so that effects know which they may name.
    let (targets, names) = spell_targets(env, items)?;
    let mut effects = Vec::new();
    let mut one_shots = Vec::new();
    let has_target = !targets.is_empty();
    let kind = EffectKind::Spell { has_target };
    let allow = Allow {
        target: true,
        names: &names,
        outer: false,
        params: &[],
    };
    let mut costs = Vec::new();
    for item in items {
        let mut c = Cursor::new(&item.head);
        if c.peek()
            .is_some_and(|t| t.is_word("target") || t.is_word("choose"))
        {
            continue;
        }
        if c.peek().is_some_and(|t| t.is_word("cost")) {
            // `cost: EVENT(...)`: paid as it is cast, in order.
            no_block(item)?;
            c.bump();
            c.expect_punct(":")?;
            costs.push(super::events::cost_deed(env, &mut c, targets.len())?);
            c.finish()?;
            continue;
        }
        if let Some(d) = duration(env, &mut c, allow, has_target)? {
            c.finish()?;
            let def = effect(env, item, &text, false, kind, &names, &[])?;
            effects.push((d, Arc::new(def)));
            continue;
        }
        one_shots.push(one_shot(env, item, &mut c, targets.len(), &names)?);
    }
    Ok(Spell {
        text: Arc::from(text.as_str()),
        targets,
        effects,
        one_shots,
        costs,
        choose,
    })
}

/// A spell's `target [NAME]: COND` lines: one unnamed target, or every target named (each is an
/// instance of "target", CR 115.1); the targets and their names.
fn spell_targets(env: &Env, items: &[Stmt]) -> Res<(Vec<TargetSpec>, Vec<String>)> {
    let mut targets: Vec<TargetSpec> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut unnamed: Option<Span> = None;
    for item in items {
        let mut c = Cursor::new(&item.head);
        if !c.eat_word("target") {
            continue;
        }
        no_block(item)?;
        let name = if c.peek().is_some_and(|t| t.is_punct(":")) {
            None
        } else {
            Some(c.name_or_string("`:` or the target's name")?)
        };
        c.expect_punct(":")?;
        let cond = condition(env, &mut c, Allow::default())?;
        c.finish()?;
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
    Ok((targets, names))
}

/// A spell's one-shot change: `turn target face up|down`, `put N COUNTER on target` or
/// `move target to: ZONE`.
fn one_shot(
    env: &Env,
    item: &Stmt,
    c: &mut Cursor,
    ntargets: usize,
    names: &[String],
) -> Res<OneShot> {
    let has_target = ntargets > 0;
    let needs_target = |what: &str| {
        Diagnostic::new(
            item.head[0].span,
            format!("`{what}` needs the spell to have a `target:`"),
        )
    };
    if c.eat_words(&["turn", "target"]) {
        no_block(item)?;
        if !has_target {
            return Err(needs_target("turn target"));
        }
        let at = target_ref(c, names)?;
        c.expect_word("face")?;
        let face_down = if c.eat_word("down") {
            true
        } else if c.eat_word("up") {
            false
        } else {
            return Err(c.err("`up` or `down`"));
        };
        c.finish()?;
        return Ok(match at {
            Some(index) => OneShot::TurnTargetAt { index, face_down },
            None => OneShot::TurnTargets { face_down },
        });
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
            return Err(needs_target("put ... on target"));
        }
        c.finish()?;
        return Ok(OneShot::PutCounters { counter, count });
    }
    if c.eat_words(&["move", "target"]) {
        no_block(item)?;
        let at = target_ref(c, names)?;
        c.expect_word("to")?;
        c.expect_punct(":")?;
        if !has_target {
            return Err(needs_target("move target"));
        }
        let (z, zs) = c.name("a zone")?;
        let zone = zone(env, &z, zs)?;
        c.finish()?;
        return Ok(match at {
            Some(i) => OneShot::MoveTargetAt(i, zone),
            None => OneShot::MoveTargets(zone),
        });
    }
    // Any other deed: an event of the ruleset or a built-in one, created objects, a period.
    let is_deed = c.peek().and_then(|t| t.word()).is_some_and(|w| {
        matches!(w, "create" | "begin" | "end") || env.ruleset.event_id(w).is_some()
    });
    if !is_deed {
        return Err(c.err("`target:`, `until end of turn {`, `until end of [next] PERIOD {`, `while source in play {`, `effect {`, `until your next turn {`, `for as long as: ... {`, `move target to:`, `turn target`, `put N COUNTER on target`, `create \"CLASS\"`, `begin PERIOD(...)`, `end PERIOD` or an event `EVENT(...)`"));
    }
    no_block(item)?;
    let deed = super::events::spell_deed(env, c, ntargets)?;
    c.finish()?;
    Ok(OneShot::Deed(deed))
}
