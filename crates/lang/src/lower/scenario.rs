//! Scenario files (docs/language.md, "Scenarios"): set-up, steps and expectations, lowered against
//! the scenario's ruleset and content.

use super::common::term_stmt;
use super::cond::counter_kind;
use super::content::{add_classes, is_class, is_term};
use super::cursor::{unknown, Cursor, Res};
use super::defs::{char_def, event_def};
use super::{block, no_block, Env};
use crate::diagnostics::{Diagnostic, Span};
use crate::lexer::Tok;
use crate::syntax::Stmt;
use rulecraft_core::model::content::Content;
use rulecraft_core::model::ids::CounterId;
use rulecraft_core::model::ruleset::CharKind;
use rulecraft_core::{CharId, ClassId, PropId, Symbol, Value, ZoneId};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

/// An object named in a scenario: by alias or name.
#[derive(Clone, Debug)]
pub struct Ref {
    /// The alias or object name as written (a player's name where a step accepts a player).
    pub name: String,
    /// Where it is written.
    pub span: Span,
}

/// A response a step names: by its source (or a rule by its text), and where one source offers
/// it for several occurrences, by the occurrence it answers (`"Armorsmith" for leaves_play(a)`).
#[derive(Clone, Debug)]
pub struct Named {
    /// The source's alias or name, or a rule's text (a player's name for who chooses next).
    pub source: Ref,
    /// The occurrence answered, after `for`; trailing arguments left out match any.
    pub answering: Option<SOcc>,
}

/// The option a `choose` step takes.
#[derive(Clone, Debug)]
pub enum Pick {
    /// `choose REF [for OCCURRENCE]`.
    Named(Named),
    /// `choose option N`: the Nth of the pending decision's options as
    /// `DecisionRequest::choices` lists them, counted from 1.
    Index {
        /// N, counted from 1.
        n: i64,
        /// Where N is written.
        span: Span,
    },
}

/// What the scenario's header names, read before the ruleset is loaded.
#[derive(Clone, Debug)]
pub struct Header {
    /// The name after `scenario`.
    pub name: String,
    /// Where the name is written.
    pub span: Span,
    /// The `ruleset:` name or path and where it is written; [`header`] refuses a scenario without
    /// one.
    pub ruleset: Option<(String, Span)>,
    /// Each `content:` name or path and where it is written.
    pub content: Vec<(String, Span)>,
}

/// An object a set-up item, an `enter` line or a line of `together { }` creates.
#[derive(Clone, Debug)]
pub struct Enter {
    /// Its object class.
    pub class: ClassId,
    /// `as ALIAS`: the name later steps call it by.
    pub alias: Option<String>,
    /// `for PLAYER`: its owner, an index into [`Scenario::players`] (the first player if not
    /// written).
    pub owner: usize,
    /// `controlled by PLAYER`: its controller, an index into [`Scenario::players`]; its owner if
    /// not written.
    pub controller: Option<usize>,
    /// `in ZONE`: where it enters (the first zone declared `in play` if not written, else the
    /// first zone).
    pub zone: ZoneId,
    /// `attached to REF`: what it enters attached to.
    pub attached_to: Option<Ref>,
    /// `with N "counter" and ...`: counter kinds and how many, placed after it enters, one
    /// placement each in the order written.
    pub counters: Vec<(CounterId, i64)>,
    /// `choosing goblin`: choices made as it enters.
    pub choices: Vec<Symbol>,
    /// `copying REF`: it enters as a copy of that object.
    pub copying: Option<Ref>,
    /// `face down`: it enters face down.
    pub face_down: bool,
}

/// What a characteristic check expects of the derived value.
#[derive(Clone, Debug)]
pub enum Want {
    /// `CHAR = ...`: the value is equal (a symbol set in any order).
    Equals(Value),
    /// Abilities compared by name, order aside.
    Abilities(Vec<String>),
    /// `CHAR has X`: the symbol set holds `X`; for abilities, a keyword named `X` or an ability
    /// whose text is `X`.
    Has(Symbol),
    /// `CHAR lacks X`: the value does not hold `X`, in the sense of [`Want::Has`].
    Lacks(Symbol),
    /// The sources of the effects that changed the value, in the order applied.
    Order(Vec<String>),
}

/// One check of an `expect` step, compared with the game's derived values or its log.
#[derive(Clone, Debug)]
pub enum Expect {
    /// `expect REF CHAR ...`: an object's derived characteristic.
    Char {
        /// The object.
        obj: Ref,
        /// The characteristic.
        ch: CharId,
        /// What its value must be.
        want: Want,
        /// `activated abilities = ...`: only the abilities of this kind are compared.
        of_kind: Option<rulecraft_core::AbilityKind>,
    },
    /// `expect PLAYER PROP = N`: a player's derived property; for a property that holds
    /// symbols, `= S, S, ...`, `has S` or `lacks S`.
    Prop {
        /// The player, an index into [`Scenario::players`].
        player: usize,
        /// The property.
        prop: PropId,
        /// What its value must be (`= none`: no number; for symbols, the empty set).
        want: Want,
    },
    /// `expect REF counters(KIND) = N`: how many counters of that kind (`any`: of every kind) are
    /// on the object, as the expression `counters(KIND)` counts them.
    Counters {
        /// The object.
        obj: Ref,
        /// The counter kind; `None` for `any`.
        kind: Option<CounterId>,
        /// How many.
        want: i64,
    },
    /// `expect REF in ZONE`: the object is in that zone.
    Zone {
        /// The object.
        obj: Ref,
        /// The zone.
        zone: ZoneId,
    },
    /// `attached to REF` / `attached to nothing`: what the object is attached to.
    Attached {
        /// The object.
        obj: Ref,
        /// What it must be attached to; `None` for `nothing`.
        to: Option<Ref>,
    },
    /// An occurrence happened (or did not), per the log.
    Happened {
        /// The occurrence; arguments left off at the end match any.
        occ: SOcc,
        /// `happened` (true) or `did not happen` (false).
        yes: bool,
    },
    /// These occurrences happened in this order (others may come between).
    InOrder(Vec<SOcc>),
    /// The pending decision is this player's, offering responses from exactly these sources.
    Options {
        /// The player who must answer, an index into [`Scenario::players`].
        player: usize,
        /// The options, all of them: responses by their source (a rule by its text), players by
        /// name, targets by alias or name.
        sources: Vec<Ref>,
    },
    /// `expect PLAYER may play: "LABEL", ...` (or `nothing`): the game asks this player what
    /// to play, offering exactly these plays, in this order.
    Plays {
        /// The player asked, an index into [`Scenario::players`].
        player: usize,
        /// The plays' labels.
        labels: Vec<String>,
    },
    /// No decision is pending.
    NoDecision,
    /// `expect winner: PLAYER` (or `none`, a draw): the game is over with that result;
    /// `expect game goes on`: it is not over (`None`).
    Winner(Option<Option<usize>>),
    /// `expect PLAYER lost` / `not lost`: the player has (not) lost the game.
    Lost {
        /// The player, by index.
        player: usize,
        /// Lost (`true`) or still in the game.
        yes: bool,
    },
    /// A line of the log contains this text.
    LogHas(String),
}

/// An argument of an occurrence a scenario makes.
#[derive(Clone, Debug)]
pub enum SArg {
    /// An object, by alias or name.
    Object(Ref),
    /// A player, an index into [`Scenario::players`].
    Player(usize),
    /// A number.
    Number(i64),
    /// A zone.
    Zone(ZoneId),
    /// A counter kind.
    Counter(CounterId),
    /// A player property.
    Property(PropId),
    /// An object class.
    Class(rulecraft_core::ClassId),
}

/// An occurrence a scenario makes or expects: an event and its arguments.
#[derive(Clone, Debug)]
pub struct SOcc {
    /// The event.
    pub event: rulecraft_core::EventId,
    /// Its arguments in the order of the event's parameters; an expectation may leave off
    /// trailing ones.
    pub args: Vec<SArg>,
}

/// What a scenario step does: an action of the engine, an occurrence, an answer to the pending
/// decision, or checks.
#[derive(Clone, Debug)]
pub enum StepKind {
    /// `enter ITEM`, or one line of `setup { }`: creates one object with its own timestamp, then
    /// places its counters.
    Enter(Enter),
    /// `together { }`: creates the objects at once (CR 613.7); when more than one enters a zone in
    /// play, the active player must then order their timestamps ([`StepKind::Order`]).
    EnterTogether(Vec<Enter>),
    /// `move REF to ZONE`: moves the object.
    Move {
        /// The object.
        obj: Ref,
        /// Where it goes.
        zone: ZoneId,
    },
    /// `attach REF to REF`.
    Attach {
        /// The object attached.
        obj: Ref,
        /// What it is attached to.
        to: Ref,
    },
    /// `put N COUNTER on REF` or `remove N COUNTER from REF`.
    Counters {
        /// The object.
        obj: Ref,
        /// The counter kind.
        counter: CounterId,
        /// How many: positive to put (one placement), negative to remove (up to that many, latest
        /// placements first).
        count: i64,
    },
    /// `cast REF by PLAYER [targeting REF, ...] [choosing A, B]`: resolves a spell.
    Cast {
        /// The spell: the object with this alias, else the one object of this name not yet
        /// resolved, else a new object of the class [`class`](StepKind::Cast::class).
        card: Ref,
        /// The object class named like `card`, if one is.
        class: Option<ClassId>,
        /// The caster, an index into [`Scenario::players`].
        by: usize,
        /// Its targets in order: a player's name names the player, anything else an object.
        targets: Vec<Ref>,
        /// The spell object's choices, replacing any it had.
        choices: Vec<Symbol>,
    },
    /// `turn REF face down` or `face up`.
    TurnFace {
        /// The object.
        obj: Ref,
        /// Face down (true) or face up (false).
        down: bool,
    },
    /// `mutate REF under REF` or `over REF`: merges the first object with the second, a permanent.
    Merge {
        /// The object merged; it is attached to `into` and stays in its zone.
        obj: Ref,
        /// The permanent it merges with.
        into: Ref,
        /// Under (true) or over (false) it.
        under: bool,
    },
    /// `end turn`: `until end of turn` effects end and the next player in `players:` order becomes
    /// active.
    EndTurn,
    /// `shuffle PLAYER ZONE`: the player's cards in the zone are put in a random order, drawn
    /// from the game's seeded random source.
    Shuffle {
        /// The player, by index.
        player: usize,
        /// The zone.
        zone: ZoneId,
    },
    /// `end effects of REF`: ends every effect that object's spell created.
    EndEffects {
        /// The spell's object.
        obj: Ref,
    },
    /// `set PLAYER PROP = N`: sets a player's base property value.
    SetProp {
        /// The player, an index into [`Scenario::players`].
        player: usize,
        /// The property.
        prop: PropId,
        /// The value; `None` for `none`.
        value: Option<i64>,
    },
    /// `order timestamps: REF, ...`: answers the timestamp order a `together` step left pending,
    /// earliest first.
    Order(Vec<Ref>),
    /// Occurrences that happen at once.
    Occur(Vec<SOcc>),
    /// `begin EVENT(ARGS)`: a period or turn begins.
    Begin(SOcc),
    /// `end EVENT`: the period or turn ends.
    EndPeriod(rulecraft_core::EventId),
    /// `choose REF [for OCCURRENCE]`: answers which response comes next (the one from this
    /// source, or a rule by its text), or which player chooses next (a player's name); `choose
    /// option N`: the pending decision's Nth option.
    Choose(Pick),
    /// `PLAYER takes REF [for OCCURRENCE]`: the player takes the Reaction from this source.
    Take {
        /// The player, an index into [`Scenario::players`].
        player: usize,
        /// The Reaction's source, and the occurrence it answers where that is written.
        source: Named,
    },
    /// `start game [at PHASE]`: the ruleset's turn structure starts with the active player's
    /// turn (at its first phase, or at the phase named).
    StartGame(Option<rulecraft_core::EventId>),
    /// `PLAYER plays "LABEL"`: the player makes the play offered with this label.
    Play {
        /// The player, an index into [`Scenario::players`].
        player: usize,
        /// The option's label ("cast Lightning Bolt").
        label: String,
    },
    /// `PLAYER passes`: the player passes in an action round.
    Pass {
        /// The player, an index into [`Scenario::players`].
        player: usize,
    },
    /// The player pays (or declines) a response's optional cost.
    PayCost {
        /// The player, an index into [`Scenario::players`].
        player: usize,
        /// `pays` (true) or `declines` (false).
        pay: bool,
    },
    /// `PLAYER chooses X = N`: the player announces the X of the spell being cast (CR 601.2b).
    ChooseNumber {
        /// The player, an index into [`Scenario::players`].
        player: usize,
        /// The number announced.
        n: i64,
    },
    /// `target REF`: answers a pending target choice; a player's name names the player, anything
    /// else an object.
    Target(Ref),
    /// `expect ...`: checks, each with where it is written.
    Expect(Vec<(Expect, Span)>),
}

/// One step of a scenario.
#[derive(Clone, Debug)]
pub struct Step {
    /// What it does.
    pub kind: StepKind,
    /// Where it is written: a failure of the step points here.
    pub span: Span,
}

/// A lowered scenario, ready for [`crate::scenario::run`].
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Its name and the ruleset and content it names.
    pub header: Header,
    /// The players' names in turn order; steps name a player by index into this list.
    pub players: Vec<String>,
    /// `active:`: the player who goes first, an index into `players` (0 if not written).
    pub active: usize,
    /// The content it runs with: the library's object classes, with the scenario's own classes
    /// added or in their place.
    pub content: Arc<Content>,
    /// The steps in order; each line of `setup { }` is a step of its own.
    pub steps: Vec<Step>,
    /// `seed: N`: the seed of the game's random source (0 if not written).
    pub seed: u64,
}

const ITEMS: [&str; 28] = [
    "ruleset", "content", "players", "active", "seed", "card", "object", "term", "setup", "enter",
    "together", "move", "attach", "put", "remove", "cast", "end", "set", "order", "expect", "turn",
    "mutate", "do", "begin", "choose", "target", "shuffle", "start",
];

/// Reads a `scenario "name" { ... }` statement's ruleset and content names.
pub fn header(s: &Stmt) -> Res<Header> {
    let mut c = Cursor::new(&s.head);
    c.expect_word("scenario")?;
    let (name, span) = c.name_or_string("the scenario's name")?;
    c.finish()?;
    let mut h = Header {
        name,
        span,
        ruleset: None,
        content: Vec::new(),
    };
    for item in block(s, "the scenario")? {
        let mut ic = Cursor::new(&item.head);
        if ic.eat_word("ruleset") {
            no_block(item)?;
            ic.expect_punct(":")?;
            if h.ruleset.is_some() {
                return Err(Diagnostic::new(
                    item.head[0].span,
                    "a scenario names one ruleset; this is the second",
                ));
            }
            h.ruleset = Some(ic.name_or_string("a ruleset name or path")?);
            ic.finish()?;
        } else if ic.eat_word("content") {
            no_block(item)?;
            ic.expect_punct(":")?;
            loop {
                h.content.push(ic.name_or_string("a content name or path")?);
                if !ic.eat_punct(",") {
                    break;
                }
            }
            ic.finish()?;
        }
    }
    if h.ruleset.is_none() {
        return Err(Diagnostic::new(
            s.head[0].span,
            "this scenario names no ruleset: expected `ruleset: NAME` in its block",
        ));
    }
    Ok(h)
}

/// Lowers the scenario's body once its ruleset and library content are loaded.
pub fn lower(env: &Env, library: &Content, s: &Stmt, header: Header) -> Res<Scenario> {
    let items = block(s, "the scenario")?;
    // Terms first, then inline object classes: they add to (or replace) the library's for this
    // scenario.
    let with_terms;
    let outer_env = env;
    let env = if items.iter().any(is_term) {
        let mut e = env.clone();
        e.notes.take();
        for item in items.iter().filter(|i| is_term(i)) {
            term_stmt(&mut e, item)?;
        }
        with_terms = e;
        &with_terms
    } else {
        env
    };
    let mut content = library.clone();
    add_classes(env, items.iter().filter(|i| is_class(i)), &mut content)?;
    env.class_refs.check(&content)?;
    if !std::ptr::eq(env, outer_env) {
        outer_env.notes.extend(env.notes.take());
    }
    let mut players: Vec<String> = Vec::new();
    let mut active_ref = None;
    let mut seed = 0;
    for item in items {
        let mut c = Cursor::new(&item.head);
        if c.eat_word("players") {
            no_block(item)?;
            c.expect_punct(":")?;
            loop {
                let (p, sp) = c.name_or_string("a player name")?;
                if players.contains(&p) {
                    return Err(Diagnostic::new(sp, format!("player `{p}` is listed twice")));
                }
                players.push(p);
                if !c.eat_punct(",") {
                    break;
                }
            }
            c.finish()?;
        } else if c.eat_word("active") {
            no_block(item)?;
            c.expect_punct(":")?;
            active_ref = Some(c.name_or_string("a player name")?);
            c.finish()?;
        } else if c.eat_word("seed") {
            no_block(item)?;
            c.expect_punct(":")?;
            let (n, sp) = c.number("the seed of the game's random source")?;
            seed = u64::try_from(n)
                .map_err(|_| Diagnostic::new(sp, "a seed is a number from 0 up"))?;
            c.finish()?;
        }
    }
    if players.len() > 255 {
        return Err(Diagnostic::new(
            s.head[0].span,
            "too many players: expected at most 255",
        ));
    }
    if players.is_empty() {
        return Err(Diagnostic::new(
            s.head[0].span,
            "this scenario names no players: expected `players: A, B` in its block",
        ));
    }
    let cx = Cx {
        env,
        content: &content,
        players: &players,
        aliases: Default::default(),
    };
    let active = match &active_ref {
        Some((p, sp)) => cx.player_named(p, *sp)?,
        None => 0,
    };
    let mut steps = Vec::new();
    for item in items {
        let first = &item.head[0];
        let span = item.span();
        let Some(kw) = first.word() else {
            return Err(
                Cursor::new(&item.head).err("a scenario item such as `setup`, `cast` or `expect`")
            );
        };
        let mut c = Cursor::new(&item.head);
        c.bump();
        let kind = match kw {
            "ruleset" | "content" | "players" | "active" | "seed" | "card" | "object" | "term" => {
                continue
            }
            "setup" => {
                c.finish()?;
                for e in block(item, "the set-up")? {
                    no_block(e)?;
                    let mut ec = Cursor::new(&e.head);
                    steps.push(Step {
                        kind: StepKind::Enter(cx.enter(&mut ec)?),
                        span: e.span(),
                    });
                }
                continue;
            }
            "enter" => StepKind::Enter(cx.enter(&mut c)?),
            "together" => {
                // Objects that enter at once: the active player orders their timestamps (CR 613.7).
                c.finish()?;
                let mut list = Vec::new();
                for e in block(item, "the objects that enter together")? {
                    no_block(e)?;
                    let mut ec = Cursor::new(&e.head);
                    let en = cx.enter(&mut ec)?;
                    if en.attached_to.is_some() || !en.counters.is_empty() || en.copying.is_some() {
                        return Err(Diagnostic::new(
                            e.head[0].span,
                            "objects entering together take no `attached to`, `with` or `copying`: attach, put counters or copy in a later step",
                        ));
                    }
                    list.push(en);
                }
                steps.push(Step {
                    kind: StepKind::EnterTogether(list),
                    span,
                });
                continue;
            }
            "move" => {
                let obj = obj_ref(&mut c)?;
                c.expect_word("to")?;
                let zone = cx.zone(&mut c)?;
                StepKind::Move { obj, zone }
            }
            "attach" => {
                let obj = obj_ref(&mut c)?;
                c.expect_word("to")?;
                let to = obj_ref(&mut c)?;
                StepKind::Attach { obj, to }
            }
            "put" | "remove" => {
                let (n, nsp) = c.number("how many counters")?;
                if n <= 0 {
                    return Err(Diagnostic::new(
                        nsp,
                        "expected a positive number of counters",
                    ));
                }
                let counter = cx.counter(&mut c)?;
                c.eat_word("counter");
                c.eat_word("counters");
                c.expect_word(if kw == "put" { "on" } else { "from" })?;
                let obj = obj_ref(&mut c)?;
                StepKind::Counters {
                    obj,
                    counter,
                    count: if kw == "put" { n } else { -n },
                }
            }
            "cast" => {
                let card = obj_ref(&mut c)?;
                let class = content.class_id(&card.name);
                c.expect_word("by")?;
                let (p, psp) = c.name_or_string("a player")?;
                let by = cx.player_named(&p, psp)?;
                let mut targets = Vec::new();
                if c.eat_word("targeting") {
                    loop {
                        targets.push(obj_ref(&mut c)?);
                        if !c.eat_punct(",") {
                            break;
                        }
                    }
                }
                let choices = if c.eat_word("choosing") {
                    choices(&mut c)?
                } else {
                    Vec::new()
                };
                StepKind::Cast {
                    card,
                    class,
                    by,
                    targets,
                    choices,
                }
            }
            "turn" => {
                let obj = obj_ref(&mut c)?;
                c.expect_word("face")?;
                let down = if c.eat_word("down") {
                    true
                } else if c.eat_word("up") {
                    false
                } else {
                    return Err(c.err("`down` or `up`"));
                };
                StepKind::TurnFace { obj, down }
            }
            "mutate" => {
                let obj = obj_ref(&mut c)?;
                let under = if c.eat_word("under") {
                    true
                } else if c.eat_word("over") {
                    false
                } else {
                    return Err(c.err("`under` or `over`"));
                };
                let into = obj_ref(&mut c)?;
                StepKind::Merge { obj, into, under }
            }
            "end"
                if c.peek()
                    .and_then(|t| t.word())
                    .is_some_and(|w| cx.env.ruleset.event_id(w).is_some()) =>
            {
                let (e, es) = c.name("a period")?;
                let id = cx.env.ruleset.event_id(&e).expect("checked");
                if !event_def(&cx.env.ruleset, id).period {
                    return Err(Diagnostic::new(
                        es,
                        format!("`{e}` is not a period: it does not end"),
                    ));
                }
                StepKind::EndPeriod(id)
            }
            "do" => {
                let mut list = Vec::new();
                loop {
                    let at = c.here();
                    let o = cx.occurrence(&mut c, false)?;
                    if cx.env.ruleset.is_builtin(o.event) {
                        let name = &event_def(&cx.env.ruleset, o.event).name;
                        return Err(Diagnostic::new(
                            at,
                            format!("`{name}` is a built-in event: it happens through the engine's own actions (`enter`, `move`, `put`, `attach`, `cast`, `turn`, `end turn`...), not `do`"),
                        ));
                    }
                    list.push(o);
                    if !c.eat_punct(",") {
                        break;
                    }
                }
                StepKind::Occur(list)
            }
            "begin" => {
                let o = cx.occurrence(&mut c, false)?;
                if !event_def(&cx.env.ruleset, o.event).period {
                    return Err(Diagnostic::new(
                        first.span,
                        format!(
                            "`{}` is not a period: write `do`",
                            event_def(&cx.env.ruleset, o.event).name
                        ),
                    ));
                }
                StepKind::Begin(o)
            }
            "choose"
                if c.peek().is_some_and(|t| t.is_word("option"))
                    && c.peek_at(1)
                        .is_some_and(|t| matches!(t.tok, Tok::Number(_))) =>
            {
                c.bump();
                let (n, span) = c.number("the option's number")?;
                StepKind::Choose(Pick::Index { n, span })
            }
            "choose" => StepKind::Choose(Pick::Named(cx.named(&mut c)?)),
            "target" => StepKind::Target(obj_ref(&mut c)?),
            "start" => {
                c.expect_word("game")?;
                let at = if c.eat_word("at") {
                    let (e, es) = c.name("a phase of the turn")?;
                    let id = cx.env.ruleset.event_id(&e).filter(|id| {
                        cx.env
                            .ruleset
                            .turn_structure
                            .as_ref()
                            .is_some_and(|t| t.phases.iter().any(|p| p.event == *id))
                    });
                    let names = cx
                        .env
                        .ruleset
                        .turn_structure
                        .as_ref()
                        .map_or(Vec::new(), |t| {
                            t.phases
                                .iter()
                                .map(|p| cx.env.ruleset.events[p.event.index()].name.to_string())
                                .collect()
                        });
                    Some(id.ok_or_else(|| {
                        unknown(es, "phase", &e, names.iter().map(|n| n.as_str()))
                    })?)
                } else {
                    None
                };
                StepKind::StartGame(at)
            }
            w if players.iter().any(|p| p == w) && c.peek().is_some_and(|t| t.is_word("plays")) => {
                let player = cx.player_named(w, first.span)?;
                c.bump();
                let (label, _) = c.string("the play's label, as the game offers it")?;
                StepKind::Play { player, label }
            }
            w if players.iter().any(|p| p == w)
                && c.peek().is_some_and(|t| {
                    ["passes", "takes", "pays", "declines", "chooses"]
                        .iter()
                        .any(|x| t.is_word(x))
                }) =>
            {
                let player = cx.player_named(w, first.span)?;
                if c.eat_word("pays") {
                    StepKind::PayCost { player, pay: true }
                } else if c.eat_word("declines") {
                    StepKind::PayCost { player, pay: false }
                } else if c.eat_word("passes") {
                    StepKind::Pass { player }
                } else if c.eat_word("chooses") {
                    c.expect_word("X")?;
                    c.expect_punct("=")?;
                    let neg = c.eat_punct("-");
                    let Some(Tok::Number(n)) = c.peek().map(|t| t.tok.clone()) else {
                        return Err(c.err("a number: `chooses X = 3`"));
                    };
                    c.bump();
                    StepKind::ChooseNumber {
                        player,
                        n: if neg { -n } else { n },
                    }
                } else {
                    c.expect_word("takes")?;
                    StepKind::Take {
                        player,
                        source: cx.named(&mut c)?,
                    }
                }
            }
            "end" => {
                if c.eat_word("turn") {
                    StepKind::EndTurn
                } else if c.eat_words(&["effects", "of"]) {
                    StepKind::EndEffects {
                        obj: obj_ref(&mut c)?,
                    }
                } else {
                    return Err(c.err("`turn` or `effects of`"));
                }
            }
            "shuffle" => {
                // `shuffle Alice library`: her cards there, in a random order.
                let (p, psp) = c.name_or_string("a player")?;
                let player = cx.player_named(&p, psp)?;
                let zone = cx.zone(&mut c)?;
                StepKind::Shuffle { player, zone }
            }
            "set" => {
                let (p, psp) = c.name_or_string("a player")?;
                let player = cx.player_named(&p, psp)?;
                let at = c.here();
                let prop = cx.prop(&mut c)?;
                let def = &cx.env.ruleset.props[prop.index()];
                if def.symbols {
                    return Err(Diagnostic::new(
                        at,
                        format!(
                            "`{}` holds symbols: only its events' changes set it",
                            def.name
                        ),
                    ));
                }
                c.expect_punct("=")?;
                let value = if c.eat_word("none") {
                    None
                } else {
                    Some(c.number("a number or `none`")?.0)
                };
                StepKind::SetProp {
                    player,
                    prop,
                    value,
                }
            }
            "order" => {
                c.expect_word("timestamps")?;
                c.expect_punct(":")?;
                let mut list = Vec::new();
                loop {
                    list.push(obj_ref(&mut c)?);
                    if !c.eat_punct(",") {
                        break;
                    }
                }
                StepKind::Order(list)
            }
            "expect" => StepKind::Expect(cx.expect(&mut c)?),
            _ => return Err(unknown(first.span, "scenario item", kw, ITEMS)),
        };
        no_block(item)?;
        c.finish()?;
        steps.push(Step { kind, span });
    }
    Ok(Scenario {
        header,
        players,
        active,
        content: Arc::new(content),
        steps,
        seed,
    })
}

/// `choosing goblin` or `choosing island, forest`.
fn choices(c: &mut Cursor) -> Res<Vec<Symbol>> {
    let mut out = Vec::new();
    loop {
        out.push(Symbol::new(&c.name_or_string("a choice")?.0));
        if !c.eat_punct(",") {
            return Ok(out);
        }
    }
}

fn obj_ref(c: &mut Cursor) -> Res<Ref> {
    let (name, span) = c.name_or_string("an object's name or alias")?;
    Ok(Ref { name, span })
}

struct Cx<'a> {
    env: &'a Env,
    content: &'a Content,
    players: &'a [String],
    /// Each alias given so far, where it is given: an alias names one object.
    aliases: RefCell<HashMap<String, Span>>,
}

impl Cx<'_> {
    fn player_named(&self, p: &str, sp: Span) -> Res<usize> {
        self.players
            .iter()
            .position(|x| x == p)
            .ok_or_else(|| unknown(sp, "player", p, self.players.iter().map(|s| s.as_str())))
    }

    fn zone(&self, c: &mut Cursor) -> Res<ZoneId> {
        let rs = &self.env.ruleset;
        let (z, zs) = c.name("a zone")?;
        rs.zone_id(&z)
            .ok_or_else(|| unknown(zs, "zone", &z, rs.zones.iter().map(|z| z.name.as_str())))
    }

    fn counter(&self, c: &mut Cursor) -> Res<CounterId> {
        super::common::counter_named(self.env, c)
    }

    fn prop(&self, c: &mut Cursor) -> Res<PropId> {
        super::common::prop_named(self.env, c)
    }

    /// An object class by name, of this type if one is given (an event's class argument).
    /// An object class by its name (written bare or as a string), with the name and its span.
    fn class_named(&self, c: &mut Cursor) -> Res<(rulecraft_core::ClassId, String, Span)> {
        let (name, sp) = c.name_or_string("an object class name")?;
        let class = self.content.class_id(&name).ok_or_else(|| {
            unknown(
                sp,
                "object class",
                &name,
                self.content.classes.iter().map(|c| c.name.as_str()),
            )
        })?;
        Ok((class, name, sp))
    }

    fn class_of_type(
        &self,
        c: &mut Cursor,
        ty: Option<rulecraft_core::model::ids::TypeId>,
    ) -> Res<rulecraft_core::ClassId> {
        let (class, name, sp) = self.class_named(c)?;
        if let Some(t) = ty {
            if self.content.classes[class.index()].object_type != Some(t) {
                let tname = &self.env.ruleset.types[t.index()].name;
                return Err(Diagnostic::new(
                    sp,
                    format!("`{name}` is not of type `{tname}`: the event's parameter takes a class of type `{tname}` (`type: {tname}`)"),
                ));
            }
        }
        Ok(class)
    }

    /// `"Card" [as alias] [for P] [in ZONE] [controlled by P] [attached to REF] [with N "counter", ...]`
    fn enter(&self, c: &mut Cursor) -> Res<Enter> {
        let rs = &self.env.ruleset;
        let (class, name, sp) = self.class_named(c)?;
        let mut e = Enter {
            class,
            alias: None,
            owner: 0,
            controller: None,
            // The first zone `in play`, else the first zone.
            zone: match rs.zones.iter().position(|z| z.in_play) {
                Some(i) => ZoneId(i as u16),
                None if !rs.zones.is_empty() => ZoneId(0),
                None => return Err(Diagnostic::new(sp, "this ruleset declares no zones")),
            },
            attached_to: None,
            counters: Vec::new(),
            choices: Vec::new(),
            copying: None,
            face_down: false,
        };
        let mut alias_at = None;
        while !c.at_end() {
            if c.eat_word("as") {
                let (a, asp) = c.name_or_string("an alias")?;
                e.alias = Some(a);
                alias_at = Some(asp);
            } else if c.eat_word("for") {
                let (p, psp) = c.name_or_string("a player")?;
                e.owner = self.player_named(&p, psp)?;
            } else if c.eat_word("in") {
                e.zone = self.zone(c)?;
            } else if c.eat_words(&["controlled", "by"]) {
                let (p, psp) = c.name_or_string("a player")?;
                e.controller = Some(self.player_named(&p, psp)?);
            } else if c.eat_words(&["attached", "to"]) {
                e.attached_to = Some(obj_ref(c)?);
            } else if c.eat_word("choosing") || c.eat_word("naming") {
                e.choices = choices(c)?;
            } else if c.eat_word("copying") {
                if !self.content.class(e.class).is_ok_and(|k| k.enters_as_copy) {
                    return Err(Diagnostic::new(
                        c.toks[c.pos - 1].span,
                        format!("`{name}` does not enter as a copy: expected `enters as a copy` in its definition"),
                    ));
                }
                e.copying = Some(obj_ref(c)?);
            } else if c.eat_words(&["face", "down"]) {
                e.face_down = true;
            } else if c.eat_word("with") {
                loop {
                    let (n, nsp) = c.number("how many counters")?;
                    if n <= 0 {
                        return Err(Diagnostic::new(
                            nsp,
                            "expected a positive number of counters",
                        ));
                    }
                    let k = self.counter(c)?;
                    c.eat_word("counter");
                    c.eat_word("counters");
                    e.counters.push((k, n));
                    if !c.eat_word("and") {
                        break;
                    }
                }
            } else {
                return Err(c.err(
                    "`as`, `for`, `in`, `controlled by`, `attached to`, `choosing`, `copying`, `face down` or `with`",
                ));
            }
        }
        if let (Some(a), Some(at)) = (&e.alias, alias_at) {
            if let Some(first) = self.aliases.borrow_mut().insert(a.clone(), at) {
                return Err(Diagnostic::new(
                    at,
                    format!("alias `{a}` is given to two objects: an alias names one object"),
                )
                .with_related(first, "the first"));
            }
        }
        Ok(e)
    }

    /// `expect REF CHECK, CHECK...` where a check is `CHAR = value`, `CHAR has X`, `CHAR lacks X`
    /// or `in ZONE`; or `expect PLAYER PROP = N, ...`.
    /// `EVENT(ARG, ...)`: objects by alias or name, players by name, numbers.
    /// With `partial`, an expectation's: trailing arguments may be left out (they match any).
    /// `REF [for OCCURRENCE]`: a response by its source, and the occurrence it answers.
    fn named(&self, c: &mut Cursor) -> Res<Named> {
        let source = obj_ref(c)?;
        let answering = if c.eat_word("for") {
            Some(self.occurrence(c, true)?)
        } else {
            None
        };
        Ok(Named { source, answering })
    }

    fn occurrence(&self, c: &mut Cursor, partial: bool) -> Res<SOcc> {
        let rs = &self.env.ruleset;
        let (event, _) = super::events::event_named(self.env, c, "an event")?;
        let kind = event_def(rs, event);
        let mut args = Vec::new();
        let open = c.here();
        if c.eat_punct("(") && !c.eat_punct(")") {
            loop {
                let Some(p) = kind.params.get(args.len()) else {
                    return Err(Diagnostic::new(
                        c.here(),
                        format!("`{}` takes {} argument(s)", kind.name, kind.params.len()),
                    ));
                };
                args.push(match p.kind {
                    rulecraft_core::model::event::ParamKind::Number => {
                        let neg = c.eat_punct("-");
                        let n = c.number("a number")?.0;
                        SArg::Number(if neg { -n } else { n })
                    }
                    rulecraft_core::model::event::ParamKind::Player => {
                        let (n, sp) = c.name_or_string("a player")?;
                        SArg::Player(self.player_named(&n, sp)?)
                    }
                    rulecraft_core::model::event::ParamKind::Object => SArg::Object(obj_ref(c)?),
                    rulecraft_core::model::event::ParamKind::Any => {
                        let r = obj_ref(c)?;
                        match self.players.iter().position(|x| *x == r.name) {
                            Some(p) => SArg::Player(p),
                            None => SArg::Object(r),
                        }
                    }
                    rulecraft_core::model::event::ParamKind::Zone => SArg::Zone(self.zone(c)?),
                    rulecraft_core::model::event::ParamKind::Counter => {
                        SArg::Counter(self.counter(c)?)
                    }
                    rulecraft_core::model::event::ParamKind::Property => {
                        SArg::Property(self.prop(c)?)
                    }
                    rulecraft_core::model::event::ParamKind::Class(ty) => {
                        SArg::Class(self.class_of_type(c, ty)?)
                    }
                });
                if c.eat_punct(")") {
                    break;
                }
                c.expect_punct(",")?;
            }
        }
        let partial_ok = partial && !args.is_empty() && args.len() <= kind.params.len();
        if args.len() != kind.params.len() && !partial_ok {
            return Err(Diagnostic::new(
                open,
                format!(
                    "`{}` takes {} argument(s), got {}",
                    kind.name,
                    kind.params.len(),
                    args.len()
                ),
            ));
        }
        Ok(SOcc { event, args })
    }

    fn expect(&self, c: &mut Cursor) -> Res<Vec<(Expect, Span)>> {
        let start = c.here();
        let span_to = |c: &Cursor| start.to(c.toks[c.pos - 1].span);
        if c.eat_word("event") {
            let occ = self.occurrence(c, true)?;
            let yes = if c.eat_word("happened") {
                true
            } else if c.eat_words(&["did", "not", "happen"]) {
                false
            } else {
                return Err(c.err("`happened` or `did not happen`"));
            };
            return Ok(vec![(Expect::Happened { occ, yes }, span_to(c))]);
        }
        if c.eat_words(&["events", "in", "order"]) {
            c.expect_punct(":")?;
            let mut list = vec![self.occurrence(c, true)?];
            while c.eat_punct(",") {
                list.push(self.occurrence(c, true)?);
            }
            return Ok(vec![(Expect::InOrder(list), span_to(c))]);
        }
        if c.eat_words(&["no", "decision"]) {
            return Ok(vec![(Expect::NoDecision, span_to(c))]);
        }
        if c.eat_word("winner") {
            c.expect_punct(":")?;
            let winner = if c.eat_word("none") {
                None
            } else {
                let (p, ps) = c.name_or_string("the winner, or `none` for a draw")?;
                Some(self.player_named(&p, ps)?)
            };
            return Ok(vec![(Expect::Winner(Some(winner)), span_to(c))]);
        }
        if c.eat_words(&["game", "goes", "on"]) {
            return Ok(vec![(Expect::Winner(None), span_to(c))]);
        }
        if c.eat_word("log") {
            c.expect_word("has")?;
            let (t, _) = c.string("the text a log line contains")?;
            return Ok(vec![(Expect::LogHas(t), span_to(c))]);
        }
        if c.peek_at(1).is_some_and(|t| t.is_word("may"))
            && c.peek()
                .and_then(|t| t.word())
                .is_some_and(|w| self.players.iter().any(|p| p == w))
        {
            let (p, ps) = c.name("a player")?;
            let player = self.player_named(&p, ps)?;
            c.expect_word("may")?;
            c.expect_word("play")?;
            c.expect_punct(":")?;
            let mut labels = Vec::new();
            if !c.eat_word("nothing") {
                loop {
                    labels.push(c.string("a play's label")?.0);
                    if !c.eat_punct(",") {
                        break;
                    }
                }
            }
            return Ok(vec![(Expect::Plays { player, labels }, span_to(c))]);
        }
        if c.eat_word("decision") {
            c.expect_punct(":")?;
            let (p, ps) = c.name_or_string("the player who decides")?;
            let player = self.player_named(&p, ps)?;
            c.expect_word("chooses")?;
            c.expect_word("from")?;
            let mut sources = vec![obj_ref(c)?];
            while c.eat_punct(",") {
                sources.push(obj_ref(c)?);
            }
            return Ok(vec![(Expect::Options { player, sources }, span_to(c))]);
        }
        let (name, span) = c.name_or_string("an object or a player")?;
        let mut out = Vec::new();
        if self.players.contains(&name) {
            let player = self.player_named(&name, span)?;
            if c.eat_word("lost") || c.eat_words(&["not", "lost"]) {
                let yes = c.toks[c.pos - 2].word() != Some("not");
                return Ok(vec![(Expect::Lost { player, yes }, span_to(c))]);
            }
            loop {
                let start = c.here();
                let prop = self.prop(c)?;
                let want = if self.env.ruleset.props[prop.index()].symbols {
                    if c.eat_word("has") || c.eat_word("lacks") {
                        let lacks = c.toks[c.pos - 1].is_word("lacks");
                        let (s, _) = c.name_or_string("a symbol")?;
                        let sym = self.env.symbol(&s);
                        if lacks {
                            Want::Lacks(sym)
                        } else {
                            Want::Has(sym)
                        }
                    } else {
                        c.expect_punct("=")?;
                        let names = if c.eat_word("none") {
                            Vec::new()
                        } else {
                            self.names(c, "a symbol")?
                        };
                        Want::Equals(Value::Symbols(
                            names.iter().map(|s| self.env.symbol(s)).collect(),
                        ))
                    }
                } else {
                    c.expect_punct("=")?;
                    Want::Equals(Value::Number(if c.eat_word("none") {
                        None
                    } else {
                        Some(c.number("a number or `none`")?.0)
                    }))
                };
                out.push((
                    Expect::Prop { player, prop, want },
                    start.to(c.toks[c.pos - 1].span),
                ));
                if !c.eat_punct(",") {
                    return Ok(out);
                }
            }
        }
        let obj = Ref { name, span };
        loop {
            let start = c.here();
            let e = self.check(c, &obj)?;
            out.push((e, start.to(c.toks[c.pos - 1].span)));
            if !c.eat_punct(",") {
                return Ok(out);
            }
        }
    }

    /// Whether the tokens after a `,` start a new check rather than continue a list.
    fn at_check(&self, c: &Cursor) -> bool {
        let Some(w) = c.peek().and_then(|t| t.word()) else {
            return false;
        };
        let next = c.peek_at(1);
        (w == "in" && next.is_some_and(|t| t.word().is_some()))
            || (matches!(w, "counters" | "current") && next.is_some_and(|t| t.is_punct("(")))
            || (w == "attached" && next.is_some_and(|t| t.is_word("to")))
            || (rulecraft_core::AbilityKind::named(w).is_some()
                && next
                    .and_then(|t| t.word())
                    .is_some_and(|x| self.env.ruleset.char_id(x).is_some()))
            || (self.env.ruleset.char_id(w).is_some()
                && next.is_some_and(|t| {
                    t.is_punct("=") || t.is_word("has") || t.is_word("lacks") || t.is_word("order")
                }))
    }

    /// A list of names after `=`: `none`, or names separated by `,` up to the next check.
    fn names(&self, c: &mut Cursor, what: &str) -> Res<Vec<String>> {
        let mut v = Vec::new();
        if c.eat_word("none") {
            return Ok(v);
        }
        loop {
            v.push(c.name_or_string(what)?.0);
            let more = c.peek().is_some_and(|t| t.is_punct(",")) && {
                let mut look = Cursor {
                    toks: c.toks,
                    pos: c.pos + 1,
                    end: c.end,
                    depth: c.depth,
                };
                look.pos = c.pos + 1;
                !self.at_check(&look)
            };
            if !more {
                return Ok(v);
            }
            c.bump();
        }
    }

    fn check(&self, c: &mut Cursor, obj: &Ref) -> Res<Expect> {
        let rs = &self.env.ruleset;
        let obj = obj.clone();
        if c.eat_word("in") {
            let zone = self.zone(c)?;
            return Ok(Expect::Zone { obj, zone });
        }
        if c.peek().is_some_and(|t| t.is_word("attached"))
            && c.peek_at(1).is_some_and(|t| t.is_word("to"))
            && rs.char_id("attached").is_none()
        {
            c.bump();
            c.bump();
            let to = if c.eat_word("nothing") {
                None
            } else {
                Some(obj_ref(c)?)
            };
            return Ok(Expect::Attached { obj, to });
        }
        // `counters(damage) = 2`: counters by kind, spelled as expressions count them.
        if c.peek().is_some_and(|t| t.is_word("counters"))
            && c.peek_at(1).is_some_and(|t| t.is_punct("("))
        {
            c.bump();
            c.bump();
            let kind = counter_kind(self.env, c)?;
            c.expect_punct(")")?;
            c.expect_punct("=")?;
            let want = c.number("a number of counters")?.0;
            return Ok(Expect::Counters { obj, kind, want });
        }
        // `current(farming) = 2`: a meter's current value, the counters of its name.
        if c.peek().is_some_and(|t| t.is_word("current"))
            && c.peek_at(1).is_some_and(|t| t.is_punct("("))
        {
            c.bump();
            let kind = match crate::lower::cond::current_of(
                self.env,
                c,
                rulecraft_core::model::condition::ObjRef::This,
            )? {
                rulecraft_core::model::condition::NumExpr::Counters(_, k) => Some(k),
                _ => None,
            };
            c.expect_punct("=")?;
            let want = c.number("a number")?.0;
            return Ok(Expect::Counters { obj, kind, want });
        }
        // `activated abilities = ...`: the abilities of one kind (CR 113.3).
        let of_kind = c
            .peek()
            .and_then(|t| t.word())
            .and_then(rulecraft_core::AbilityKind::named)
            .filter(|_| {
                c.peek_at(1)
                    .and_then(|t| t.word())
                    .and_then(|w| rs.char_id(w))
                    .is_some_and(|x| char_def(rs, x).kind == CharKind::Abilities)
            });
        if of_kind.is_some() {
            c.bump();
        }
        let (ch_name, chs) = c.name("a characteristic, `in` or `attached to`")?;
        let ch = rs.char_id(&ch_name).ok_or_else(|| {
            unknown(
                chs,
                "characteristic",
                &ch_name,
                rs.characteristics.iter().map(|c| c.name.as_str()),
            )
        })?;
        let kind = char_def(rs, ch).kind;
        if of_kind.is_some() && c.peek().is_some_and(|t| t.is_word("order")) {
            return Err(c.err("`=`, `has` or `lacks` after abilities of one kind"));
        }
        if c.eat_word("order") {
            c.expect_punct("=")?;
            let list = self.names(c, "the name of an effect's source")?;
            return Ok(Expect::Char {
                obj,
                ch,
                want: Want::Order(list),
                of_kind,
            });
        }
        if c.eat_word("has") || c.eat_word("lacks") {
            let lacks = c.toks[c.pos - 1].is_word("lacks");
            if !matches!(kind, CharKind::Symbols | CharKind::Abilities) {
                return Err(Diagnostic::new(
                    chs,
                    format!(
                        "`{ch_name}` is a {} characteristic: `has` expects symbols or abilities",
                        kind.name()
                    ),
                ));
            }
            let (s, _) = c.name_or_string("a symbol")?;
            let sym = self.env.symbol(&s);
            return Ok(Expect::Char {
                obj,
                ch,
                of_kind,
                want: if lacks {
                    Want::Lacks(sym)
                } else {
                    Want::Has(sym)
                },
            });
        }
        c.expect_punct("=")?;
        let want = match kind {
            CharKind::Number => Want::Equals(Value::Number(if c.eat_word("none") {
                None
            } else {
                Some(c.number("a number or `none`")?.0)
            })),
            CharKind::Symbols => {
                let names = self.names(c, "a symbol")?;
                // `all`: every symbol (changeling's "every creature type").
                Want::Equals(Value::Symbols(if names.len() == 1 && names[0] == "all" {
                    rulecraft_core::SymbolSet::every()
                } else {
                    names.iter().map(|s| self.env.symbol(s)).collect()
                }))
            }
            CharKind::Abilities => Want::Abilities(self.names(c, "an ability")?),
            CharKind::Text | CharKind::Name => {
                Want::Equals(Value::Text(Arc::from(c.string("a string")?.0.as_str())))
            }
            CharKind::Controller => {
                let (p, psp) = c.name_or_string("a player")?;
                Want::Equals(Value::Player(Some(rulecraft_core::PlayerId(
                    self.player_named(&p, psp)? as u8,
                ))))
            }
        };
        Ok(Expect::Char {
            obj,
            ch,
            want,
            of_kind,
        })
    }
}

/// Ability names as expectations compare them: keywords by name, static abilities by their text.
pub fn ability_names(v: &Value) -> Vec<String> {
    match v {
        Value::Abilities(list) => list.iter().map(|a| a.name().to_string()).collect(),
        _ => Vec::new(),
    }
}
