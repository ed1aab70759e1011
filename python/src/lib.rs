//! rulecraft for Python: a `Game` (a ruleset and content, loaded once), its `State`s (the pending
//! decision's options, answers by index, clone, save and load, observations), and whole games
//! played in Rust with the GIL released (`play_random`).
//!
//! The engine is `rulecraft-core` unchanged: a state changes only through answers to its pending
//! decision, and a refused answer changes nothing.

mod load;
mod observe;

use observe::{options, Layout, DECISION_KINDS};
use pyo3::create_exception;
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyTuple};
use rulecraft_core::explain::describe::{describe_char, describe_object, describe_player};
use rulecraft_core::play::playout::MAX_DECISIONS;
use rulecraft_core::{
    play_many, Agent, Choice, DecisionRequest, GameState, ObjectId, Plan, PlayerId,
    RandomAgent as CoreRandom, Start,
};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

create_exception!(
    _rulecraft,
    LoadError,
    PyValueError,
    "A ruleset, content or deck list that does not load: the message names file:line:col."
);

/// The players' names, in turn order (as `rulecraft play` names them).
const PLAYER_NAMES: &[&str] = &["Ann", "Ben", "Cid", "Dee", "Eve", "Fay", "Gus", "Hal"];

/// What a game is made of: the texts of its ruleset and content, its players, its default decks
/// (name and text; `None`: the bolt deck for each player where the content has its cards), and
/// the observation's bounds. Equal specs make equal games.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Spec {
    ruleset: load::Source,
    content: Vec<load::Source>,
    players: Vec<String>,
    decks: Option<Vec<load::Source>>,
    max_objects: usize,
    max_options: usize,
}

/// A loaded game, shared by its states.
struct Shared {
    spec: Spec,
    /// The game with no objects yet.
    empty: GameState,
    /// The default deck lists, checked.
    decks: Vec<Vec<(String, u32)>>,
    layout: Layout,
}

/// Games loaded in this process by their spec: a state unpickled a thousand times on a worker
/// loads its game once.
static LOADED: Mutex<Option<HashMap<Spec, Arc<Shared>>>> = Mutex::new(None);

fn shared_of(spec: Spec) -> PyResult<Arc<Shared>> {
    if let Ok(guard) = LOADED.lock() {
        if let Some(s) = guard.as_ref().and_then(|m| m.get(&spec)) {
            return Ok(s.clone());
        }
    }
    let names: Vec<&str> = spec.players.iter().map(|s| s.as_str()).collect();
    let empty = load::game(&spec.ruleset, &spec.content, &names).map_err(LoadError::new_err)?;
    let decks = match &spec.decks {
        Some(list) => list
            .iter()
            .map(|(n, t)| load::deck(n, t, &empty))
            .collect::<Result<Vec<_>, _>>()
            .map_err(LoadError::new_err)?,
        // The bolt deck for each player, where the content has its cards.
        None => match load::deck("decks/bolt.deck", load::BOLT, &empty) {
            Ok(bolt) => vec![bolt; names.len()],
            Err(_) => Vec::new(),
        },
    };
    if !decks.is_empty() && decks.len() != names.len() {
        return Err(PyValueError::new_err(format!(
            "{} deck list(s) for {} players",
            decks.len(),
            names.len()
        )));
    }
    let layout = Layout::new(&empty, spec.max_objects, spec.max_options);
    let shared = Arc::new(Shared {
        spec: spec.clone(),
        empty,
        decks,
        layout,
    });
    if let Ok(mut guard) = LOADED.lock() {
        guard
            .get_or_insert_with(HashMap::new)
            .insert(spec, shared.clone());
    }
    Ok(shared)
}

/// A deck as Python gives it: a deck file's text or name, or a list of (card, copies).
#[derive(FromPyObject)]
enum DeckArg {
    List(Vec<(String, u32)>),
    Text(String),
}

/// A deck named, or given as text (one `COPIES NAME` a line), as a source.
fn deck_source(d: &str) -> PyResult<load::Source> {
    if d.contains('\n') || d.trim_start().starts_with(|c: char| c.is_ascii_digit()) {
        return Ok(("deck".to_string(), d.to_string()));
    }
    match load::locate(d, "decks", "deck") {
        Some(p) => load::read(&p).map_err(LoadError::new_err),
        None if d == "bolt" => Ok(("decks/bolt.deck".to_string(), load::BOLT.to_string())),
        None => Err(LoadError::new_err(format!(
            "no deck `{d}`: expected a deck file, the name of one in the project's decks/ folder, or a deck list's text"
        ))),
    }
}

/// A list of (card, copies) as a deck list's text, each name quoted.
fn deck_text(list: &[(String, u32)]) -> PyResult<String> {
    list.iter()
        .map(|(n, c)| {
            if n.contains('"') || n.contains('\n') {
                return Err(LoadError::new_err(format!(
                    "the card name {n:?} cannot be written in a deck list (it holds a quote or a line break)"
                )));
            }
            Ok(format!("{c} \"{n}\"\n"))
        })
        .collect()
}

fn check_list(list: Vec<(String, u32)>, empty: &GameState) -> PyResult<Vec<(String, u32)>> {
    for (name, _) in &list {
        if empty.content().class_id(name).is_none() {
            return Err(LoadError::new_err(format!(
                "unknown card `{name}`: the content has no card of that name"
            )));
        }
    }
    Ok(list)
}

/// A ruleset and its content, loaded once, with the players and their default decks. States are
/// made from it by `new_game(seed)`.
#[pyclass(module = "rulecraft._rulecraft", frozen)]
struct Game {
    shared: Arc<Shared>,
}

impl Game {
    fn decks_of(&self, decks: Option<Vec<DeckArg>>) -> PyResult<Vec<Vec<(String, u32)>>> {
        let Some(decks) = decks else {
            if self.shared.decks.is_empty() {
                return Err(PyValueError::new_err(
                    "this game has no default decks: give one deck list per player",
                ));
            }
            return Ok(self.shared.decks.clone());
        };
        let n = self.shared.spec.players.len();
        if decks.len() != n {
            return Err(PyValueError::new_err(format!(
                "{} deck list(s) for {n} players: give one per player",
                decks.len()
            )));
        }
        decks
            .into_iter()
            .map(|d| match d {
                DeckArg::List(l) => check_list(l, &self.shared.empty),
                DeckArg::Text(t) => {
                    let (name, text) = deck_source(&t)?;
                    load::deck(&name, &text, &self.shared.empty).map_err(LoadError::new_err)
                }
            })
            .collect()
    }

    fn state(&self, py: Python<'_>, state: GameState) -> PyResult<State> {
        Ok(State::new(
            self.shared.clone(),
            state,
            Py::new(py, self.clone_ref())?,
        ))
    }

    fn clone_ref(&self) -> Game {
        Game {
            shared: self.shared.clone(),
        }
    }
}

fn player_names(players: Option<Vec<String>>, n: usize) -> PyResult<Vec<String>> {
    let names = players.unwrap_or_else(|| {
        PLAYER_NAMES[..n.clamp(2, PLAYER_NAMES.len())]
            .iter()
            .map(|s| s.to_string())
            .collect()
    });
    if !(1..=u8::MAX as usize).contains(&names.len()) {
        return Err(PyValueError::new_err("give from 1 to 255 players"));
    }
    Ok(names)
}

#[pymethods]
impl Game {
    /// A game of a ruleset and content, each by path or by name (looked up in the project above
    /// the working folder, as the `rulecraft` command does). With neither, the classic ruleset
    /// and content built into the module. `decks`: each player's default deck (a deck file's
    /// name, path or text, or a list of (card, copies)); by default the bolt deck for the
    /// classic ruleset.
    #[new]
    #[pyo3(signature = (ruleset=None, content=None, players=None, decks=None, max_objects=32, max_options=64))]
    fn py_new(
        ruleset: Option<String>,
        content: Option<Vec<String>>,
        players: Option<Vec<String>>,
        decks: Option<Vec<DeckArg>>,
        max_objects: usize,
        max_options: usize,
    ) -> PyResult<Game> {
        let (builtin_rules, builtin_content) = load::classic();
        let rules = match ruleset.as_deref() {
            None => builtin_rules,
            Some(name) => match load::locate(name, "rulesets", "rules") {
                Some(p) => load::read(&p).map_err(LoadError::new_err)?,
                None if name == "classic" => builtin_rules,
                None => {
                    return Err(LoadError::new_err(format!(
                        "no ruleset `{name}`: expected a path, or the name of one in the project's rulesets/ folder"
                    )))
                }
            },
        };
        let content = match content {
            None if ruleset.is_none() || ruleset.as_deref() == Some("classic") => builtin_content,
            None => {
                return Err(PyValueError::new_err(
                    "give the content (files or folders) of this ruleset",
                ))
            }
            Some(list) => {
                let mut out = Vec::new();
                for name in list {
                    match load::locate(&name, "content", "cards") {
                        Some(p) => out.extend(load::content_files(&p).map_err(LoadError::new_err)?),
                        None if name == "classic" => out.extend(load::classic().1),
                        None => {
                            return Err(LoadError::new_err(format!(
                                "no content `{name}`: expected a path, or the name of a file or folder in the project's content/ folder"
                            )))
                        }
                    }
                }
                out
            }
        };
        Game::from_sources(rules, content, players, decks, max_objects, max_options)
    }

    /// A game from the texts of a ruleset and its content files (each text, or (name, text) to
    /// name it in error messages).
    #[staticmethod]
    #[pyo3(signature = (ruleset, content, players=None, decks=None, max_objects=32, max_options=64))]
    fn from_text(
        ruleset: String,
        content: Vec<Bound<'_, PyAny>>,
        players: Option<Vec<String>>,
        decks: Option<Vec<DeckArg>>,
        max_objects: usize,
        max_options: usize,
    ) -> PyResult<Game> {
        let mut files = Vec::new();
        for (i, c) in content.iter().enumerate() {
            files.push(match c.extract::<(String, String)>() {
                Ok(named) => named,
                Err(_) => (format!("content{i}.cards"), c.extract::<String>()?),
            });
        }
        Game::from_sources(
            ("ruleset.rules".to_string(), ruleset),
            files,
            players,
            decks,
            max_objects,
            max_options,
        )
    }

    /// Rebuilds a game from what `__reduce__` gave (pickling).
    #[staticmethod]
    fn _from_spec(spec: &Bound<'_, PyTuple>) -> PyResult<Game> {
        let (ruleset, content, players, decks, max_objects, max_options) = spec.extract()?;
        let spec = Spec {
            ruleset,
            content,
            players,
            decks,
            max_objects,
            max_options,
        };
        Ok(Game {
            shared: shared_of(spec)?,
        })
    }

    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let py = slf.py();
        let s = &slf.get().shared.spec;
        let spec = (
            s.ruleset.clone(),
            s.content.clone(),
            s.players.clone(),
            s.decks.clone(),
            s.max_objects,
            s.max_options,
        )
            .into_pyobject(py)?;
        let ctor = py.get_type::<Game>().getattr("_from_spec")?;
        Ok((ctor, PyTuple::new(py, [spec])?))
    }

    /// The players' names, in turn order.
    #[getter]
    fn players(&self) -> Vec<String> {
        self.shared.spec.players.clone()
    }

    /// The ruleset's name.
    #[getter]
    fn ruleset_name(&self) -> String {
        self.shared.empty.ruleset().name.clone()
    }

    /// The names of the content's cards, in the order the observation's class parts list them.
    #[getter]
    fn card_names(&self) -> Vec<String> {
        self.shared
            .empty
            .content()
            .classes
            .iter()
            .map(|c| c.name.clone())
            .collect()
    }

    /// The length of an observation.
    #[getter]
    fn observation_size(&self) -> usize {
        self.shared.layout.len()
    }

    /// The length of the option list and its mask.
    #[getter]
    fn max_options(&self) -> usize {
        self.shared.layout.max_options
    }

    /// The observation's parts: (name, offset, length).
    fn observation_parts(&self) -> Vec<(String, usize, usize)> {
        self.shared.layout.parts()
    }

    /// A game dealt from the decks (the default ones if none are given), its shuffles drawn from
    /// `seed`: the same seed and decks give the same game.
    #[pyo3(signature = (seed=0, decks=None))]
    fn new_game(&self, py: Python<'_>, seed: u64, decks: Option<Vec<DeckArg>>) -> PyResult<State> {
        let decks = self.decks_of(decks)?;
        let mut g = self.shared.empty.clone().with_seed(seed);
        g.deal(&decks)
            .map_err(|e| PyValueError::new_err(format!("cannot deal: {e}")))?;
        self.state(py, g)
    }

    /// A state saved by `State.save()` (for this game's ruleset and content). A bad save raises
    /// `ValueError`.
    fn load(&self, py: Python<'_>, data: &[u8]) -> PyResult<State> {
        let s = GameState::load(
            self.shared.empty.ruleset().clone(),
            self.shared.empty.content().clone(),
            data,
        )
        .map_err(|e| PyValueError::new_err(format!("cannot load the save: {e}")))?;
        self.state(py, s)
    }

    /// Plays `n_games` whole games between random agents in Rust, with the GIL released, over
    /// `threads` threads: the games `rulecraft play --games N --seed S` plays. Returns a dict:
    /// `winners` (player index, -1 for a draw or an unfinished game), `turns`, `decisions` (lists),
    /// `elapsed` (seconds).
    #[pyo3(signature = (n_games, seed=0, threads=1, decks=None, max_decisions=MAX_DECISIONS))]
    fn _play_random<'py>(
        &self,
        py: Python<'py>,
        n_games: usize,
        seed: u64,
        threads: usize,
        decks: Option<Vec<DeckArg>>,
        max_decisions: usize,
    ) -> PyResult<Bound<'py, PyDict>> {
        let decks = self.decks_of(decks)?;
        let start = Start::Decks(self.shared.empty.clone(), decks);
        let mut plan = Plan::new(n_games, seed).threads(threads);
        plan.max_decisions = max_decisions;
        let result = py.allow_threads(|| {
            play_many(&start, plan, |seed, p: PlayerId| {
                Box::new(CoreRandom::new(random_seed(seed, p))) as Box<dyn Agent + Send>
            })
        });
        let m = result.map_err(|e| PyValueError::new_err(format!("a game stopped: {e}")))?;
        let out = PyDict::new(py);
        let winners: Vec<i64> = m
            .games
            .iter()
            .map(|g| g.winner.map_or(-1, |p| p.index() as i64))
            .collect();
        let turns: Vec<u32> = m.games.iter().map(|g| g.turns).collect();
        let decisions: Vec<usize> = m.games.iter().map(|g| g.decisions).collect();
        let finished: Vec<bool> = m.games.iter().map(|g| g.finished).collect();
        out.set_item("winners", winners)?;
        out.set_item("turns", turns)?;
        out.set_item("decisions", decisions)?;
        out.set_item("finished", finished)?;
        out.set_item("elapsed", m.elapsed.as_secs_f64())?;
        Ok(out)
    }

    fn __repr__(&self) -> String {
        format!(
            "Game(ruleset={:?}, players={:?})",
            self.shared.empty.ruleset().name,
            self.shared.spec.players
        )
    }
}

impl Game {
    fn from_sources(
        ruleset: load::Source,
        content: Vec<load::Source>,
        players: Option<Vec<String>>,
        decks: Option<Vec<DeckArg>>,
        max_objects: usize,
        max_options: usize,
    ) -> PyResult<Game> {
        let default_decks = decks.is_none();
        let players = player_names(players, decks.as_ref().map_or(2, |d| d.len()))?;
        let deck_sources: Vec<load::Source> = match decks {
            None => Vec::new(),
            Some(list) => list
                .into_iter()
                .map(|d| match d {
                    DeckArg::Text(t) => deck_source(&t),
                    DeckArg::List(l) => deck_text(&l).map(|t| ("deck".to_string(), t)),
                })
                .collect::<PyResult<_>>()?,
        };
        let spec = Spec {
            ruleset,
            content,
            players,
            decks: (!default_decks).then_some(deck_sources),
            max_objects: max_objects.max(1),
            max_options: max_options.max(2),
        };
        Ok(Game {
            shared: shared_of(spec)?,
        })
    }
}

/// Each player's random agent in game `seed`, as `rulecraft play` seeds it.
fn random_seed(seed: u64, p: PlayerId) -> u64 {
    seed ^ (u64::from(p.0) + 1).wrapping_mul(0xD1B5_4A32_D192_ED03)
}

/// A game under way: the pending decision with its options, answers by index, the current
/// player, the end and its returns, the log, explanations, observations, save and load.
#[pyclass(module = "rulecraft._rulecraft")]
struct State {
    shared: Arc<Shared>,
    state: GameState,
    game: Py<Game>,
    /// The pending decision's options, listed once per decision.
    options: Option<Vec<(String, Choice)>>,
    /// The observation as last written (its buffer reused).
    scratch: Vec<f32>,
}

impl State {
    fn new(shared: Arc<Shared>, state: GameState, game: Py<Game>) -> State {
        State {
            shared,
            state,
            game,
            options: None,
            scratch: Vec::new(),
        }
    }

    fn opts(&mut self) -> &Vec<(String, Choice)> {
        if self.options.is_none() {
            self.options = Some(if self.state.is_over() {
                Vec::new()
            } else {
                options(&self.state)
            });
        }
        self.options.get_or_insert_with(Vec::new)
    }

    /// Takes option `index`; an index past the options or an answer the engine refuses raises
    /// `ValueError` and changes nothing.
    fn answer(&mut self, index: usize) -> PyResult<()> {
        let n = self.opts().len();
        let Some(choice) = self.opts().get(index).map(|(_, c)| c.clone()) else {
            return Err(PyValueError::new_err(if n == 0 {
                "no decision is pending: the game is over".to_string()
            } else {
                format!("option {index} of {n}: there is no such option")
            }));
        };
        self.state
            .decide(choice)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        self.options = None;
        Ok(())
    }

    fn current(&self) -> Option<PlayerId> {
        if self.state.is_over() {
            return None;
        }
        self.state.pending_decision().map(|d| d.player())
    }

    fn player_of(&self, player: i64) -> PyResult<PlayerId> {
        if player < 0 || player as usize >= self.state.players().len() {
            return Err(PyIndexError::new_err(format!(
                "no player {player}: the game has {}",
                self.state.players().len()
            )));
        }
        Ok(PlayerId(player as u8))
    }
}

/// What `State.__reduce__` gives pickle: the loading function and its arguments.
type Reduced<'py> = (Bound<'py, PyAny>, (Py<Game>, Bound<'py, PyBytes>));

/// numpy.frombuffer and the dtypes float32 and int8, looked up once.
static NUMPY: GILOnceCell<(PyObject, PyObject, PyObject)> = GILOnceCell::new();

/// A writable numpy array (float32, or int8 when not `float`) over a new bytearray of `len`
/// bytes that `fill` writes.
fn array<'py>(
    py: Python<'py>,
    len: usize,
    float: bool,
    fill: impl FnOnce(&mut [u8]),
) -> PyResult<Bound<'py, PyAny>> {
    let (frombuffer, f32_dtype, i8_dtype) = NUMPY.get_or_try_init(py, || -> PyResult<_> {
        let np = py.import("numpy")?;
        let dtype = np.getattr("dtype")?;
        Ok((
            np.getattr("frombuffer")?.unbind(),
            dtype.call1(("float32",))?.unbind(),
            dtype.call1(("int8",))?.unbind(),
        ))
    })?;
    let bytes = PyByteArray::new_with(py, len, |b| {
        fill(b);
        Ok(())
    })?;
    let dtype = if float { f32_dtype } else { i8_dtype };
    frombuffer.bind(py).call1((bytes, dtype.bind(py)))
}

#[pymethods]
impl State {
    /// The game this state belongs to.
    #[getter]
    fn game(&self, py: Python<'_>) -> Py<Game> {
        self.game.clone_ref(py)
    }

    /// The player who must answer the pending decision (an index in turn order); `None` once the
    /// game is over.
    #[getter]
    fn current_player(&self) -> Option<usize> {
        self.current().map(|p| p.index())
    }

    /// The number of players.
    #[getter]
    fn num_players(&self) -> usize {
        self.state.players().len()
    }

    /// The turn number.
    #[getter]
    fn turn(&self) -> u32 {
        self.state.turn()
    }

    /// The active player.
    #[getter]
    fn active_player(&self) -> usize {
        self.state.active().index()
    }

    /// The pending decision's kind (`play`, `choose_target`, `react`, ...), `None` once over.
    #[getter]
    fn decision_kind(&self) -> Option<&'static str> {
        if self.state.is_over() {
            return None;
        }
        self.state
            .pending_decision()
            .map(|d| DECISION_KINDS[observe::decision_kind(d)])
    }

    /// Whether the game is over.
    fn is_terminal(&self) -> bool {
        self.state.is_over()
    }

    /// The winner's index; `None` while the game goes on or for a draw.
    #[getter]
    fn winner(&self) -> Option<usize> {
        self.state.winner().flatten().map(|p| p.index())
    }

    /// Each player's return: 1 for the winner, -1 for the others, 0 for all in a draw or while the
    /// game goes on.
    fn returns(&self) -> Vec<f64> {
        let n = self.state.players().len();
        match self.state.winner() {
            Some(Some(w)) => (0..n)
                .map(|p| if p == w.index() { 1.0 } else { -1.0 })
                .collect(),
            _ => vec![0.0; n],
        }
    }

    /// The pending decision's options, as readable labels, in the order their indexes give.
    fn options(&mut self) -> Vec<String> {
        self.opts().iter().map(|(l, _)| l.clone()).collect()
    }

    /// How many options the pending decision has (0 once the game is over).
    fn num_options(&mut self) -> usize {
        self.opts().len()
    }

    /// The indexes of the legal options.
    fn legal_actions(&mut self) -> Vec<usize> {
        (0..self.opts().len()).collect()
    }

    /// Takes option `index` of the pending decision. An illegal index raises `ValueError` and
    /// leaves the state as it was.
    fn apply(&mut self, index: i64) -> PyResult<()> {
        if index < 0 {
            return Err(PyValueError::new_err(format!(
                "option {index}: an option index is from 0"
            )));
        }
        self.answer(index as usize)
    }

    /// `apply(index)`, then the player to answer next (-1 once the game is over).
    fn step(&mut self, index: i64) -> PyResult<i64> {
        self.apply(index)?;
        Ok(self.current().map_or(-1, |p| p.index() as i64))
    }

    /// Answers the decisions of every player but `player` with `agent` until `player` must
    /// decide or the game is over; returns how many decisions were answered.
    fn play_others(&mut self, player: i64, agent: &mut RandomAgent) -> PyResult<usize> {
        let me = self.player_of(player)?;
        let mut n = 0;
        while let Some(p) = self.current() {
            if p == me {
                break;
            }
            let i = agent.pick(self);
            self.answer(i)?;
            n += 1;
        }
        Ok(n)
    }

    /// An independent copy (cheap: it shares what neither changes).
    fn clone(&self, py: Python<'_>) -> State {
        State {
            shared: self.shared.clone(),
            state: self.state.clone(),
            game: self.game.clone_ref(py),
            options: self.options.clone(),
            scratch: Vec::new(),
        }
    }

    fn __copy__(&self, py: Python<'_>) -> State {
        self.clone(py)
    }

    fn __deepcopy__(&self, py: Python<'_>, _memo: &Bound<'_, PyAny>) -> State {
        self.clone(py)
    }

    /// The state saved as bytes (docs/save-format.md); `Game.load` reads them.
    fn save<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.state.save())
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Reduced<'py>> {
        let py = slf.py();
        let me = slf.borrow();
        let load = py.import("rulecraft._rulecraft")?.getattr("_load_state")?;
        Ok((load, (me.game.clone_ref(py), me.save(py))))
    }

    /// The event log, one line per occurrence or response, indented under what caused it.
    fn log(&self) -> Vec<String> {
        self.state
            .log()
            .iter()
            .map(|e| e.display(&self.state))
            .collect()
    }

    /// How an object's characteristic (or all of them, or a player's properties) got its value:
    /// the base value, then every effect that changed it, layer by layer. `object`: an object id
    /// or a name that only one object has, or a player's name.
    #[pyo3(signature = (object, characteristic=None))]
    fn explain(&self, object: &Bound<'_, PyAny>, characteristic: Option<&str>) -> PyResult<String> {
        let s = &self.state;
        let d = s.explain();
        let bad = |e: rulecraft_core::ActionError| PyValueError::new_err(e.to_string());
        let o = if let Ok(id) = object.extract::<u32>() {
            ObjectId(id)
        } else {
            let name: String = object.extract()?;
            if let Some(p) = s.player_id(&name) {
                return describe_player(s, &d, p).map_err(bad);
            }
            s.find(&name).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "no object `{name}`, or more than one: give an object id"
                ))
            })?
        };
        match characteristic {
            None => describe_object(s, &d, o).map_err(bad),
            Some(c) => {
                let ch = s.ruleset().char_id(c).ok_or_else(|| {
                    PyValueError::new_err(format!("no characteristic `{c}` in the ruleset"))
                })?;
                describe_char(s, &d, o, ch).map_err(bad)
            }
        }
    }

    /// The objects: (id, name, owner, zone) for each.
    fn objects(&self) -> Vec<(u32, String, usize, String)> {
        let r = self.state.ruleset();
        self.state
            .objects()
            .map(|o| {
                let zone = r.zones.get(o.zone.index()).map_or("?", |z| z.name.as_str());
                (
                    o.id.0,
                    o.name.to_string(),
                    o.owner.index(),
                    zone.to_string(),
                )
            })
            .collect()
    }

    /// What `player` sees, as a float32 vector of `Game.observation_size` numbers (the same for
    /// the same state, byte for byte), and the pending decision's option mask (int8, `max_options`
    /// long: 1 for each legal option of `player`'s decision, else 0).
    fn observe<'py>(
        &mut self,
        py: Python<'py>,
        player: i64,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let me = self.player_of(player)?;
        let legal = self.encode(me)?;
        let obs = &self.scratch;
        let obs = array(py, obs.len() * 4, true, |b| write_f32(b, obs))?;
        let mask = array(py, self.shared.layout.max_options, false, |b| {
            b[..legal].fill(1)
        })?;
        Ok((obs, mask))
    }

    /// The observation and the mask as bytes (what `observe` wraps).
    fn observe_bytes<'py>(
        &mut self,
        py: Python<'py>,
        player: i64,
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        let me = self.player_of(player)?;
        let legal = self.encode(me)?;
        let obs = &self.scratch;
        let obs = PyBytes::new_with(py, obs.len() * 4, |b| {
            write_f32(b, obs);
            Ok(())
        })?;
        let mask = PyBytes::new_with(py, self.shared.layout.max_options, |b| {
            b[..legal].fill(1);
            Ok(())
        })?;
        Ok((obs, mask))
    }

    fn __repr__(&mut self) -> String {
        format!(
            "State(turn={}, player={:?}, decision={:?}, options={})",
            self.state.turn(),
            self.current().map(|p| p.index()),
            self.decision_kind(),
            self.opts().len()
        )
    }
}

/// Little-endian float32s, as numpy reads them on the machines Python runs on.
fn write_f32(out: &mut [u8], values: &[f32]) {
    for (b, x) in out.chunks_exact_mut(4).zip(values) {
        b.copy_from_slice(&x.to_le_bytes());
    }
}

impl State {
    /// Writes what `me` sees into `scratch`; returns how many options `me` may take now (0 when
    /// another player decides or the game is over).
    fn encode(&mut self, me: PlayerId) -> PyResult<usize> {
        let legal = if self.current() == Some(me) {
            self.opts().len()
        } else {
            0
        };
        let max = self.shared.layout.max_options;
        if legal > max {
            return Err(PyValueError::new_err(format!(
                "a decision with {legal} options: make the Game with max_options of at least {legal} (it has {max})"
            )));
        }
        let layout = &self.shared.layout;
        layout.observe(&self.state, me, &mut self.scratch);
        Ok(legal)
    }
}

/// The benchmark's random player (`rulecraft play --agents random`): with options besides
/// passing it passes three times in ten, else takes one of the others; a target is an opponent
/// when one is offered. Seeded: the same seed picks alike.
#[pyclass(module = "rulecraft._rulecraft")]
struct RandomAgent {
    agent: CoreRandom,
}

impl RandomAgent {
    fn pick(&mut self, state: &mut State) -> usize {
        let opts: Vec<rulecraft_core::DecisionOption> = state
            .opts()
            .iter()
            .map(|(label, choice)| rulecraft_core::DecisionOption {
                label: label.clone(),
                choice: choice.clone(),
            })
            .collect();
        // An order of timestamps has one option here, taken without the agent (as `play_game`
        // answers it), so the agent draws what it draws in `play_random`.
        if let Some(DecisionRequest::OrderTimestamps { .. }) = state.state.pending_decision() {
            return 0;
        }
        self.agent.choose(&state.state, &opts)
    }
}

#[pymethods]
impl RandomAgent {
    #[new]
    #[pyo3(signature = (seed=0))]
    fn py_new(seed: u64) -> Self {
        RandomAgent {
            agent: CoreRandom::new(seed),
        }
    }

    /// The option this agent takes in `state`'s pending decision.
    fn choose(&mut self, mut state: PyRefMut<'_, State>) -> PyResult<usize> {
        if state.opts().is_empty() {
            return Err(PyValueError::new_err("no decision is pending"));
        }
        Ok(self.pick(&mut state))
    }
}

/// Game `index` of `play_random(n, seed)`: its seed (for `Game.new_game`) and each player's
/// random agent's seed (for `RandomAgent`), so the same game can be replayed through the API.
#[pyfunction]
fn random_game_seeds(seed: u64, index: usize, players: usize) -> (u64, Vec<u64>) {
    let s = Start::game_seed(seed, index);
    let agents = (0..players.min(u8::MAX as usize))
        .map(|p| random_seed(s, PlayerId(p as u8)))
        .collect();
    (s, agents)
}

/// A pickled state: its game and its save.
#[pyfunction]
fn _load_state(py: Python<'_>, game: &Bound<'_, Game>, data: &[u8]) -> PyResult<State> {
    game.get().load(py, data)
}

#[pymodule]
fn _rulecraft(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Game>()?;
    m.add_class::<State>()?;
    m.add_class::<RandomAgent>()?;
    m.add_function(wrap_pyfunction!(_load_state, m)?)?;
    m.add_function(wrap_pyfunction!(random_game_seeds, m)?)?;
    m.add("LoadError", m.py().get_type::<LoadError>())?;
    m.add("DECISION_KINDS", DECISION_KINDS.to_vec())?;
    Ok(())
}
