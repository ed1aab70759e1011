//! The game state. It clones cheaply (objects and effects are shared until changed), and changes
//! only through [`crate::model::action::Action`]s so that every change can be explained and replayed.

use crate::model::changes::Changes;
use crate::model::condition::Subject;
use crate::model::content::Content;
use crate::model::decision::DecisionRequest;
use crate::model::derived::Derived;
use crate::model::effect::CreatedEffect;
use crate::model::ids::{CharId, ClassId, ObjectId, PlayerId, PropId, Timestamp};
use crate::model::object::GameObject;
use crate::model::occurrence::{Log, Occurrence, Responder};
use crate::model::response::ResponseDef;
use crate::model::ruleset::{CharKind, Ruleset};
use crate::model::sheet::Sheet;
use crate::model::timing::Point;
use crate::model::value::Arg;
use crate::model::value::Value;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, OnceLock};

pub mod save;

/// A player of the game.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct Player {
    /// The player's name, by which scenarios and the log refer to the player.
    pub name: Arc<str>,
    /// The player has lost and left the game (CR 104.3, 800.4).
    #[serde(default)]
    pub lost: bool,
}

/// A game: its ruleset and content, players, objects, created effects, turn, the decision it waits
/// for and the occurrences under way. It changes only through [`GameState::apply`],
/// [`GameState::occur`] and [`GameState::decide`]; a clone is cheap and independent (AI search,
/// undo).
#[derive(Clone, Debug)]
pub struct GameState {
    pub(crate) ruleset: Arc<Ruleset>,
    /// The built-in events of the ruleset (declared by `GameState::new` if it had none).
    pub(crate) builtin: crate::model::ruleset::Builtin,
    pub(crate) content: Arc<Content>,
    pub(crate) players: Arc<[Player]>,
    /// Base values of player properties (life, maximum hand size), by player then property.
    pub(crate) player_props: Arc<Vec<Vec<Value>>>,
    /// The objects, shared with copies until one changes (an answer's backup copy costs one
    /// pointer).
    pub(crate) objects: Arc<Vec<Arc<GameObject>>>,
    pub(crate) effects: Vec<Arc<CreatedEffect>>,
    pub(crate) active: PlayerId,
    pub(crate) turn: u32,
    pub(crate) next_timestamp: u64,
    pub(crate) next_effect_id: u32,
    pub(crate) pending: Option<Arc<DecisionRequest>>,
    /// The ruleset's controller, abilities and state characteristics, looked up once.
    pub(crate) controller_char: Option<CharId>,
    /// Whether a layer can change control (CR 613.1b): where none can, an object's derived
    /// controller is its base controller, read without a derivation.
    pub(crate) controller_written: bool,
    pub(crate) abilities_char: Option<CharId>,
    pub(crate) state_char: Option<CharId>,
    pub(crate) derived: OnceLock<Arc<Derived>>,
    /// The last derivation and what changed since: the next derivation works out only what those
    /// changes reach (`layers::derive_after`).
    pub(crate) since: Option<Since>,
    /// Whether no state-based check applies to any object now (found by the last checks).
    pub(crate) settled: bool,
    /// Whether the last player checks found no player, no player's property has changed since,
    /// and those checks read only players' properties, which no layer changes: then they find
    /// none again (`events::state_checks`).
    pub(crate) players_settled: bool,
    /// Whether no state-based check applied when the derivation the current one started from was
    /// made (false after a full derivation).
    pub(crate) settled_before: bool,
    /// The objects in a zone that is in play, in id order, and the same as bits by object index;
    /// kept up to date as objects enter and change zones.
    pub(crate) in_play: Arc<Vec<ObjectId>>,
    in_play_bits: Arc<Vec<u64>>,
    /// Which objects are attached to which, as (host, attached object) pairs in order: kept up to
    /// date by `set_attached`, so that what is attached to an object is found without a search.
    attachments: Arc<Vec<(ObjectId, ObjectId)>>,
    /// Each object's type and what it is attached to, by object index: kept up to date by
    /// `push_object` and `set_attached`, so that a look up the attachment hierarchy (`holder`)
    /// reads one small list rather than each object's own block.
    links: Arc<Vec<Link>>,
    /// The objects in each zone (by zone index), in id order: kept up to date as objects are
    /// made and change zones, so that a player's hand is listed without going through every
    /// object.
    by_zone: Arc<Vec<Vec<ObjectId>>>,
    /// The base values, computed once and kept until an object changes.
    base: OnceLock<Arc<Sheet>>,
    /// The last base values computed, and the objects changed since: the next are that sheet
    /// with those rows made again (a player's property or an effect changes no row).
    base_prev: Option<(Arc<Sheet>, Vec<ObjectId>)>,
    /// The objects of each class, in id order: the responses that listen to an event are found
    /// through their classes.
    pub(crate) by_class: Arc<rustc_hash::FxHashMap<crate::model::ids::ClassId, Vec<ObjectId>>>,
    /// The objects of each object type (by type id), in id order: kept as objects are made
    /// (an object's class, and so its type, never changes), so that a scope of a type finds its
    /// objects without a search (FreeOrion's scopes index objects by type).
    by_type: Arc<Vec<Vec<ObjectId>>>,
    /// Which characteristics the objects of each type have, worked out once from the ruleset.
    type_chars: Arc<TypeChars>,
    /// Occurrences under way, delayed effects, open periods and the log: this state's own (a
    /// copy of the state copies it; its log's entries are shared), so that changing it costs no
    /// test of whether it is shared.
    pub(crate) timing: Box<crate::state::Timing>,
    /// The seeded random source shuffles draw from.
    pub(crate) random: crate::model::random::Random,
}

/// Which characteristics the objects of each object type have (`Ruleset::type_has`), as a table
/// looked up in constant time: a row per type, then one for objects of no type.
#[derive(Debug, Default)]
struct TypeChars {
    chars: usize,
    has: Vec<bool>,
}

impl TypeChars {
    fn new(r: &Ruleset) -> Self {
        let chars = r.characteristics.len();
        let mut has = Vec::with_capacity((r.types.len() + 1) * chars);
        for t in (0..r.types.len())
            .map(|i| Some(crate::model::ids::TypeId(i as u16)))
            .chain([None])
        {
            has.extend((0..chars).map(|c| r.type_has(t, CharId(c as u16))));
        }
        TypeChars { chars, has }
    }

    /// Whether objects of type `t` (`None`: of no type) have characteristic `ch`.
    fn has(&self, t: Option<crate::model::ids::TypeId>, ch: CharId) -> bool {
        let types = self.has.len() / self.chars.max(1);
        let row = t.map_or(types.saturating_sub(1), |t| {
            t.index().min(types.saturating_sub(1))
        });
        // A characteristic no type names (none beyond the table does) every object has.
        ch.index() >= self.chars || self.has[row * self.chars + ch.index()]
    }
}

/// What a game state holds besides its ruleset, its content and what is derived: what a save
/// records.
pub(crate) struct Parts {
    pub(crate) players: Vec<Player>,
    pub(crate) player_props: Vec<Vec<Value>>,
    pub(crate) objects: Vec<Arc<GameObject>>,
    pub(crate) effects: Vec<Arc<CreatedEffect>>,
    pub(crate) active: PlayerId,
    pub(crate) turn: u32,
    pub(crate) next_timestamp: u64,
    pub(crate) next_effect_id: u32,
    pub(crate) pending: Option<Arc<DecisionRequest>>,
    pub(crate) timing: crate::state::Timing,
    pub(crate) random: crate::model::random::Random,
}

/// A derivation kept for the next one to start from, with what changed since it was made.
#[derive(Clone, Debug)]
pub(crate) struct Since {
    pub(crate) derived: Arc<Derived>,
    /// Whether no state-based check applied to any object when it was made.
    pub(crate) settled: bool,
    pub(crate) changes: Changes,
}

impl GameState {
    /// A new game with no objects; `players` in turn order.
    pub fn new(ruleset: Arc<Ruleset>, content: Arc<Content>, players: &[&str]) -> Self {
        // Every engine action is an occurrence of a built-in event: a ruleset made without them
        // gets them here.
        let (ruleset, builtin) = match ruleset.builtin {
            Some(b) => (ruleset, b),
            None => {
                let mut r = (*ruleset).clone();
                let b = r.add_builtin_events();
                (Arc::new(r), b)
            }
        };
        let props: Vec<Value> = ruleset.props.iter().map(|p| p.initial()).collect();
        GameState {
            controller_char: ruleset.char_of_kind(CharKind::Controller),
            controller_written: ruleset
                .char_of_kind(CharKind::Controller)
                .is_some_and(|c| ruleset.layers_change(c)),
            abilities_char: ruleset.char_of_kind(CharKind::Abilities),
            state_char: ruleset.state_char(),
            player_props: Arc::new(vec![props; players.len()]),
            players: players
                .iter()
                .map(|n| Player {
                    name: Arc::from(*n),
                    lost: false,
                })
                .collect(),
            builtin,
            content,
            objects: Default::default(),
            effects: Vec::new(),
            active: PlayerId(0),
            turn: 1,
            next_timestamp: 1,
            next_effect_id: 1,
            pending: None,
            derived: OnceLock::new(),
            since: None,
            settled: false,
            players_settled: false,
            settled_before: false,
            in_play: Arc::new(Vec::new()),
            in_play_bits: Arc::new(Vec::new()),
            attachments: Arc::new(Vec::new()),
            links: Arc::new(Vec::new()),
            by_zone: Arc::new(vec![Vec::new(); ruleset.zones.len()]),
            base: OnceLock::new(),
            base_prev: None,
            by_class: Default::default(),
            by_type: Default::default(),
            type_chars: Arc::new(TypeChars::new(&ruleset)),
            timing: Default::default(),
            random: Default::default(),
            ruleset,
        }
    }

    /// A copy with its own ruleset and content (equal to these), sharing no pointer to them
    /// with this state: for a thread of its own.
    pub(crate) fn with_own_rules(&self) -> GameState {
        let mut s = self.clone();
        let mut rs = Ruleset::clone(&self.ruleset);
        for step in &mut rs.timing.steps {
            step.name = Arc::from(&*step.name);
        }
        s.ruleset = Arc::new(rs);
        s.content = Arc::new(self.content.own_copy());
        s
    }

    /// The game's rules.
    pub fn ruleset(&self) -> &Arc<Ruleset> {
        &self.ruleset
    }

    /// The game's object classes.
    pub fn content(&self) -> &Arc<Content> {
        &self.content
    }

    /// The players, in turn order.
    pub fn players(&self) -> &[Player] {
        &self.players
    }

    /// The active player.
    pub fn active(&self) -> PlayerId {
        self.active
    }

    /// The turn number, from 1.
    pub fn turn(&self) -> u32 {
        self.turn
    }

    /// The same new game with another player first (active). Only before anything has happened:
    /// afterwards the active player changes only as turns begin and end.
    pub fn with_first_player(
        mut self,
        p: PlayerId,
    ) -> Result<Self, crate::model::error::ActionError> {
        if p.index() >= self.players.len() {
            return Err(crate::model::error::ActionError::NoSuchPlayer(p.0));
        }
        if !self.objects.is_empty() || !self.timing.log().is_empty() || self.turn != 1 {
            return Err(crate::model::error::ActionError::BadOccurrence(
                "the first player is chosen before the game begins".into(),
            ));
        }
        self.active = p;
        Ok(self)
    }

    /// An object of this game, or `NoSuchObject`.
    pub fn object(&self, id: ObjectId) -> Result<&GameObject, crate::model::error::ActionError> {
        self.get_object(id)
            .ok_or(crate::model::error::ActionError::NoSuchObject(id.0))
    }

    /// An object by an id the engine handed out (checked when it came in).
    pub(crate) fn obj(&self, id: ObjectId) -> &GameObject {
        &self.objects[id.index()]
    }

    /// An object of this game, if the id names one ([`GameState::object`] gives an error instead).
    pub fn get_object(&self, id: ObjectId) -> Option<&GameObject> {
        self.objects.get(id.index()).map(|o| &**o)
    }

    /// Every object of the game, in every zone, in id order.
    pub fn objects(&self) -> impl Iterator<Item = &GameObject> {
        self.objects.iter().map(|o| &**o)
    }

    /// Every object's id, in order.
    pub fn object_ids(&self) -> impl Iterator<Item = ObjectId> + '_ {
        (0..self.objects.len() as u32).map(ObjectId)
    }

    /// The object with this name, if exactly one has it.
    pub fn find(&self, name: &str) -> Option<ObjectId> {
        let mut it = self.objects.iter().filter(|o| &*o.name == name);
        let first = it.next()?;
        it.next().is_none().then_some(first.id)
    }

    /// The continuous effects created during the game and not yet ended (by resolved spells and
    /// responses, objects entering as a copy or merging), in the order created.
    pub fn effects(&self) -> impl Iterator<Item = &CreatedEffect> {
        self.effects.iter().map(|e| &**e)
    }

    /// Whether object `o` has characteristic `ch` itself: its class's object type has it (every
    /// object has every characteristic in a ruleset without types; `false` for a bad id).
    pub fn has_char(&self, o: ObjectId, ch: CharId) -> bool {
        if self.ruleset.types.is_empty() {
            return true;
        }
        if o.index() >= self.objects.len() {
            return false;
        }
        self.type_has_char(self.object_type(o), ch)
    }

    /// Whether objects of type `t` (`None`: of no type) have characteristic `ch` (every object
    /// has every characteristic in a ruleset without types).
    pub(crate) fn type_has_char(&self, t: Option<crate::model::ids::TypeId>, ch: CharId) -> bool {
        self.ruleset.types.is_empty() || self.type_chars.has(t, ch)
    }

    /// The objects of type `t`, in id order.
    pub fn objects_of_type(&self, t: crate::model::ids::TypeId) -> Vec<ObjectId> {
        self.of_type(t).to_vec()
    }

    /// The objects of type `t`, in id order, from the index.
    pub(crate) fn of_type(&self, t: crate::model::ids::TypeId) -> &[ObjectId] {
        let Some(list) = self.by_type.get(t.index()) else {
            return &[];
        };
        // Only the objects this state has (a state as it was before some were made keeps the
        // index of the one after).
        &list[..list.partition_point(|o| o.index() < self.objects.len())]
    }

    /// The object type of `o`'s class, if it has one (`None` for a bad id).
    pub fn object_type(&self, o: ObjectId) -> Option<crate::model::ids::TypeId> {
        self.links.get(o.index())?.ty
    }

    /// What the object is attached to (`None` for none, or an id that names no object).
    pub(crate) fn attached_of(&self, o: ObjectId) -> Option<ObjectId> {
        self.links.get(o.index())?.up
    }

    /// What `links` holds for an object.
    fn link_of(&self, o: &GameObject) -> Link {
        Link {
            ty: self
                .content
                .classes
                .get(o.class.index())
                .and_then(|c| c.object_type),
            up: o.attached_to,
        }
    }

    /// The object characteristic `ch` of `o` is read from: `o` if it has it, else the first
    /// object up the chain of what it is attached to that has it (FreeOrion's attachment
    /// hierarchy: a building's planet, then that planet's system); `None` where none has it.
    /// Only an absent characteristic is looked up, never one set to none.
    pub fn holder(&self, o: ObjectId, ch: CharId) -> Option<ObjectId> {
        let mut at = o;
        // A chain of attachments visits each object at most once.
        for _ in 0..=self.objects.len() {
            if self.has_char(at, ch) {
                return Some(at);
            }
            at = self.links.get(at.index())?.up?;
        }
        None
    }

    /// Whether the object is in a zone that is in play (`false` for an id that names no object).
    pub fn in_play(&self, id: ObjectId) -> bool {
        self.in_play_bits
            .get(id.index() / 64)
            .is_some_and(|b| b & (1 << (id.index() % 64)) != 0)
    }

    /// The number X announced as this spell was cast (CR 601.2b), while it is being announced
    /// or waits in the zone where spells wait; 0 otherwise (CR 107.3b, 107.3f: anywhere else X
    /// is 0).
    pub fn chosen_number(&self, spell: ObjectId) -> i64 {
        let announcing =
            self.timing.tasks.iter().any(
                |t| matches!(t, Task::Run(r) if r.announce.is_some() && r.source == Some(spell)),
            );
        let waiting = self.ruleset.wait_zone.is_some()
            && self.get_object(spell).map(|o| o.zone) == self.ruleset.wait_zone;
        if !announcing && !waiting {
            return 0;
        }
        self.timing
            .chosen
            .iter()
            .find(|(o, _)| *o == spell)
            .map_or(0, |(_, n)| *n)
    }

    /// A player's name; `?` for an id that names no player of this game.
    pub fn player_name(&self, p: PlayerId) -> &str {
        self.players.get(p.index()).map_or("?", |x| &x.name)
    }

    /// The player of a name, if any.
    pub fn player_id(&self, name: &str) -> Option<PlayerId> {
        self.players
            .iter()
            .position(|p| &*p.name == name)
            .map(|i| PlayerId(i as u8))
    }

    /// The decision the game waits for, if any.
    pub fn pending_decision(&self) -> Option<&DecisionRequest> {
        self.pending.as_deref()
    }

    /// The values before any effect applies: printed characteristics, base controller, base player
    /// properties.
    pub fn base_sheet(&self) -> Sheet {
        (**self.base.get_or_init(|| Arc::new(self.build_base_sheet()))).clone()
    }

    fn build_base_sheet(&self) -> Sheet {
        if let Some((prev, stale)) = &self.base_prev {
            if prev.objects.len() <= self.objects.len() {
                let mut sheet = (**prev).clone();
                let mut stale = stale.clone();
                stale.sort_unstable();
                stale.dedup();
                let known = sheet.objects.len();
                for id in stale.into_iter().filter(|id| id.index() < known) {
                    let row = self.base_row(&self.objects[id.index()]);
                    sheet.objects[id.index()].clone_from_slice(&row);
                }
                for o in &self.objects[known..] {
                    sheet.objects.push_values(self.base_values(o));
                }
                sheet.objects.share();
                sheet.players = (*self.player_props).clone();
                return sheet;
            }
        }
        let mut objects = crate::model::sheet::Rows::new(
            self.ruleset.characteristics.len(),
            std::iter::empty::<Vec<Value>>(),
        );
        for o in self.objects.iter() {
            objects.push_values(self.base_values(o));
        }
        objects.share();
        Sheet {
            objects,
            players: (*self.player_props).clone(),
        }
    }

    /// An object's values before any effect applies: printed characteristics (else the ruleset's
    /// number defaults), its name, its base controller.
    pub(crate) fn base_row(&self, o: &GameObject) -> Vec<Value> {
        self.base_values(o).collect()
    }

    /// An object's base values ([`GameState::base_row`]), one by one as they are made.
    pub(crate) fn base_values<'s>(&'s self, o: &'s GameObject) -> impl Iterator<Item = Value> + 's {
        let state = self.state_char;
        // Each value made once: the object's state, else its controller, else its class's base
        // value (`Content::class_base`: the printed value, else the empty value or the ruleset's
        // default number), made once per class.
        self.content
            .class_base(&self.ruleset, o.class)
            .iter()
            .enumerate()
            .map(move |(i, v)| {
                let id = CharId(i as u16);
                if state == Some(id) {
                    return Value::Symbols(o.state.clone());
                }
                if self.controller_char == Some(id) {
                    return Value::Player(Some(o.controller));
                }
                v.clone()
            })
    }

    // ---- mutation helpers for `action`: each notes what changed for the next derivation ----

    /// Notes a change the next derivation must see: keeps the last derivation (if any) to start
    /// from, with the changes so far.
    fn changes(&mut self) -> Option<&mut Changes> {
        if let Some(d) = self.derived.take() {
            self.since = Some(Since {
                derived: d,
                settled: std::mem::take(&mut self.settled),
                changes: Changes::new(self.objects.len()),
            });
        }
        self.settled = false;
        self.settled_before = false;
        self.since.as_mut().map(|s| &mut s.changes)
    }

    /// Notes a change that the changes kept cannot describe: the next derivation derives in full.
    /// (No object changed: the base rows stay.)
    pub(crate) fn touch(&mut self) {
        self.derived = OnceLock::new();
        self.since = None;
        self.settled = false;
        self.players_settled = false;
        self.settled_before = false;
        self.stale_base(None);
    }

    /// A player's property that effects read, and no layer writes, changes: the next derivation
    /// works out what it reaches from the last one. The state-based checks test every object
    /// again (one may read the property); the caller (`set_property_value`) has the player
    /// checks made again.
    pub(crate) fn prop_read_changes(&mut self, player: PlayerId, prop: PropId) {
        match self.changes() {
            Some(ch) => ch.note_prop(player, prop),
            None => self.touch(),
        }
        if let Some(s) = self.since.as_mut() {
            s.settled = false;
        }
        self.stale_base(None);
    }

    /// A player's property changes where nothing in the layers reads or changes it
    /// (`layers::prop_derived`): its derived value is its new base value, written into the last
    /// derivation (or the one the next derivation starts from). The objects' values, and what the
    /// state-based checks found of them, stay.
    pub(crate) fn set_derived_property(&mut self, player: PlayerId, prop: PropId, v: &Value) {
        let (p, q) = (player.index(), prop.index());
        if let Some(d) = self.derived.get_mut() {
            Arc::make_mut(d).sheet.players[p][q] = v.clone();
        } else if let Some(since) = self.since.as_mut() {
            Arc::make_mut(&mut since.derived).sheet.players[p][q] = v.clone();
        }
        self.stale_base(None);
    }

    /// The base values are out of date: for this object's row, or (`None`) only for the
    /// players' properties.
    fn stale_base(&mut self, id: Option<ObjectId>) {
        if let Some(b) = self.base.take() {
            self.base_prev = Some((b, Vec::new()));
        }
        if let (Some(id), Some((_, stale))) = (id, self.base_prev.as_mut()) {
            stale.push(id);
        }
    }

    /// Whether the game is over: a player has lost, and at most one is left (CR 104.2a: a player
    /// still in the game wins when all the others have left it; none left is a draw, CR 104.4a).
    pub fn is_over(&self) -> bool {
        self.players.iter().any(|p| p.lost) && self.players_in_game() <= 1
    }

    /// The player after `p` in turn order who is still in the game (CR 800.4: one who left
    /// takes no turn and no part in an action round).
    pub(crate) fn next_player(&self, p: PlayerId) -> PlayerId {
        let n = self.players.len();
        let next = (1..n)
            .map(|k| (p.index() + k) % n)
            .find(|&i| !self.players[i].lost)
            .unwrap_or((p.index() + 1) % n.max(1));
        PlayerId(next as u8)
    }

    /// How many players are still in the game.
    pub(crate) fn players_in_game(&self) -> usize {
        self.players.iter().filter(|p| !p.lost).count()
    }

    /// The winner once the game is over (`None` while it goes on); `Some(None)`: a draw.
    pub fn winner(&self) -> Option<Option<PlayerId>> {
        if !self.is_over() {
            return None;
        }
        Some(
            self.players
                .iter()
                .position(|p| !p.lost)
                .map(|i| PlayerId(i as u8)),
        )
    }

    /// The same game with its random source started from this seed: the same content, seed and
    /// answers give the same game. Set it before the game begins; draws go on from the state
    /// after that (a clone and a save keep where they are).
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.random = crate::model::random::Random::new(seed);
        self
    }

    /// A player's cards in a zone, bottom first (the latest timestamp is on top), in a list
    /// kept inline while it is short (a hand).
    pub(crate) fn cards_in_small(
        &self,
        player: PlayerId,
        zone: crate::model::ids::ZoneId,
    ) -> smallvec::SmallVec<[ObjectId; 16]> {
        let mut cards: smallvec::SmallVec<[ObjectId; 16]> = self
            .objects_in_zone(zone)
            .iter()
            .copied()
            .filter(|o| self.obj(*o).owner == player)
            .collect();
        // In timestamp order (then id), sorted in place.
        cards.sort_unstable_by_key(|o| (self.obj(*o).timestamp, *o));
        cards
    }

    /// The objects in a zone, in id order.
    pub(crate) fn objects_in_zone(&self, zone: crate::model::ids::ZoneId) -> &[ObjectId] {
        self.by_zone.get(zone.index()).map_or(&[], |v| v.as_slice())
    }

    /// `NoSuchPlayer` unless the id names a player of this game.
    pub(crate) fn check_player(&self, p: PlayerId) -> Result<(), crate::model::error::ActionError> {
        if p.index() < self.players.len() {
            Ok(())
        } else {
            Err(crate::model::error::ActionError::NoSuchPlayer(p.0))
        }
    }

    /// `NoSuchZone` unless the id names a zone of the ruleset.
    pub(crate) fn check_zone(
        &self,
        z: crate::model::ids::ZoneId,
    ) -> Result<(), crate::model::error::ActionError> {
        self.ruleset.zone(z).map(|_| ())
    }

    /// An object to change: the next derivation works out again what the change reaches.
    pub(crate) fn object_mut(&mut self, id: ObjectId) -> &mut GameObject {
        self.stale_base(Some(id));
        let first = self.changes().is_some_and(|ch| ch.note_object(id));
        if first {
            // The object as the kept derivation saw it, for what the change took away.
            let old = self.objects[id.index()].clone();
            if let Some(ch) = self.since.as_mut().map(|s| &mut s.changes) {
                ch.keep_old(id, old);
            }
        }
        Arc::make_mut(&mut Arc::make_mut(&mut self.objects)[id.index()])
    }

    /// A new timestamp for an object whose timestamp no derived value reads (see
    /// `Content::order_derived`): not noted as a change for the next derivation.
    pub(crate) fn restamp_unseen(&mut self, id: ObjectId, ts: Timestamp) {
        Arc::make_mut(&mut Arc::make_mut(&mut self.objects)[id.index()]).timestamp = ts;
    }

    /// An object's counter placements, to change where no derived value and no state-based check
    /// reads counters (`Content::counters_unseen`): not noted as a change for the next
    /// derivation.
    pub(crate) fn counters_unseen_mut(
        &mut self,
        id: ObjectId,
    ) -> &mut Vec<crate::model::object::CounterPlacement> {
        &mut Arc::make_mut(&mut Arc::make_mut(&mut self.objects)[id.index()]).counters
    }

    /// Moves an object to a zone, keeping the objects in play up to date.
    pub(crate) fn set_zone(&mut self, id: ObjectId, zone: crate::model::ids::ZoneId) {
        let was = self.objects[id.index()].zone;
        if was != zone {
            let lists = Arc::make_mut(&mut self.by_zone);
            if let Some(Ok(i)) = lists.get(was.index()).map(|l| l.binary_search(&id)) {
                lists[was.index()].remove(i);
            }
            if lists.len() <= zone.index() {
                lists.resize(zone.index() + 1, Vec::new());
            }
            if let Err(i) = lists[zone.index()].binary_search(&id) {
                lists[zone.index()].insert(i, id);
            }
        }
        self.object_mut(id).zone = zone;
        let in_play = self.ruleset.zone_def(zone).in_play;
        if in_play != self.in_play(id) {
            let bits = Arc::make_mut(&mut self.in_play_bits);
            bits[id.index() / 64] ^= 1 << (id.index() % 64);
            let list = Arc::make_mut(&mut self.in_play);
            match list.binary_search(&id) {
                Ok(i) => {
                    list.remove(i);
                }
                Err(i) => list.insert(i, id),
            }
        }
    }

    /// The created effects, to change.
    pub(crate) fn effects_mut(&mut self) -> &mut Vec<Arc<CreatedEffect>> {
        if self.changes().is_some_and(|ch| ch.wants_old_effects()) {
            let old = self.effects.clone();
            if let Some(ch) = self.since.as_mut().map(|s| &mut s.changes) {
                ch.keep_old_effects(old);
            }
        }
        &mut self.effects
    }

    /// A copy to put back if an engine action fails part-way: the same state without its
    /// derivations (the derived values are a function of the state, worked out again when the
    /// copy is read), so that this state alone holds them and changes them in place rather than
    /// copying them.
    pub(crate) fn backup(&self) -> GameState {
        // Built field by field: the kept derivations and what changed since are not copied only
        // to be dropped.
        GameState {
            ruleset: self.ruleset.clone(),
            builtin: self.builtin,
            content: self.content.clone(),
            players: self.players.clone(),
            player_props: self.player_props.clone(),
            objects: self.objects.clone(),
            effects: self.effects.clone(),
            active: self.active,
            turn: self.turn,
            next_timestamp: self.next_timestamp,
            next_effect_id: self.next_effect_id,
            pending: self.pending.clone(),
            controller_char: self.controller_char,
            controller_written: self.controller_written,
            abilities_char: self.abilities_char,
            state_char: self.state_char,
            derived: OnceLock::new(),
            since: None,
            settled: false,
            players_settled: self.players_settled,
            settled_before: false,
            in_play: self.in_play.clone(),
            in_play_bits: self.in_play_bits.clone(),
            attachments: self.attachments.clone(),
            links: self.links.clone(),
            by_zone: self.by_zone.clone(),
            base: OnceLock::new(),
            base_prev: None,
            by_class: self.by_class.clone(),
            by_type: self.by_type.clone(),
            type_chars: self.type_chars.clone(),
            timing: self.timing.clone(),
            random: self.random,
        }
    }

    /// The state as it was before `changes`: the objects as they were, without the new ones, and
    /// the created effects as they were (for a recomputation that compares before and after).
    pub(crate) fn as_before(&self, changes: &Changes) -> GameState {
        let mut old = self.clone();
        old.since = None;
        old.derived = OnceLock::new();
        let objects = Arc::make_mut(&mut old.objects);
        objects.truncate(changes.known());
        for (id, o) in changes.old_objects() {
            objects[id.index()] = o.clone();
        }
        if let Some(e) = changes.old_effects() {
            old.effects = e.to_vec();
        }
        // The indexes of objects in play and of attachments, patched for the objects that
        // changed and those that are new, rather than rebuilt.
        let known = changes.known();
        let changed = changes.old_objects();
        let in_play_then = |o: &GameObject| old.ruleset.zone_def(o.zone).in_play;
        let mut bits = (*self.in_play_bits).clone();
        bits.truncate(known.div_ceil(64));
        if !known.is_multiple_of(64) {
            if let Some(last) = bits.last_mut() {
                *last &= (1u64 << (known % 64)) - 1;
            }
        }
        let mut list: Vec<ObjectId> = self
            .in_play
            .iter()
            .copied()
            .filter(|o| o.index() < known)
            .collect();
        for (id, o) in changed {
            let (w, b) = (id.index() / 64, 1u64 << (id.index() % 64));
            if (bits[w] & b != 0) != in_play_then(o) {
                bits[w] ^= b;
                match list.binary_search(id) {
                    Ok(i) => {
                        list.remove(i);
                    }
                    Err(i) => list.insert(i, *id),
                }
            }
        }
        old.in_play_bits = Arc::new(bits);
        old.in_play = Arc::new(list);
        let is_changed = |x: &ObjectId| changed.binary_search_by_key(x, |(y, _)| *y).is_ok();
        let mut pairs: Vec<(ObjectId, ObjectId)> = self
            .attachments
            .iter()
            .copied()
            .filter(|(h, a)| h.index() < known && a.index() < known && !is_changed(a))
            .collect();
        for (id, o) in changed {
            if let Some(h) = o.attached_to {
                if let Err(i) = pairs.binary_search(&(h, *id)) {
                    pairs.insert(i, (h, *id));
                }
            }
        }
        old.attachments = Arc::new(pairs);
        let mut links = (*self.links).clone();
        links.truncate(known);
        for (id, o) in changed {
            links[id.index()] = old.link_of(o);
        }
        old.links = Arc::new(links);
        old.by_zone = Arc::new(zone_lists(&old.ruleset, &old.objects));
        old.base = OnceLock::new();
        old.base_prev = None;
        old
    }

    /// Attaches an object to another, or (`None`) unattaches it, keeping the index of attachments.
    pub(crate) fn set_attached(&mut self, object: ObjectId, to: Option<ObjectId>) {
        let was = self.objects[object.index()].attached_to;
        if was == to {
            return;
        }
        let pairs = Arc::make_mut(&mut self.attachments);
        if let Some(h) = was {
            if let Ok(k) = pairs.binary_search(&(h, object)) {
                pairs.remove(k);
            }
        }
        if let Some(h) = to {
            if let Err(k) = pairs.binary_search(&(h, object)) {
                pairs.insert(k, (h, object));
            }
        }
        self.object_mut(object).attached_to = to;
        Arc::make_mut(&mut self.links)[object.index()].up = to;
    }

    /// The objects attached to any of `hosts` (in id order), in id order.
    pub(crate) fn attached_to_any(&self, hosts: &[ObjectId]) -> Vec<ObjectId> {
        let pairs = &self.attachments;
        let mut out: Vec<ObjectId> = Vec::new();
        if pairs.is_empty() {
            return out;
        }
        for h in hosts {
            let from = pairs.partition_point(|(x, _)| x < h);
            out.extend(
                pairs[from..]
                    .iter()
                    .take_while(|(x, _)| x == h)
                    .map(|(_, a)| *a),
            );
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The objects in a zone that is in play, in id order.
    pub fn in_play_ids(&self) -> &[ObjectId] {
        &self.in_play
    }

    pub(crate) fn new_timestamp(&mut self) -> Timestamp {
        let t = Timestamp(self.next_timestamp);
        self.next_timestamp += 1;
        t
    }

    pub(crate) fn push_object(&mut self, o: GameObject) {
        self.stale_base(Some(o.id));
        let _ = self.changes();
        let id = o.id;
        let in_play = self.ruleset.zone_def(o.zone).in_play;
        Arc::make_mut(&mut self.by_class)
            .entry(o.class)
            .or_default()
            .push(id);
        let link = self.link_of(&o);
        if let Some(t) = link.ty {
            let by_type = Arc::make_mut(&mut self.by_type);
            if by_type.len() <= t.index() {
                by_type.resize(t.index() + 1, Vec::new());
            }
            by_type[t.index()].push(id);
        }
        let lists = Arc::make_mut(&mut self.by_zone);
        if lists.len() <= o.zone.index() {
            lists.resize(o.zone.index() + 1, Vec::new());
        }
        // A new object has the highest id: the list stays in id order.
        lists[o.zone.index()].push(id);
        Arc::make_mut(&mut self.links).push(link);
        Arc::make_mut(&mut self.objects).push(Arc::new(o));
        let bits = Arc::make_mut(&mut self.in_play_bits);
        if bits.len() <= id.index() / 64 {
            bits.resize(id.index() / 64 + 1, 0);
        }
        if in_play {
            bits[id.index() / 64] |= 1 << (id.index() % 64);
            Arc::make_mut(&mut self.in_play).push(id);
        }
    }

    /// The game that saved parts make (`save`), on this game's ruleset and content, with what is
    /// derived from them rebuilt.
    pub(crate) fn with_parts(&self, p: Parts) -> GameState {
        let mut g = GameState::new(self.ruleset.clone(), self.content.clone(), &[]);
        g.players = p.players.into();
        g.player_props = Arc::new(p.player_props);
        g.objects = Arc::new(p.objects);
        g.effects = p.effects;
        g.active = p.active;
        g.turn = p.turn;
        g.next_timestamp = p.next_timestamp;
        g.next_effect_id = p.next_effect_id;
        g.pending = p.pending;
        g.timing = Box::new(p.timing);
        g.random = p.random;
        g.rebuild_indexes();
        g
    }

    /// The indexes `push_object`, `set_zone` and `set_attached` keep, built from the objects.
    fn rebuild_indexes(&mut self) {
        let n = self.objects.len();
        let mut by_class: rustc_hash::FxHashMap<crate::model::ids::ClassId, Vec<ObjectId>> =
            Default::default();
        let mut by_type: Vec<Vec<ObjectId>> = vec![Vec::new(); self.ruleset.types.len()];
        let mut in_play = Vec::new();
        let mut bits = vec![0u64; n.div_ceil(64)];
        let mut pairs = Vec::new();
        let mut links = Vec::with_capacity(n);
        for o in self.objects.iter() {
            by_class.entry(o.class).or_default().push(o.id);
            let link = self.link_of(o);
            links.push(link);
            if let Some(t) = link.ty {
                if let Some(list) = by_type.get_mut(t.index()) {
                    list.push(o.id);
                }
            }
            if self.ruleset.zone_def(o.zone).in_play {
                bits[o.id.index() / 64] |= 1 << (o.id.index() % 64);
                in_play.push(o.id);
            }
            if let Some(h) = o.attached_to {
                pairs.push((h, o.id));
            }
        }
        pairs.sort_unstable();
        self.by_class = Arc::new(by_class);
        self.by_type = Arc::new(by_type);
        self.in_play = Arc::new(in_play);
        self.in_play_bits = Arc::new(bits);
        self.attachments = Arc::new(pairs);
        self.links = Arc::new(links);
        self.by_zone = Arc::new(zone_lists(&self.ruleset, &self.objects));
        self.base = OnceLock::new();
        self.base_prev = None;
        self.touch();
    }

    /// Whether the player checks, taken as found while `players_settled` holds, find what they
    /// would find in full: none.
    #[cfg(feature = "test-hooks")]
    pub fn player_checks_hold(&self) -> bool {
        let mut fresh = self.clone();
        fresh.refresh();
        !self.players_settled || fresh.losing_players().is_empty()
    }

    /// Whether the indexes kept as objects are made and change zones (the objects in play, in
    /// each zone, and attached to each) are those the objects give.
    #[cfg(feature = "test-hooks")]
    pub fn indexes_hold(&self) -> bool {
        let mut fresh = self.clone();
        fresh.rebuild_indexes();
        let zones = |g: &GameState| {
            let mut l = (*g.by_zone).clone();
            while l.last().is_some_and(|v| v.is_empty()) {
                l.pop();
            }
            l
        };
        fresh.in_play == self.in_play
            && fresh.in_play_bits == self.in_play_bits
            && fresh.attachments == self.attachments
            && fresh.links == self.links
            && zones(&fresh) == zones(self)
    }
}

/// An object's type and what it is attached to (`GameState::links`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Link {
    ty: Option<crate::model::ids::TypeId>,
    up: Option<ObjectId>,
}

/// The objects in each zone, by zone index, in id order.
fn zone_lists(ruleset: &Ruleset, objects: &[Arc<GameObject>]) -> Vec<Vec<ObjectId>> {
    let mut lists = vec![Vec::new(); ruleset.zones.len()];
    for o in objects {
        if lists.len() <= o.zone.index() {
            lists.resize(o.zone.index() + 1, Vec::new());
        }
        lists[o.zone.index()].push(o.id);
    }
    lists
}

// What is under way in a game: the task stack of occurrences being taken through their timing
// points and of responses being carried out, delayed effects waiting, periods open, and the log.
// The event procedure works on it; the state keeps it, and a frame keeps a state as it was.

/// The timing state of a game: work under way, delayed effects waiting, periods open, the log.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Timing {
    pub(crate) tasks: Vec<Task>,
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
    pub(crate) outcome: Option<crate::model::action::Outcome>,
    /// The turn structure under way, once a game is started.
    #[serde(default)]
    pub(crate) flow: Option<Flow>,
    /// The next batch item's id.
    #[serde(default)]
    pub(crate) next_item: u32,
    /// The number X announced for each spell as it was last cast (CR 601.2b), by its object.
    #[serde(default)]
    pub(crate) chosen: Vec<(ObjectId, i64)>,
    /// The (object, stacking number) pairs a non-meter effect fired on this turn, with the turn
    /// they are of (FreeOrion's effects system, Stacking Number): a record of another turn is
    /// stale and cleared as the next is made.
    #[serde(default)]
    pub(crate) stacked: (u32, std::collections::BTreeSet<(ObjectId, u32)>),
    /// How many kernel changes were made and response steps taken (`GameState::make`,
    /// `advance_run`, `advance_batch`): unchanged, nothing has changed the state or an
    /// occurrence under way since.
    #[serde(skip)]
    pub(crate) made: u64,
    /// Legal plays are listed without their labels (`play_many`, where no agent reads them):
    /// a label is written from its play where it is read (`GameState::option_label`).
    #[serde(skip)]
    pub(crate) bare_plays: bool,
}

/// A non-meter effects group firing: its scope, fixed before its first effect fires, and the
/// next (effect, object) pair to fire.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Firing {
    pub(crate) group: Arc<crate::model::response::GroupDef>,
    pub(crate) scope: Arc<[ObjectId]>,
    pub(crate) effect: usize,
    pub(crate) next: usize,
}

/// Where the ruleset's turn structure stands.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Flow {
    /// The phase in progress, by index in the turn structure.
    pub(crate) phase: usize,
    pub(crate) stage: FlowStage,
    /// The neutral state's round: who decides next, and how many players in a row have passed.
    pub(crate) turn: PlayerId,
    pub(crate) passes: usize,
    /// Plays allowed once per turn that were made this turn, by index.
    pub(crate) used: Vec<u16>,
    /// Phase effects (object, ability index) and phase costs (object, `u16::MAX`) played this
    /// phase: each once a phase.
    #[serde(default)]
    pub(crate) handled: Vec<(ObjectId, u16)>,
    /// Permanents whose phase cost has resolved this phase: their abilities are on again.
    #[serde(default)]
    pub(crate) settled: Vec<ObjectId>,
    /// A play announced `unless a batch begins`, by whom, waiting for the other players.
    #[serde(default)]
    pub(crate) announced: Option<(PlayerId, crate::model::batch::PlayOption)>,
}

/// What the turn structure does next, once nothing is under way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum FlowStage {
    /// The next player's turn begins (the first turn: the active player's).
    TurnBegins,
    /// The phase of index `phase` begins.
    PhaseBegins,
    /// The phase is under way: its neutral state, if fast effects may be played in it.
    Neutral,
    /// The phase ends.
    PhaseEnds,
    /// What happens to each player as each phase ends (mana burn); then the next phase begins,
    /// or the turn ends.
    PhaseOver,
    /// The turn ends.
    TurnEnds,
}

/// A batch being built or resolving (a task): its items, last in first out.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Batch {
    pub(crate) items: Vec<crate::model::batch::BatchItem>,
    /// Who decides first after each addition: the active player.
    pub(crate) first: PlayerId,
    /// Adding: who decides next and how many in a row have passed. `None`: resolving.
    pub(crate) adding: Option<(PlayerId, usize)>,
    pub(crate) depth: u16,
    /// A batch of interrupts: the spell being cast, not yet added to the batch below.
    #[serde(default)]
    pub(crate) casting: Option<crate::model::batch::BatchItem>,
}

impl Timing {
    /// The log: every occurrence and what answered it, first to last.
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
    /// The periods open when it was set up: "the next time a battle ends" is not the end of
    /// the battle in progress.
    #[serde(default)]
    pub(crate) open_then: Vec<Occurrence>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) enum Task {
    Frame(Box<Frame>),
    Run(Box<Run>),
    Batch(Box<Batch>),
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
pub(crate) struct Frame {
    pub(crate) occs: Vec<Occ>,
    pub(crate) mode: Mode,
    pub(crate) stage: usize,
    pub(crate) step: usize,
    pub(crate) st: StepState,
    pub(crate) depth: u16,
    /// The state just before the change, where the change took an object out of play: "after"
    /// responses look back to it (last-known information).
    #[serde(skip)]
    pub(crate) snapshot: Option<Arc<GameState>>,
    /// Responses already taken, by occurrence: a response answers one trigger at most once.
    pub(crate) used: Vec<(usize, Key)>,
    /// A spell resolving, whose occurrence this is: its change, made if it was not prevented.
    pub(crate) action: Option<Box<crate::model::action::Action>>,
    /// A round of the state-based checks.
    pub(crate) state_checks: bool,
    /// The next timestamp when its occurrences were last checked for objects that changed zones
    /// (a zone change takes a timestamp): unchanged, nothing has moved since.
    #[serde(default)]
    pub(crate) seen: u64,
    /// `Timing::made` when its occurrences were last checked for changing nothing
    /// (`fail_unchanging`): unchanged, the check would find what it found (`u64::MAX`: not
    /// checked; a plain number keeps the frame small enough to be moved without `memcpy`).
    #[serde(skip, default = "not_checked")]
    pub(crate) unchanged_at: u64,
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
    /// The sum of the incarnations of the objects it is about as it began: incarnations only
    /// grow, so a larger sum now means one of them changed zones since (CR 400.7).
    #[serde(default)]
    pub(crate) began: u64,
    /// What prohibitions and responses can do to it (from the deed that made it).
    #[serde(default)]
    pub(crate) standing: crate::model::response::Standing,
    /// A response negated its effects: it happens, but its changes are not made.
    #[serde(default)]
    pub(crate) negated: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) enum StepState {
    Fresh,
    Ordered(Vec<Cand>),
    Round { turn: PlayerId, passes: usize },
}

/// `Frame::unchanged_at` of a frame not checked.
fn not_checked() -> u64 {
    u64::MAX
}

/// A response that could answer an occurrence of the frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Cand {
    pub(crate) occ: usize,
    pub(crate) key: Key,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Key {
    /// The response of that index of a class, answering for an object: one of its class, or one
    /// an effect gave that response as an ability.
    Object(ObjectId, ClassId, u16),
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
    /// A resolving spell's targets that are no longer legal, by index: its deeds do nothing to
    /// them (CR 608.2b).
    #[serde(default)]
    pub(crate) illegal: Vec<u8>,
    /// Announced, not done: once its targets are chosen and its costs paid, it is added to the
    /// batch below it as an item of this kind, and its deeds wait for its resolution.
    #[serde(default)]
    pub(crate) announce: Option<crate::model::batch::ItemKind>,
    /// Which objects it may target, if announced.
    #[serde(default)]
    pub(crate) scope: Option<crate::model::batch::TargetScope>,
    /// An effect resolving whose occurrences' "after" points wait until it is complete
    /// (`after: once resolved`): those frames, in the order they reached that point.
    #[serde(default)]
    pub(crate) holds: Option<Vec<Frame>>,
    /// Announced with `choose X`: the number its player announced (CR 601.2b), once chosen.
    #[serde(default)]
    pub(crate) chosen: Option<i64>,
    /// A non-meter effects group under way, between its firings.
    #[serde(default)]
    pub(crate) firing: Option<Firing>,
}

impl Run {
    /// A response about to go through its parts, from the first: it answers the occurrence of
    /// that index in the frame at task `frame`, and its own occurrences are nested at `depth`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        frame: usize,
        occ: usize,
        def: Arc<ResponseDef>,
        source: Option<ObjectId>,
        you: Option<PlayerId>,
        targets: Vec<Subject>,
        bound: Option<Vec<Arg>>,
        depth: u16,
    ) -> Run {
        Run {
            frame,
            occ,
            def,
            source,
            you,
            targets,
            bound,
            picked: Vec::new(),
            picking: None,
            part: 0,
            awaiting_cost: false,
            paying: false,
            depth,
            illegal: Vec::new(),
            announce: None,
            scope: None,
            holds: None,
            chosen: None,
            firing: None,
        }
    }

    pub(crate) fn responder(&self) -> Responder {
        Responder {
            source: self.source,
            text: self.def.text.clone(),
        }
    }

    /// A copy to read while the run on the task stack changes: everything but the frames it
    /// holds (`holds`), which are read and changed only on the stack.
    pub(crate) fn snapshot(&self) -> Run {
        Run {
            frame: self.frame,
            occ: self.occ,
            def: self.def.clone(),
            source: self.source,
            you: self.you,
            targets: self.targets.clone(),
            bound: self.bound.clone(),
            picked: self.picked.clone(),
            picking: self.picking,
            part: self.part,
            awaiting_cost: self.awaiting_cost,
            paying: self.paying,
            depth: self.depth,
            illegal: self.illegal.clone(),
            announce: self.announce.clone(),
            scope: self.scope,
            holds: None,
            chosen: self.chosen,
            firing: self.firing.clone(),
        }
    }
}
