//! What is under way in a game: the task stack of occurrences being taken through their timing
//! points and of responses being carried out, delayed effects waiting, periods open, and the log.
//! The event procedure (`procedure`) works on it; the state keeps it.

use super::occurrence::{Log, Occurrence, Responder};
use super::response::ResponseDef;
use crate::condition::Subject;
use crate::ids::{ObjectId, PlayerId};
use crate::timing::Point;
use crate::value::Arg;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// One response a decision offers: its source, its rules text, and the occurrence it answers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResponseOption {
    pub source: Option<ObjectId>,
    pub text: Arc<str>,
    pub answering: Occurrence,
}

/// The timing state of a game (`S`: the game state, which a last-known-information snapshot
/// copies): work under way, delayed effects waiting, periods open, the log.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Timing<S> {
    pub(crate) tasks: Vec<Task<S>>,
    pub(crate) delayed: Vec<ActiveDelayed>,
    /// Periods begun and not yet ended, outermost first.
    pub(crate) periods: Vec<Occurrence>,
    pub(crate) log: Log,
    pub(crate) next_delayed: u32,
    /// Whether the last occurrence to finish happened (a cost was paid).
    pub(crate) last_happened: bool,
    /// The responses the pending decision offers, in the order of its options.
    pub(crate) offered: Vec<Cand>,
    /// The target lines whose choosers the pending decision offers, in order.
    pub(crate) offered_targets: Vec<usize>,
    pub(crate) turns_begun: u32,
    /// What the last engine action made as its occurrences happened.
    pub(crate) outcome: Option<crate::action::Outcome>,
}

impl<S> Default for Timing<S> {
    fn default() -> Self {
        Timing {
            tasks: Vec::new(),
            delayed: Vec::new(),
            periods: Vec::new(),
            log: Log::default(),
            next_delayed: 0,
            last_happened: false,
            offered: Vec::new(),
            offered_targets: Vec::new(),
            turns_begun: 0,
            outcome: None,
        }
    }
}

impl<S> Timing<S> {
    pub fn log(&self) -> &Log {
        &self.log
    }

    /// Periods begun and not ended, outermost first.
    pub fn periods(&self) -> &[Occurrence] {
        &self.periods
    }

    /// Whether no occurrence is under way.
    pub fn is_idle(&self) -> bool {
        self.tasks.is_empty()
    }

    /// The same timing state with each last-known-information snapshot made another way (a game
    /// state to its saved form, and back).
    pub(crate) fn map_snapshots<T, E>(
        &self,
        f: &mut dyn FnMut(&S) -> Result<T, E>,
    ) -> Result<Timing<T>, E> {
        let mut tasks = Vec::with_capacity(self.tasks.len());
        for t in &self.tasks {
            tasks.push(match t {
                Task::Run(r) => Task::Run(r.clone()),
                Task::Frame(fr) => Task::Frame(Box::new(Frame {
                    occs: fr.occs.clone(),
                    mode: fr.mode,
                    stage: fr.stage,
                    step: fr.step,
                    st: fr.st.clone(),
                    depth: fr.depth,
                    snapshot: match &fr.snapshot {
                        Some(s) => Some(Arc::new(f(s)?)),
                        None => None,
                    },
                    used: fr.used.clone(),
                    action: fr.action.clone(),
                    state_checks: fr.state_checks,
                })),
            });
        }
        Ok(Timing {
            tasks,
            delayed: self.delayed.clone(),
            periods: self.periods.clone(),
            log: self.log.clone(),
            next_delayed: self.next_delayed,
            last_happened: self.last_happened,
            offered: self.offered.clone(),
            offered_targets: self.offered_targets.clone(),
            turns_begun: self.turns_begun,
            outcome: self.outcome.clone(),
        })
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct ActiveDelayed {
    pub(crate) id: u32,
    pub(crate) def: Arc<ResponseDef>,
    pub(crate) source: Option<ObjectId>,
    pub(crate) you: Option<PlayerId>,
    pub(crate) targets: Vec<Subject>,
    /// The arguments of the occurrence the response that set it up answered ("him").
    pub(crate) bound: Vec<Arg>,
    /// `Some(turn)`: it lasts while that turn does.
    pub(crate) turn: Option<u32>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) enum Task<S> {
    Frame(Box<Frame<S>>),
    Run(Box<Run>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Mode {
    Plain,
    Begin,
    End,
    /// Only "after": an object has entered (it did not exist before).
    AfterOnly,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Stage {
    At(Point),
    Change,
    Begin,
    End,
}

impl Mode {
    pub(crate) fn stages(self) -> &'static [Stage] {
        match self {
            Mode::Plain => &[
                Stage::At(Point::Before),
                Stage::At(Point::When),
                Stage::Change,
                Stage::At(Point::After),
            ],
            Mode::Begin => &[
                Stage::At(Point::Before),
                Stage::Begin,
                Stage::At(Point::AfterBegins),
            ],
            Mode::End => &[
                Stage::At(Point::BeforeEnds),
                Stage::End,
                Stage::At(Point::After),
            ],
            Mode::AfterOnly => &[Stage::At(Point::After)],
        }
    }
}

/// Occurrences that happen at once, going through their timing points together.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Frame<S> {
    pub(crate) occs: Vec<Occ>,
    pub(crate) mode: Mode,
    pub(crate) stage: usize,
    pub(crate) step: usize,
    pub(crate) st: StepState,
    pub(crate) depth: u16,
    /// The state just before the change, where the change took an object out of play: "after"
    /// responses look back to it (last-known information).
    pub(crate) snapshot: Option<Arc<S>>,
    /// Responses already taken, by occurrence: a response answers one trigger at most once.
    pub(crate) used: Vec<(usize, Key)>,
    /// A spell resolving, whose occurrence this is: its change, made if it was not prevented.
    pub(crate) action: Option<Box<crate::action::Action>>,
    /// A round of the state-based checks.
    pub(crate) state_checks: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Occ {
    pub(crate) occ: Occurrence,
    /// Not failed, prevented, substituted, or reduced to zero.
    pub(crate) alive: bool,
    pub(crate) happened: bool,
    /// The first occurrence of the frame it stands or falls with (its own index if none): a
    /// card's `leaves_play` with its `changes_zone`.
    pub(crate) link: usize,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) enum StepState {
    Fresh,
    Ordered(Vec<Cand>),
    Round { turn: PlayerId, passes: usize },
}

/// A response that could answer an occurrence of the frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Cand {
    pub(crate) occ: usize,
    pub(crate) key: Key,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Key {
    /// The response of that index of the object's class.
    Object(ObjectId, u16),
    /// The ruleset's rule of that index.
    Rule(u16),
    /// The delayed effect of that id.
    Delayed(u32),
}

/// A response going through its parts: targets, costs, deeds.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Run {
    /// The task index of the frame it answers.
    pub(crate) frame: usize,
    pub(crate) occ: usize,
    pub(crate) def: Arc<ResponseDef>,
    pub(crate) source: Option<ObjectId>,
    pub(crate) you: Option<PlayerId>,
    pub(crate) targets: Vec<Subject>,
    /// For a delayed effect, the arguments it was set up with.
    pub(crate) bound: Option<Vec<Arg>>,
    /// Targets chosen so far, by target line; the one being chosen now.
    pub(crate) picked: Vec<Option<Subject>>,
    pub(crate) picking: Option<usize>,
    pub(crate) part: usize,
    pub(crate) awaiting_cost: bool,
    /// Its controller chose to pay its optional costs.
    pub(crate) paying: bool,
    pub(crate) depth: u16,
}

impl Run {
    pub(crate) fn responder(&self) -> Responder {
        Responder {
            source: self.source,
            text: self.def.text.clone(),
        }
    }
}
