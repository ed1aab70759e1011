//! Saving a game and loading it again (docs/save-format.md). A save is JSON: an envelope with a
//! magic string, the format version, fingerprints of the ruleset and content it was made for, and
//! the state. The ruleset and content are not in it; values derived from the state (the layer
//! system's derivation, the base values, the indexes of objects in play, of attachments and by
//! class) are rebuilt on load.

use super::{GameState, Parts, Player};
use crate::model::content::Content;
use crate::model::decision::DecisionRequest;
use crate::model::effect::CreatedEffect;
use crate::model::ids::{
    CharId, ClassId, CounterId, EventId, LayerId, ObjectId, PlayerId, PropId, TypeId, ZoneId,
};
use crate::model::object::GameObject;
use crate::model::ruleset::Ruleset;
use crate::model::value::{Symbol, Value};
use crate::state::{Key, Stage, Task, Timing};
use serde::{Deserialize, Deserializer, Serialize};
use std::cell::Cell;
use std::fmt;
use std::sync::Arc;

/// What every save begins with.
pub const SAVE_MAGIC: &str = "rulecraft-save";
/// The save format this engine writes and reads.
pub const SAVE_VERSION: u32 = 2;

/// Why a save did not load. Nothing loads from a bad save.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SaveError {
    /// The bytes are not a rulecraft save (no magic string).
    NotASave,
    /// A save of another format version.
    Version {
        /// The version the save has.
        found: u32,
        /// The version this engine reads ([`SAVE_VERSION`]).
        supported: u32,
    },
    /// Made for another ruleset (fingerprints, in hex).
    OtherRuleset {
        /// The fingerprint of the ruleset the save was made with.
        saved: String,
        /// The fingerprint of the ruleset given to load it with.
        given: String,
    },
    /// Made for other content (fingerprints, in hex).
    OtherContent {
        /// The fingerprint of the content the save was made with.
        saved: String,
        /// The fingerprint of the content given to load it with.
        given: String,
    },
    /// Truncated or corrupted: what was wrong.
    Corrupt(String),
}

impl fmt::Display for SaveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SaveError::NotASave => write!(f, "not a rulecraft save"),
            SaveError::Version { found, supported } => write!(
                f,
                "a save of format version {found}; this engine reads version {supported}"
            ),
            SaveError::OtherRuleset { saved, given } => write!(
                f,
                "the save was made for another ruleset (fingerprint {saved}, this one is {given})"
            ),
            SaveError::OtherContent { saved, given } => write!(
                f,
                "the save was made for other content (fingerprint {saved}, this one is {given})"
            ),
            SaveError::Corrupt(m) => write!(f, "the save is truncated or corrupted: {m}"),
        }
    }
}

impl std::error::Error for SaveError {}

/// The envelope around a saved state.
#[derive(Serialize, Deserialize)]
struct Envelope<S> {
    magic: String,
    version: u32,
    ruleset: String,
    content: String,
    state: S,
}

/// A game state as saved: what `GameState` holds that is not derived, nor the ruleset or content.
#[derive(Clone, Serialize, Deserialize)]
struct SavedState {
    players: Vec<Player>,
    player_props: Vec<Vec<Value>>,
    objects: Vec<Arc<GameObject>>,
    effects: Vec<Arc<CreatedEffect>>,
    active: PlayerId,
    turn: u32,
    next_timestamp: u64,
    next_effect_id: u32,
    pending: Option<Arc<DecisionRequest>>,
    /// Without its last-known-information snapshots, which `snapshots` holds.
    timing: Timing,
    /// The random source, where its draws have got to.
    #[serde(default)]
    random: crate::model::random::Random,
    /// Each last-known-information snapshot as a nested state, with the index of the task (an
    /// occurrence frame) that keeps it.
    snapshots: Vec<(usize, SavedState)>,
}

/// 64-bit FNV-1a over bytes: a stable hash (the same on every run and machine).
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The fingerprint of something serializable: FNV-1a over its JSON, in hex.
fn fingerprint<T: Serialize + ?Sized>(x: &T) -> String {
    let bytes = serde_json::to_vec(x).unwrap_or_default();
    format!("{:016x}", fnv1a(&bytes))
}

/// The fingerprint of a ruleset, as a save records it.
pub fn ruleset_fingerprint(r: &Ruleset) -> String {
    fingerprint(r)
}

/// The fingerprint of content, as a save records it.
pub fn content_fingerprint(c: &Content) -> String {
    fingerprint(c)
}

impl GameState {
    /// The game saved (docs/save-format.md).
    pub fn save(&self) -> Vec<u8> {
        let env = Envelope {
            magic: SAVE_MAGIC.to_string(),
            version: SAVE_VERSION,
            ruleset: ruleset_fingerprint(&self.ruleset),
            content: content_fingerprint(&self.content),
            state: self.saved(),
        };
        // Every saved type serializes to JSON (string keys, no failing impls).
        serde_json::to_vec(&env).unwrap_or_default()
    }

    fn saved(&self) -> SavedState {
        let snapshots = self
            .timing
            .tasks
            .iter()
            .enumerate()
            .filter_map(|(i, t)| match t {
                Task::Frame(f) => f.snapshot.as_ref().map(|s| (i, s.saved())),
                Task::Run(_) | Task::Batch(_) => None,
            })
            .collect();
        SavedState {
            players: self.players.to_vec(),
            player_props: self.player_props.to_vec(),
            objects: self.objects.to_vec(),
            effects: self.effects.clone(),
            active: self.active,
            turn: self.turn,
            next_timestamp: self.next_timestamp,
            next_effect_id: self.next_effect_id,
            pending: self.pending.clone(),
            timing: (*self.timing).clone(),
            random: self.random,
            snapshots,
        }
    }

    /// A game loaded from a save made for this ruleset and content. The save's ids are checked:
    /// a bad save is an error, never a later panic.
    pub fn load(
        ruleset: Arc<Ruleset>,
        content: Arc<Content>,
        bytes: &[u8],
    ) -> Result<GameState, SaveError> {
        let head = format!("{{\"magic\":\"{SAVE_MAGIC}\"");
        if !bytes.starts_with(head.as_bytes()) {
            return Err(SaveError::NotASave);
        }
        let corrupt = |e: serde_json::Error| SaveError::Corrupt(e.to_string());
        let env: Envelope<serde_json::Value> = serde_json::from_slice(bytes).map_err(corrupt)?;
        if env.magic != SAVE_MAGIC {
            return Err(SaveError::NotASave);
        }
        if env.version != SAVE_VERSION {
            return Err(SaveError::Version {
                found: env.version,
                supported: SAVE_VERSION,
            });
        }
        // The ruleset as a game uses it (with the built-in events), as it was when saved.
        let empty = GameState::new(ruleset, content, &[]);
        let given = ruleset_fingerprint(&empty.ruleset);
        if env.ruleset != given {
            return Err(SaveError::OtherRuleset {
                saved: env.ruleset,
                given,
            });
        }
        let given = content_fingerprint(&empty.content);
        if env.content != given {
            return Err(SaveError::OtherContent {
                saved: env.content,
                given,
            });
        }
        let count = |k: &str| {
            env.state
                .get(k)
                .and_then(|v| v.as_array())
                .map_or(0, |a| a.len())
        };
        let r = &empty.ruleset;
        let limits = Limits {
            objects: count("objects"),
            players: count("players"),
            classes: empty.content.classes.len(),
            chars: r.characteristics.len(),
            props: r.props.len(),
            zones: r.zones.len(),
            counters: r.counters.len(),
            events: r.events.len(),
            layers: r.layers.len(),
            types: r.types.len(),
        };
        let saved: SavedState = {
            let _guard = LimitsGuard::set(limits);
            serde_json::from_value(env.state).map_err(corrupt)?
        };
        empty.restore(saved).map_err(SaveError::Corrupt)
    }

    /// The state a saved state stands for, on this state's ruleset and content, with what is
    /// derived rebuilt; checks what the ids cannot say alone.
    fn restore(&self, s: SavedState) -> Result<GameState, String> {
        if s.players.is_empty() || s.players.len() > usize::from(u8::MAX) {
            return Err(format!("a game of {} players", s.players.len()));
        }
        if s.player_props.len() != s.players.len()
            || s.player_props
                .iter()
                .any(|p| p.len() != self.ruleset.props.len())
        {
            return Err("the player properties do not match the players".into());
        }
        for (i, o) in s.objects.iter().enumerate() {
            if o.id.index() != i {
                return Err(format!("object {i} is saved with id {}", o.id.0));
            }
            for p in [o.owner, o.controller] {
                if p.index() >= s.players.len() {
                    return Err(format!("object {i} names player {}", p.0));
                }
            }
        }
        if s.active.index() >= s.players.len() {
            return Err(format!("the active player {} does not exist", s.active.0));
        }
        let mut timing = s.timing;
        for (at, snapshot) in s.snapshots {
            match timing.tasks.get_mut(at) {
                Some(Task::Frame(f)) if f.snapshot.is_none() => {
                    f.snapshot = Some(Arc::new(self.restore(snapshot)?));
                }
                _ => {
                    return Err(format!(
                        "a snapshot for task {at}, which is no occurrence frame"
                    ))
                }
            }
        }
        check_timing(
            &timing,
            s.pending.as_deref(),
            &s.objects,
            &self.content,
            &self.ruleset,
        )?;
        Ok(self.with_parts(Parts {
            players: s.players,
            player_props: s.player_props,
            objects: s.objects,
            effects: s.effects,
            active: s.active,
            turn: s.turn,
            next_timestamp: s.next_timestamp,
            next_effect_id: s.next_effect_id,
            pending: s.pending,
            timing,
            random: s.random,
        }))
    }
}

/// Checks the indexes inside the timing state: a run names a frame before it and an occurrence
/// of it, a response key names a response that exists.
fn check_timing(
    t: &Timing,
    pending: Option<&DecisionRequest>,
    objects: &[Arc<GameObject>],
    content: &Content,
    ruleset: &Ruleset,
) -> Result<(), String> {
    let key_ok = |k: &Key| match *k {
        Key::Object(o, class, i) => {
            objects.get(o.index()).is_some()
                && content
                    .classes
                    .get(class.index())
                    .is_some_and(|c| usize::from(i) < c.responses.len())
        }
        Key::Rule(i) => usize::from(i) < ruleset.rules.len(),
        Key::Delayed(id) => t.delayed.iter().any(|d| d.id == id),
    };
    if let Some(f) = &t.flow {
        let phases = ruleset
            .turn_structure
            .as_ref()
            .map_or(0, |ts| ts.phases.len());
        if f.phase >= phases
            || f.used
                .iter()
                .any(|k| usize::from(*k) >= ruleset.plays.len())
        {
            return Err("the turn structure under way does not fit the ruleset".into());
        }
    }
    for (at, task) in t.tasks.iter().enumerate() {
        match task {
            Task::Frame(f) => {
                let n = f.occs.len();
                if n == 0
                    || f.stage >= f.mode.stages().len()
                    || f.occs.iter().any(|o| o.link >= n)
                    || f.used.iter().any(|(i, k)| *i >= n || !key_ok(k))
                {
                    return Err(format!("task {at}: a bad occurrence frame"));
                }
                if let crate::state::StepState::Ordered(c) = &f.st {
                    if c.iter().any(|c| c.occ >= n || !key_ok(&c.key)) {
                        return Err(format!("task {at}: a bad response order"));
                    }
                }
            }
            // Its ids are checked as they are read.
            Task::Batch(_) => {}
            Task::Run(r) => {
                // A response answers a frame below it; an announced or resolving batch item
                // stands on its batch and answers nothing.
                let occs = match t.tasks.get(r.frame) {
                    Some(Task::Frame(f)) if r.frame < at => f.occs.len(),
                    Some(Task::Batch(_)) if r.frame < at => 1,
                    _ => return Err(format!("task {at}: a response to no frame")),
                };
                let nt = r.def.targets.len();
                if r.occ >= occs
                    || !(r.picked.is_empty() || r.picked.len() == nt)
                    || r.picking.is_some_and(|p| p >= nt)
                    || r.part > nt + r.def.costs.len() + r.def.deeds.len()
                {
                    return Err(format!("task {at}: a bad response run"));
                }
            }
        }
    }
    // The decision pending is one the task on top asks (CR 117.3: a player is asked only when
    // the game is at that point).
    let top = t.tasks.last();
    let fits = match pending {
        None | Some(DecisionRequest::OrderTimestamps { .. }) => true,
        Some(
            DecisionRequest::ChooseNext { options, .. } | DecisionRequest::React { options, .. },
        ) => {
            matches!(top, Some(Task::Frame(f))
                if matches!(f.mode.stages()[f.stage], Stage::At(_))
                    && options.len() == t.offered.len()
                    && t.offered.iter().all(|c| c.occ < f.occs.len() && key_ok(&c.key)))
        }
        Some(DecisionRequest::OrderChoices { choosers, .. }) => {
            matches!(top, Some(Task::Run(r))
                if choosers.len() == t.offered_targets.len()
                    && t.offered_targets.iter().all(|i| *i < r.def.targets.len()))
        }
        Some(
            DecisionRequest::PayCost { .. }
            | DecisionRequest::ChooseTarget { .. }
            | DecisionRequest::ChooseNumber { .. },
        ) => {
            matches!(top, Some(Task::Run(_)))
        }
        // Asked in the neutral state of a phase, or adding to a batch.
        Some(DecisionRequest::Play { in_batch, .. }) => match top {
            None => !in_batch && t.flow.is_some(),
            Some(Task::Batch(b)) => *in_batch && b.adding.is_some(),
            _ => false,
        },
    };
    if !fits {
        return Err("the pending decision is not the one the game is at".into());
    }
    Ok(())
}

/// How many of each kind of id the save being loaded has: an id past them is an error.
#[derive(Clone, Copy)]
struct Limits {
    objects: usize,
    players: usize,
    classes: usize,
    chars: usize,
    props: usize,
    zones: usize,
    counters: usize,
    events: usize,
    layers: usize,
    types: usize,
}

thread_local! {
    static LIMITS: Cell<Option<Limits>> = const { Cell::new(None) };
}

/// The limits for the load under way, cleared when it ends.
struct LimitsGuard(Option<Limits>);

impl LimitsGuard {
    fn set(l: Limits) -> LimitsGuard {
        LimitsGuard(LIMITS.with(|c| c.replace(Some(l))))
    }
}

impl Drop for LimitsGuard {
    fn drop(&mut self) {
        LIMITS.with(|c| c.set(self.0));
    }
}

/// Ids read as numbers; while a save loads, each is checked against what exists.
macro_rules! checked_id {
    ($name:ident, $t:ty, $field:ident, $what:literal) => {
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let v = <$t>::deserialize(d)?;
                if let Some(l) = LIMITS.with(|c| c.get()) {
                    if v as usize >= l.$field {
                        return Err(serde::de::Error::custom(format!(
                            "{} {} does not exist (there are {})",
                            $what, v, l.$field
                        )));
                    }
                }
                Ok($name(v))
            }
        }
    };
}

checked_id!(ObjectId, u32, objects, "object");
checked_id!(PlayerId, u8, players, "player");
checked_id!(ClassId, u32, classes, "class");
checked_id!(CharId, u16, chars, "characteristic");
checked_id!(PropId, u16, props, "player property");
checked_id!(ZoneId, u16, zones, "zone");
checked_id!(CounterId, u16, counters, "counter kind");
checked_id!(EventId, u16, events, "event");
checked_id!(LayerId, u16, layers, "layer");
checked_id!(TypeId, u16, types, "object type");

/// A symbol is read as its text (and interned again).
impl<'de> Deserialize<'de> for Symbol {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(Symbol::new(&s))
    }
}
