//! The game state. It clones cheaply (objects and effects are shared until changed), and changes
//! only through [`crate::action::Action`]s so that every change can be explained and replayed.

use crate::condition::Sheet;
use crate::content::Content;
use crate::decision::DecisionRequest;
use crate::effect::CreatedEffect;
use crate::ids::{CharId, ObjectId, PlayerId, Timestamp};
use crate::layers::{self, Derived};
use crate::object::GameObject;
use crate::ruleset::{CharKind, Ruleset};
use crate::value::Value;
use serde::Serialize;
use std::sync::{Arc, OnceLock};

#[derive(Clone, Debug, Serialize)]
pub struct Player {
    pub name: Arc<str>,
}

#[derive(Clone, Debug)]
pub struct GameState {
    pub ruleset: Arc<Ruleset>,
    pub content: Arc<Content>,
    pub players: Arc<[Player]>,
    /// Base values of player properties (life, maximum hand size), by player then property.
    pub(crate) player_props: Arc<Vec<Vec<Value>>>,
    pub(crate) objects: Vec<Arc<GameObject>>,
    pub(crate) effects: Vec<Arc<CreatedEffect>>,
    pub active: PlayerId,
    pub turn: u32,
    pub(crate) next_timestamp: u64,
    pub(crate) next_effect_id: u32,
    pub(crate) pending: Option<Arc<DecisionRequest>>,
    /// The ruleset's controller and abilities characteristics, looked up once.
    pub(crate) controller_char: Option<CharId>,
    pub(crate) abilities_char: Option<CharId>,
    derived: OnceLock<Arc<Derived>>,
    /// The derivation before the latest changes, and the first layer those changes can reach:
    /// the next derivation starts there and reuses the layers before it.
    reuse: Option<(Arc<Derived>, usize)>,
    /// Whether no state-based check applied to any object when the reused derivation was made.
    reuse_settled: bool,
    /// Whether no state-based check applies to any object now (found by the last checks).
    pub(crate) settled: bool,
    /// The objects in play, in id order, computed once per state.
    in_play: OnceLock<Arc<[ObjectId]>>,
    /// The same as bits by object index.
    in_play_bits: OnceLock<Vec<u64>>,
    /// The base values, computed once and kept until an object changes (not for counters).
    base: OnceLock<Arc<Sheet>>,
    /// `counters_reach`, kept like `base`.
    reach: OnceLock<usize>,
}

impl GameState {
    /// A new game with no objects; `players` in turn order.
    pub fn new(ruleset: Arc<Ruleset>, content: Arc<Content>, players: &[&str]) -> Self {
        let props: Vec<Value> = ruleset
            .props
            .iter()
            .map(|p| Value::Number(p.default))
            .collect();
        GameState {
            controller_char: ruleset.char_of_kind(CharKind::Controller),
            abilities_char: ruleset.char_of_kind(CharKind::Abilities),
            player_props: Arc::new(vec![props; players.len()]),
            players: players
                .iter()
                .map(|n| Player {
                    name: Arc::from(*n),
                })
                .collect(),
            ruleset,
            content,
            objects: Vec::new(),
            effects: Vec::new(),
            active: PlayerId(0),
            turn: 1,
            next_timestamp: 1,
            next_effect_id: 1,
            pending: None,
            derived: OnceLock::new(),
            reuse: None,
            reuse_settled: false,
            settled: false,
            in_play: OnceLock::new(),
            in_play_bits: OnceLock::new(),
            base: OnceLock::new(),
            reach: OnceLock::new(),
        }
    }

    pub fn object(&self, id: ObjectId) -> &GameObject {
        &self.objects[id.index()]
    }

    pub fn get_object(&self, id: ObjectId) -> Option<&GameObject> {
        self.objects.get(id.index()).map(|o| &**o)
    }

    pub fn objects(&self) -> impl Iterator<Item = &GameObject> {
        self.objects.iter().map(|o| &**o)
    }

    pub fn object_ids(&self) -> impl Iterator<Item = ObjectId> + '_ {
        (0..self.objects.len() as u32).map(ObjectId)
    }

    /// The object with this name, if exactly one has it.
    pub fn find(&self, name: &str) -> Option<ObjectId> {
        let mut it = self.objects.iter().filter(|o| &*o.name == name);
        let first = it.next()?;
        it.next().is_none().then_some(first.id)
    }

    pub fn effects(&self) -> impl Iterator<Item = &CreatedEffect> {
        self.effects.iter().map(|e| &**e)
    }

    pub fn in_play(&self, id: ObjectId) -> bool {
        let bits = self.in_play_bits.get_or_init(|| {
            let mut bits = vec![0u64; self.objects.len().div_ceil(64)];
            for o in &self.objects {
                if self.ruleset.zone(o.zone).in_play {
                    bits[o.id.index() / 64] |= 1 << (o.id.index() % 64);
                }
            }
            bits
        });
        bits.get(id.index() / 64)
            .is_some_and(|b| b & (1 << (id.index() % 64)) != 0)
    }

    pub fn player_name(&self, p: PlayerId) -> &str {
        &self.players[p.index()].name
    }

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

    /// Characteristics of every object and properties of every player after all layers, computed
    /// once per state and shared by its clones until the state changes.
    pub fn derived(&self) -> &Derived {
        self.derived.get_or_init(|| {
            Arc::new(match &self.reuse {
                Some((prev, from)) => layers::derive_from(self, prev, *from),
                None => layers::derive(self, false),
            })
        })
    }

    /// The derived values with an explanation of every effect that applied.
    pub fn explain(&self) -> Derived {
        layers::derive(self, true)
    }

    pub fn characteristic(&self, o: ObjectId, c: CharId) -> &Value {
        &self.derived().sheet.objects[o.index()][c.index()]
    }

    pub fn property(&self, p: PlayerId, prop: crate::ids::PropId) -> &Value {
        &self.derived().sheet.players[p.index()][prop.index()]
    }

    /// The values before any effect applies: printed characteristics, base controller, base player
    /// properties.
    pub fn base_sheet(&self) -> Sheet {
        (**self.base.get_or_init(|| Arc::new(self.build_base_sheet()))).clone()
    }

    fn build_base_sheet(&self) -> Sheet {
        let rs = &self.ruleset;
        let rows = self.objects.iter().map(|o| {
            let class = self.content.class(o.class);
            let mut vals: Vec<Value> = rs
                .characteristics
                .iter()
                .map(|c| match c.kind {
                    CharKind::Name => Value::Text(Arc::from(class.name.as_str())),
                    k => k.empty(),
                })
                .collect();
            for (c, v) in &class.printed {
                vals[c.index()] = v.clone();
            }
            if let Some(c) = self.controller_char {
                vals[c.index()] = Value::Player(Some(o.controller));
            }
            vals
        });
        let objects = crate::condition::Rows::new(rs.characteristics.len(), rows);
        Sheet {
            objects,
            players: (*self.player_props).clone(),
        }
    }

    // ---- mutation helpers for `action`; each invalidates the derived values ----

    pub(crate) fn touch(&mut self) {
        self.derived = OnceLock::new();
        self.reuse = None;
        self.settled = false;
        self.in_play = OnceLock::new();
        self.in_play_bits = OnceLock::new();
        self.base = OnceLock::new();
        self.reach = OnceLock::new();
    }

    /// Notes a change that reaches no layer before `layer` and changes no zone: the next
    /// derivation starts at `layer`.
    pub(crate) fn touch_from(&mut self, layer: usize) {
        if layer == 0 {
            return self.touch();
        }
        match self.derived.take() {
            Some(d) => {
                self.reuse = Some((d, layer));
                self.reuse_settled = std::mem::take(&mut self.settled);
            }
            None => {
                if let Some((_, from)) = &mut self.reuse {
                    *from = (*from).min(layer);
                }
            }
        }
    }

    /// The objects to test with the state-based checks: those whose values the latest change may
    /// have reached, where the checks were all clear before it and each tests only its object;
    /// `None` for all.
    pub(crate) fn to_check(&self) -> Option<&[ObjectId]> {
        if !self.reuse_settled || self.reuse.is_none() {
            return None;
        }
        let local = self
            .ruleset
            .state_checks
            .iter()
            .all(|c| c.condition.is_local());
        if !local {
            return None;
        }
        self.derived().changed.as_deref()
    }

    /// The first layer a change of counters can reach: the layers that apply counters, and those
    /// where an effect that counts counters starts.
    pub(crate) fn counters_reach(&self) -> usize {
        *self.reach.get_or_init(|| self.find_counters_reach())
    }

    fn find_counters_reach(&self) -> usize {
        let applies = self.ruleset.layers.iter().position(|l| l.counters);
        let reads = self
            .possible_effects()
            .into_iter()
            .filter(|d| d.reads_counters())
            .filter_map(|d| d.first_layer())
            .map(|l| l.index())
            .min();
        match (applies, reads) {
            (Some(a), Some(r)) => a.min(r),
            (a, r) => a.or(r).unwrap_or(self.ruleset.layers.len()),
        }
    }

    /// Every effect that can apply in this game: created effects, and the static abilities of the
    /// objects' classes and of every class whose abilities those effects can give.
    fn possible_effects(&self) -> Vec<&Arc<crate::effect::EffectDef>> {
        let mut seen = vec![false; self.content.classes.len()];
        let mut stack: Vec<crate::ids::ClassId> = self.objects.iter().map(|o| o.class).collect();
        let mut out: Vec<&Arc<crate::effect::EffectDef>> = Vec::new();
        for e in self.effects.iter() {
            stack.extend(e.def.granted_classes());
            out.push(&e.def);
        }
        // An effect that gives the abilities of other objects can give any class's: where the
        // content has one, every class counts.
        let any = self.effects.iter().any(|e| e.def.grants_any())
            || self.content.classes.iter().any(|c| {
                c.statics.iter().any(|d| d.grants_any())
                    || c.spell
                        .as_ref()
                        .is_some_and(|s| s.effects.iter().any(|(_, d)| d.grants_any()))
            });
        if any {
            stack.extend((0..self.content.classes.len() as u32).map(crate::ids::ClassId));
        }
        while let Some(c) = stack.pop() {
            if std::mem::replace(&mut seen[c.index()], true) {
                continue;
            }
            let class = self.content.class(c);
            for d in class.statics.iter().chain(
                class
                    .spell
                    .iter()
                    .flat_map(|s| s.effects.iter().map(|(_, d)| d)),
            ) {
                stack.extend(d.granted_classes());
                out.push(d);
            }
        }
        out
    }

    /// An object to change in a way that reaches no layer before `layer` (see `touch_from`).
    pub(crate) fn object_mut_from(&mut self, id: ObjectId, layer: usize) -> &mut GameObject {
        self.touch_from(layer);
        Arc::make_mut(&mut self.objects[id.index()])
    }

    /// The objects in a zone that is in play, in id order.
    pub fn in_play_ids(&self) -> &[ObjectId] {
        self.in_play.get_or_init(|| {
            self.objects
                .iter()
                .filter(|o| self.ruleset.zone(o.zone).in_play)
                .map(|o| o.id)
                .collect()
        })
    }

    pub(crate) fn object_mut(&mut self, id: ObjectId) -> &mut GameObject {
        self.touch();
        Arc::make_mut(&mut self.objects[id.index()])
    }

    pub(crate) fn new_timestamp(&mut self) -> Timestamp {
        let t = Timestamp(self.next_timestamp);
        self.next_timestamp += 1;
        t
    }

    pub(crate) fn push_object(&mut self, o: GameObject) {
        self.touch();
        self.objects.push(Arc::new(o));
    }
}
