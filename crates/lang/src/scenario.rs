//! Running scenarios: each step becomes a core action or decision, each expectation is checked
//! against the derived values, and a failure carries the explanation of the value.

use crate::diagnostics::{did_you_mean, Span};
use crate::lower::defs::char_def;
use crate::lower::scenario::{
    ability_names, Expect, Named, Pick, Ref, SArg, SOcc, Scenario, StepKind, Want,
};
use crate::lower::Env;
use rulecraft_core::explain::describe::{
    counters_of, describe_char, describe_counters, describe_player,
};
use rulecraft_core::model::action::{Action, NewObject};
use rulecraft_core::model::condition::Subject;
use rulecraft_core::model::decision::{Choice, DecisionRequest};
use rulecraft_core::model::occurrence::{Logged, Occurrence};
use rulecraft_core::{Arg, GameState, ObjectId, PlayerId, Value, ZoneId};
use std::collections::HashMap;
use std::sync::Arc;

/// A scenario's failure at one place: a check that did not hold, or a step that could not be
/// carried out.
#[derive(Clone, Debug)]
pub struct Failure {
    /// The check that failed, or the step that could not be carried out (or the name in it at
    /// fault); for a scenario that ends with a decision pending, the step that raised it.
    pub at: Span,
    /// What went wrong, such as "`Grizzly Bears` power: expected 2, actually 3".
    pub message: String,
    /// How the value was derived, for a characteristic or property that differs.
    pub explanation: Option<String>,
}

/// The result of one scenario, with its final state for `explain`.
pub struct Report {
    /// The scenario's name.
    pub name: String,
    /// Where the scenario's name is written.
    pub at: Span,
    /// Every failure in the order found; a step that could not be carried out stops the scenario
    /// and is the last.
    pub failures: Vec<Failure>,
    /// The game as the last step run left it.
    pub state: GameState,
    /// Each alias given with `as`, and the object it names.
    pub names: HashMap<String, ObjectId>,
    /// How many expectations were checked.
    pub checked: usize,
}

impl Report {
    /// No failures: every step run was carried out and every check held.
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

/// Finds an object by alias, else by name (which must be unique).
pub fn find(
    state: &GameState,
    names: &HashMap<String, ObjectId>,
    r: &str,
) -> Result<ObjectId, String> {
    if let Some(o) = names.get(r) {
        return Ok(*o);
    }
    let n = state.objects().filter(|o| &*o.name == r).count();
    match n {
        0 => {
            let known = names
                .keys()
                .map(|k| k.as_str())
                .chain(state.objects().map(|o| &*o.name));
            Err(match did_you_mean(r, known) {
                Some(h) => format!("no object is named `{r}`: {h}"),
                None => format!("no object is named `{r}`"),
            })
        }
        1 => Ok(state.find(r).expect("one object has the name")),
        _ => Err(format!(
            "`{r}` names {n} objects: give each an alias with `as`"
        )),
    }
}

/// Runs every step of a scenario, stopping at the first step that cannot be carried out.
/// `stop_after`: run only the first N steps (for `explain --step`).
pub fn run(env: &Env, sc: &Scenario, stop_after: Option<usize>) -> Report {
    run_with(env, sc, stop_after, None)
}

/// A state between two steps, made another way (a test saves and loads it).
pub type Between<'a> = &'a mut dyn FnMut(&GameState) -> Result<GameState, String>;

/// `run`, with `between` applied to the state after every step.
pub fn run_with(
    env: &Env,
    sc: &Scenario,
    stop_after: Option<usize>,
    mut between: Option<Between>,
) -> Report {
    let players: Vec<&str> = sc.players.iter().map(|s| s.as_str()).collect();
    let new = GameState::new(Arc::new(env.ruleset.clone()), sc.content.clone(), &players)
        .with_seed(sc.seed);
    // The scenario's `active:` player is checked as it loads.
    let mut state = new
        .clone()
        .with_first_player(PlayerId(sc.active as u8))
        .unwrap_or(new);
    let mut report = Report {
        name: sc.header.name.clone(),
        at: sc.header.span,
        failures: Vec::new(),
        state: state.clone(),
        names: HashMap::new(),
        checked: 0,
    };
    let mut names: HashMap<String, ObjectId> = HashMap::new();
    // The step that left a decision pending, if one is.
    let mut asked: Option<Span> = None;
    let mut ran_all = true;
    for (i, step) in sc.steps.iter().enumerate() {
        if stop_after.is_some_and(|n| i >= n) {
            ran_all = false;
            break;
        }
        // Only an answer may follow a question: an expectation would check values the answer may
        // still change, and any other step is refused.
        let timing_decision = state
            .pending_decision()
            .is_some_and(|d| !matches!(d, DecisionRequest::OrderTimestamps { .. }));
        let answers = match step.kind {
            StepKind::Order(_) => !timing_decision,
            StepKind::Choose(_)
            | StepKind::Take { .. }
            | StepKind::Pass { .. }
            | StepKind::Play { .. }
            | StepKind::PayCost { .. }
            | StepKind::ChooseNumber { .. }
            | StepKind::Target(_)
            | StepKind::Expect(_) => timing_decision,
            _ => false,
        };
        if let (Some(what), Some(d), false) =
            (pending(&state, &names), state.pending_decision(), answers)
        {
            report.failures.push(Failure {
                at: step.span,
                message: format!(
                    "a decision is pending: {what}; expected {} before this step",
                    answered_by(&state, d)
                ),
                explanation: None,
            });
            ran_all = false;
            break;
        }
        let res = run_step(&mut state, &mut names, step.kind.clone(), env, &mut report);
        if let Err((at, message)) = res {
            report.failures.push(Failure {
                at: at.unwrap_or(step.span),
                message,
                explanation: None,
            });
            ran_all = false;
            break;
        }
        if let Some(f) = between.as_mut() {
            match f(&state) {
                Ok(s) => state = s,
                Err(message) => {
                    report.failures.push(Failure {
                        at: step.span,
                        message,
                        explanation: None,
                    });
                    ran_all = false;
                    break;
                }
            }
        }
        asked = state.pending_decision().map(|_| asked.unwrap_or(step.span));
    }
    // A game under way waits for a play whenever nothing else is under way: a scenario may stop
    // there; any other decision must be answered.
    let waits_for_play = matches!(
        state.pending_decision(),
        Some(DecisionRequest::Play {
            in_batch: false,
            ..
        })
    );
    if let (true, false, Some(what), Some(d), Some(at)) = (
        ran_all,
        waits_for_play,
        pending(&state, &names),
        state.pending_decision(),
        asked,
    ) {
        report.failures.push(Failure {
            at,
            message: format!(
                "the scenario ends with a decision pending: {what}; expected {} after this step",
                answered_by(&state, d)
            ),
            explanation: None,
        });
    }
    // Under each failure, the log of occurrences so far, where something answered one or one of
    // the ruleset's own events happened (the engine's actions alone are the set-up).
    let builtin = |e: rulecraft_core::EventId| state.ruleset().is_builtin(e);
    let telling = state.log().iter().any(|e| match &e.what {
        Logged::Starts { occurrence } | Logged::Happened { occurrence } => {
            !builtin(occurrence.event)
        }
        _ => true,
    });
    if telling {
        let log = format!("  the log:\n{}", log_text(&state));
        for f in &mut report.failures {
            match &mut f.explanation {
                Some(e) if e.contains("  the log:\n") => {}
                Some(e) => {
                    e.push('\n');
                    e.push_str(&log);
                }
                None => f.explanation = Some(log.clone()),
            }
        }
    }
    report.state = state;
    report.names = names;
    report
}

type StepResult = Result<(), (Option<Span>, String)>;

/// The decision the game waits for, in words: "Jill must order the timestamps of `Spellbook`,
/// `Null Profusion`" (objects by alias where they have one).
fn pending(state: &GameState, names: &HashMap<String, ObjectId>) -> Option<String> {
    match state.pending_decision()? {
        DecisionRequest::OrderTimestamps { player, objects } => {
            let list: Vec<String> = objects
                .iter()
                .map(|o| format!("`{}`", called(state, names, *o)))
                .collect();
            Some(format!(
                "{} must order the timestamps of {}",
                state.player_name(*player),
                list.join(", ")
            ))
        }
        DecisionRequest::ChooseNext {
            player, options, ..
        } => Some(format!(
            "{} must choose which comes next: {}",
            state.player_name(*player),
            options_answering(state, names, options).join(", ")
        )),
        DecisionRequest::React {
            player, options, ..
        } => Some(format!(
            "{} may take a Reaction ({}) or pass",
            state.player_name(*player),
            options_answering(state, names, options).join(", ")
        )),
        DecisionRequest::OrderChoices {
            player,
            response,
            choosers,
        } => Some(format!(
            "{} must choose who chooses next for \"{response}\": {}",
            state.player_name(*player),
            choosers
                .iter()
                .map(|p| state.player_name(*p).to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )),
        DecisionRequest::PayCost {
            player, response, ..
        } => Some(format!(
            "{} may pay the cost of \"{response}\" or decline",
            state.player_name(*player)
        )),
        DecisionRequest::ChooseTarget {
            player, response, ..
        } => Some(format!(
            "{} must choose a target for \"{response}\"",
            state.player_name(*player)
        )),
        DecisionRequest::ChooseNumber {
            player,
            response,
            options,
        } => Some(format!(
            "{} must announce X for \"{response}\": {}",
            state.player_name(*player),
            options
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )),
        DecisionRequest::Play {
            player, options, ..
        } => Some(format!(
            "{} may play ({}) or pass",
            state.player_name(*player),
            options
                .iter()
                .map(|o| format!("\"{}\"", o.label))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// A step that answers another kind of decision than the one pending, in the scenario's words:
/// the decision pending and the step that answers it.
fn wrong_answer(
    state: &GameState,
    names: &HashMap<String, ObjectId>,
    d: &DecisionRequest,
    step: &str,
) -> (Option<Span>, String) {
    let what = pending(state, names).unwrap_or_default();
    (
        None,
        format!(
            "{step} does not answer the decision pending: {what}; expected {}",
            answered_by(state, d)
        ),
    )
}

/// A step that answers no decision pending (`nothing`: what it would answer), or another kind
/// than the one pending (`wrong_answer`).
fn not_answering(
    state: &GameState,
    names: &HashMap<String, ObjectId>,
    d: Option<&DecisionRequest>,
    step: &str,
    nothing: &str,
) -> (Option<Span>, String) {
    match d {
        Some(d) => wrong_answer(state, names, d, step),
        None => (None, nothing.to_string()),
    }
}

/// A name as a step writes it: a word as it is, anything else in quotes.
fn quoted(name: &str) -> String {
    if !name.is_empty() && name.chars().all(|ch| ch.is_alphanumeric() || ch == '_') {
        name.to_string()
    } else {
        format!("\"{name}\"")
    }
}

/// A player by name, an object as the scenario calls it.
fn subject_words(state: &GameState, names: &HashMap<String, ObjectId>, s: &Subject) -> String {
    match s {
        Subject::Player(p) => state.player_name(*p).to_string(),
        Subject::Object(o) => format!("`{}`", called(state, names, *o)),
    }
}

/// One of `DecisionRequest::choices`, in words: the option it takes, or passing.
fn choice_words(
    state: &GameState,
    names: &HashMap<String, ObjectId>,
    d: &DecisionRequest,
    c: &Choice,
) -> String {
    match (d, c) {
        (DecisionRequest::ChooseNext { options, .. }, Choice::Pick(i))
        | (DecisionRequest::React { options, .. }, Choice::Pick(i)) => {
            options_answering(state, names, options)
                .get(*i)
                .cloned()
                .unwrap_or_default()
        }
        (DecisionRequest::OrderChoices { choosers, .. }, Choice::Pick(i)) => choosers
            .get(*i)
            .map(|p| state.player_name(*p).to_string())
            .unwrap_or_default(),
        (DecisionRequest::PayCost { .. }, Choice::Pick(_)) => "pay".into(),
        (DecisionRequest::Play { options, .. }, Choice::Pick(i)) => {
            options.get(*i).map(|o| o.label.clone()).unwrap_or_default()
        }
        (_, Choice::Pass) => match d {
            DecisionRequest::PayCost { .. } => "decline".into(),
            _ => "pass".into(),
        },
        (_, Choice::Target(t)) => subject_words(state, names, t),
        (_, Choice::Number(n)) => format!("X = {n}"),
        (_, Choice::Order(list)) => list
            .iter()
            .map(|o| format!("`{}`", called(state, names, *o)))
            .collect::<Vec<_>>()
            .join(", "),
        (_, Choice::Pick(i)) => format!("option {}", i + 1),
    }
}

/// The scenario step that answers a decision, as a hint.
fn answered_by(state: &GameState, d: &DecisionRequest) -> String {
    let p = state.player_name(d.player());
    match d {
        DecisionRequest::OrderTimestamps { .. } => "`order timestamps:`".into(),
        DecisionRequest::ChooseNext { options, .. } => {
            let listed = option_names(state, options);
            if listed
                .iter()
                .enumerate()
                .any(|(i, n)| listed[..i].contains(n))
            {
                "`choose SOURCE for EVENT(...)` or `choose option N`".into()
            } else {
                "`choose SOURCE`".into()
            }
        }
        DecisionRequest::React { .. } => format!("`{p} takes SOURCE` or `{p} passes`"),
        DecisionRequest::OrderChoices { .. } => "`choose PLAYER`".into(),
        DecisionRequest::PayCost { .. } => format!("`{p} pays` or `{p} declines`"),
        DecisionRequest::ChooseTarget { .. } => "`target NAME`".into(),
        DecisionRequest::ChooseNumber { .. } => format!("`{p} chooses X = N`"),
        DecisionRequest::Play { .. } => format!("`{p} plays \"LABEL\"` or `{p} passes`"),
    }
}

/// How the scenario calls an object: its alias where it has one (the first in order), else its
/// name.
fn called(state: &GameState, names: &HashMap<String, ObjectId>, o: ObjectId) -> String {
    let mut aliases: Vec<&String> = names
        .iter()
        .filter(|(_, id)| **id == o)
        .map(|(a, _)| a)
        .collect();
    aliases.sort();
    aliases
        .first()
        .map_or_else(|| name_of(state, o), |a| a.to_string())
}

/// An occurrence as a scenario writes it: `destroyed(a)`, objects by alias where they have one.
fn occurrence_words(
    state: &GameState,
    names: &HashMap<String, ObjectId>,
    o: &Occurrence,
) -> String {
    let name = state
        .ruleset()
        .event(o.event)
        .map_or_else(|_| format!("event {}", o.event.0), |k| k.name.to_string());
    let args: Vec<String> = o
        .args
        .iter()
        .map(|a| match a {
            Arg::Object(x) => quoted(&called(state, names, *x)),
            _ => a.display(state),
        })
        .collect();
    if args.is_empty() {
        name
    } else {
        format!("{name}({})", args.join(", "))
    }
}

/// Options by their source's name (or a rule by its text), with the occurrence each answers
/// where one source offers several.
fn options_answering(
    state: &GameState,
    names: &HashMap<String, ObjectId>,
    options: &[rulecraft_core::model::decision::ResponseOption],
) -> Vec<String> {
    let plain = option_names(state, options);
    plain
        .iter()
        .zip(options)
        .map(|(n, o)| {
            if plain.iter().filter(|m| *m == n).count() > 1 {
                format!("{n} for {}", occurrence_words(state, names, &o.answering))
            } else {
                n.clone()
            }
        })
        .collect()
}

/// An object's name, for messages (an id that names none is shown as such).
fn name_of(state: &GameState, o: ObjectId) -> String {
    state
        .get_object(o)
        .map_or_else(|| format!("object {}", o.0), |x| x.name.to_string())
}

/// A reader's error as a step's failure.
fn read<T>(r: Result<T, rulecraft_core::ActionError>) -> Result<T, (Option<Span>, String)> {
    r.map_err(|e| (None, e.to_string()))
}

/// Options by their source's name, or a rule by its text.
fn option_names(
    state: &GameState,
    options: &[rulecraft_core::model::decision::ResponseOption],
) -> Vec<String> {
    options
        .iter()
        .map(|o| match o.source {
            Some(s) => format!("`{}`", name_of(state, s)),
            None => format!("\"{}\"", o.text),
        })
        .collect()
}

fn occurrence(
    state: &GameState,
    names: &HashMap<String, ObjectId>,
    o: &SOcc,
) -> Result<Occurrence, (Option<Span>, String)> {
    let mut args = Vec::new();
    for a in &o.args {
        args.push(match a {
            SArg::Object(r) => Arg::Object(obj(state, names, r)?),
            SArg::Player(p) => Arg::Player(PlayerId(*p as u8)),
            SArg::Number(n) => Arg::Number(*n),
            SArg::Zone(z) => Arg::Zone(*z),
            SArg::Counter(k) => Arg::Counter(*k),
            SArg::Property(q) => Arg::Property(*q),
            SArg::Class(k) => Arg::Class(*k),
        });
    }
    Ok(Occurrence::new(o.event, args))
}

/// Whether an occurrence is the one an expectation names: the same event, with the arguments
/// the expectation gives (those it leaves out match any).
fn is_like(o: &Occurrence, want: &Occurrence) -> bool {
    o.event == want.event && o.args.starts_with(&want.args)
}

/// Whether option `o` comes from the object or rule `r` names.
fn option_is(
    state: &GameState,
    names: &HashMap<String, ObjectId>,
    o: &rulecraft_core::model::decision::ResponseOption,
    r: &Ref,
) -> bool {
    match o.source {
        Some(s) => find(state, names, &r.name) == Ok(s),
        None => *o.text == *r.name,
    }
}

/// The options of the pending decision that `n` names (by source, and by the occurrence answered
/// where it says one): exactly one, or an error.
fn pick(
    state: &GameState,
    names: &HashMap<String, ObjectId>,
    options: &[rulecraft_core::model::decision::ResponseOption],
    n: &Named,
) -> Result<usize, (Option<Span>, String)> {
    let r = &n.source;
    let answering = match &n.answering {
        Some(o) => Some(occurrence(state, names, o)?),
        None => None,
    };
    let hits: Vec<usize> = (0..options.len())
        .filter(|i| {
            option_is(state, names, &options[*i], r)
                && answering
                    .as_ref()
                    .is_none_or(|w| is_like(&options[*i].answering, w))
        })
        .collect();
    let listed = options_answering(state, names, options).join(", ");
    match (hits.as_slice(), &answering) {
        ([i], _) => Ok(*i),
        ([], None) => Err((
            Some(r.span),
            format!("`{}` is not among the options: {listed}", r.name),
        )),
        ([], Some(w)) => Err((
            Some(r.span),
            format!(
                "`{}` answering {} is not among the options: {listed}",
                r.name,
                occurrence_words(state, names, w)
            ),
        )),
        (_, _) => Err((
            Some(r.span),
            format!(
                "`{}` offers {} options here ({listed}): name the occurrence answered (`for EVENT(...)` after the source) or the option's number (`choose option N`)",
                r.name,
                hits.len()
            ),
        )),
    }
}

/// The log as text, one line per entry.
pub fn log_text(state: &GameState) -> String {
    state
        .log()
        .iter()
        .map(|e| format!("    {}\n", e.display(state)))
        .collect()
}

/// The object a set-up item or `enter` step puts into a zone (its copy source is resolved by the
/// caller).
fn new_object(e: &crate::lower::scenario::Enter) -> NewObject {
    NewObject {
        class: e.class,
        name: None,
        owner: PlayerId(e.owner as u8),
        controller: e.controller.map(|c| PlayerId(c as u8)),
        zone: e.zone,
        choices: e.choices.clone(),
        copy_of: None,
        face_down: e.face_down,
        attached_to: None,
    }
}

fn copy_of(
    state: &GameState,
    names: &HashMap<String, ObjectId>,
    r: &Option<Ref>,
) -> Result<Option<ObjectId>, (Option<Span>, String)> {
    match r {
        Some(r) => Ok(Some(obj(state, names, r)?)),
        None => Ok(None),
    }
}

fn obj(
    state: &GameState,
    names: &HashMap<String, ObjectId>,
    r: &Ref,
) -> Result<ObjectId, (Option<Span>, String)> {
    find(state, names, &r.name).map_err(|m| (Some(r.span), m))
}

fn act(
    state: &mut GameState,
    a: Action,
) -> Result<rulecraft_core::model::action::Outcome, (Option<Span>, String)> {
    state.apply(a).map_err(|e| (None, e.to_string()))
}

fn run_step(
    state: &mut GameState,
    names: &mut HashMap<String, ObjectId>,
    kind: StepKind,
    env: &Env,
    report: &mut Report,
) -> StepResult {
    let rs = &env.ruleset;
    match kind {
        StepKind::Enter(e) => {
            let attach_to = match &e.attached_to {
                Some(r) => Some(obj(state, names, r)?),
                None => None,
            };
            let mut n = new_object(&e);
            n.copy_of = copy_of(state, names, &e.copying)?;
            // It enters attached: the state-based checks see it attached (CR 303.4f).
            n.attached_to = attach_to;
            let out = act(state, Action::Create(vec![n]))?;
            let id = out.created[0];
            if let Some(a) = e.alias {
                names.insert(a, id);
            }
            for (counter, count) in e.counters {
                act(
                    state,
                    Action::AddCounters {
                        object: id,
                        counter,
                        count,
                    },
                )?;
            }
        }
        StepKind::EnterTogether(list) => {
            let news = list.iter().map(new_object).collect();
            let out = act(state, Action::Create(news))?;
            for (e, id) in list.iter().zip(out.created) {
                if let Some(a) = &e.alias {
                    names.insert(a.clone(), id);
                }
            }
        }
        StepKind::Move { obj: r, zone } => {
            let o = obj(state, names, &r)?;
            act(state, Action::Move { object: o, zone })?;
        }
        StepKind::Attach { obj: r, to } => {
            let o = obj(state, names, &r)?;
            let t = obj(state, names, &to)?;
            act(state, Action::Attach { object: o, to: t })?;
        }
        StepKind::Counters {
            obj: r,
            counter,
            count,
        } => {
            let o = obj(state, names, &r)?;
            act(
                state,
                Action::AddCounters {
                    object: o,
                    counter,
                    count,
                },
            )?;
        }
        StepKind::TurnFace { obj: r, down } => {
            let o = obj(state, names, &r)?;
            act(
                state,
                if down {
                    Action::TurnFaceDown { object: o }
                } else {
                    Action::TurnFaceUp { object: o }
                },
            )?;
        }
        StepKind::Merge {
            obj: r,
            into,
            under,
        } => {
            let o = obj(state, names, &r)?;
            let i = obj(state, names, &into)?;
            act(
                state,
                Action::Merge {
                    object: o,
                    into: i,
                    under,
                },
            )?;
        }
        StepKind::Cast {
            card,
            class,
            by,
            targets,
            choices,
        } => {
            // An alias names an object to cast; so does a name that one object not yet resolved
            // has. Otherwise the card is cast anew (the same card may be cast again).
            let resolved = rs.resolved_zone;
            let unresolved: Vec<ObjectId> = state
                .objects()
                .filter(|o| *o.name == *card.name && Some(o.zone) != resolved)
                .map(|o| o.id)
                .collect();
            let existing = match names.get(&card.name) {
                Some(o) => Some(*o),
                None if unresolved.len() == 1 => Some(unresolved[0]),
                None if unresolved.len() > 1 => {
                    return Err((
                        Some(card.span),
                        format!(
                            "`{}` names {} objects: give each an alias with `as`",
                            card.name,
                            unresolved.len()
                        ),
                    ))
                }
                None => None,
            };
            let spell = match existing {
                Some(o) => o,
                None => {
                    let Some(class) = class else {
                        return Err((
                            Some(card.span),
                            format!("no object or object class is named `{}`", card.name),
                        ));
                    };
                    // A spell cast from outside the game is created where resolved spells go.
                    let zone = rs.resolved_zone.unwrap_or(ZoneId(0));
                    act(
                        state,
                        Action::Create(vec![NewObject {
                            class,
                            name: None,
                            owner: PlayerId(by as u8),
                            controller: None,
                            zone,
                            choices: choices.clone(),
                            copy_of: None,
                            face_down: false,
                            attached_to: None,
                        }]),
                    )?
                    .created[0]
                }
            };
            // A player's name names the player (as in `expect`), else an object.
            let mut ts = Vec::new();
            for t in &targets {
                ts.push(match state.player_id(&t.name) {
                    Some(p) => Subject::Player(p),
                    None => Subject::Object(obj(state, names, t)?),
                });
            }
            act(
                state,
                Action::ResolveTargeting {
                    spell,
                    controller: PlayerId(by as u8),
                    targets: ts,
                    choices,
                },
            )?;
        }
        StepKind::Shuffle { player, zone } => {
            act(
                state,
                Action::Shuffle {
                    player: PlayerId(player as u8),
                    zone,
                },
            )?;
        }
        StepKind::EndTurn => {
            act(state, Action::EndTurn)?;
        }
        StepKind::EndEffects { obj: r } => {
            let o = obj(state, names, &r)?;
            act(state, Action::EndEffectsOf { source: o })?;
        }
        StepKind::SetProp {
            player,
            prop,
            value,
        } => {
            act(
                state,
                Action::SetProperty {
                    player: PlayerId(player as u8),
                    prop,
                    value,
                },
            )?;
        }
        StepKind::Order(list) => {
            let mut ids = Vec::new();
            for r in &list {
                ids.push(obj(state, names, r)?);
            }
            if state.pending_decision().is_none() {
                return Err((
                    None,
                    "no decision is pending: `order timestamps:` answers the order of objects that entered together".into(),
                ));
            }
            state
                .decide(Choice::Order(ids))
                .map_err(|e| (None, e.to_string()))?;
        }
        StepKind::Occur(list) => {
            let mut occs = Vec::new();
            for o in &list {
                occs.push(occurrence(state, names, o)?);
            }
            state
                .occur_together(occs)
                .map_err(|e| (None, e.to_string()))?;
        }
        StepKind::Begin(o) => {
            let o = occurrence(state, names, &o)?;
            state.begin(o).map_err(|e| (None, e.to_string()))?;
        }
        StepKind::EndPeriod(e) => {
            state.end(e).map_err(|e| (None, e.to_string()))?;
        }
        StepKind::Choose(Pick::Index { n, span }) => {
            let Some(d) = state.pending_decision() else {
                return Err((Some(span), "no decision is pending: `choose option N` answers the pending decision with its Nth option".into()));
            };
            let choices = d.choices();
            let Some(c) = usize::try_from(n)
                .ok()
                .and_then(|n| n.checked_sub(1))
                .and_then(|i| choices.get(i))
            else {
                return Err((
                    Some(span),
                    format!(
                        "option {n} is not offered: {} has {} option(s), counted from 1 ({})",
                        state.player_name(d.player()),
                        choices.len(),
                        choices
                            .iter()
                            .enumerate()
                            .map(|(i, c)| format!(
                                "{}: {}",
                                i + 1,
                                choice_words(state, names, d, c)
                            ))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            };
            state.decide(c.clone()).map_err(|e| (None, e.to_string()))?;
        }
        StepKind::Choose(Pick::Named(n)) => {
            let r = &n.source;
            let i = match state.pending_decision() {
                Some(DecisionRequest::ChooseNext { options, .. }) => {
                    pick(state, names, options, &n)?
                }
                Some(DecisionRequest::OrderChoices { choosers, .. }) => {
                    let Some(p) = state.player_id(&r.name) else {
                        return Err((
                            Some(r.span),
                            format!(
                                "`{}` is not a player: this decision is who chooses next",
                                r.name
                            ),
                        ));
                    };
                    choosers.iter().position(|c| *c == p).ok_or_else(|| {
                        (
                            Some(r.span),
                            format!("{} has no choice to make here", r.name),
                        )
                    })?
                }
                d => {
                    return Err(not_answering(
                        state,
                        names,
                        d,
                        &format!("`choose {}`", quoted(&r.name)),
                        "no decision is pending: `choose` answers which response comes next, or who chooses next",
                    ));
                }
            };
            state
                .decide(Choice::Pick(i))
                .map_err(|e| (None, e.to_string()))?;
        }
        StepKind::Take { player, source } => {
            let d = state.pending_decision();
            let Some(DecisionRequest::React {
                options, player: p, ..
            }) = d
            else {
                return Err(not_answering(
                    state,
                    names,
                    d,
                    &format!(
                        "`{} takes {}`",
                        quoted(state.player_name(PlayerId(player as u8))),
                        quoted(&source.source.name)
                    ),
                    "no action round is waiting: `takes` answers a Reaction request",
                ));
            };
            if p.index() != player {
                return Err((
                    None,
                    format!("it is {}'s turn in the action round", state.player_name(*p)),
                ));
            }
            let i = pick(state, names, options, &source)?;
            state
                .decide(Choice::Pick(i))
                .map_err(|e| (None, e.to_string()))?;
        }
        StepKind::PayCost { player, pay } => {
            let d = state.pending_decision();
            let Some(DecisionRequest::PayCost { player: p, .. }) = d else {
                return Err(not_answering(
                    state,
                    names,
                    d,
                    &format!(
                        "`{} {}`",
                        quoted(state.player_name(PlayerId(player as u8))),
                        if pay { "pays" } else { "declines" }
                    ),
                    "no cost is waiting to be paid: `pays` and `declines` answer an optional cost",
                ));
            };
            if p.index() != player {
                return Err((
                    None,
                    format!("the cost is {}'s to pay", state.player_name(*p)),
                ));
            }
            let c = if pay { Choice::Pick(0) } else { Choice::Pass };
            state.decide(c).map_err(|e| (None, e.to_string()))?;
        }
        StepKind::ChooseNumber { player, n } => {
            let d = state.pending_decision();
            let Some(DecisionRequest::ChooseNumber { player: p, .. }) = d else {
                return Err(not_answering(
                    state,
                    names,
                    d,
                    &format!(
                        "`{} chooses X = {n}`",
                        quoted(state.player_name(PlayerId(player as u8)))
                    ),
                    "no number is waiting to be announced: `chooses X = N` answers a spell's `choose X`",
                ));
            };
            if p.index() != player {
                return Err((
                    None,
                    format!("X is {}'s to announce", state.player_name(*p)),
                ));
            }
            state
                .decide(Choice::Number(n))
                .map_err(|e| (None, e.to_string()))?;
        }
        StepKind::StartGame(at) => {
            state.start_game_at(at).map_err(|e| (None, e.to_string()))?;
        }
        StepKind::Play { player, ref label } => {
            let d = state.pending_decision();
            let Some(DecisionRequest::Play {
                player: p, options, ..
            }) = d
            else {
                return Err(not_answering(
                    state,
                    names,
                    d,
                    &format!(
                        "`{} plays`",
                        quoted(state.player_name(PlayerId(player as u8)))
                    ),
                    "the game asks no one what to play: `plays` answers a play request",
                ));
            };
            if p.index() != player {
                return Err((
                    None,
                    format!(
                        "it is {}'s decision to play or pass, not {}'s",
                        state.player_name(*p),
                        state.player_name(PlayerId(player as u8))
                    ),
                ));
            }
            let Some(i) = options.iter().position(|o| o.label == *label) else {
                let list: Vec<String> =
                    options.iter().map(|o| format!("\"{}\"", o.label)).collect();
                return Err((
                    None,
                    format!(
                        "\"{label}\" is not a legal play now; the plays offered: {}",
                        if list.is_empty() {
                            "none".to_string()
                        } else {
                            list.join(", ")
                        }
                    ),
                ));
            };
            state
                .decide(Choice::Pick(i))
                .map_err(|e| (None, e.to_string()))?;
        }
        StepKind::Pass { player } => {
            let d = state.pending_decision();
            let Some(
                DecisionRequest::React { player: p, .. } | DecisionRequest::Play { player: p, .. },
            ) = d
            else {
                return Err(not_answering(
                    state,
                    names,
                    d,
                    &format!(
                        "`{} passes`",
                        quoted(state.player_name(PlayerId(player as u8)))
                    ),
                    "no action round is waiting: `passes` answers a Reaction request",
                ));
            };
            if p.index() != player {
                return Err((
                    None,
                    format!("it is {}'s turn in the action round", state.player_name(*p)),
                ));
            }
            state
                .decide(Choice::Pass)
                .map_err(|e| (None, e.to_string()))?;
        }
        StepKind::Target(r) => {
            let d = state.pending_decision();
            let Some(DecisionRequest::ChooseTarget {
                options, response, ..
            }) = d
            else {
                return Err(not_answering(
                    state,
                    names,
                    d,
                    &format!("`target {}`", quoted(&r.name)),
                    "no decision is pending: `target` answers a target choice",
                ));
            };
            let t = match state.player_id(&r.name) {
                Some(p) => Subject::Player(p),
                None => Subject::Object(obj(state, names, &r)?),
            };
            if !options.contains(&t) {
                return Err((
                    Some(r.span),
                    format!(
                        "`{}` is not a legal target for \"{response}\": the targets are {}",
                        r.name,
                        options
                            .iter()
                            .map(|t| subject_words(state, names, t))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
            state
                .decide(Choice::Target(t))
                .map_err(|e| (None, e.to_string()))?;
        }
        StepKind::Expect(list) => {
            for (e, at) in list {
                report.checked += 1;
                if let Some(f) = check(state, names, &e, at)? {
                    report.failures.push(f);
                }
            }
        }
    }
    Ok(())
}

fn check(
    state: &GameState,
    names: &HashMap<String, ObjectId>,
    e: &Expect,
    at: Span,
) -> Result<Option<Failure>, (Option<Span>, String)> {
    let pname = |p: PlayerId| state.player_name(p).to_string();
    let fail = |message: String| {
        Ok(Some(Failure {
            at,
            message,
            explanation: Some(format!("  the log:\n{}", log_text(state))),
        }))
    };
    let happened: Vec<&Occurrence> = state
        .log()
        .into_iter()
        .filter_map(|e| match &e.what {
            Logged::Happened { occurrence } => Some(occurrence),
            _ => None,
        })
        .collect();
    match e {
        Expect::Happened { occ, yes } => {
            let o = occurrence(state, names, occ)?;
            if happened.iter().any(|h| is_like(h, &o)) != *yes {
                return fail(format!(
                    "expected {} {}",
                    o.display(state),
                    if *yes {
                        "to have happened; it did not"
                    } else {
                        "not to have happened; it did"
                    }
                ));
            }
        }
        Expect::InOrder(list) => {
            let mut want = Vec::new();
            for o in list {
                want.push(occurrence(state, names, o)?);
            }
            let mut k = 0;
            for h in &happened {
                if k < want.len() && is_like(h, &want[k]) {
                    k += 1;
                }
            }
            if k < want.len() {
                return fail(format!(
                    "expected these to happen in this order: {}; {} did not happen after the ones before it",
                    want.iter().map(|o| o.display(state)).collect::<Vec<_>>().join(", "),
                    want[k].display(state)
                ));
            }
        }
        Expect::Winner(want) => {
            let name = |p: Option<PlayerId>| {
                p.map_or("none (a draw)".to_string(), |p| {
                    state.player_name(p).to_string()
                })
            };
            let got = state.winner();
            let want = want.map(|w| w.map(|i| PlayerId(i as u8)));
            if got != want {
                let say = |r: Option<Option<PlayerId>>| match r {
                    None => "the game goes on".to_string(),
                    Some(w) => format!("the game is over, winner {}", name(w)),
                };
                return fail(format!("expected {}; actually {}", say(want), say(got)));
            }
        }
        Expect::Lost { player, yes } => {
            let p = PlayerId(*player as u8);
            let lost = state.players().get(*player).is_some_and(|x| x.lost);
            if lost != *yes {
                return fail(format!(
                    "expected {} {}; {}",
                    state.player_name(p),
                    if *yes {
                        "to have lost"
                    } else {
                        "still in the game"
                    },
                    if lost {
                        "they lost"
                    } else {
                        "they have not lost"
                    }
                ));
            }
        }
        Expect::NoDecision => {
            if let Some(what) = pending(state, names) {
                return fail(format!("expected no decision pending; pending: {what}"));
            }
        }
        Expect::LogHas(t) => {
            if !state
                .log()
                .iter()
                .any(|e| e.display(state).contains(t.as_str()))
            {
                return fail(format!("expected a log line containing \"{t}\""));
            }
        }
        Expect::Plays { player, labels } => {
            let Some(DecisionRequest::Play {
                player: p, options, ..
            }) = state.pending_decision()
            else {
                return fail(format!(
                    "expected the game to ask {} what to play; {}",
                    state.player_name(PlayerId(*player as u8)),
                    pending(state, names).unwrap_or_else(|| "no decision is pending".into())
                ));
            };
            let offered: Vec<&str> = options.iter().map(|o| o.label.as_str()).collect();
            let want: Vec<&str> = labels.iter().map(|s| s.as_str()).collect();
            let show = |v: &[&str]| {
                if v.is_empty() {
                    "nothing".to_string()
                } else {
                    v.iter()
                        .map(|l| format!("\"{l}\""))
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            };
            if p.index() != *player || offered != want {
                return fail(format!(
                    "expected {} to be offered {}; actually {} is offered {}",
                    state.player_name(PlayerId(*player as u8)),
                    show(&want),
                    state.player_name(*p),
                    show(&offered)
                ));
            }
        }
        Expect::Options { player, sources } => {
            // Each option by name: a response by its source (or a rule by its text), a player
            // by name, an object by alias or name.
            let named = |r: &Ref, s: &Subject| match s {
                Subject::Player(p) => state.player_name(*p) == r.name,
                Subject::Object(o) => find(state, names, &r.name) == Ok(*o),
            };
            type Matches<'m> = Box<dyn Fn(&Ref, usize) -> bool + 'm>;
            let (p, listed, matches): (PlayerId, Vec<String>, Matches) =
                match state.pending_decision() {
                    Some(DecisionRequest::ChooseNext {
                        player, options, ..
                    })
                    | Some(DecisionRequest::React {
                        player, options, ..
                    }) => (
                        *player,
                        option_names(state, options),
                        Box::new(move |r: &Ref, i: usize| option_is(state, names, &options[i], r)),
                    ),
                    Some(DecisionRequest::OrderChoices {
                        player, choosers, ..
                    }) => (
                        *player,
                        choosers
                            .iter()
                            .map(|c| state.player_name(*c).to_string())
                            .collect(),
                        Box::new(move |r: &Ref, i: usize| named(r, &Subject::Player(choosers[i]))),
                    ),
                    Some(DecisionRequest::ChooseTarget {
                        player, options, ..
                    }) => (
                        *player,
                        options
                            .iter()
                            .map(|t| match t {
                                Subject::Player(p) => state.player_name(*p).to_string(),
                                Subject::Object(o) => format!("`{}`", name_of(state, *o)),
                            })
                            .collect(),
                        Box::new(move |r: &Ref, i: usize| named(r, &options[i])),
                    ),
                    _ => return fail("expected a decision with options; none is pending".into()),
                };
            let n = listed.len();
            let all_named = sources.iter().all(|r| (0..n).any(|i| matches(r, i)));
            let all_listed = (0..n).all(|i| sources.iter().any(|r| matches(r, i)));
            if p.index() != *player || !all_named || !all_listed {
                return fail(format!(
                    "expected {} to choose from {}; actually {} chooses from {}",
                    state.player_name(PlayerId(*player as u8)),
                    sources
                        .iter()
                        .map(|r| format!("`{}`", r.name))
                        .collect::<Vec<_>>()
                        .join(", "),
                    state.player_name(p),
                    listed.join(", ")
                ));
            }
        }
        Expect::Counters { obj: r, kind, want } => {
            let o = obj(state, names, r)?;
            let object = read(state.object(o))?;
            let actual = match kind {
                Some(k) => object.counter_count(*k),
                None => object
                    .counters
                    .iter()
                    .try_fold(0i64, |a, c| a.checked_add(c.count)),
            };
            if actual != Some(*want) {
                let kind_name = match kind {
                    Some(k) => read(state.ruleset().counter(*k))?.name.as_str(),
                    None => "any",
                };
                return Ok(Some(Failure {
                    at,
                    message: format!(
                        "`{}` {}: expected {want}, actually {}",
                        r.name,
                        counters_of(kind_name),
                        actual.map_or_else(|| "none".to_string(), |n| n.to_string())
                    ),
                    explanation: describe_counters(state, o).ok(),
                }));
            }
        }
        Expect::Zone { obj: r, zone } => {
            let o = obj(state, names, r)?;
            let actual = read(state.object(o))?.zone;
            if actual != *zone {
                let rs = &state.ruleset();
                return Ok(Some(Failure {
                    at,
                    message: format!(
                        "`{}`: expected in {}, actually in {}",
                        r.name,
                        read(rs.zone(*zone))?.name,
                        read(rs.zone(actual))?.name
                    ),
                    explanation: None,
                }));
            }
        }
        Expect::Attached { obj: r, to } => {
            let o = obj(state, names, r)?;
            let want = match to {
                Some(t) => Some(obj(state, names, t)?),
                None => None,
            };
            let actual = read(state.object(o))?.attached_to;
            if actual != want {
                let name = |x: Option<ObjectId>| match x {
                    Some(x) => format!("`{}`", name_of(state, x)),
                    None => "nothing".to_string(),
                };
                return Ok(Some(Failure {
                    at,
                    message: format!(
                        "`{}`: expected attached to {}, actually attached to {}",
                        r.name,
                        name(want),
                        name(actual)
                    ),
                    explanation: None,
                }));
            }
        }
        Expect::Prop { player, prop, want } => {
            let p = PlayerId(*player as u8);
            let actual = read(state.property(p, *prop))?.clone();
            let ok = match want {
                Want::Has(s) | Want::Lacks(s) => {
                    matches!(&actual, Value::Symbols(set) if set.contains(s))
                        == matches!(want, Want::Has(_))
                }
                Want::Equals(v) => actual == *v,
                _ => false,
            };
            if !ok {
                let want_v = match want {
                    Want::Has(s) => format!("to have {s}"),
                    Want::Lacks(s) => format!("to lack {s}"),
                    Want::Equals(v) => v.to_string(),
                    _ => String::new(),
                };
                let d = state.explain();
                return Ok(Some(Failure {
                    at,
                    message: format!(
                        "{} {}: expected {}, actually {}",
                        state.player_name(p),
                        state.ruleset().props[prop.index()].name,
                        want_v,
                        actual
                    ),
                    explanation: describe_player(state, &d, p).ok(),
                }));
            }
        }
        Expect::Char {
            obj: r,
            ch,
            want,
            of_kind,
        } => {
            let o = obj(state, names, r)?;
            let mut actual = read(state.characteristic(o, *ch))?.clone();
            let mut cname = char_def(state.ruleset(), *ch).name.clone();
            if let (Some(k), Value::Abilities(list)) = (of_kind, &actual) {
                actual = Value::Abilities(list.iter().filter(|a| a.is(*k)).cloned().collect());
                cname = format!("{} {cname}", k.name());
            }
            let ok = match want {
                Want::Equals(v) => &actual == v,
                Want::Abilities(list) => {
                    let mut a = ability_names(&actual);
                    let mut b = list.clone();
                    a.sort();
                    b.sort();
                    a == b
                }
                Want::Order(list) => {
                    let d = state.explain();
                    let steps = &d
                        .explanation
                        .as_ref()
                        .expect("explain records steps")
                        .objects[o.index()][ch.index()];
                    let got: Vec<&str> = steps.iter().map(|s| s.source.as_str()).collect();
                    got == list.iter().map(|s| s.as_str()).collect::<Vec<_>>()
                }
                Want::Has(s) | Want::Lacks(s) => {
                    let has = match &actual {
                        Value::Symbols(set) => set.contains(s),
                        Value::Abilities(_) => {
                            ability_names(&actual).iter().any(|n| n == s.as_str())
                        }
                        _ => false,
                    };
                    has == matches!(want, Want::Has(_))
                }
            };
            if !ok {
                let wanted = match want {
                    Want::Equals(v) => v.display_with(&pname),
                    Want::Abilities(l) if l.is_empty() => "none".into(),
                    Want::Abilities(l) => l.join(", "),
                    Want::Order(l) => format!("effects applied in the order {}", l.join(", ")),
                    Want::Has(s) => format!("to have {s}"),
                    Want::Lacks(s) => format!("to lack {s}"),
                };
                let d = state.explain();
                let actually = match want {
                    Want::Order(_) => {
                        let steps = &d
                            .explanation
                            .as_ref()
                            .expect("explain records steps")
                            .objects[o.index()][ch.index()];
                        let names: Vec<&str> = steps.iter().map(|s| s.source.as_str()).collect();
                        format!("in the order {}", names.join(", "))
                    }
                    _ => actual.display_with(&pname),
                };
                return Ok(Some(Failure {
                    at,
                    message: format!(
                        "`{}` {cname}: expected {wanted}, actually {actually}",
                        r.name
                    ),
                    explanation: describe_char(state, &d, o, *ch).ok(),
                }));
            }
        }
    }
    Ok(None)
}
